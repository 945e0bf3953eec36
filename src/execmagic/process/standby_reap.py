"""Reaping a standby's runner without waiting on it: killed and reaped when it is discarded (reaped when a standby
is next started or discarded if it is not ours to kill any more), or, killed as its sandboxed run ended with its
shell, a moment before bwrap's monitor would have (:mod:`.sandbox_end`), reaped a moment later by a thread that is
awake then anyway -- the one starting the next standby -- or, if it has not ended by then, by a thread of its own
as it ends: never left a zombie of this process for longer.

Not a thread woken at the end of every such run: its wake-up, and the interpreter's lock it takes, land on the run's
last steps (the result shown, the cell's reply) -- some 0.2 ms of a 5 ms cell, measured in a kernel.  The monitor
takes about as long to end once killed (0.4 ms), so the run cannot reap it at once without waiting either."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading

from .system import readable

__all__ = ["kill_and_reap", "reap_killed", "reap_later"]

#: Seconds a discard waits for its standby to end (see :func:`kill_and_reap`).
_REAP_WAIT = 1.0

_unreaped: list[subprocess.Popen[bytes]] = []  # runners that had not ended yet when they were let go
_killed: list[subprocess.Popen[bytes]] = []  # killed as their runs ended: reaped by the next start (reap_killed)


def kill_and_reap(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc`` with its process group (it leads its own session, so pgid == pid) and reap it, waiting
    at most :data:`_REAP_WAIT`: one that is not ours to kill any more (Python dropped root since it started) is
    left to end by itself -- its script pipe is closed first, and an end of input is an empty script -- and
    reaped later (:func:`_reap_ended`).  So a discard never blocks.

    Not :func:`~.stop.stop_tree`: a standby that never took a script started nothing of its own, so there
    is no tree to sweep by marker; a run that took it is stopped by its run, like any other.
    """
    reap_killed()
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if _ends_within(proc, _REAP_WAIT):
            proc.wait()
        else:
            _unreaped.append(proc)
    _reap_ended()


def _ends_within(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether ``proc`` ends within ``timeout`` seconds.  A pidfd says so the moment it does (``Popen.wait``
    with a timeout polls: a discard took three times as long)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except OSError:  # a kernel before 5.3, or reaped already
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        return readable(fd, timeout)
    finally:
        os.close(fd)


_ending: queue.SimpleQueue[subprocess.Popen[bytes]] = queue.SimpleQueue()  # killed: waited for by the reaper
_reaper: threading.Thread | None = None
_reaper_lock = threading.Lock()


def reap_later(proc: subprocess.Popen[bytes]) -> None:
    """Reap ``proc`` (killed: ending) soon, so that the run returns at once: by the next :func:`reap_killed`."""
    _killed.append(proc)


def reap_killed() -> None:
    """Reap the processes :func:`reap_later` was given that have ended; a thread waits for the others.  Called as
    a standby is started (after each such run, in the keeper's thread, a moment later: see ..engine.warm) or
    discarded, and as a run starts -- a look at an empty list, most times."""
    while _killed:
        try:
            proc = _killed.pop()
        except IndexError:  # another thread took the last meanwhile
            return
        with contextlib.suppress(OSError):
            if proc.poll() is not None:
                continue
        _wait_in_thread(proc)


def _wait_in_thread(proc: subprocess.Popen[bytes]) -> None:
    """Reap ``proc`` as it ends, in a thread that waits for it."""
    global _reaper
    _ending.put(proc)
    if _reaper is None:
        with _reaper_lock:
            if _reaper is None:
                _reaper = threading.Thread(target=_reap_each, name="execmagic-reaper", daemon=True)
                _reaper.start()


def _reap_each() -> None:
    while True:
        proc = _ending.get()
        with contextlib.suppress(OSError):
            proc.wait()


def _reap_ended() -> None:
    """Reap the runners let go of before they ended, those that have ended since (best effort)."""
    for proc in list(_unreaped):
        with contextlib.suppress(OSError):
            if proc.poll() is None:
                continue
        with contextlib.suppress(ValueError):  # another thread took it meanwhile
            _unreaped.remove(proc)


def _after_fork_in_child() -> None:
    global _ending, _reaper, _reaper_lock
    _unreaped.clear()  # the parent's children
    _killed.clear()
    _ending, _reaper, _reaper_lock = queue.SimpleQueue(), None, threading.Lock()  # and the parent's thread


os.register_at_fork(after_in_child=_after_fork_in_child)
