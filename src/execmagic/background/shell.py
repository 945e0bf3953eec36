"""The mutable state of one background shell and of its log streams (mutable state lives only
in the registry and its shells; everything else passes frozen values).

Kept apart from the registry and the reader so both can share it without one reaching into the
other, and free of any backend detail: a status is derived from the handle's POSIX-style return
code and from what we did to the shell, nothing else.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import time
from collections.abc import Callable

from ..process.clock import now_iso
from ..process.private import create_unique, make_folder
from ..process.results import ShellInfo, exit_code_of, signal_name
from . import cursors
from .backends.base import STREAMS, Handle

__all__ = ["Shell", "Stream", "open_logs"]


@dataclasses.dataclass
class Stream:
    """One stream of a shell: the descriptor the reader drains and the log file it appends to."""

    name: str
    pipe_fd: int | None  # None once the stream reached EOF (or the reader gave up on it)
    log_path: str
    log_fd: int
    size: int = 0  # bytes in the log: every read and cursor is an offset below this
    lost: int = 0  # bytes drained but not written (the log could not be written)


def open_logs(log_dir: str, label: str) -> dict[str, tuple[str, int]]:
    """Create the shell's log files before it starts, so a shell we could not log is never started:
    ``{stream: (path, append-only descriptor)}``.  New files only, 0600 (see :mod:`~execmagic.process.private`):
    they hold whatever the command prints, and a file already there is never written through."""
    make_folder(log_dir)  # 0700 when missing (the engine's own folder was checked before: see LogDir)
    logs: dict[str, tuple[str, int]] = {}
    try:
        for name in STREAMS:
            logs[name] = create_unique(log_dir, f"{label}.{name}", ".log", os.O_WRONLY | os.O_APPEND)
    except OSError:
        for _path, fd in logs.values():
            os.close(fd)
        raise
    return logs


def _age(started_at: str | None) -> float:
    """Seconds since ``started_at`` (ISO 8601 with an offset); 0 when unknown or in the future."""
    if not started_at:
        return 0.0
    try:
        then = datetime.datetime.fromisoformat(started_at)
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        return 0.0
    return max((datetime.datetime.now(datetime.timezone.utc) - then).total_seconds(), 0.0)


class Shell:
    """One background shell; every field is guarded by the registry's condition."""

    def __init__(self, shell_id: str, handle: Handle, command: str, cwd: str, marker: str,
                 streams: dict[str, Stream], timeout: float | None, backend: str = "local",
                 started_at: str | None = None, on_end: Callable[[int | None], int | None] | None = None) -> None:
        self.id = shell_id
        self.backend = backend
        self.handle = handle
        self.command = command
        self.cwd = cwd
        self.marker = marker
        self.streams = streams
        self.timeout = timeout
        self.started_at = started_at or now_iso("seconds")
        self.start = time.monotonic() - _age(started_at)  # a job taken over ran before we knew it
        self.deadline = self.start + timeout if timeout and not handle.enforces_timeout else None
        self.ended: float | None = None
        self.stopped_as: str | None = None  # "killed" or "timed out" when we stopped it
        self.cursors: dict[str, dict[str, int]] = {}
        self.exit_fd: int | None = None  # readable when the shell ends (watched by the reader)
        self.failure: str | None = None  # why the reader gave up on this shell
        #: Asked once, as the shell is seen to end, which line of its script failed, given its exit code
        #: (``None``: we stopped it, its status is not its script's); what its owner (the engine) knows of it.
        self.on_end = on_end
        self.failed_line: int | None = None

    @property
    def running(self) -> bool:
        return self.handle.returncode is None

    @property
    def drained(self) -> bool:
        """Every stream reached EOF: nothing more will reach the logs."""
        return all(s.pipe_fd is None for s in self.streams.values())

    def notice_exit(self) -> bool:
        """Reap the shell if it ended and record when; True only the first time (callers hold the
        condition and tell the watchdog then)."""
        self.handle.poll()
        if self.handle.returncode is not None and self.ended is None:
            self.ended = time.monotonic()
            if self.on_end is not None:
                stopped = self.stopped_as is not None or self.failure is not None or self.handle.returncode < 0
                self.failed_line = self.on_end(None if stopped else self.exit_code())
            return True
        return False

    def readable_end(self, name: str, start: int, whole_lines: bool) -> int:
        """Where a read of stream ``name`` from ``start`` may stop (see :func:`.cursors.readable_end`)."""
        stream = self.streams[name]
        return cursors.readable_end(stream.log_path, start, stream.size,
                                    growing=self.running or stream.pipe_fd is not None, whole_lines=whole_lines)

    def status(self) -> str:
        rc = self.handle.returncode
        words = self.handle.describe()
        if rc is None:
            return words or "running"
        if self.failure:
            return f"failed: {self.failure}"
        if self.stopped_as and (rc < 0 or self.stopped_as != "killed"):
            # a shell that caught the signal and exited on its own terms ended with its own code:
            # "exited 7" says that; "killed" would hide the code its trap chose
            return self.stopped_as
        if words:
            return words
        if rc < 0:
            return f"killed by {signal_name(-rc)}"
        return f"exited {rc}"

    def exit_code(self) -> int | None:
        """The shell's convention for a signal death (128 + signal), as a shell's ``$?`` shows it."""
        rc = self.handle.returncode
        if rc is None:
            return None
        return exit_code_of(rc)[0]

    def info(self) -> ShellInfo:
        end = self.ended if self.ended is not None else time.monotonic()
        return ShellInfo(
            id=self.id, pid=self.handle.pid, command=self.command, cwd=self.cwd, status=self.status(),
            running=self.running, started_at=self.started_at, runtime_s=round(end - self.start, 3),
            exit_code=self.exit_code(), stdout_bytes=self.streams["stdout"].size,
            stderr_bytes=self.streams["stderr"].size,
            log_paths={name: s.log_path for name, s in self.streams.items()}, timeout=self.timeout,
            lost_bytes=sum(s.lost for s in self.streams.values()),
            # a job that outlives its owner (a cluster's: no watchdog guard) is known by its id; a process by its pid
            backend=self.backend, job_id=self.handle.job_id if self.handle.guard is None else None,
            failed_line=self.failed_line,
        )
