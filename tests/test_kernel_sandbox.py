"""Sandboxed cells in a real ipykernel: a hostile cell cannot reach the kernel, and an interrupt or a
SIGKILLed kernel leaves nothing of a sandboxed run behind.

The kernel is started in a workspace under /var/tmp with a fake home (the shared /tmp is private
inside the sandbox, and the test must not touch the real home folder).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time

import psutil
import pytest

from kernel_client import KERNEL_TOKEN_VAR, LOAD, Kernel
from processes import assert_none_left, processes_with

pytestmark = pytest.mark.kernel

SANDBOXED = "--sandbox-mode workspace"


@pytest.fixture
def place(bwrap_works):
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("no writable /var/tmp (a folder outside the shared temp folder)")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-kernel-sandbox-", dir="/var/tmp"))
    ws, home = os.path.join(top, "ws"), os.path.join(top, "home")
    os.makedirs(ws)
    os.makedirs(os.path.join(home, ".ssh"))
    with open(os.path.join(home, ".ssh", "id_rsa"), "w") as fh:
        fh.write("PRIVATE KEY OF THE TEST\n")
    try:
        yield ws, home
    finally:
        shutil.rmtree(top, ignore_errors=True)


def started_in(ws: str, home: str) -> Kernel:
    """A kernel whose notebook folder is ``ws`` (the sandbox's writable root) and whose home is ``home``."""
    kernel = Kernel(extra_env={"HOME": home})
    assert kernel.execute(f"import os\nos.chdir({ws!r})").status == "ok"
    assert kernel.execute(LOAD).status == "ok"
    return kernel


def sleeping(kernel: Kernel) -> set[str]:
    """The arguments of the kernel's ``sleep`` processes (seen from outside the sandbox)."""
    found = set()
    for proc in processes_with(KERNEL_TOKEN_VAR, kernel.token):
        with contextlib.suppress(psutil.Error):
            if proc.name() == "sleep":
                found.update(proc.cmdline()[-1:])  # none as it exits (its memory let go of first)
    return found


def test_a_sandboxed_cell_cannot_reach_the_kernel(place):
    ws, home = place
    kernel = started_in(ws, home)
    try:
        info = kernel.manager.get_connection_info()
        probes = [
            f"cat {kernel.manager.connection_file}",  # its key runs code in the kernel
            f"cat /proc/{kernel.pid}/environ",
            f"kill -0 {kernel.pid}",
            f"kill -TERM {kernel.pid}",
            f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{info['shell_port']}'",  # the kernel's own port
            "cat ~/.ssh/id_rsa",
        ]
        cell = "\n".join(f"{probe} >/dev/null 2>&1 && echo REACHED || echo refused" for probe in probes)
        ex = kernel.execute(f"%%exec {SANDBOXED}\n{cell}")
        assert ex.status == "ok", ex.reply
        assert ex.stream_text() == "refused\n" * len(probes)
        after = kernel.execute("%exec echo the kernel is fine")
        assert after.status == "ok" and after.stream_text() == "the kernel is fine\n"
        assert info["key"]  # the key exists: it was hidden, not missing
    finally:
        kernel.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=3)


def test_an_interrupted_sandboxed_cell_leaves_nothing(place):
    ws, home = place
    kernel = started_in(ws, home)
    try:
        started = threading.Event()

        def watch(msg):
            if msg["msg_type"] == "stream" and "started" in msg["content"]["text"]:
                started.set()

        helper = threading.Thread(target=lambda: started.wait(20) and kernel.manager.interrupt_kernel())
        helper.start()
        ex = kernel.execute(f"%%exec {SANDBOXED}\nsleep 321 &\n(setsid sleep 322 &)\necho started\nwait",
                            timeout=30, on_message=watch)
        helper.join()
        assert started.is_set() and ex.status == "error"
        assert ex.of_type("error")[0]["content"]["ename"] == "CommandInterrupted"
        assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)
        again = kernel.execute(f"%exec {SANDBOXED} echo still alive")
        assert again.status == "ok" and again.stream_text() == "still alive\n"
    finally:
        kernel.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=3)


def test_a_sigkilled_kernel_leaves_nothing_of_its_sandboxed_runs(place):
    """The kernel dies mid sandboxed %exec, with a sandboxed background shell running: the watchdog stops both."""
    ws, home = place
    kernel = started_in(ws, home)
    try:
        assert kernel.execute(f"%bg {SANDBOXED} --name confined sleep 331").status == "ok"
        kernel.client.execute(f"%exec {SANDBOXED} (setsid sleep 332 >/dev/null 2>&1 &); sleep 333")
        deadline = time.monotonic() + 20
        while not {"331", "332", "333"} <= sleeping(kernel):
            assert time.monotonic() < deadline, "the sandboxed sleeps never started"
            time.sleep(0.05)
        os.kill(kernel.pid, signal.SIGKILL)
        assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=5)
    finally:
        kernel.shutdown(now=True)
