"""The work a reading of shell text does, counted in steps, and bounded by the text's length.

Every pass over command text runs on every ``%exec`` (the standby's check, the guard, templating), so
each must take time linear in the text's length, whatever the text: a 4 KB cell of nested
parentheses that took seconds froze the kernel.  The reader (:mod:`.walk`, :mod:`.lexer`) is linear in one
walk; what could still make it more is walking the same text again from inside it (where does this
``((`` end? and the next one, inside it?).  So every step of every walk is counted against a budget
that grows with the text (:func:`bounded`): text that would need more is refused as too complex to
read (:class:`ShellTooComplex`) -- the guard then refuses the command, the standby leaves it to a new
bash -- never read halfway and let through.  A walk counts its steps as it goes and tells them when it
ends (one walk is linear; what the budget bounds is walks begun again), and a run read at once (4,000
``$(``) counts as the steps it stands for.

The count is also what the tests bound: steps, not seconds (:func:`counted`).
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
from collections.abc import Iterator

__all__ = ["STEPS_PER_CHARACTER", "ShellTooComplex", "Steps", "bounded", "counted", "step", "uncollected"]

#: Steps a reading may take per character of its text (plus :data:`_STEPS_AT_LEAST`).  One walk takes at most
#: one step per character; text read again (a ``$(…)`` body, a heredoc's substitutions, an arithmetic's
#: end) a few times more; only text nested inside itself thousands deep needs more than this.
STEPS_PER_CHARACTER = 16
_STEPS_AT_LEAST = 10_000


class ShellTooComplex(ValueError):
    """Shell text whose reading would take more steps than its length allows (``limit``)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(limit)

    def __str__(self) -> str:
        return f"shell text too complex to read: more than {self.limit} steps (nesting read again and again)"


class Steps:
    """The steps taken so far, and the most allowed (``None``: counted only)."""

    def __init__(self, limit: int | None = None) -> None:
        self.taken = 0
        self.limit = limit


_CURRENT: contextvars.ContextVar[Steps | None] = contextvars.ContextVar("execmagic_shell_steps", default=None)


def step(count: int = 1) -> None:
    """Count ``count`` steps of the reading under way; past its limit, :class:`ShellTooComplex`."""
    steps = _CURRENT.get()
    if steps is not None:
        steps.taken += count
        if steps.limit is not None and steps.taken > steps.limit:
            raise ShellTooComplex(steps.limit)


@contextlib.contextmanager
def bounded(text: str) -> Iterator[Steps]:
    """A reading of ``text``: its steps are bounded by its length (an enclosing reading's bound holds instead)."""
    outer = _CURRENT.get()
    if outer is not None and outer.limit is not None:
        yield outer
        return
    steps = Steps(STEPS_PER_CHARACTER * len(text) + _STEPS_AT_LEAST)
    if outer is not None:  # counted from outside: the count goes on there too
        steps.taken = outer.taken
    token = _CURRENT.set(steps)
    try:
        yield steps
    finally:
        _CURRENT.reset(token)
        if outer is not None:
            outer.taken = steps.taken


@contextlib.contextmanager
def counted() -> Iterator[Steps]:
    """Count the steps of every reading inside (for tests and benchmarks: work, not seconds)."""
    steps = Steps()
    token = _CURRENT.set(steps)
    try:
        yield steps
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def uncollected() -> Iterator[None]:
    """The cycle collector paused while a reading runs (on again as it ends, if it was on).

    A reading nested thousands deep holds thousands of frames at once, and every pass of the collector
    walked them all: half the time of a 1 MB reading went there.  A reading makes no reference cycles,
    so no garbage waits for a pass it skips.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
