"""A run of ``${``, ``$(`` or ``"$(`` opened as frames that share a class reads as frames opened one by one; a run of
``)`` or ``))`` closed at once, a ``()`` or a line of ``((1))`` passed at once, reads as one read step by step."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from execmagic.engine.contexts import contexts_at
from execmagic.guard.check import check
from execmagic.shell import frames as frames_module
from execmagic.shell.ends import arith_or_command
from execmagic.shell.frames import Frame, Stack
from execmagic.shell.lexer import tokenize
from execmagic.shell.walk import ShellScanner
from execmagic.shell.work import ShellTooComplex

_PIECES = ["${", "${", "$(", "$(", '"$(', '"$(', "}", ")", ")", '"', "'", "(", "`", "\\", " ", "\n", ";", "a", "${x}",
           "$((", "))", "<<E\n", "E\n", "{v}", "rm -rf / ", "echo ", "#", "case a in a) ", "esac", "((", "$((a);",
           "()", "f(){ f|f& };", "a=()", "=", "())", "((1)) ", " ((i++))", "((a))((b))", "\t((x)) ", " (({v}))", "$(rm x)", " 1 ", "`rm y`"]


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
            _answer(lambda: contexts_at(text, spans, "sh")), check("all", text), _answer(lambda: _arith_ends(text)))


def _arith_ends(text: str) -> dict[int, tuple[int, bool]]:
    """Where each ``$((`` ends, as the walks from the first ones note them."""
    log: dict[int, tuple[int, bool]] = {}
    for found in list(re.finditer(r"\$\(\(", text))[:3]:
        arith_or_command(text, found.end(), log)
    return log


def _one_by_one(self: Stack, kinds: tuple[tuple[str, str], ...], units: int) -> list[Frame]:
    """The frames as they were made before: each a frame of its own, given its fields as it is opened."""
    return [Frame(kind, closer) for _ in range(units) for kind, closer in kinds]


def _text(rng: random.Random) -> str:
    """Random pieces, and now and then a run long enough to be made of frames that share a class."""
    pieces = []
    for _ in range(rng.randrange(2, 30)):
        piece = rng.choice(_PIECES)
        pieces.append(piece * (rng.choice([1, 1, 2, 70, 200]) if piece in ("${", "$(", '"$(', ")", "(", "$((", "))")
                               else 1))
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


def _one_arith_end(self: ShellScanner, i: int) -> int:
    """``))`` ending the arithmetic on top, as it was read before: that one alone."""
    frame = self.stack.pop()
    if frame.start >= 0:
        self._arith_ended(frame, i + 2, False)
    return i + 2


@pytest.mark.parametrize("seed", range(250))
def test_runs_read_at_once_read_as_one_step_at_a_time(seed, monkeypatch):
    text = _text(random.Random(seed))
    at_once = _read(text)
    monkeypatch.setattr(ShellScanner, "_close_run", lambda self, i: i)
    monkeypatch.setattr(ShellScanner, "_empty_parens", lambda self, i: False)
    monkeypatch.setattr(ShellScanner, "_simple_run", lambda self, end: end)
    monkeypatch.setattr(ShellScanner, "_arith_run_ends", _one_arith_end)
    assert at_once == _read(text), text
