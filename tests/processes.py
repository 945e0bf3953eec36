"""Finding processes a test left behind, by a marker in their environment."""

from __future__ import annotations

import os
import time

import psutil
import pytest

TOKEN_VAR = "EXECMAGIC_TEST_TOKEN"


def processes_with(var: str, value: str, exclude: tuple[int, ...] = ()) -> list[psutil.Process]:
    """Live (non-zombie) processes whose environment has ``var=value``."""
    found = []
    skip = {os.getpid(), *exclude}
    for proc in psutil.process_iter():
        if proc.pid in skip:
            continue
        try:
            if proc.environ().get(var) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def assert_none_left(var: str, value: str, exclude: tuple[int, ...] = (), wait: float = 1.0) -> None:
    """Fail (after killing them) if processes marked ``var=value`` are still alive after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        left = processes_with(var, value, exclude)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if left:
        described = [f"{p.pid} {' '.join(p.cmdline())}" for p in left if p.is_running()]
        for proc in left:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        pytest.fail(f"processes left behind: {described}")
