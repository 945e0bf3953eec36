"""Waiting in tests for something another process or thread does, without a fixed sleep.

A fixed sleep is either too short on a busy machine (the test races) or too long everywhere (the
suite crawls); a test that waits for a condition does neither.  One helper, so each wait says what it
waited for, and a wait that times out fails the test with that and with what it last saw, instead of
going on as if the thing had happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["wait_until"]

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.02) -> T:
    """Call ``predicate`` until it returns something truthy, and return that.

    After ``timeout`` seconds, fail (``AssertionError``) with ``what`` -- the thing waited for, e.g.
    "the three sleeps to start" -- and the last value seen.  ``interval`` is the pause between calls;
    0 suits a predicate that blocks for a while itself (a read with a wait).  The predicate is always
    called at least once, and once more at the deadline, so a slow machine only ever makes it late.
    """
    deadline = time.monotonic() + timeout
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout} s for {what}; last seen: {last!r}")
        time.sleep(min(interval, max(deadline - time.monotonic(), 0)))
