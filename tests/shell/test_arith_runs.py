"""A run of ``$((`` opened at once, its frames sharing a class for what they share, reads as frames made one by one."""

from __future__ import annotations

import random
import re

import pytest

from execmagic.engine.contexts import contexts_at
from execmagic.guard.check import check
from execmagic.shell.frames import Frame, Stack
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spans

_PIECES = ["$((", "$((", "$((", "))", ")", "(", "$(", "`", "'", '"', "\\", " ", "\n", ";", "a", "1", "${", "}", "<<E\n",
           "E\n", "{v}", "rm -rf / ", "echo ", "]", "$[", "#"]


def _one_by_one(starts: range, clean: bool, stops: re.Pattern[str]) -> list[Frame]:
    """The frames as they were made before: each with its own fields, its stops given as it is opened."""
    frames = Frame.run("arith", "", len(starts))
    for frame, start in zip(frames, starts, strict=True):
        frame.start, frame.clean = start, clean
    return frames


def _read(text: str) -> tuple[object, ...]:
    tokens, skeleton = tokenize(text, noted=True)
    words = [(t, getattr(t, "code", ()), getattr(t, "live", ())) for t in tokens]
    spans = [(found.start(), found.end()) for found in re.finditer(r"\{v\}", text)]
    return words, skeleton, source_spans(text), contexts_at(text, spans, "bash"), check("all", text)


@pytest.mark.parametrize("seed", range(300))
def test_a_run_of_arithmetic_opened_at_once_reads_as_one_made_frame_by_frame(seed, monkeypatch):
    rng = random.Random(seed)
    text = "echo " + "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 40)))
    at_once = _read(text)
    monkeypatch.setattr(Frame, "arith_run", staticmethod(_one_by_one))
    append_run = Stack.append_run
    monkeypatch.setattr(Stack, "append_run", lambda self, frames, alike=False: append_run(self, frames))
    assert at_once == _read(text), text
