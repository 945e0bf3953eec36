"""A word of plain text, closed quotes and ``$NAME`` made at once reads as one read a piece at a time."""

from __future__ import annotations

import random

import pytest

from execmagic.guard.check import check
from execmagic.shell import lexer
from execmagic.shell.lexer import tokenize
from execmagic.shell.plain_syntax import surely_parses
from execmagic.shell.sources import source_spans

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
