"""The pipes of one foreground run: read both streams, feed stdin, notice the exit, honour a cancel.

Kept apart from the loop that drives it (:mod:`.foreground`): this part knows file
descriptors and the selector; the loop knows deadlines, interrupts and stopping.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import selectors
import subprocess
import time
from collections.abc import Callable

from .capture import StreamRecorder
from .sandbox_end import ShellEnd
from .system import pidfd_open

__all__ = ["CancelToken", "Cancelled", "OutputCallback", "ProgressCallback", "Pump", "grow_pipe"]

#: Bytes asked for per read, and the pipe size asked for (Linux, ``F_SETPIPE_SZ``; 1 MiB is what an
#: unprivileged process may set by default): a fast writer then fills a megabyte between two wakes
#: of the loop instead of 64 KiB -- a sixteenth of the reads and loop turns for a 200 MB stream.
_READ_SIZE = 1 << 20
_PIPE_SIZE = 1 << 20
#: Characters of live text held between two flushes at most: a stream faster than this per flush
#: interval is handed over early, so memory stays bounded whatever the command prints (the
#: display budget keeps the cell from flooding either way).
_PENDING_LIMIT = 1 << 20

OutputCallback = Callable[[str, str], None]
"""``on_output(stream, text)`` with stream ``"stdout"`` or ``"stderr"``; called in the caller's thread."""
ProgressCallback = Callable[[float, int], None]
"""``on_progress(elapsed_seconds, bytes_so_far)``; called in the caller's thread."""


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether ``proc`` exited, without reaping it (``WNOWAIT``; see :meth:`Pump._note_exit`)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except (AttributeError, ChildProcessError):  # no waitid here, or reaped elsewhere: ask Popen
        return proc.poll() is not None


class CancelToken:
    """Stops a run from another thread (an asyncio task being cancelled, an agent's deadline).

    A pipe, so the run's selector wakes the moment it is cancelled; close it after the run.
    """

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        self.cancelled = False

    def fileno(self) -> int:
        return self._read_fd

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            with contextlib.suppress(OSError):
                os.write(self._write_fd, b"x")

    def close(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def grow_pipe(fd: int) -> None:
    """Ask for a bigger pipe buffer where the OS allows it (a smaller one only costs speed)."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, _PIPE_SIZE)


def ready_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Make ``proc``'s output pipes what a run reads: not blocking, grown.  A standby's are made so as it starts
    (in the thread that starts it), and its run's :class:`Pump` is told (``ready``): six ``fcntl`` calls fewer
    on the cell's thread before the command's output is read, 30-50 µs there."""
    for pipe in (proc.stdout, proc.stderr):
        assert pipe is not None
        os.set_blocking(pipe.fileno(), False)
        grow_pipe(pipe.fileno())


class Cancelled(Exception):
    """Raised inside the run loop when its :class:`CancelToken` fires."""


class Pump:
    """The state of one run's loop: pipes, recorders, pending live output."""

    def __init__(self, proc: subprocess.Popen[bytes], recorders: dict[str, StreamRecorder],
                 stdin_data: bytes | None, on_output: OutputCallback | None, cancel: CancelToken | None,
                 shell_end: ShellEnd | None = None, ready: bool = False) -> None:
        """``ready``: :func:`ready_pipes` was done to ``proc`` (a standby's, as it started)."""
        self.proc = proc
        self.recorders = recorders
        self.on_output = on_output
        #: Live text not yet handed to ``on_output``: runs of pieces per stream, joined once at the flush
        #: (appending to one string would copy it again at every read: quadratic on a fast stream).
        self.pending: list[tuple[str, list[str]]] = []
        self._pending_chars = 0
        self.selector = selectors.DefaultSelector()
        self.open_streams: dict[int, str] = {}
        assert proc.stdout is not None and proc.stderr is not None
        if not ready:
            ready_pipes(proc)
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            fd = pipe.fileno()
            self.selector.register(fd, selectors.EVENT_READ, name)
            self.open_streams[fd] = name
        self.stdin_data = memoryview(stdin_data) if stdin_data is not None else None
        if self.stdin_data is not None and proc.stdin is not None:
            fd = proc.stdin.fileno()
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_WRITE, "stdin")
        #: A sandboxed standby's shell, watched in bwrap's stead until it ends (see :mod:`.sandbox_end`); not
        #: where it has no pidfd (exits are polled for: bwrap's monitor is, as for any run).
        self.shell_end = shell_end if shell_end is not None and shell_end.pidfd is not None else None
        #: How the command ended, when its shell told it (bwrap's monitor may still be exiting then).
        self.status: int | None = None
        self.pidfd = pidfd_open(proc.pid) if self.shell_end is None else None  # None: polled for (see .system)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, "exit")
        if self.shell_end is not None and self.shell_end.pidfd is not None:
            self.selector.register(self.shell_end.pidfd, selectors.EVENT_READ, "shell")
        self.exited_at: float | None = None
        if cancel is not None:
            self.selector.register(cancel.fileno(), selectors.EVENT_READ, "cancel")

    # -- events ----------------------------------------------------------------
    def handle(self, timeout: float | None) -> None:
        for key, _mask in self.selector.select(timeout):
            if key.data == "cancel":
                raise Cancelled
            if key.data == "exit":
                self._note_exit()
            elif key.data == "shell":
                self._note_shell_end()
            elif key.data == "stdin":
                self._write_stdin(key.fd)
            else:
                self._read(key.fd)
        if self.polled and self.exited_at is None and _has_exited(self.proc):
            self.exited_at = time.monotonic()

    @property
    def polled(self) -> bool:
        """Whether the command's exit is polled for (no pidfd tells it)."""
        return self.pidfd is None and self.shell_end is None

    def _note_shell_end(self) -> None:
        """The sandboxed shell exited: the command's end, told by the kernel; where it cannot tell how it
        ended, bwrap's monitor is waited for, as in any run."""
        shell = self.shell_end
        assert shell is not None and shell.pidfd is not None
        self.selector.unregister(shell.pidfd)
        self.shell_end = None
        self.status = shell.status()
        if self.status is not None:
            self.exited_at = time.monotonic()
            return
        self.pidfd = pidfd_open(self.proc.pid)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, "exit")

    def _note_exit(self) -> None:
        """The command exited.  It is not reaped here: until the run reaps it, its pid -- the number of its
        process session -- cannot be given to another process, so stopping what it left in that session
        needs no other proof that the session is ours (see :func:`~.stop.stop_tree`)."""
        assert self.pidfd is not None
        self.selector.unregister(self.pidfd)
        os.close(self.pidfd)
        self.pidfd = None
        self.exited_at = time.monotonic()

    def _write_stdin(self, fd: int) -> None:
        assert self.stdin_data is not None
        try:
            written = os.write(fd, self.stdin_data[:_READ_SIZE])
            self.stdin_data = self.stdin_data[written:]
        except BlockingIOError:
            return
        except OSError as exc:  # the command closed its stdin: what it did not read is not ours to force
            if exc.errno != errno.EPIPE:
                raise
            self.stdin_data = self.stdin_data[:0]
        if not len(self.stdin_data):
            self.close_stdin()

    def close_stdin(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(self.proc.stdin.fileno())
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def _read(self, fd: int) -> None:
        name = self.open_streams[fd]
        try:
            data = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return
        if data:
            self._queue(name, self.recorders[name].feed(data))
        else:
            self._close_stream(fd)

    def _close_stream(self, fd: int) -> None:
        name = self.open_streams.pop(fd)
        self.selector.unregister(fd)
        self._queue(name, self.recorders[name].live_remainder())

    def drain_nonblocking(self) -> None:
        """Read what is left in the pipes without waiting (after the writers were stopped)."""
        for fd in list(self.open_streams):
            while True:
                try:
                    data = os.read(fd, _READ_SIZE)
                except BlockingIOError:
                    break
                if not data:
                    self._close_stream(fd)
                    break
                self._queue(self.open_streams[fd], self.recorders[self.open_streams[fd]].feed(data))

    def _queue(self, name: str, text: str) -> None:
        if not text:
            return
        if self.pending and self.pending[-1][0] == name:
            self.pending[-1][1].append(text)
        else:
            self.pending.append((name, [text]))
        self._pending_chars += len(text)
        if self._pending_chars >= _PENDING_LIMIT:
            self.flush()

    def flush(self) -> None:
        pending, self.pending, self._pending_chars = self.pending, [], 0
        if self.on_output is not None:
            for name, pieces in pending:
                self.on_output(name, "".join(pieces))

    def close(self) -> None:
        self.close_stdin()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        self.selector.close()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()

    @property
    def total_bytes(self) -> int:
        return sum(r.total for r in self.recorders.values())
