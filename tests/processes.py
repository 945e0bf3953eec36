"""Finding processes a test left behind, by a marker in their environment."""

from __future__ import annotations

import contextlib
import os
import re
import time

import psutil
import pytest

TOKEN_VAR = "EXECMAGIC_TEST_TOKEN"


#: How a standby's boot line names the pipe its script comes through.
_STANDBY_SCRIPT_FD = re.compile(r"builtin read -r -N 2147483647 -u (\d+) ")


def idle_standby(proc: psutil.Process, env: dict[str, str]) -> bool:
    """Whether ``proc`` is an engine's standby shell that has run nothing yet: still holding the pipe its
    script comes through (a run closes it first thing).  In a sandbox, bubblewrap's two processes around
    such a shell are part of it."""
    if "-standby-" not in env.get("EXECMAGIC_RUN", ""):
        return False
    argv = proc.cmdline()
    if len(argv) > 4 and os.path.basename(argv[0]) == "bwrap" and argv[-4:-1] == ["--", "bash", "-c"]:
        return any(idle_standby(child, child.environ()) for child in proc.children(recursive=True))
    if len(argv) != 3 or argv[:2] != ["bash", "-c"]:
        return False
    fd = _STANDBY_SCRIPT_FD.search(argv[2])
    return fd is not None and os.path.exists(f"/proc/{proc.pid}/fd/{fd.group(1)}")


def idle_standbys_of(pid: int) -> tuple[int, ...]:
    """The pids of the idle standby shells process ``pid`` started."""
    found = []
    for child in psutil.Process(pid).children():
        try:
            if idle_standby(child, child.environ()):
                found.append(child.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return tuple(found)


def processes_with(var: str, value: str, exclude: tuple[int, ...] = (), watchdogs: bool = True) -> list[psutil.Process]:
    """Live (non-zombie) processes whose environment has ``var=value`` (``watchdogs=False``: not the watchdogs,
    nor the standby shells of a module-wide engine that have run nothing yet)."""
    found = []
    skip = {os.getpid(), *exclude}
    for proc in psutil.process_iter():
        if proc.pid in skip:
            continue
        try:
            env = proc.environ()
            if env.get(var) == value and proc.status() != psutil.STATUS_ZOMBIE:
                if not watchdogs and ("EXECMAGIC_WATCHDOG" in env or idle_standby(proc, env)):
                    continue
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def commands_with(var: str, value: str) -> set[str]:
    """The command lines (argv joined by spaces) of the live processes marked ``var=value``: what a test
    waits on to know the processes it started are up."""
    found = set()
    for proc in processes_with(var, value):
        try:
            found.add(" ".join(proc.cmdline()))
        except psutil.NoSuchProcess:  # ended since it was found
            continue
    return found


def assert_none_left(var: str, value: str, exclude: tuple[int, ...] = (), wait: float = 1.0,
                     watchdogs: bool = True) -> None:
    """Fail (after killing them) if processes marked ``var=value`` are still alive after ``wait`` seconds.

    ``watchdogs=False`` lets a watchdog live on: one that a module-wide engine started
    outlives single tests by design, and its own tests prove it ends.  So does such an
    engine's standby shell while it waits for a script (it has run nothing of the test's).
    """
    deadline = time.monotonic() + wait
    while True:
        left = processes_with(var, value, exclude, watchdogs)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if left:
        described = [f"{p.pid} {' '.join(p.cmdline())}" for p in left if p.is_running()]
        for proc in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        pytest.fail(f"processes left behind: {described}")


def pid_alive(pid: int) -> bool:
    """Running and not a zombie."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
