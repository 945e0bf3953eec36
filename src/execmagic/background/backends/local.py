"""Background shells as local processes: the default backend (see :mod:`.base`).

A local shell is a new session (its leader's pid is the session id) whose stdout and stderr are
pipes; the reader drains those pipes into the log files.  Stopping goes through
:func:`~execmagic.process.stop.stop_tree` (session, group and marker, then SIGKILL), the same
ladder foreground runs use, and the watchdog is told the session so a dead owner leaves nothing.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from typing import IO

from ...process.errors import UsageProblem, shown_value
from ...process.launch import launch
from ...process.spec import Command
from ...process.stop import StopReport, remaining, stop_tree
from ...process.system import pidfd_open
from .base import JobRecord

__all__ = ["LocalBackend", "LocalHandle"]

#: Without a pidfd (old kernels) exits are noticed by polling this often: cheap for a local wait().
_POLL_INTERVAL = 0.1


class LocalHandle:
    """A started local process: its ``Popen``, the marker its tree carries and its pipes."""

    poll_interval = _POLL_INTERVAL
    enforces_timeout = False  # the reader stops a local shell at its deadline

    def __init__(self, proc: subprocess.Popen[bytes], marker: str) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.job_id = str(proc.pid)
        self.marker = marker
        self.guard: tuple[int, str] | None = (proc.pid, marker)  # launch() made it a session leader
        self.streams: Mapping[str, int] = {"stdout": _take_pipe(proc.stdout), "stderr": _take_pipe(proc.stderr)}

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def exit_fd(self) -> int | None:
        return pidfd_open(self.pid)  # None: no pidfd here (see process.system), or the pid is already reaped

    def stop(self, sig: int, grace: float) -> StopReport:
        ladder = (sig,) if sig != signal.SIGKILL else ()
        return stop_tree(self.pid, leader=self.proc, marker=self.marker, ladder=ladder, grace=grace)

    def leftovers(self) -> bool:
        return bool(remaining(self.pid, self.marker))

    def describe(self) -> str | None:
        return None  # "running", "exited N", "killed by SIGSEGV" say it all

    def remove_files(self) -> None:
        """Nothing: a local shell has no files but the registry's logs."""

    def detach(self) -> None:
        """Nothing: a local shell ends with its owner (the registry stops it, or the watchdog)."""


def _take_pipe(pipe: IO[bytes] | None) -> int:
    """A non-blocking descriptor of ``pipe`` for the reader's selector; the file object is closed so
    the descriptor the reader owns is the only one left (EOF then means the shell closed it)."""
    assert pipe is not None
    fd = os.dup(pipe.fileno())
    pipe.close()
    os.set_blocking(fd, False)
    return fd


class LocalBackend:
    """Start background shells as local processes with :func:`~execmagic.process.launch.launch`."""

    name = "local"
    remote = False

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job") -> LocalHandle:
        """Launch ``command``; ``log_paths`` are not needed (the reader mirrors the pipes into them),
        nor is ``timeout`` (the reader applies it) or ``shell_id``."""
        return LocalHandle(launch(command, marker), marker)

    def reattach(self, job_id: str, *, marker: str) -> LocalHandle:
        """Local shells end with their owner (the watchdog stops them), so there is nothing to find again."""
        raise UsageProblem(f"local background shells cannot be reattached ({shown_value(job_id)}):"
                           " they end with their owner")

    def find_jobs(self) -> list[JobRecord]:
        """None: local shells end with their owner, so a new owner has nothing to find."""
        return []

    def foreground(self, command: Command, *, name: str) -> None:
        """``None``: a local foreground run is the command itself."""
        return None
