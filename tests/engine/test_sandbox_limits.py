"""A sandboxed session's own /tmp (kept from one call to the next, of a bounded size, gone with the session)
and its process limit: real bubblewrap, as root and as an ordinary user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from execmagic.engine import Engine, RunOptions
from execmagic.process.sandbox_session import Limits
from waiting import wait_until

READY = 10.0  # seconds a standby may take to start on a busy machine (awaited, not slept)


@pytest.fixture
def place(sandbox_place):
    """The workspace of ``sandbox_place`` (conftest.py); its fake home is HOME."""
    return sandbox_place[0]


def _engine(tmp_path, standby: bool, limits: Limits | None = None) -> Engine:
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    engine.standby = standby
    if limits is not None:
        engine.sandbox_limits = limits
    return engine


def _walls(engine: Engine):
    box = engine.sandbox("workspace").sandbox
    if box.walls is None:
        pytest.skip(f"no session /tmp here: {engine.sandbox('workspace').notes}")
    return box, box.walls


@pytest.mark.parametrize("standby", [True, False])
def test_a_file_in_tmp_is_there_at_the_next_call_and_gone_with_the_session(place, tmp_path, standby):
    engine = _engine(tmp_path, standby)
    try:
        box, walls = _walls(engine)
        first = engine.run_script("echo plan > /tmp/plan && ls /tmp", sandbox=box)
        assert first.success, first
        if standby:
            engine.warm_for(box).wait_ready(READY)
        second = engine.run_script("cat /tmp/plan; df -k /tmp | tail -1", sandbox=box)
        assert second.stdout.startswith("plan\n") and "tmpfs" in second.stdout, second
        assert "kept for the session" in second.sandbox
        # a background shell of the session sees it too, and what it writes there is seen by the next run
        info = engine.start_background(engine.plan_script("cat /tmp/plan > /tmp/seen", sandbox=box,
                                                          save_session=False))
        wait_until(lambda: not engine.shells.info(info.id).running, READY, "the background shell to end")
        assert engine.run_script("cat /tmp/seen", sandbox=box).stdout == "plan\n"
        assert os.listdir(walls.folder) == []  # on the host: nothing (it is mounted in the session's namespace)
        if os.path.exists("/tmp/plan"):  # the host's /tmp never got it
            with open("/tmp/plan") as fh:
                assert fh.read() != "plan\n"
    finally:
        engine.close(0.3)
    assert walls.holder.poll() is not None and not os.path.exists(walls.folder)


_DIES = """
import json, os, sys
from execmagic.engine import Engine
engine = Engine(log_dir=sys.argv[1])
box = engine.sandbox("workspace").sandbox
assert engine.run_script("echo x > /tmp/x", sandbox=box).success
walls = box.walls
print(json.dumps([walls.holder.pid, walls.folder, list(walls.cgroup.folders if walls.cgroup else ())]), flush=True)
os._exit(0)  # no close: as a kernel that is killed
"""


def test_the_tmp_and_the_cgroup_go_when_the_owner_dies_without_closing(place, tmp_path):
    done = subprocess.run([sys.executable, "-c", _DIES, str(tmp_path / "logs")], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    holder, folder, cgroups = json.loads(done.stdout)
    wait_until(lambda: not os.path.exists(f"/proc/{holder}"), 10, "the holder to end")
    wait_until(lambda: not any(os.path.exists(p) for p in (folder, *cgroups)), 30, "its folders to go")


def test_no_private_path_of_the_session_is_on_an_argv(place, tmp_path):
    """What other users read in ps: neither the holder's nor a run's argv names the session's /tmp folder."""
    engine = _engine(tmp_path, True)
    try:
        box, walls = _walls(engine)
        engine.run_script("true", sandbox=box)
        standby = engine.warm_for(box).wait_ready(READY)
        with open(f"/proc/{walls.holder.pid}/cmdline", "rb") as fh:
            assert walls.folder.encode() not in fh.read()
        confined = box.confine(["bash", "-c", "true"], place, {"PATH": "/usr/bin:/bin"})
        assert not any(walls.folder in word for word in confined.argv)
        assert walls.folder.encode() in (confined.fd_args or b"")  # it goes to bwrap by its fd
        if standby is not None:
            with open(f"/proc/{standby.runner.pid}/cmdline", "rb") as fh:
                assert walls.folder.encode() not in fh.read()
    finally:
        engine.close(0.3)


def test_another_engine_has_another_tmp(place, tmp_path):
    one, two = _engine(tmp_path / "1", False), _engine(tmp_path / "2", False)
    try:
        box_one, _ = _walls(one)
        box_two, _ = _walls(two)
        one.run_script("echo mine > /tmp/secret", sandbox=box_one)
        r = two.run_script("cat /tmp/secret", sandbox=box_two)
        assert r.exit_code != 0 and "mine" not in r.stdout
    finally:
        one.close(0.3)
        two.close(0.3)


def test_a_full_tmp_ends_the_command_with_one_line_saying_why(place, tmp_path):
    engine = _engine(tmp_path, False, Limits(tmp_bytes=1 << 20))
    try:
        box, _ = _walls(engine)
        r = engine.run_script("head -c 3000000 /dev/zero > /tmp/big", sandbox=box)
        assert r.exit_code != 0
        said = [n for n in r.notes if "/tmp is full" in n]
        assert len(said) == 1 and "\n" not in said[0], r.notes
        assert "1 MiB" in r.sandbox
        after = engine.run_script("rm /tmp/big; echo ok > /tmp/small && cat /tmp/small", sandbox=box)
        assert after.stdout == "ok\n" and not any("full" in n for n in after.notes)
    finally:
        engine.close(0.3)


@pytest.mark.parametrize("bomb", ["perl -e 'fork while 1'", ":(){ :|:& };:"])
def test_a_fork_bomb_is_bounded_and_the_kernel_and_other_shells_live(place, tmp_path, bomb):
    engine = _engine(tmp_path, False, Limits(processes=64))
    try:
        box, walls = _walls(engine)
        if not walls.processes_limited:
            pytest.skip(f"processes cannot be limited here: {walls.describe()[1]}")
        # the other shell is running its command before the bomb starts (else the bomb may take the slots its
        # bwrap still needs to start it: a shell that never started is not one that lived)
        shell = engine.start_background(engine.plan_script("echo ready; exec sleep 60", sandbox=box,
                                                           save_session=False))
        assert engine.shells.read(shell.id, wait=READY).stdout == "ready\n"
        # perl's passes the guard (it reads text); bash's is refused, so it goes through the level that passes it
        guard = "none" if bomb.startswith(":") else "catastrophic"
        # no timeout of its own: the test's is the bound (a run held at the limit forever would fail it)
        r = engine.run_script(bomb, sandbox=box, options=RunOptions(timeout=None, grace=0.3), guard=guard)
        # perl's forks at the limit forever: it is stopped there, and its one line says why; bash's script
        # returns at once, its bomb left behind is stopped with the run's leftovers
        assert "\n" not in r.outcome(), r.outcome()
        if bomb.startswith("perl"):
            assert not r.success and r.stopped_at is not None and r.outcome() == "stopped at the sandbox's process limit (64 for the session)"
            assert r.to_json()["stopped_at"] == r.stopped_at
        assert engine.shells.info(shell.id).running  # the other shell lived
        wait_until(lambda: engine.run_script("echo alive", sandbox=box).stdout == "alive\n", 20,
                   "the session to run commands again once the bomb's processes are stopped")
        assert engine.run_script("echo outside").stdout == "outside\n"
        count = ("perl -e '$n = 0; for (1..200) { my $p = fork; last unless defined $p; if (!$p) { sleep 3; exit } "
                 "$n++ } print qq($n\\n)'")
        counted = wait_until(lambda: int(engine.run_script(count, sandbox=box).stdout or 0), 20, "a fork to work")
        assert counted < 64  # the shell, bwrap and this run's own count too
        engine.shells.kill(shell.id)
    finally:
        engine.close(0.3)


def test_memory_past_the_limit_ends_that_command_with_one_line_and_the_session_lives(place, tmp_path):
    engine = _engine(tmp_path, False, Limits(memory=96 << 20))
    try:
        box, walls = _walls(engine)
        if walls.cgroup is None:
            pytest.skip(f"memory cannot be limited here: {walls.describe()[1]}")
        hog = "python3 -c 'b = bytearray(400 << 20); b[::4096] = b\"x\" * len(b[::4096])'"
        r = engine.run_script(hog, sandbox=box)
        assert r.exit_code != 0
        said = [n for n in r.notes if "memory limit" in n]
        assert len(said) == 1 and "\n" not in said[0], (r.notes, r.stderr[-500:])
        assert engine.run_script("echo alive", sandbox=box).stdout == "alive\n"
        assert not any("memory limit" in n for n in engine.run_script("false", sandbox=box).notes)
    finally:
        engine.close(0.3)
    assert all(not os.path.exists(folder) for folder in walls.cgroup.folders)


def test_the_sandbox_line_says_what_is_not_limited_and_why(place, tmp_path):
    engine = _engine(tmp_path, False)
    try:
        box, walls = _walls(engine)
        line = box.describe()
        assert ("memory not limited (" in line) == (walls.cgroup is None) and "\n" not in line
        assert ("processes not limited (" in line) == (not walls.processes_limited)
        if os.geteuid() == 0 and walls.cgroup is None:
            assert "processes not limited (the kernel runs as root" in line
        else:
            assert "at most 1024 processes" in line
    finally:
        engine.close(0.3)


def test_a_read_only_sandbox_of_a_folder_under_the_temp_folder_shows_it(bwrap_works, tmp_path, monkeypatch):
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-ro-", dir="/tmp"))
    try:
        with open(os.path.join(top, "data.csv"), "w") as fh:
            fh.write("a,b\n")
        monkeypatch.chdir(top)
        engine = _engine(tmp_path, False)
        try:
            box = engine.sandbox("read-only").sandbox
            r = engine.run_script("cat data.csv; touch new 2>/dev/null || echo read-only", sandbox=box)
            assert r.stdout == "a,b\nread-only\n", r
        finally:
            engine.close(0.3)
    finally:
        shutil.rmtree(top, ignore_errors=True)
