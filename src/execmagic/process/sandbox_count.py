"""Counting a sandboxed session's processes: what tells a run that holds its session at the process limit.

A fork bomb that meets the limit never ends by itself: its forks fail (``EAGAIN``) and it tries again,
forever (``perl -e 'fork while 1'``), until a timeout, if there is one.  So a sandboxed run whose session
stays at its limit, and which holds most of the session's processes itself, is stopped, and its result says
why (:class:`ProcessWatch`, called by the run's loop now and then).

Where the session has a cgroup, its ``pids.current`` is the count (threads included, as the limit counts
them).  Elsewhere the session is a user namespace (:mod:`.sandbox_session`) and every process of it lies in
that namespace or one below (bwrap makes its own): ``/proc`` is read for each process's user namespace, and
a namespace's parent is asked of the kernel (``NS_GET_PARENT``).  Threads are not counted there, so the
count is taken as "at the limit" a little below it (:data:`_SLACK`).  A run's own processes are those in its
pid namespace (every run's bwrap makes one), found from the run's leader, bwrap, through its child.

The look costs a read of ``/proc`` (a few milliseconds per thousand processes), made only while a sandboxed
run lasts longer than :data:`WATCH_FIRST` seconds, every :data:`WATCH_EVERY` seconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable

__all__ = ["WATCH_EVERY", "WATCH_FIRST", "ProcessWatch", "run_processes", "user_namespace"]

#: Seconds a sandboxed run goes before its first look, and between looks: a fork bomb fills the limit in a
#: fraction of a second; a short command is never looked at.
WATCH_FIRST = 1.0
WATCH_EVERY = 0.5
#: Looks in a row that must find the session at its limit: a build that touches the limit for a moment and
#: goes on is left alone; a bomb stays there.
_STRIKES = 2
#: Processes below the limit that count as at it: the count by user namespace leaves out threads.
_SLACK = 4
#: ``ioctl(NS_GET_PARENT)``: the parent of a user namespace, as a new descriptor (``_IO(0xb7, 0x2)``).
_NS_GET_PARENT = 0xB702
#: How far below the session's namespace a namespace is looked for (namespaces nest 32 deep at most).
_MAX_DEPTH = 32


def user_namespace(pid: int) -> int | None:
    """The inode of ``pid``'s user namespace (``None``: gone, or not ours to look at)."""
    try:
        return os.stat(f"/proc/{pid}/ns/user").st_ino
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            return [int(word) for word in fh.read().split()]
    except (OSError, ValueError):
        return []


def _pid_namespace(pid: int | str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def _below(ns_fd: int, session_ns: int) -> bool:
    """Whether the user namespace open at ``ns_fd`` is ``session_ns`` or lies below it (``ns_fd`` is closed)."""
    fd = ns_fd
    try:
        for _ in range(_MAX_DEPTH):
            if os.fstat(fd).st_ino == session_ns:
                return True
            try:
                parent = fcntl.ioctl(fd, _NS_GET_PARENT)
            except OSError:  # the top of what this process may see: not below the session's
                return False
            os.close(fd)
            fd = parent
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def session_processes(session_ns: int) -> int:
    """How many processes lie in user namespace ``session_ns`` or below it."""
    counts: dict[int, int] = {}
    example: dict[int, str] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ino = os.stat(f"/proc/{name}/ns/user").st_ino
        except OSError:
            continue
        counts[ino] = counts.get(ino, 0) + 1
        example.setdefault(ino, name)
    total = 0
    for ino, count in counts.items():
        if ino == session_ns:
            total += count
            continue
        try:
            fd = os.open(f"/proc/{example[ino]}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        if _below(fd, session_ns):
            total += count
    return total


def run_processes(leader: int) -> int:
    """How many processes are in the pid namespace of ``leader``'s child (the run's bwrap makes it)."""
    namespaces = {_pid_namespace(child) for child in _children(leader)} - {None, _pid_namespace(leader)}
    if not namespaces:
        return 0
    return sum(1 for name in os.listdir("/proc") if name.isdigit() and _pid_namespace(name) in namespaces)


class ProcessWatch:
    """Told a run's leader now and then, says why to stop it: its session stays at the process limit and
    the run holds most of the session's processes (``None``: go on).

    ``count``: the session's processes (its cgroup's ``pids.current``, or :func:`session_processes`).
    """

    def __init__(self, limit: int, count: Callable[[], int | None]) -> None:
        self.limit = limit
        self._count = count
        self._strikes = 0

    def __call__(self, leader: int) -> str | None:
        session = self._count()
        full = session is not None and session >= self.limit - _SLACK
        if full and session is not None:
            full = run_processes(leader) * 2 >= session
        self._strikes = self._strikes + 1 if full else 0
        if self._strikes < _STRIKES:
            return None
        return f"the sandbox's process limit ({self.limit:,} for the session)"
