"""A real single-node Ray head for this folder's tests (see ``tests/ray_head.py``).

Started once per session, stopped by its process group at the end.  The default test run leaves
this folder out (``--ignore=tests/ray`` in pyproject.toml): Ray must run in a network namespace of
its own, and ``.ci/run`` runs these tests there.  Run by hand elsewhere, they skip saying why.
"""

from __future__ import annotations

import os
import time

import psutil
import pytest

import ray_head
from execmagic.background.backends.ray import RayCluster, RayOptions
from execmagic.background.registry import ShellRegistry
from processes import TOKEN_VAR, processes_with


def rays_own(proc: psutil.Process) -> bool:
    """A process of Ray's that carries a job's environment and ends a moment after the job: the worker
    that ran the job's supervisor, and the supervisor's fate-sharing watcher (``while kill -s 0 …;
    do sleep 1; done``)."""
    try:
        words = proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False
    line = " ".join(words)
    return words == ["sleep", "1"] or line.startswith("ray::") or "default_worker.py" in line \
        or "while kill -s 0" in line


@pytest.fixture(autouse=True)
def rays_own_ended(no_leftover_processes):
    """Before the leak check: Ray's own processes that carried the test's jobs' environment have ended
    (they do within a few seconds of the job); the jobs' trees are left to the check itself."""
    yield
    deadline = time.monotonic() + 20
    while any(rays_own(p) for p in processes_with(TOKEN_VAR, no_leftover_processes)):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)


@pytest.fixture(scope="session")
def ray(tmp_path_factory):
    """The running head (``.address``: its dashboard URL)."""
    why = ray_head.why_not()
    if why:
        pytest.skip(why)
    head = ray_head.RayHead(str(tmp_path_factory.mktemp("ray"))).start()
    try:
        yield head
    finally:
        head.stop()


@pytest.fixture
def backend(ray, no_leftover_processes):
    """A backend whose jobs carry the test's token (the leak check then covers them on the node)."""
    return RayCluster(RayOptions(env=((TOKEN_VAR, no_leftover_processes),)), address=ray.address, grace=1.0,
                      request_timeout=20)


@pytest.fixture
def registry(ray, tmp_path):
    reg = ShellRegistry(log_dir=lambda: str(tmp_path / "kernel-logs"), grace=1.0, watchdog=False)
    yield reg
    reg.kill_all(grace=0.5)
    reg.close()


@pytest.fixture
def no_ray_address(monkeypatch):
    for name in ("RAY_ADDRESS", "RAY_JOB_HEADERS"):
        monkeypatch.delenv(name, raising=False)
    return os.environ
