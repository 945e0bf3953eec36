"""Shared fixtures: every test that starts processes proves they are gone afterwards.

Each test runs with a unique ``EXECMAGIC_TEST_TOKEN`` in the environment, which
every process it starts (and their descendants) inherits; after the test, no
live process may still carry it.
"""

from __future__ import annotations

import os
import sys
import time
import uuid

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


@pytest.fixture(autouse=True)
def no_leftover_processes():
    token = uuid.uuid4().hex
    os.environ[TOKEN_VAR] = token
    try:
        yield token
    finally:
        del os.environ[TOKEN_VAR]
    assert_none_left(TOKEN_VAR, token)


@pytest.fixture
def engine(tmp_path):
    from execmagic.engine import Engine, RunOptions

    return Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))


@pytest.fixture
def py():
    """``py(code)`` → argv that runs ``code`` in a child Python (as Trio's tests do)."""
    return lambda code: [sys.executable, "-c", code]
