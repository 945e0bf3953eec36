"""A run of ``${``, ``$(`` or ``"$(`` opened as frames that share a class reads as frames opened one by one; a run of
``)`` closed at once reads as one closed one by one."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from execmagic.engine.contexts import contexts_at
from execmagic.guard.check import check
from execmagic.shell import frames as frames_module
from execmagic.shell.frames import Frame, Stack
from execmagic.shell.lexer import tokenize
from execmagic.shell.walk import ShellScanner
from execmagic.shell.work import ShellTooComplex

_PIECES = ["${", "${", "$(", "$(", '"$(', '"$(', "}", ")", ")", '"', "'", "(", "`", "\\", " ", "\n", ";", "a", "${x}",
           "$((", "))", "<<E\n", "E\n", "{v}", "rm -rf / ", "echo ", "#", "case a in a) ", "esac", "((", "$((a);"]


def _answer(read: Callable[[], object]) -> object:
    """What ``read()`` gives, or the refusal it raises (too complex to read is an answer too)."""
    try:
        return read()
    except ShellTooComplex as refused:
        return refused.limit


def _read(text: str) -> tuple[object, ...]:
    spans = [(found.start(), found.end()) for found in re.finditer(r"\{v\}", text)]
    return (_answer(lambda: [(t, getattr(t, "code", ()), getattr(t, "live", ()), getattr(t, "quoted", False))
                             for t in tokenize(text, noted=True)[0]]),
            _answer(lambda: tokenize(text)[1]), _answer(lambda: contexts_at(text, spans, "bash")),
            _answer(lambda: contexts_at(text, spans, "sh")), check("all", text))


def _one_by_one(self: Stack, kinds: tuple[tuple[str, str], ...], units: int) -> list[Frame]:
    """The frames as they were made before: each a frame of its own, given its fields as it is opened."""
    return [Frame(kind, closer) for _ in range(units) for kind, closer in kinds]


def _text(rng: random.Random) -> str:
    """Random pieces, and now and then a run long enough to be made of frames that share a class."""
    pieces = []
    for _ in range(rng.randrange(2, 30)):
        piece = rng.choice(_PIECES)
        pieces.append(piece * (rng.choice([1, 1, 2, 70, 200]) if piece in ("${", "$(", '"$(', ")", "(") else 1))
    return "echo " + "".join(pieces)


@pytest.mark.parametrize("seed", range(250))
def test_a_run_of_frames_alike_reads_as_frames_opened_one_by_one(seed, monkeypatch):
    text = _text(random.Random(seed))
    at_once = _read(text)
    monkeypatch.setattr(Stack, "alike", _one_by_one)
    monkeypatch.setattr(Stack, "append_alike", lambda self, frames, period=1: Stack.extend(self, frames))
    assert at_once == _read(text), text


@pytest.mark.parametrize("seed", range(60))
def test_a_short_run_reads_as_a_long_one(seed, monkeypatch):
    """The frames of a short run are plain ones, of a long run bare ones of a class: either way alike."""
    text = _text(random.Random(seed))
    at_once = _read(text)
    monkeypatch.setattr(frames_module, "_SHARED_FROM", 1)
    assert at_once == _read(text), text
    monkeypatch.setattr(frames_module, "_SHARED_FROM", 10**9)
    assert at_once == _read(text), text


@pytest.mark.parametrize("seed", range(250))
def test_a_run_of_closing_parentheses_closed_at_once_reads_as_one_closed_one_by_one(seed, monkeypatch):
    text = _text(random.Random(seed))
    at_once = _read(text)
    monkeypatch.setattr(ShellScanner, "_close_run", lambda self, i: i)
    assert at_once == _read(text), text
