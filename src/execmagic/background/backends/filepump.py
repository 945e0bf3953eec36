"""The pipes a remote job's output reaches the registry's reader through, and the moment it ended:
what every backend whose jobs run elsewhere needs, since no process of ours writes their output.

A :class:`Pipe` holds what it could not take yet (the rest goes on the next call), so a backend's
one poller thread (:mod:`.poller`) feeds every job's streams without blocking on any; a backend
that decodes its job's output itself (Ray's one log) pushes into it.  A :class:`FileStream` is a
pipe fed from a file the job writes into a folder shared with the kernel (SLURM's): it remembers
how far the file was copied.  The registry's reader then mirrors the pipe into the shell's own
logs, and cursors, filter, wait and follow work as for a local shell.

:class:`JobEnd` is the other half every such backend needs: the moment the job ended, for the reader
(a descriptor that becomes readable: no polling) and for the backend's own waits (an event).
"""

from __future__ import annotations

import contextlib
import os
import threading

from ...process.pump import grow_pipe

__all__ = ["FileStream", "JobEnd", "Pipe"]

_READ_SIZE = 1 << 16


class Pipe:
    """One stream's pipe to the registry's reader (:attr:`read_fd`), with what it could not take yet:
    a backend's one thread feeds every job's pipes and never blocks on a full one."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        grow_pipe(self.write_fd)  # a megabyte a tick, not 64 KB: a chatty job's output keeps up
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.pending = b""  # taken from the job, not yet taken by the pipe

    @property
    def open(self) -> bool:
        return self.write_fd >= 0

    def push(self, data: bytes) -> None:
        if self.open:  # a closed pipe (its owner let the job go) takes nothing more
            self.pending += data

    def flush(self) -> bool:
        """Move what is pending into the pipe; True when nothing is left pending."""
        try:
            while self.pending and self.open:
                self.pending = self.pending[os.write(self.write_fd, self.pending):]
        except BlockingIOError:  # the pipe is full: the reader takes it, the rest goes next time
            return False
        except BrokenPipeError:  # the reader closed its end (its owner closed): nobody wants more
            self.close()
        return True

    def close(self) -> None:
        """End the stream (the reader sees EOF once it drained the pipe)."""
        if self.open:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = -1
        self.pending = b""


class FileStream(Pipe):
    """One job file being copied into the pipe the registry's reader drains (:attr:`read_fd`)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.offset = 0

    def exists(self) -> bool:
        """Whether the job created its file yet (it started, for a job whose files appear at its start)."""
        return os.path.exists(self.path)

    def copy(self) -> bool:
        """Move what the file grew by into the pipe (as much as it takes); True when all is in."""
        while self.flush():
            if not self.open:
                return True
            self.pending = self._read()
            if not self.pending:
                return True
        return False

    def _read(self) -> bytes:
        """The next chunk the file grew by (empty: nothing new, or no file yet: the job has not started)."""
        try:
            if os.stat(self.path).st_size <= self.offset:  # nothing new: no need to open it
                return b""
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read(_READ_SIZE)
        except FileNotFoundError:
            return b""
        self.offset += len(data)
        return data


class JobEnd:
    """When a job elsewhere ended: :meth:`fd` gives the reader a descriptor that becomes readable then
    (the read end of a pipe whose write end :meth:`set` closes), and :attr:`event` is set then.

    A descriptor asked for after the end is readable at once; one asked for while :meth:`set` runs is
    either closed by it or made readable here -- never left waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writers: list[int] = []
        self._done = False
        #: Set when the job ended (for the backend's own waits: a stop's grace, a cancel).
        self.event = threading.Event()

    def fd(self) -> int:
        read_fd, write_fd = os.pipe()
        with self._lock:
            if not self._done:
                self._writers.append(write_fd)
                return read_fd
        os.close(write_fd)
        return read_fd

    def set(self) -> None:
        with self._lock:
            self._done = True
            writers, self._writers = self._writers, []
        for fd in writers:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.event.set()
