"""Digits naming a descriptor and their redirection (``2>``), read at once, read as they do a piece at a time."""

from __future__ import annotations

import random

import pytest
from reading_record import spelled

from execmagic.guard.check import check
from execmagic.shell import lexer
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spellings

_PIECES = ["2", "1", "0", "12", "²", "a", "2a", "x2", ">", "<", ">>", ">|", ">&", "<&", "<>", "<<<", "<<", "<<-", "<(",
           ">(", "&>", "(", ")", " ", "\t", "\n", ";", "&", "|", "'", '"', "$(", "$", "`", "\\", "/dev/null", "err.log",
           "E\n", "echo ", "((", "))", "#", "-", "$((1))", "'2'", '"1"', "rm -rf / "]


def _read(text: str) -> tuple[object, ...]:
    try:
        return spelled(text), source_spellings(text), check("all", text)
    except Exception as error:  # (the same error both ways)
        return repr(error)


@pytest.mark.parametrize("seed", range(400))
def test_a_descriptor_redirection_read_at_once_reads_as_one_read_a_piece_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 40)))
    at_once = _read(text)
    monkeypatch.setattr(lexer._Lexer, "_descriptor", lambda self, i: False)
    assert at_once == _read(text), text


@pytest.mark.parametrize("text", ["python3 x.py 2> err.log &", "ls *.csv 2>/dev/null || true", "a 2>&1 | b",
                                  "echo x 1>&2", "sort 0<f 3<>g 4>>h 5>|i 6<&0 7<<<w"])
def test_descriptor_redirections_are_read_at_once(text, monkeypatch):
    at_once = _read(text)
    monkeypatch.setattr(lexer._Lexer, "_step", lambda self, char: pytest.fail(f"read a piece at a time: {char!r}"))
    tokenize(text, noted=True, joined=True)
    monkeypatch.undo()
    monkeypatch.setattr(lexer._Lexer, "_descriptor", lambda self, i: False)
    assert at_once == _read(text)


def test_the_word_after_one_to_and_is_expanded_twice_as_after_and_alone():
    """``1>&'$(cmd)'``: bash expands the word after ``>&`` twice when the descriptor is 1 (or none): its code runs."""
    for text, runs in [("echo x 1>&'$(touch m)'", True), ("echo x >&'$(touch m)'", True),
                       ("echo x 2>&'$(touch m)'", False), ("echo x 11>&'$(touch m)'", False)]:
        assert (tokenize(text)[0][-1].code == ("touch m",)) is runs, text
