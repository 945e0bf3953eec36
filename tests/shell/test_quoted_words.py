"""A word of plain text, closed quotes, ``$NAME`` and the expansions a walk only passes, made at once, reads as one
read a piece at a time."""

from __future__ import annotations

import random

import pytest

from execmagic.guard.check import check
from execmagic.shell import lexer
from execmagic.shell.lexer import tokenize
from execmagic.shell.plain_syntax import surely_parses
from execmagic.shell.sources import source_spans, source_spellings

_PIECES = ["echo ", "a", "1", "2", "=", "-", "#", "'q q'", "''", "'", '"d $HOME ${X}"', '"', '""', '"\\$\\x\\"\\\\"',
           "\\", "\\;", "\\\n", "$", "$1", "$?", "$#", "$$", "${X}", "${X:-y}", "${", "}", "{", "$HOME", "$'a\\tb'",
           '$"l"', "$(", ")", "(", "((", "))", "$((", "`", " ", "\t", "\n", ";", "&", "|", "<", ">", "2>", ">&",
           "<<E\n", "E\n", "rm -rf / ", "$[", "]", "\r", "é", ",", "{rm,-rf,/}", "..", "'{a,b}'"]


def _read(text: str) -> tuple[object, ...]:
    answers = []
    for noted, joined in ((False, False), (True, True)):
        tokens, skeleton = tokenize(text, noted=noted, joined=joined)
        answers.append(([(t, type(t).__name__, getattr(t, "code", ()), getattr(t, "live", ()),
                          getattr(t, "quoted", False), getattr(t, "shown", t), getattr(t, "subs", None),
                          getattr(t, "feed", None), getattr(t, "plain", None)) for t in tokens], skeleton))
    return answers, source_spans(text), surely_parses(text), check("all", text)


@pytest.mark.parametrize("seed", range(400))
def test_a_quoted_word_read_at_once_reads_as_one_read_a_piece_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 30)))
    at_once = _read(text)
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: False)
    assert at_once == _read(text), text


@pytest.mark.parametrize("text", ['echo "rows: $n in ${n}" >> f', "grep -v '^#' a\\ b $HOME/x#y", 'a="\\$x\\q" ""',
                                  "--in=\"$IN\"&&'x'|$?"])
def test_common_quoted_words_are_read_at_once(text, monkeypatch):
    """The words above are each made at once (none goes a piece at a time), and read as a piece at a time reads them."""
    at_once = _read(text)
    monkeypatch.setattr(lexer._Lexer, "_step", lambda self, char: pytest.fail(f"read a piece at a time: {char!r}"))
    tokenize(text)
    monkeypatch.undo()
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: False)
    assert at_once == _read(text)


#: Words with the expansions read at once (``$(…)`` a walk only passes, ``${…}``, ``$((…))``), in "…" and out, and
#: what makes one read otherwise: a body a walk stops in, ``case``, one open, one longer than a match is tried on.
_EXPANDED = ['"out/$(basename "$f" .csv).txt"', '"$(wc -l < f) rows"', '"${N:-none} $n"', "n=$((N + 1))", "$(date)",
             '"${x}"', "${x:-a b}", "${x/(/}", "$((a<<1))", "$((1)); ", "$( x 'q)' )", '$(a "b c" $d)', "$(a > f)",
             "$(a >& b)", "$(a << b)", "$(case x in a) b;; esac)", "$(a $(b))", "$(a `b`)", "$((a) + (b))", "$((a); b)",
             '"$((1+2))"', '"$(a)$(b)"', "x$(a)y", "${a}{b,c}", "$(a){b,c}", "$(", "${", "$((", ")", "}", "))", "$[1]",
             "$'a'", '$"l"', "\\$(a)", "'$(a)'", "$(a\nb)", "$(a # c\n)", "$(" + "a " * 1100 + ")", "$(" + "'a' " * 600 + ")"]


def _spelled(text: str) -> str:
    """Every reading of ``text`` (its bodies read again as the guard reads them) and its spellings."""
    from reading_record import spelled

    try:
        return spelled(text) + repr(source_spellings(text))
    except Exception as error:  # (the same error both ways)
        return repr(error)


@pytest.mark.parametrize("seed", range(400))
def test_a_word_with_expansions_read_at_once_reads_as_one_read_a_piece_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    pieces = _EXPANDED + _PIECES
    text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
    at_once = _spelled(text), check("all", text)
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: False)
    assert at_once == (_spelled(text), check("all", text)), text


@pytest.mark.parametrize("text", ['sort "$f" > "out/$(basename "$f" .csv).txt"', 'echo "$(wc -l < a.csv) rows"',
                                  'n=$((N + 1)); echo "${N:-none} $n"', "x=$(date +%F)$((1))${y} z"])
def test_words_with_expansions_are_read_at_once(text, monkeypatch):
    """The words above (a notebook's script has one every few lines) are each made at once, with their bodies."""
    at_once = _spelled(text)
    monkeypatch.setattr(lexer._Lexer, "_step", lambda self, char: pytest.fail(f"read a piece at a time: {char!r}"))
    tokenize(text, noted=True, joined=True)
    monkeypatch.undo()
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: False)
    assert at_once == _spelled(text)


def test_a_word_read_at_once_keeps_its_bodies_where_they_stand():
    tokens = tokenize('a "x$(rm -rf /)y" "x$(rm -rf /)y"', noted=True)[0]
    first, second = tokens[1], tokens[2]
    assert first.code == second.code == ("rm -rf /",) and first.subs == {1: (12, "rm -rf /")}
    assert first.code[0].ends.base == 6 and second.code[0].ends.base == 22  # (each cut where it stands)


@pytest.mark.parametrize("noted", [("found", 5), ("params", (5, True)), ("arith", 5)])
def test_a_word_whose_expansion_a_walk_found_to_end_elsewhere_is_read_as_the_walk_found_it(noted, monkeypatch):
    """The splitter looks an expansion's end up first where a walk noted it (a body read again shares the ends its
    text's walks found): a word whose noted end is not the one matched is read a piece at a time, as before."""
    from execmagic.shell.ends import UNCLOSED, Body, Ends

    def read(text: str) -> object:
        ends = Ends()
        where, key = noted
        if where == "arith":
            ends.arith[key] = (len(text) + 1, True)  # (it ran out of text, a command)
        else:
            getattr(ends, where)[key] = UNCLOSED
        body = Body(text)
        body.ends = ends
        tokens, skeleton = tokenize(body)
        return [(t, getattr(t, "code", ()), getattr(t, "subs", None)) for t in tokens], skeleton

    text = {"found": 'a "$(b)" c', "params": 'a "${b}" c', "arith": "a $((1)) c"}[noted[0]]
    at_once = read(text)
    assert at_once[0][1][0] != text.split()[1]  # (as the walk found it, not as matched)
    monkeypatch.setattr(lexer._Lexer, "_quoted_word", lambda self, i: False)
    assert at_once == read(text)
