"""The end of a sandboxed standby's shell, seen from outside bubblewrap: so that its run ends with the shell.

A sandboxed standby is three processes: bubblewrap's monitor (the engine's child, outside the walls), bwrap's
pid 1 in the sandbox's pid namespace, and the shell below it.  Left to bwrap, a run ends in three steps: the
shell exits, pid 1 wakes and reaps it and tells the monitor, the monitor wakes and exits -- and the run's pipes,
which both held, close only then.  Two wake-ups more than an unconfined run's, each a scheduler's slice on a
loaded machine.  So a standby started inside hands the shell its pipes apart (bwrap closes every descriptor but
its own standard ones in its monitor and pid 1), and the run watches the shell itself: a pidfd says when it
has exited, and its exit status is read where the kernel keeps it -- in ``/proc/PID/stat`` while it waits to be
reaped, from the pidfd once reaped (``PIDFD_GET_INFO``, Linux 6.15).  Where neither says (an older kernel on
which pid 1 reaped it first), the run waits for the monitor as before.

The status is given as bwrap gives it: the shell's exit code, or 128 + N for a shell killed by signal N (what
bwrap's pid 1 makes of it), so a run reads the same whichever way its end was learned.  Both places hold the
status of the process's main thread: a program whose main thread ends before its others (``pthread_exit``)
and whose last thread then exits with another status is told the main thread's, as ``PIDFD_GET_INFO`` tells it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct

from .system import pidfd_open

__all__ = ["ShellEnd", "only_child"]

#: ``ioctl(PIDFD_GET_INFO)``: ``_IOWR(0xFF, 11, struct pidfd_info)`` of the first version (64 bytes).
_PIDFD_GET_INFO = 0xC040FF0B
#: ``PIDFD_INFO_EXIT``: ask for the exit status (there once the process is reaped).
_PIDFD_INFO_EXIT = 1 << 3
#: Where ``struct pidfd_info`` holds ``exit_code`` (after mask, cgroupid and eleven 32-bit ids).
_EXIT_CODE_AT = 60
#: Fields of ``/proc/PID/stat`` after the command's name: ``state`` is the first, ``exit_code`` (field 52) the
#: 50th; ``start_code`` (field 26) the 24th, which reads 1 to a reader not allowed to see the exit status.
_STATE, _START_CODE, _EXIT_CODE = 0, 23, 49


def only_child(pid: int) -> int | None:
    """The one child of process ``pid`` (``None``: none, several, or no way to tell: the
    ``/proc/PID/task/PID/children`` file is a kernel option)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            children = fh.read().split()
    except OSError:
        return None
    return int(children[0]) if len(children) == 1 else None


def _proc_dir(pid: int) -> int:
    """The ``/proc`` folder of process ``pid``, open: what is read in it is of that process, never of one given its
    pid after it ended (it then reads as gone)."""
    return os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def _stat_fields(proc_dir: int) -> list[bytes] | None:
    """The fields of the process's ``stat`` after its name (``None``: reaped, or unreadable)."""
    try:
        fd = os.open("stat", os.O_RDONLY | os.O_CLOEXEC, dir_fd=proc_dir)
    except OSError:
        return None
    try:
        return os.read(fd, 4096).rpartition(b")")[2].split()
    except OSError:  # ESRCH: reaped since it was opened
        return None
    finally:
        os.close(fd)


def _as_bwrap_says(wait_status: int) -> int:
    """A wait status as bwrap's pid 1 passes it on: the exit code, or 128 + N for death by signal N."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


class ShellEnd:
    """The shell of a sandboxed standby, watched from outside: a pidfd (readable once it has exited) and its
    ``/proc`` folder (which, held open, names that process and no other one given its pid later), and bwrap's
    pid 1's folder likewise.

    Without a pidfd (where exits are polled for: see :mod:`.system`) the run ends as bwrap tells it, but its
    pid 1 is still known: what the command left running inside is told apart from what left its session."""

    def __init__(self, pidfd: int | None, proc_dir: int, init: int, init_dir: int, shell: int) -> None:
        #: ``None``: not watched (the run waits for bwrap's monitor).
        self.pidfd = pidfd
        self._proc_dir = proc_dir
        #: bwrap's pid 1 (the shell's parent): the runner's own, which may outlive the shell a moment.
        self.init = init
        self._init_dir = init_dir
        self._shell = shell

    @classmethod
    def find(cls, runner: int) -> ShellEnd | None:
        """The shell below the bwrap monitor ``runner`` of a standby up and waiting (``None``: not found, or its
        exit status would not be readable here -- then its run ends as bwrap tells it)."""
        init = only_child(runner)
        if init is None:
            return None
        shell = only_child(init)
        if shell is None:
            return None
        try:
            init_dir = _proc_dir(init)
        except OSError:
            return None
        try:
            proc_dir = _proc_dir(shell)
        except OSError:
            os.close(init_dir)
            return None
        end = cls(pidfd_open(shell), proc_dir, init, init_dir, shell)
        fields = _stat_fields(proc_dir)
        # both folders are of the processes found (still each other's parent and child, below the runner), and
        # the shell's status will be ours to read
        if (fields is None or len(fields) <= _EXIT_CODE or fields[_START_CODE] == b"1"
                or only_child(runner) != init or only_child(init) != shell):
            end.close()
            return None
        return end

    def status(self) -> int | None:
        """How the shell ended, as bwrap tells it, once it has exited (``None``: not to be told here)."""
        fields = _stat_fields(self._proc_dir)
        if fields is not None:
            if fields[_STATE] != b"Z":  # not ended (asked too soon), or being reaped this instant
                return None
            return _as_bwrap_says(int(fields[_EXIT_CODE]))
        if self.pidfd is None:
            return None
        info = bytearray(struct.pack("=Q", _PIDFD_INFO_EXIT).ljust(64, b"\0"))
        try:
            fcntl.ioctl(self.pidfd, _PIDFD_GET_INFO, info)
        except OSError:  # before Linux 6.15
            return None
        if not struct.unpack_from("=Q", info)[0] & _PIDFD_INFO_EXIT:
            return None
        return _as_bwrap_says(struct.unpack_from("=i", info, _EXIT_CODE_AT)[0])

    def init_ending(self) -> bool:
        """Whether bwrap's pid 1 waits for nothing the command left (no child but the ended shell): it is then
        ending by itself, the runner's own.  One with children left waits for them, as it did before the run
        ended with the shell: what the command left running inside, which the run stops."""
        try:
            fd = os.open(f"task/{self.init}/children", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self._init_dir)
        except OSError:  # gone already (its pid may name another process by now)
            return True
        try:
            children = os.read(fd, 4096).split()
        except OSError:
            return True
        finally:
            os.close(fd)
        return all(child == b"%d" % self._shell for child in children)

    def close(self) -> None:
        for fd in (self.pidfd, self._proc_dir, self._init_dir):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pidfd, self._proc_dir, self._init_dir = None, -1, -1
