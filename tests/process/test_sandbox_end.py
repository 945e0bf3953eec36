"""A sandboxed shell's end, read from outside bubblewrap: how it ended, whether bwrap's pid 1 has reaped it or not.

Real bwrap, real signals: the shell waits on a pipe, then ends as each case says; its status is read as it is a
zombie (bwrap's pid 1 held still, so that it cannot reap it) and once reaped (bwrap gone).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess

import psutil
import pytest

from execmagic.process.sandbox_bwrap import base_args
from execmagic.process.sandbox_end import ShellEnd, only_child
from execmagic.process.sandbox_session import HOST_ENV
from execmagic.process.sandbox_spec import SandboxSpec
from execmagic.process.system import PIDFD
from waiting import wait_until

UP = 10.0  # seconds bwrap may take to start its shell on a busy machine (awaited, not slept)
#: How each script ends, as bwrap's own exit status says it.
ENDS = [("exit 3", 3), ("kill -KILL $$", 137), ("kill -TERM $$", 143), ("kill -SEGV $$", 139), ("true", 0),
        ("exec sh -c 'exit 7'", 7)]


@pytest.fixture
def sandboxed(bwrap_works):
    """``start(script)``: bwrap running ``bash -c`` that waits for a byte on a pipe, then runs ``script``; returns
    the bwrap process, the pipe's write end and the shell's end."""
    if not PIDFD:
        pytest.skip("no pidfd here: a sandboxed run ends as bwrap tells it")
    started = []

    def start(script: str) -> tuple[subprocess.Popen[bytes], int, ShellEnd]:
        read, write = os.pipe()
        argv = [*base_args(bwrap_works.bwrap, SandboxSpec(mode="read-only"), bwrap_works.userns), "--",
                "bash", "-c", f"read -r -u {read} _; {script}"]
        proc = subprocess.Popen(argv, pass_fds=(read,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, **HOST_ENV})
        os.close(read)
        started.append((proc, write))
        init = wait_until(lambda: only_child(proc.pid), UP, "bwrap's pid 1")
        wait_until(lambda: only_child(init), UP, "the shell under it")
        end = wait_until(lambda: ShellEnd.find(proc.pid), UP, "the shell's end to be found")
        return proc, write, end

    yield start
    for proc, write in started:
        with contextlib.suppress(OSError):
            os.close(write)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()


@pytest.mark.parametrize(("script", "said"), ENDS)
def test_a_shell_that_bwrap_has_not_reaped_is_read_as_bwrap_reads_it(sandboxed, script, said):
    proc, write, end = sandboxed(script)
    init = only_child(proc.pid)
    assert init is not None and end.status() is None  # still waiting
    os.kill(init, signal.SIGSTOP)  # it cannot reap the shell: the shell stays a zombie
    try:
        os.write(write, b"\n")
        assert select.select([end.pidfd], [], [], UP)[0]
        assert end.status() == said
    finally:
        os.kill(init, signal.SIGCONT)
        end.close()
    assert proc.wait() == said  # and bwrap, once it goes on, says the same


@pytest.mark.parametrize(("script", "said"), ENDS)
def test_a_shell_that_bwrap_reaped_is_read_from_its_pidfd_where_the_kernel_keeps_it(sandboxed, script, said):
    """Linux 6.15 keeps a reaped process's status for its pidfd; before, nothing says (the run then waits for
    bwrap's exit)."""
    proc, write, end = sandboxed(script)
    os.write(write, b"\n")
    try:
        assert proc.wait() == said  # bwrap's pid 1 reaped the shell before bwrap ended
        assert end.status() in (said, None)
        if end.status() is None:
            pytest.skip(f"this kernel ({os.uname().release}) keeps no status for a reaped process's pidfd")
    finally:
        end.close()


def _state(pid: int) -> bytes:
    """The state letter of process ``pid`` (``Z``: ended, not reaped)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rpartition(b")")[2].split()[0]


def _sleeping_child(pid: int) -> int | None:
    """The one child of ``pid`` once it runs ``sleep``."""
    child = only_child(pid)
    if child is None:
        return None
    with contextlib.suppress(OSError), open(f"/proc/{child}/comm", encoding="ascii") as fh:
        if fh.read().strip() == "sleep":
            return child
    return None


def _given_again(pid: int, script: str = "exit 9", tries: int = 50) -> subprocess.Popen[bytes] | None:
    """A process running ``script`` (by default: ended with status 9, a zombie not reaped) under ``pid``, a number
    freed a moment ago (``None``: another process took it each time, on a busy machine)."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w", encoding="ascii") as fh:
            fh.write(str(pid - 1))
        proc = subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL)
        if proc.pid == pid:
            return proc
        proc.kill()
        proc.wait()
    return None


def test_a_shell_whose_pid_is_given_again_is_read_as_it_ended_not_as_the_next_process(sandboxed):
    """The shell's ``/proc`` folder is held open from the start: once it is reaped, its pid may name another
    process (here one ended with another status), which a read by number would take for the shell."""
    if os.geteuid() != 0:
        pytest.skip("only root sets the next pid (ns_last_pid)")
    proc, write, end = sandboxed("exit 3")
    shell = end._shell
    os.write(write, b"\n")
    assert proc.wait() == 3  # bwrap's pid 1 reaped the shell: its number is free
    other = _given_again(shell)
    if other is None:
        pytest.skip("another process took the shell's pid each time")
    try:
        wait_until(lambda: _state(shell) == b"Z", UP, "the next process under the shell's pid to have ended")
        assert end.status() in (3, None)  # None: a kernel that keeps no status for a reaped process's pidfd
    finally:
        other.wait()
        end.close()


def test_a_pid_1_whose_pid_is_given_again_is_not_read_as_waiting_for_what_the_next_process_started(sandboxed):
    """Whether bwrap's pid 1 still waits for something the command left is read from its own ``/proc`` folder,
    held open: once it has ended, its pid may name another process, with children of its own."""
    if os.geteuid() != 0:
        pytest.skip("only root sets the next pid (ns_last_pid)")
    proc, write, end = sandboxed("exit 0")
    init = end.init
    os.write(write, b"\n")
    assert proc.wait() == 0
    wait_until(lambda: not os.path.exists(f"/proc/{init}"), UP, "bwrap's pid 1 to be gone and reaped")
    # its child is not numbered as the shell was, the pid after pid 1's
    other = _given_again(init, "/bin/true; /bin/true; sleep 30 & wait")
    if other is None:
        pytest.skip("another process took pid 1's pid each time")
    try:
        child = wait_until(lambda: _sleeping_child(init), UP, "the next process under pid 1's pid to have its child")
        assert child != end._shell
        assert end.init_ending()  # pid 1 is gone: it waits for nothing
    finally:
        for child in psutil.Process(other.pid).children():
            child.kill()
        other.kill()
        other.wait()
        end.close()
