"""What a finished command left running, from one look at the process table.

After every foreground run two questions are asked: is anything of the command's session still
running (``cmd &``), and did a process it started leave the session (``setsid``, a double fork)
while carrying the run's marker?  Both are answered from one listing of ``/proc`` with plain
system calls: ``getsid`` for each process, the environment only of processes that did not exist
before the run.  Elsewhere (no ``/proc``) psutil answers, as :mod:`.stop` does.
"""

from __future__ import annotations

import os

from .launch import MARKER_VAR

__all__ = ["left_behind", "pids"]

_PROC = "/proc"
_HAS_PROC = os.path.isdir(os.path.join(_PROC, "self"))


def pids() -> frozenset[int]:
    """Every process id now."""
    if _HAS_PROC:
        return frozenset(int(name) for name in os.listdir(_PROC) if name.isdigit())
    import psutil

    return frozenset(psutil.pids())


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has exited; only its parent's reaping is pending)."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as fh:
            state = fh.read().rpartition(b")")[2][1:2]
    except OSError:
        return False
    return state not in (b"Z", b"X", b"x")


def _marked(pid: int, needle: bytes) -> bool:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as fh:
            return needle in b"\0" + fh.read()
    except OSError:
        return False


def left_behind(sid: int, leader: int, before: frozenset[int], marker: str) -> tuple[bool, bool]:
    """``(in_session, escaped)``: whether a process of session ``sid`` other than the exited ``leader``
    is running, and whether a process started since ``before``, outside the session, carries ``marker``."""
    if not _HAS_PROC:
        return _left_behind_psutil(sid, leader, before, marker)
    needle = f"\0{MARKER_VAR}={marker}\0".encode()
    in_session = escaped = False
    me = os.getpid()
    for pid in pids():
        if pid in (me, leader):
            continue
        try:
            member = os.getsid(pid) == sid
        except OSError:
            continue
        if member:
            in_session = in_session or _running(pid)
        elif pid not in before and not escaped:
            escaped = _marked(pid, needle) and _running(pid)
    return in_session, escaped


def _left_behind_psutil(sid: int, leader: int, before: frozenset[int], marker: str) -> tuple[bool, bool]:
    import psutil

    from .stop import remaining

    in_session = any(proc.pid != leader for proc in remaining(sid))
    escaped = False
    for pid in pids() - before:
        try:
            proc = psutil.Process(pid)
            if os.getsid(pid) != sid and proc.environ().get(MARKER_VAR) == marker:
                escaped = proc.status() != psutil.STATUS_ZOMBIE
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
        if escaped:
            break
    return in_session, escaped
