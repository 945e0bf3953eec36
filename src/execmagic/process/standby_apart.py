"""A sandboxed standby's output pipes, handed to its shell apart from bubblewrap's own, so that its run ends with it.

bwrap's monitor and its pid 1 keep their standard descriptors open until they exit: a run whose stdout and
stderr were bwrap's own would reach their end only after both had woken and exited, two wake-ups after the
shell (see :mod:`.sandbox_end`).  Every other descriptor bwrap passes to the command and closes in both.  So a
sandboxed standby gets the run's two pipes as two more descriptors, and its boot line makes them its stdout and
stderr (``exec 1>&N 2>&M``) before it says it is up; bwrap's own stdout and stderr are two pipes of their own.

What the shell wrote to those before that -- bash's warnings as it starts (a locale that is not installed),
which a cold run writes to its stdout and stderr -- is read once it is up and put first in the run's pipes,
where a run reads it as it reads it from a cold start's.  Those pipes' read ends are closed then: bwrap writes
there only when it fails.
"""

from __future__ import annotations

import contextlib
import os
import subprocess

from .sandbox_end import ShellEnd

__all__ = ["Apart", "pipes"]

#: Bytes a read of the startup output takes at once.
_READ = 65536


class Apart:
    """The run's stdout and stderr pipes of one sandboxed standby, until its shell holds them (:meth:`settle`)."""

    def __init__(self) -> None:
        (out_read, out_write), (err_read, err_write) = pipes(2)
        self._fds = [out_read, out_write, err_read, err_write]
        self.reads = (out_read, err_read)
        #: The write ends, handed to the shell (and its boot line's ``exec 1>&N 2>&M``).
        self.writes = (out_write, err_write)

    def settle(self, runner: subprocess.Popen[bytes]) -> ShellEnd | None:
        """Once the shell is up: put what it wrote as it started first in the run's pipes, let go of our write
        ends and of bwrap's own pipes, make the run's pipes the runner's ``stdout``/``stderr``; and the shell's
        end, watched from outside (``None``: the run ends as bwrap tells it).  Raises ``OSError`` when the
        start wrote more than a pipe holds (the standby is then discarded: a cold run writes it all)."""
        for own, write in zip((runner.stdout, runner.stderr), self.writes, strict=True):
            assert own is not None
            started = _pending(own.fileno())
            if started:
                os.set_blocking(write, False)
                if os.write(write, started) != len(started):  # BlockingIOError past a pipe's worth, too
                    raise OSError("the standby wrote too much as it started")
            own.close()
        for write in self.writes:
            self._fds.remove(write)
            os.close(write)
        runner.stdout, runner.stderr = (open(fd, "rb") for fd in self.reads)  # noqa: SIM115 (the run closes them)
        self._fds = []
        return ShellEnd.find(runner.pid)

    def close(self) -> None:
        """Close what is still ours (a standby discarded before it settled, or a forked child's copy)."""
        fds, self._fds = self._fds, []
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def pipes(count: int) -> list[tuple[int, int]]:
    """``count`` new pipes, or none: those made are closed again when the next one cannot be (no descriptor
    left under ``RLIMIT_NOFILE``) -- a start that fails there must not take descriptors for good, or the next
    starts fail too."""
    made: list[tuple[int, int]] = []
    try:
        while len(made) < count:
            made.append(os.pipe())
    except BaseException:
        for fd in (fd for pipe in made for fd in pipe):
            os.close(fd)
        raise
    return made


def _pending(fd: int) -> bytes:
    """What the pipe at ``fd`` holds now, without waiting."""
    os.set_blocking(fd, False)
    data = []
    while True:
        try:
            piece = os.read(fd, _READ)
        except BlockingIOError:
            break
        if not piece:
            break
        data.append(piece)
    return b"".join(data)
