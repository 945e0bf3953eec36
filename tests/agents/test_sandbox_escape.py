"""Nothing a sandboxed command exports reaches a process outside the walls.

bwrap itself runs on the host, before any namespace exists.  Started with the session's environment, it
loaded whatever library an agent had exported in ``LD_PRELOAD`` one call before, and ran it as the
kernel's user (root, for a root kernel).  Each test plants a loader variable the way an agent would --
``export`` in one Bash call -- runs more calls (a standby's refill starts a new bwrap too), and then looks,
from outside, in a folder that is read-only inside: a file there was written by a process outside the
walls.  Two variables: ``LD_PRELOAD`` with a library built here (when a C compiler is), and
``LD_DEBUG_OUTPUT``, which makes any dynamically linked program -- bwrap too -- write a file, no compiler
needed.

Everything lives under ``/var/tmp``: inside the sandbox ``/tmp`` is private.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import psutil
import pytest

from execmagic import Toolbox
from execmagic.engine import Engine, RunOptions
from execmagic.process import sandbox as sb
from execmagic.process.launch import MARKER_VAR, launch
from execmagic.process.spec import Command
from execmagic.process.stop import stop_tree
from processes import processes_with
from waiting import wait_until

READY = 10.0  # seconds a standby may take to start on a busy machine (awaited, not slept)
PLANTED = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen(OUT "/escaped", "a");
    if (f) { fprintf(f, "uid=%d pid=%d\n", (int)getuid(), (int)getpid()); fclose(f); }
}
"""


@pytest.fixture
def place(bwrap_works, monkeypatch):
    """A workspace (the cwd), a fake home and a folder that is read-only inside (``out``)."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-escape-", dir="/var/tmp"))
    paths = {name: os.path.join(top, name) for name in ("ws", "home", "out", "logs")}
    for folder in paths.values():
        os.mkdir(folder)
    os.chmod(paths["out"], 0o777)  # writable outside for whoever bwrap runs as
    monkeypatch.setenv("HOME", paths["home"])
    monkeypatch.delenv(sb.BWRAP_VAR, raising=False)
    monkeypatch.chdir(paths["ws"])
    try:
        yield paths
    finally:
        shutil.rmtree(top, ignore_errors=True)


def planted_library(folder: str, out: str) -> str | None:
    """A library whose constructor writes ``out/escaped``, built with the machine's C compiler (``None``
    when there is none: the ``LD_DEBUG_OUTPUT`` attack still runs)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    source, library = os.path.join(folder, "evil.c"), os.path.join(folder, "evil.so")
    with open(source, "w") as fh:
        fh.write(PLANTED)
    subprocess.run([cc, "-shared", "-fPIC", f'-DOUT="{out}"', "-o", library, source], check=True, timeout=60)
    return library


def bash(box: Toolbox, command: str) -> dict:
    answer = box.dispatch("Bash", {"command": command})
    assert "error" not in answer, answer
    return answer


@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
@pytest.mark.parametrize("mode", ["auto", "workspace", "read-only"])
def test_an_exported_loader_variable_never_reaches_bwrap(place, mode, standby):
    out = place["out"]
    library = planted_library(place["home"], out)
    engine = Engine(log_dir=place["logs"], options=RunOptions(grace=0.3))
    engine.standby = standby
    try:
        box = Toolbox(engine, sandbox=mode, grace=0.3, guard="none")
        assert box.sandbox.sandbox is not None
        planted = f"export LD_DEBUG=files LD_DEBUG_OUTPUT={out}/ld-debug"
        if library is not None:
            planted += f" LD_PRELOAD={library}"
        bash(box, planted)
        answer = bash(box, "echo \"<$LD_DEBUG_OUTPUT>\"; touch \"$LD_DEBUG_OUTPUT-inside\" 2>/dev/null || echo '<refused>'")
        # the variables still reach the command itself, inside, where the folder is read-only (the loader's
        # debug lines, which it cannot write there, go to stderr instead)
        assert f"<{out}/ld-debug>" in answer["output"] and "<refused>" in answer["output"], answer
        bash(box, "true")
        if standby:  # the refill after a run starts a bwrap with the session as it is now
            engine.warm_for(box.sandbox.sandbox).wait_ready(READY)
        bash(box, "true")
        assert os.listdir(out) == [], {name: Path(out, name).read_text()[:200] for name in os.listdir(out)}
    finally:
        engine.close(0.3)


def test_bwrap_starts_with_a_fixed_environment_and_a_bare_argv(place):
    """What other users of the machine see of a sandboxed run (``ps``): bwrap's path and the command, no
    option, no private path, no value of the environment; bwrap's own environment is fixed."""
    box = sb.plan_sandbox(sb.SandboxSpec(mode="workspace", writable_roots=(place["ws"],)), home=place["home"])
    env = {"PATH": os.environ["PATH"], "LD_PRELOAD": "/nowhere/evil.so", "API_TOKEN": "s3cr3t-value",
           "BASH_ENV": "/x/prelude", MARKER_VAR: "the-marker"}
    confined = box.confine(["sleep", "30"], place["ws"], env, readable=(place["home"],))
    assert confined.argv == (box.prefix[0], "--", "sleep", "30")
    assert confined.env == {**sb.HOST_ENV, MARKER_VAR: "the-marker"}
    handed = confined.fd_args.split(b"\0")
    assert b"s3cr3t-value" in handed and place["home"].encode() in handed and b"LD_PRELOAD" in handed
    proc = launch(Command(argv=confined.argv, cwd=place["ws"], env=confined.env, display="sleep",
                          fd_args=confined.fd_args), "the-marker")
    try:
        bwrap = psutil.Process(proc.pid)
        assert bwrap.cmdline()[0] == box.prefix[0] and bwrap.cmdline()[-3:] == ["--", "sleep", "30"]
        assert not any(place["home"] in word or "s3cr3t" in word for word in bwrap.cmdline())
        assert bwrap.environ() == {**sb.HOST_ENV, MARKER_VAR: "the-marker"}
        # inside, the command has the run's environment (the private /tmp's TMPDIR aside), marker included
        inner = wait_until(lambda: next((p for p in bwrap.children(recursive=True) if p.name() == "sleep"), None),
                           10, "the sleep inside to start")
        seen = inner.environ()
        assert seen["API_TOKEN"] == "s3cr3t-value" and seen["LD_PRELOAD"] == "/nowhere/evil.so"
        assert seen[MARKER_VAR] == "the-marker" and seen["PATH"] == os.environ["PATH"]
    finally:
        stop_tree(proc.pid, leader=proc, marker="the-marker", grace=0.3)
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
    # bwrap's environment is fixed (the suite's token is not in it): its marker proves the tree gone
    wait_until(lambda: not processes_with(MARKER_VAR, "the-marker"), 10, "the sandboxed tree to be gone")


def test_a_marker_the_command_sets_cannot_hide_it(place):
    """A session that exports the marker variable's name hands nothing of it to bwrap: the run's own marker
    is what every process inside carries."""
    box = sb.plan_sandbox(sb.SandboxSpec(mode="read-only"), home=place["home"])
    script = f'echo "${MARKER_VAR}"; tr "\\0" "\\n" < /proc/1/environ | grep -c "^{MARKER_VAR}=the-run" || true'
    confined = box.confine(["sh", "-c", script], place["ws"], {"PATH": "/usr/bin:/bin", MARKER_VAR: "forged"})
    assert MARKER_VAR.encode() not in confined.fd_args.split(b"\0")
    proc = launch(Command(argv=confined.argv, cwd=place["ws"], env=confined.env, display="sh",
                          fd_args=confined.fd_args), "the-run")
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        stop_tree(proc.pid, leader=proc, marker="the-run", grace=0.3)
    # the command and bwrap's own process inside (pid 1) carry the run's marker, not the forged one
    assert out.decode().split() == ["the-run", "1"], (out, err)
