"""Reaping a standby's runner without waiting on it: killed and reaped when it is discarded, a moment later when
it is not ours to kill any more, or when its sandboxed run ended with its shell before bwrap's monitor
(:mod:`.sandbox_end`).  What has not ended yet is reaped when a standby is next started or discarded."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess

__all__ = ["kill_and_reap", "reap_ended", "reap_later"]

#: Seconds a discard waits for its standby to end (see :func:`kill_and_reap`).
_REAP_WAIT = 1.0

_unreaped: list[subprocess.Popen[bytes]] = []  # runners that had not ended yet when they were let go


def kill_and_reap(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``proc`` with its process group (it leads its own session, so pgid == pid) and reap it, waiting
    at most :data:`_REAP_WAIT`: one that is not ours to kill any more (Python dropped root since it started) is
    left to end by itself -- its script pipe is closed first, and an end of input is an empty script -- and
    reaped later (:func:`reap_ended`).  So a discard never blocks.

    Not :func:`~.stop.stop_tree`: a standby that never took a script started nothing of its own, so there
    is no tree to sweep by marker; a run that took it is stopped by its run, like any other.
    """
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if _ends_within(proc, _REAP_WAIT):
            proc.wait()
        else:
            _unreaped.append(proc)
    reap_ended()


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
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def reap_later(proc: subprocess.Popen[bytes]) -> None:
    """Reap ``proc`` (killed, ending) once it has ended: now if it has, else when a standby is next started or
    discarded -- a sandboxed run ends with its shell, a moment before bwrap's monitor (see :mod:`.sandbox_end`)."""
    _unreaped.append(proc)
    reap_ended()


def reap_ended() -> None:
    """Reap the runners let go of before they ended, those that have ended since (best effort)."""
    for proc in list(_unreaped):
        with contextlib.suppress(OSError):
            if proc.poll() is None:
                continue
        with contextlib.suppress(ValueError):  # another thread took it meanwhile
            _unreaped.remove(proc)


def _after_fork_in_child() -> None:
    _unreaped.clear()  # the parent's children


os.register_at_fork(after_in_child=_after_fork_in_child)
