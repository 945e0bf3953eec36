"""One routine to stop a command and everything it started.

The ladder, as jupyter_client and psutil's kill-tree recipe do it: snapshot the
tree *before* signalling (a dying parent's children are re-parented and would
be lost), signal the process group, then each process of the snapshot, the
session and the environment marker; wait a grace period; SIGKILL what is left;
sweep again for anything forked meanwhile.  "Already gone" is normal, never an
error, so the routine is idempotent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .launch import MARKER_VAR
from .stop_report import StopReport
from .system import ENVIRON_OF_OTHERS

# psutil is imported by the functions that use it: every run imports this module (its standby asks
# `ignores`), few runs stop a tree, and psutil costs 7 ms to import
if TYPE_CHECKING:
    import psutil

__all__ = ["StopReport", "ignores", "marked_processes", "remaining", "session_members", "stop_tree"]

#: Rounds of "sweep, signal" after the SIGKILL, for processes forked while we were stopping.
_SWEEP_ROUNDS = 3

#: How long apart a member whose environment read empty is read again (0.25 s in all): long enough for
#: an ``exec`` preempted on a busy machine to finish.
_EXEC_WAITS = (0.002, 0.008, 0.04, 0.2)




def _alive(proc: psutil.Process) -> bool:
    """Running and not a zombie (a zombie has exited; only its parent's reaping is pending)."""
    import psutil

    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def session_members(sid: int) -> list[psutil.Process]:
    """Every live process whose session id is ``sid`` (the command's own session)."""
    import psutil

    members = []
    for pid in psutil.pids():
        try:
            if os.getsid(pid) == sid:
                members.append(psutil.Process(pid))
        except (ProcessLookupError, PermissionError, psutil.NoSuchProcess):
            continue
    return members


def marked_processes(marker: str, known: Iterable[int] = ()) -> list[psutil.Process]:
    """Processes that carry ``EXECMAGIC_RUN=marker`` in their environment (found even after ``setsid``).

    ``known``: pids already found by other means, whose environment is not read: reading a process's
    environment waits for its memory map's lock, which a process forking without end holds most of the
    time (64 of them took seconds)."""
    import psutil

    skip = {os.getpid(), *known}
    found = []
    for proc in psutil.process_iter():
        if proc.pid in skip:
            continue
        try:
            if proc.environ().get(MARKER_VAR) == marker:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def _carries(proc: psutil.Process, marker: str) -> bool | None:
    """Whether ``proc`` carries ``marker``; ``None`` when its environment reads empty, which is no answer:
    a process in the middle of ``execve`` shows an empty environment for an instant (its new memory map
    has none yet), and a preempted one for longer."""
    import psutil

    try:
        environment = proc.environ()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return False
    return environment.get(MARKER_VAR) == marker if environment else None


def _any_carries(members: list[psutil.Process], marker: str) -> bool:
    """Whether a member carries ``marker``; members whose environment read empty are read again after
    each of :data:`_EXEC_WAITS`, so one caught in an ``exec`` (the only one left once its shell exited)
    still proves the session ours.  A member started with ``env -i`` costs their sum."""
    unanswered = []
    for proc in members:
        carries = _carries(proc, marker)
        if carries:
            return True
        if carries is None:
            unanswered.append(proc)
    for wait in _EXEC_WAITS:
        if not unanswered:
            break
        time.sleep(wait)
        answers = [(proc, _carries(proc, marker)) for proc in unanswered]
        if any(answer for _, answer in answers):
            return True
        unanswered = [proc for proc, answer in answers if answer is None]
    return False


def _ours(pinned: bool, members: list[psutil.Process], marker: str | None) -> bool:
    """Whether session ``sid`` is still the one we started, so signalling it by number is safe.

    A session id is its leader's pid.  Once the leader is reaped that number can be given to a new
    process (pids wrap around: at 32768 on many systems, minutes on a busy machine), which may lead
    a session of its own -- someone else's.  So while our leader is not reaped (``pinned``: running,
    or exited and not yet waited for -- its pid cannot be reused) the session is ours; after that,
    only if one of its members carries our marker (a member that dropped it, ``env -u``, or whose
    environment is unreadable for the instant of an ``exec``, gives no proof).  Where other
    processes' environments cannot be read (macOS) there is no such proof: trust the number.
    """
    if pinned or marker is None or not ENVIRON_OF_OTHERS:
        return True
    return _any_carries(members, marker)


def _pinned(leader: subprocess.Popen[bytes] | None, sid: int | None) -> bool:
    """Whether session ``sid`` is led by ``leader`` and it is not reaped yet, so the number is still ours."""
    return leader is not None and leader.pid == sid and leader.returncode is None


def _snapshot(leader: subprocess.Popen[bytes] | None, sid: int | None, marker: str | None,
              roots: Iterable[psutil.Process] = ()) -> dict[int, psutil.Process]:
    """The tree's live processes: below ``leader`` and ``roots`` (processes of it found before, such as a
    pid namespace's init that outlived a reaped leader), in session ``sid``, carrying ``marker``."""
    import psutil

    procs: dict[int, psutil.Process] = {}
    tops = list(roots)
    if leader is not None and leader.returncode is None:  # not reaped: running, or its zombie keeps its pid
        with contextlib.suppress(psutil.NoSuchProcess):
            tops.insert(0, psutil.Process(leader.pid))
    for root in tops:
        with contextlib.suppress(psutil.NoSuchProcess):
            children = root.children(recursive=True)  # raises for a root that is gone (or its pid reused)
            procs[root.pid] = root
            for child in children:
                procs[child.pid] = child
    members = session_members(sid) if sid is not None else []
    if sid is not None and _ours(_pinned(leader, sid), members, marker):
        for proc in members:
            procs.setdefault(proc.pid, proc)
    if marker:
        for proc in marked_processes(marker, known=procs):
            procs[proc.pid] = proc
    procs.pop(os.getpid(), None)
    return {pid: p for pid, p in procs.items() if _alive(p)}


def remaining(sid: int, marker: str | None = None) -> list[psutil.Process]:
    """Live processes of session ``sid`` (and carrying ``marker``): what a stop would still have to do."""
    return list(_snapshot(None, sid, marker).values())


def _signal_all(sid: int | None, procs: Iterable[psutil.Process], sig: int) -> None:
    """``sig`` to the process group ``sid`` (``None``: not provably ours any more) and to each of ``procs``."""
    import psutil

    if sid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(sid, sig)
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            proc.send_signal(sig)


def ignores(pid: int, sig: int) -> bool:
    """Whether process ``pid`` ignores ``sig`` (Linux: its ``SigIgn`` mask; elsewhere: assume not).

    A shell without job control starts ``cmd &`` with SIGINT and SIGQUIT ignored, so the stop
    button's SIGINT cannot reach such a child: waiting a grace period for it is waiting for nothing.
    """
    try:  # one read of the raw file (a text file read line by line cost a standby's start 0.1 ms)
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
        try:
            status = os.read(fd, 16384)
        finally:
            os.close(fd)
        at = status.index(b"\nSigIgn:") + 8
        return bool(int(status[at:status.index(b"\n", at)], 16) >> (sig - 1) & 1)
    except (OSError, ValueError):
        return False


def _wait_gone(
    leader: subprocess.Popen[bytes] | None, procs: Sequence[psutil.Process], timeout: float, sent: int | None = None
) -> list[psutil.Process]:
    """Wait until every process is gone or ``timeout`` passes; return the ones still alive.

    ``sent``: the signal just sent.  Once every process left ignores it, the wait is over: the grace
    is for processes that may still act on the signal, not for those that cannot hear it.
    The leader is our child: it is reaped through ``Popen`` (psutil must not reap it,
    or ``Popen`` would lose its exit status).
    """
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        if leader is not None:
            leader.poll()
        alive = [p for p in procs if not (leader is not None and p.pid == leader.pid and leader.returncode is not None)]
        alive = [p for p in alive if _alive(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        if sent is not None and all(ignores(p.pid, sent) for p in alive):
            return alive
        time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
        delay = min(delay * 2, 0.05)


def stop_tree(
    sid: int | None,
    *,
    leader: subprocess.Popen[bytes] | None = None,
    marker: str | None = None,
    ladder: Sequence[int] = (signal.SIGTERM,),
    grace: float = 2.0,
) -> StopReport:
    """Stop the session ``sid`` (and ``marker``-carrying processes): each signal of ``ladder``, then SIGKILL.

    ``sid=None``: only the processes carrying ``marker`` (a run whose session was never reported).

    ``grace`` seconds are allowed after each signal of the ladder.  Returns a
    :class:`StopReport`; never raises for processes that are already gone.
    """
    snapshot = _snapshot(leader, sid, marker)
    if not snapshot:
        return StopReport()
    signalled = set(snapshot)
    alive = list(snapshot.values())
    # the group by number only while it is provably ours (see _ours); else each process we found
    group = sid if sid is not None and (sid in snapshot or _pinned(leader, sid)) else None
    for step, sig in enumerate(ladder):
        _signal_all(group, alive, sig)
        # before the ladder's next signal, processes deaf to this one (SIGINT to `cmd &`) are not waited
        # for; before SIGKILL every process gets the whole grace (ignoring TERM may mean "let me finish")
        alive = _wait_gone(leader, alive, grace, sent=sig if step < len(ladder) - 1 else None)
        if not alive:
            break
    killed: set[int] = set()
    for _ in range(_SWEEP_ROUNDS):
        late = _snapshot(leader, sid, marker, roots=alive)
        for pid, proc in late.items():
            if pid not in {p.pid for p in alive}:
                alive.append(proc)
        signalled.update(late)
        if not alive:
            break
        killed.update(p.pid for p in alive)
        _signal_all(group, alive, signal.SIGKILL)
        alive = _wait_gone(leader, alive, 1.0)
    if leader is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            leader.wait(timeout=1.0)
    return StopReport(
        signalled=tuple(sorted(signalled)),
        killed=tuple(sorted(killed)),
        survivors=tuple(sorted(p.pid for p in alive)),
    )
