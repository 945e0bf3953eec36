"""The work a pass over text does, counted in steps that do not depend on the machine's speed.

A speed target cannot be a test (a shared machine makes any bound flaky); the *growth* of the work
can: a pass linear in its text does about twice the work on twice the text, one quadratic in it four
times.  The work is counted as the Python lines and calls the interpreter runs for it (a loop over
every open frame at every step shows up there, however fast each look is), plus the steps the shell
reader counts itself (:func:`execmagic.shell.work.counted`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

try:
    from execmagic.shell.work import counted
except ImportError:  # a reader that counts no steps of its own: its lines and calls still tell
    import contextlib
    import types

    @contextlib.contextmanager  # type: ignore[no-redef]
    def counted() -> Any:
        yield types.SimpleNamespace(taken=0)

__all__ = ["growth", "work"]


def work(call: Callable[[], object]) -> int:
    """The lines and calls of Python run by ``call()``, and the reader's own steps (an exception is a result)."""
    events = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        nonlocal events
        events += 1
        return trace

    with counted() as steps:
        sys.settrace(trace)
        try:
            call()
        except Exception:  # a refusal raised is an answer too: its cost is what is measured
            pass
        finally:
            sys.settrace(None)
    return events + steps.taken


def growth(make: Callable[[int], str | list[str]], run: Callable[[str], object], n: int) -> float:
    """How much more work ``run`` does on ``make(2 * n)`` than on ``make(n)`` (about 2: linear; about 4: quadratic).

    ``make`` may give several texts (random ones): the work is summed over them, so that no one text's luck
    decides (an unclosed quote early in one makes the rest of it one word, read at once).
    """
    small, large = make(n), make(2 * n)
    smalls, larges = ([small] if isinstance(small, str) else small), ([large] if isinstance(large, str) else large)
    run(smalls[0])  # the first call compiles patterns and fills caches: not the text's work
    before = sum(work(lambda text=text: run(text)) for text in smalls)
    return sum(work(lambda text=text: run(text)) for text in larges) / max(1, before)
