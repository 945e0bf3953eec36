"""What a table of guard rows asks of each row: refused at its level, with and without a session, or allowed.

The tables of the guard's walks (loop values, globbed paths, scripts written then run) each hold rows that must be
refused and rows of ordinary work that must pass; one pair of checks serves them all.
"""

from __future__ import annotations

from execmagic.guard.check import check

#: The variables a session starts with at the rule level (a home folder, a PATH).
ENV = {"HOME": "/home/alice", "PATH": "/usr/bin:/bin"}


def assert_refused(command: str, level: str = "all") -> None:
    """``command`` is refused at ``level``, with the session's variables and without them."""
    assert check(level, command, env=ENV) is not None, command
    assert check(level, command) is not None, f"not refused without the session's variables: {command}"


def assert_allowed(command: str) -> None:
    """``command`` passes guard "all" with the session's variables."""
    assert check("all", command, env=ENV) is None, command
