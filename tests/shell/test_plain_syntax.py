"""The plain-syntax fast path: a yes is always one ``bash -n`` would give; common commands get a yes."""

from __future__ import annotations

import random
import re
import subprocess

import pytest

from execmagic.shell import plain_syntax
from execmagic.shell.plain_syntax import surely_parses
from execmagic.shell.sources import source_spans

PLAIN = [
    "true", "ls -la", "cd data && ls", 'echo "$HOME"', "export STAGE=train", "python train.py --epochs 10",
    "wc -l *.csv > counts", "cat f | grep x | sort | uniq -c", "make 2>&1 | tee build.log", "sleep 1 &",
    "# setup\nmkdir -p out/dir\ncd out  # go on\n", 'echo "a: ${USER}" >> log.txt', "A=1 B=2 env",
    "[ -f x ] && echo yes || echo no", "echo héllo ✓", "echo 'it''s' \\; a#b", "", "\n\n",
]

# Each is either a syntax error or something only bash itself can judge: bash -n is asked.
ASK = [
    "if then", "echo $(date)", "for f in *; do echo $f; done", "ls a[0-9]*", "time ls", "echo {a,b}",
    "a &&", "a |", "| a", "; a", "a ;;", "a |& b", 'echo "open', "echo 'open", "echo \\", "cat <<EOF\nx\nEOF",
    "echo `date`", "f() { :; }", "x=(1 2)", "echo >", "echo 2> 2>&1", "a[1 + 2]=x", "! true", "echo $((1+1))",
    "shopt -s expand_aliases; alias x=y", "echo a\rb", "done", "A=1 then", ">&-a[", "<& -x[1", "2>&-a[",
    "echo one\n<&-x[1", "a ;& b", "];&>> x", "shopt -s expand_aliases", "BASH_ALIASES[x]=y", "set -o posix",
]


@pytest.mark.parametrize("script", PLAIN)
def test_common_plain_commands_need_no_bash(script):
    assert surely_parses(script)
    assert subprocess.run(["bash", "-n"], input=script.encode(), capture_output=True).returncode == 0


@pytest.mark.parametrize("script", ASK)
def test_what_it_does_not_know_goes_to_bash(script):
    assert not surely_parses(script)


ATOMS = ["ls", "-la", "x=1", "A+=2", "'q q'", '"d $HOME ${X}"', '"\\""', "\\;", "$1", "$?", "${#}", "$$", "$#a",
         ";", "&&", "||", "|", "&", ">", ">>", "2>&1", "<", "&>", ">&", "<&", "&>>", "2>", "1>", "#c", "a#b",
         " ", " ", "\t", "\n", "if", "then", "fi", "done", "in", "time", "!", "[[", "]]", "[", "]", "a[", "*", "~",
         "=", "é", "'", '"', "$", "\\", "(", ")", "{", "}", "`", "<<", "99999999999999999999>", "alias", "${", "$((",
         ">&-", "<&-", ">& -", "-a["]


@pytest.mark.parametrize("seed", range(3))
def test_a_yes_is_never_a_syntax_error(seed):
    """Random scripts from the pieces that decide parsing: every one given a yes, ``bash -n`` accepts too."""
    rng = random.Random(seed)
    accepted = []
    while len(accepted) < 300:
        script = "".join(rng.choice(ATOMS) + rng.choice(["", " "]) for _ in range(rng.randint(1, 9)))
        if surely_parses(script):
            accepted.append(script)
    refused = [s for s in accepted
               if subprocess.run(["bash", "-n"], input=s.encode(), capture_output=True).returncode != 0]
    assert refused == []


@pytest.mark.parametrize("script", [">a &>>x=1", "&>>a &>>x=1", "echo $'\\x'"])
def test_assignment_shaped_targets_and_bad_escapes_go_to_bash(script):
    """A yes here would have been wrong (bash -n refuses the first two); the last once raised."""
    assert not surely_parses(script)


@pytest.mark.parametrize("seed", range(4))
def test_a_refusal_at_the_start_is_the_whole_scripts(seed):
    """Reading a long script's start alone: where the whole is plain, its tokens are the whole's (all but the last);
    whatever the start refuses, the whole check refuses too -- over random scripts cut at every length."""
    rng = random.Random(seed)
    for _ in range(150):
        script = "".join(rng.choice(ATOMS + PLAIN) + rng.choice(["", " "]) for _ in range(rng.randint(1, 14)))
        whole = plain_syntax._whole_parses(script)
        plain = plain_syntax._PLAIN_TEXT.fullmatch(script) and not plain_syntax._UNSURE.search(script)
        all_tokens = source_spans(script) if plain else None
        for first in range(len(script) + 2):
            if plain_syntax._start_refused(script, first):
                assert not whole, (script, first)
            if all_tokens is not None:
                found = plain_syntax._PLAIN_TEXT.match(script, 0, first)
                tokens, spans = source_spans(script[:found.end() if found else 0])
                kept = max(len(tokens) - 1, 0)
                assert tokens[:kept] == all_tokens[0][:kept], (script, first)
                assert spans[:kept] == all_tokens[1][:kept], (script, first)
        assert surely_parses(script * (2 * plain_syntax._FIRST // max(len(script), 1) + 1)) \
            == plain_syntax._whole_parses(script * (2 * plain_syntax._FIRST // max(len(script), 1) + 1)), script


@pytest.mark.parametrize("script", ["echo " + "$AB" * 80 + '$"x"', "echo " + '"$AB"' * 80 + '$"x"',
                                    "echo " + "export STAGE=train [[' >& -\"d $HOME ${X}\"" * 81])
def test_text_it_does_not_take_is_refused_at_once(script):
    """Each ``$NAME`` read also as a shorter name made 2**n ways to read such text: these took hours."""
    assert not surely_parses(script)


@pytest.mark.parametrize("seed", range(4))
def test_whole_names_and_comments_read_the_same_text(seed):
    """The regexes that take only a whole ``$NAME`` and a whole comment match what they matched before."""
    before = {regex: re.compile(regex.pattern.replace("(?![A-Za-z0-9_])", "").replace("(?![^\\n])", ""))
              for regex in (plain_syntax._PLAIN_TEXT, plain_syntax._WORD)}
    rng = random.Random(seed)
    letters = ["A", "b", "_", "1", "$", "#", "\n", " ", "{", "}", '"', "'", "\\", "?", "x"]
    for _ in range(400):
        text = "".join(rng.choice(ATOMS + letters) for _ in range(rng.randint(0, 10)))
        for regex, old in before.items():
            assert bool(regex.fullmatch(text)) == bool(old.fullmatch(text)), text
            new_start, old_start = regex.match(text), old.match(text)
            assert (new_start and new_start.end()) == (old_start and old_start.end()), text


def _line_by_line(script: str, last: bool = True) -> bool:
    """The grammar fed one token at a time to :class:`plain_syntax._Line`, as the check read a script before its table."""
    line = plain_syntax._Line()
    tokens, spans = source_spans(script)
    pairs = list(zip(tokens, spans, strict=True))[:None if last else -1]
    return all(line.takes(token, script[start:end]) for token, (start, end) in pairs) and (not last or line.complete())


@pytest.mark.parametrize("seed", range(6))
def test_the_table_answers_as_the_line_fed_token_by_token(seed):
    """The check walks a table made from :class:`plain_syntax._Line` (a state per token): over random scripts of the
    pieces that decide parsing, its answer is the line's, for the whole script and for a start read alone."""
    rng = random.Random(seed)
    for _ in range(400):
        script = "".join(rng.choice(ATOMS + PLAIN) + rng.choice(["", " ", "\n"]) for _ in range(rng.randint(1, 12)))
        plain = plain_syntax._PLAIN_TEXT.fullmatch(script) and not plain_syntax._UNSURE.search(script) \
            and not plain_syntax._ALIAS.search(script)
        assert plain_syntax._whole_parses(script) == bool(plain and _line_by_line(script)), script
        if plain:
            refused = plain_syntax._start_refused(script, len(script))
            assert refused == (not _line_by_line(script, last=False)), script


@pytest.mark.parametrize("seed", range(4))
def test_runs_of_plain_characters_read_the_same_text(seed):
    """The regexes that take a run of plain characters at once match what those taking one at a time matched."""
    before = {regex: re.compile(regex.pattern.replace(plain_syntax._PLAINS, plain_syntax._PLAIN))
              for regex in (plain_syntax._PLAIN_TEXT, plain_syntax._WORD)}
    rng = random.Random(seed)
    letters = ["A", "b", "_", "1", "$", "#", "\n", " ", "{", "}", '"', "'", "\\", "?", "x", "-", "=", "(", "\r"]
    for _ in range(400):
        text = "".join(rng.choice(ATOMS + letters) for _ in range(rng.randint(0, 12)))
        for regex, old in before.items():
            assert regex.pattern != old.pattern
            assert bool(regex.fullmatch(text)) == bool(old.fullmatch(text)), text
            new_start, old_start = regex.match(text), old.match(text)
            assert (new_start and new_start.end()) == (old_start and old_start.end()), text


def _kind_piece_by_piece(source: str) -> int:
    """A word's kind as the check told it before one match did: four looks."""
    if not plain_syntax._WORD.fullmatch(source) or plain_syntax._SUBSCRIPT.match(source):
        return 0
    if source.startswith("-") and source != "-":
        return 1
    return 2 if plain_syntax._ASSIGNMENT.match(source) else 3 if source in plain_syntax._RESERVED else 4


@pytest.mark.parametrize("seed", range(4))
def test_a_words_kind_is_told_as_by_four_looks(seed):
    """Over random words of the characters and pieces that decide a kind, one match tells each as four looks did."""
    rng = random.Random(seed)
    pieces = ["a", "Z", "_", "1", "=", "+", "-", "[", "]", "#", "$", "{", "}", "'", '"', "\\", " ", "\n", "é", "\r",
              "x=", "A+=", "a[", "-x", "'q q'", '"$A"', "${X}", "$1", "if", "done", "[[", "!", "\x00", "\x7f"]
    for _ in range(3000):
        word = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert plain_syntax._word_kind(word) == _kind_piece_by_piece(word), word
    for word in [*ATOMS, *plain_syntax._RESERVED, "", "-", "--", "a=", "=", "#", "-#", "a#", "a=#", "a[=", "a+b=1"]:
        assert plain_syntax._word_kind(word) == _kind_piece_by_piece(word), word
