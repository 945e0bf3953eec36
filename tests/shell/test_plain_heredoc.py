"""A heredoc read at once (``<<NAME`` ending its line) gives what one read a piece at a time gives."""

from __future__ import annotations

import random
import re

import pytest

from execmagic.engine.contexts import contexts_at
from execmagic.shell import lexer, walk_bodies
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spans, source_spellings
from execmagic.shell.words import Word

_PIECES = ["cat ", "<<EOF\n", "<< EOF \n", "<<-EOF\n", "\tEOF\n", "EOF\n", "$(a\n", "'b\"\n", "x\n", "<<'EOF'\n",
           "`", "$((", "))", "((", "(", ")", " ", ";", "2", "<<<", "\n", "${", "}", "\\", "echo ", "EOF)\n"]


def _read(text: str) -> tuple[object, ...]:
    tokens, skeleton = tokenize(text, noted=True)
    words = [(t, type(t).__name__, getattr(t, "code", ()), getattr(t, "live", ()), getattr(t, "quoted", False),
              getattr(t, "shown", t)) for t in tokens]
    return words, skeleton, source_spans(text)


@pytest.mark.parametrize("seed", range(200))
def test_a_heredoc_read_at_once_reads_as_one_read_a_piece_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(3, 40)))
    at_once = _read(text)
    monkeypatch.setattr(lexer._Lexer, "_plain_heredoc", lambda self, i: False)
    assert at_once == _read(text)


#: A heredoc's word in quotes, or with more on its line (its body waits for the line's end), and what may follow it there.
_WAITING = ["cat <<'EOF' | python3 -\n", "<<\"E\";", "<<E|", "<< 'EOF'  \n", "<<-'E' ", '<<"EOF"\n', "<<E <<'F' x\n",
            "cat <<EOF > out\n", "<<'E'x ", "<<'E", "F\n", "((1)) ", "((a))", "(x) ", "{a,b} ", "a{b#c} ", "#d ", '"$f" ',
            "2>&1 ", ">&", "$(a\n", "`", "\\\n"]


@pytest.mark.parametrize("seed", range(300))
def test_a_heredoc_whose_body_waits_reads_as_one_read_a_piece_at_a_time(seed, monkeypatch):
    """A quoted word (``<<'EOF'``) is read at once too, and so is the rest of a line a heredoc's body waits for
    (``cat <<'EOF' | python3 -``): a plain stretch to the line's end (:data:`~execmagic.shell.stretches.LINE_STRETCH`),
    no ``((`` in it, and then the bodies -- as the line read a piece at a time (how it was all read before)."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_WAITING + _PIECES) for _ in range(rng.randrange(2, 40)))
    at_once = _read(text), tokenize(text, noted=True, joined=True), source_spellings(text)
    monkeypatch.setattr(lexer._Lexer, "_plain_heredoc", lambda self, i: False)
    monkeypatch.setattr(lexer, "LINE_STRETCH", re.compile(""))  # (a stretch that stops at once: none read)
    quoted_word = lexer._Lexer._quoted_word
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: not self.heredocs and quoted_word(self, i))
    assert at_once == (_read(text), tokenize(text, noted=True, joined=True), source_spellings(text)), text


def test_a_line_a_heredoc_waits_for_is_read_at_once():
    text = "cat <<'EOF' | python3 - --x=1 2\nimport sys\nEOF\ncat <<\"E\" >> out; echo {a,b}\n$(x)\nE\n"
    read = tokenize(text, noted=True, joined=True)
    tokens = read[0]
    assert tokens[1:9] == ["<<", "import sys\n", "|", "python3", "-", "--x=1", "2", ";"]
    assert tokens[2].quoted and tokens[2].shown == "EOF" and tokens[11].quoted and tokens[11].code == ()
    assert tokens[16] == "{a,b}" and tokens[16].plain == ((0, 5),)  # (as a piece at a time reads it)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(lexer._Lexer, "_step", lambda self, char: pytest.fail(f"read a piece at a time: {char!r}"))
    try:
        assert tokenize(text, noted=True, joined=True) == read
    finally:
        monkeypatch.undo()


def test_a_heredoc_read_at_once_keeps_its_body_and_what_runs_in_it():
    tokens = tokenize("cat <<EOF\n$(rm -rf /)\nEOF\necho done\n")[0]
    body = tokens[2]
    assert isinstance(body, Word) and body.shown == "EOF" and body.code == ("rm -rf /",)
    assert tokens[3:] == [";", "echo", "done", ";"]


_HEREDOCS = ["cat <<EOF\n$(a\n'b\"\nEOF\n", "cat <<EOF\n$(a)\nEOF\n", "cat <<'EOF'\n$(a)\nEOF\n", "cat <<-EOF\n\t`b`\nEOF\n",
             "cat <<EOF\n$((1)); $((a); b)\nEOF\n", "x <<E\n$(\nE\n", "echo $(", "((", ")", "\n"]


_TEMPLATED = [*_HEREDOCS, "{v}", "{v}\n", "cat <<-E\n\t{v}\n\tE\n", "a\\\n", "\tEOF\n", "EOF\n", "EOF)\n", "cat <<'Q'\n",
              "Q\n", "`", "$(", "\"", "'", "cat <<E\nx\\\nE\n{v}\nE\n"]


@pytest.mark.parametrize("seed", range(200))
def test_a_heredoc_body_passed_at_once_gives_the_templates_the_contexts_of_one_walked(seed, monkeypatch):
    """A heredoc's body at the top level with no template in it is passed at once, to its delimiter line: every
    template gets the context it gets when the body is walked step by step."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_TEMPLATED) for _ in range(rng.randrange(2, 30)))
    spans = [(found.start(), found.end()) for found in re.finditer(r"\{v\}", text)]
    at_once = contexts_at(text, spans, "bash")
    monkeypatch.setattr(walk_bodies.WalkBodies, "_passed_body", lambda self, heredoc, start: None)
    assert at_once == contexts_at(text, spans, "bash")


@pytest.mark.parametrize("seed", range(100))
def test_a_heredoc_body_read_again_reads_as_one_read_anew(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_HEREDOCS) for _ in range(rng.randrange(2, 30)))
    kept = _read(text)
    read = lexer._Lexer._heredoc_body

    def anew(self, *args):
        found = read(self, *args)
        self.read_bodies.clear()
        return found

    monkeypatch.setattr(lexer._Lexer, "_heredoc_body", anew)
    assert kept == _read(text)
