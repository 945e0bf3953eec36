"""A standby's start under a descriptor limit: each pipe it makes (the script's, the one it says it is up on, a
sandboxed standby's own stdout and stderr) is closed again when a later one cannot be made.

Real bubblewrap, a real ``RLIMIT_NOFILE``: the limit is set so that only a few descriptors are left, one more
each time, so that the start fails at each step in turn (and at last succeeds).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from execmagic.process import sandbox as sb
from execmagic.process.standby import Standby, start_standby

#: Descriptors left free at most: more than a sandboxed standby's start takes.
_FREE = 24


def _open() -> set[int]:
    return {int(fd) for fd in os.listdir("/proc/self/fd")}


@contextlib.contextmanager
def _descriptors_left(free: int) -> Iterator[None]:
    """Only ``free`` descriptors may be opened: every number below the highest open one is taken (by
    ``/dev/null``), and the limit is set just above."""
    highest = max(_open())
    fillers = []
    while not fillers or fillers[-1] <= highest:
        fillers.append(os.open("/dev/null", os.O_RDONLY))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (fillers[-1] + 1 + free, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for fd in fillers:
            os.close(fd)


def _popen_leaks() -> bool:
    """Whether this Python's ``subprocess.Popen`` itself leaves descriptors open when it runs out of them (before
    3.11.5 and 3.12: python/cpython#87474): then a start failing there would too, whatever the standby does."""
    before = _open()
    with _descriptors_left(3), contextlib.suppress(OSError):  # its stdin, and stdout's pipe: stderr's fails
        subprocess.run(["true"], stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return _open() != before


@pytest.fixture
def confine(bwrap_works):
    """A workspace sandbox's confine, as the engine hands :func:`start_standby` one; ``None`` when unconfined."""
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-standby-apart-", dir="/var/tmp"))
    ws, home = os.path.join(top, "ws"), os.path.join(top, "home")
    os.mkdir(ws)
    os.mkdir(home)
    box = sb.plan_sandbox(sb.SandboxSpec(mode="workspace", writable_roots=(ws,)), home=home)
    try:
        yield ws, lambda argv, env: box.confine(argv, ws, env)
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("confined", [False, True], ids=["unconfined", "sandboxed"])
def test_a_standby_that_cannot_start_for_want_of_descriptors_leaves_none_open(confine, confined):
    ws, confine_in = confine
    if _popen_leaks():
        pytest.skip("this Python's subprocess leaves descriptors open when it runs out of them")
    started = 0
    for free in range(_FREE):
        before = _open()
        standby: Standby | None = None
        with _descriptors_left(free), contextlib.suppress(OSError):
            standby = start_standby(ws, dict(os.environ), f"standby-apart-{free}", expect=lambda _: lambda: None,
                                    register=lambda _pid, _marker: lambda: None,
                                    confine=confine_in if confined else None)
        if standby is not None:
            started += 1
            standby.discard()
        assert _open() == before, f"with {free} descriptors free"
    assert started, "it never started, even with enough descriptors"
