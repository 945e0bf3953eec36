"""What a finished command left running, from one look at the process table.

After every foreground run two questions are asked: is anything of the command's session still
running (``cmd &``), and did a process it started leave the session (``setsid``, a double fork)
while carrying the run's marker?  Both are about processes started since the run began, and on
Linux those are told without listing anything at the start: the kernel hands out pids in turn,
so the pids between its last one at the start (``/proc/sys/kernel/ns_last_pid``) and at the
end are all a quick run's new processes can be -- a handful to ask ``getsid`` about, where a
listing of ``/proc`` at both ends would cost more than a short run itself.  A run long enough for the pids to
go round, or one that saw more pids handed out than a listing costs, is answered from one
listing of ``/proc``, reading the environment of every process outside the session.  Elsewhere
(no ``/proc``) psutil answers, as :mod:`.stop` does, against a listing taken at the start.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from .launch import MARKER_VAR
from .records import record

__all__ = ["Births", "left_behind", "pids"]

_PROC = "/proc"
_HAS_PROC = os.path.isdir(os.path.join(_PROC, "self"))
_LAST_PID = "/proc/sys/kernel/ns_last_pid"
_PID_MAX = "/proc/sys/kernel/pid_max"
#: Seconds a run may last and still be answered from the pids handed out meanwhile: going round the pid
#: space (32768 pids at the least) takes far longer than this, however many processes start.
QUICK = 0.25
#: Pids handed out during a run past which one listing of ``/proc`` is cheaper than asking each.
RANGE_LIMIT = 1024


def pids() -> frozenset[int]:
    """Every process id now."""
    if _HAS_PROC:
        return frozenset(int(name) for name in os.listdir(_PROC) if name.isdigit())
    import psutil

    return frozenset(psutil.pids())


def _read_int(path: str) -> int | None:
    """The number a small /proc file holds: three system calls (``open()`` makes nine of them: a buffered
    reader asks the file's type, whether it is a terminal and where it stands, and reads twice)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            return int(os.read(fd, 64))
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


@record
class Births:
    """A run's starting point for telling which processes were born during it: what is known at its
    start -- the last pid the kernel handed out, or (where that cannot be read) every pid that
    existed -- so that at its end :meth:`since` names the candidates."""

    started: float
    last_pid: int | None
    existing: frozenset[int] | None

    @classmethod
    def now(cls) -> Births:
        last = _read_int(_LAST_PID) if _HAS_PROC else None
        return cls(time.monotonic(), last, pids() if last is None else None)

    def since(self) -> Iterable[int] | None:
        """The pids handed out since (every new process is among them, and a few that ended), or ``None``
        when that cannot be told from two readings: a long run, too many pids, or no reading."""
        if self.last_pid is None or time.monotonic() - self.started >= QUICK:
            return None
        last = _read_int(_LAST_PID)
        if last is None:
            return None
        if last >= self.last_pid:  # in turn
            return range(self.last_pid + 1, last + 1) if last - self.last_pid <= RANGE_LIMIT else None
        top = _read_int(_PID_MAX)  # round past pid_max, starting again from the lowest free pid
        if top is None or top - self.last_pid + last > RANGE_LIMIT:
            return None
        return [*range(self.last_pid + 1, top + 1), *range(1, last + 1)]

    def is_new(self, pid: int) -> bool:
        """Whether ``pid`` may have started since (without a listing from the start: any pid may)."""
        return self.existing is None or pid not in self.existing


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


def left_behind(sid: int, leader: int, births: Births, marker: str, own: tuple[int, ...] = ()) -> tuple[bool, bool]:
    """``(in_session, escaped)``: whether a process of session ``sid`` other than the exited ``leader``
    is running, and whether a process started since ``births``, outside the session, carries ``marker``.

    Only new processes are looked at: a session's members other than its leader are younger than the run
    (a command starts in a session of its own, and a standby forks nothing before it takes its script),
    but for ``own``: the leader's own, older than the run (a sandboxed standby's bwrap pid 1, which may be
    ending still when the run ended with the shell inside)."""
    if not _HAS_PROC:
        return _left_behind_psutil(sid, (leader, *own), births.existing or frozenset(), marker)
    needle = f"\0{MARKER_VAR}={marker}\0".encode()
    in_session = escaped = False
    me = os.getpid()
    new = births.since()
    for pid in pids() if new is None else new:
        if pid in (me, leader) or pid in own:
            continue
        try:
            member = os.getsid(pid) == sid
        except OSError:
            continue
        if member:
            in_session = in_session or _running(pid)
        elif not escaped and births.is_new(pid):
            escaped = _marked(pid, needle) and _running(pid)
    return in_session, escaped


def _left_behind_psutil(sid: int, leaders: tuple[int, ...], before: frozenset[int], marker: str
                        ) -> tuple[bool, bool]:
    import psutil

    from .stop import remaining

    in_session = any(proc.pid not in leaders for proc in remaining(sid))
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
