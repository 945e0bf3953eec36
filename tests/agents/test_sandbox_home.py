"""An agent's everyday work with the home folder hidden, through ``Toolbox`` as a model's calls go.

The home folder is hidden whole, by allow-list, so work that needs the user's own files must still run:
the kernel's Python (pyenv keeps it in ``~/.pyenv``: the first test uses the real home folder, whatever
it holds), git in an existing repository, ``pip`` into a virtual environment of the workspace, ``cd`` and
``export`` that carry over, a background shell.  A store made after the sandbox was set stays hidden (the
standby shell, started between two calls, included), and the agent's operator reads the walls in one line.

The real home's test workspace is a folder of its own, removed at the end; the fake homes and the logs lie
under ``/var/tmp`` (inside the sandbox ``/tmp`` is private).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import pytest

from execmagic import Toolbox
from execmagic.agents.mcp_server import sandbox_line
from execmagic.engine import Engine, RunOptions
from execmagic.engine.sandboxing import interpreter_paths
from execmagic.process import sandbox as sb
from execmagic.process.sandbox_walls import HOME_SHOWN

READY = 10.0  # seconds a standby may take to start on a busy machine (awaited, not slept)


def bash(box, command, **arguments):
    answer = box.dispatch("Bash", {"command": command, **arguments})
    assert json.loads(json.dumps(answer)) == answer
    assert "error" not in answer, answer
    return answer


@pytest.fixture
def logs():
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    folder = tempfile.mkdtemp(prefix="execmagic-home-logs-", dir="/var/tmp")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def in_real_home(bwrap_works, logs, monkeypatch):
    """A workspace in the real home folder (the cwd), holding a git repository with one commit, and an engine
    started there."""
    home = os.path.realpath(os.path.expanduser("~"))
    if not os.access(home, os.W_OK):
        pytest.skip("the home folder is not writable here")
    ws = tempfile.mkdtemp(prefix="execmagic-home-test-", dir=home)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", ws]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    with open(f"{ws}/tracked", "w") as fh:
        fh.write("one\n")
    subprocess.run([*git, "add", "tracked"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True, timeout=30)
    monkeypatch.delenv(sb.BWRAP_VAR, raising=False)
    monkeypatch.chdir(ws)
    engine = Engine(log_dir=logs, options=RunOptions(grace=0.3))
    try:
        yield home, ws, engine
    finally:
        engine.close()
        shutil.rmtree(ws, ignore_errors=True)


def tiny_wheel(folder: str) -> str:
    """A wheel of one module, built by hand (no build backend, no network)."""
    files = {"tiny/__init__.py": b"VALUE = 42\n",
             "tiny-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tiny\nVersion: 0.1\n",
             "tiny-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for name, data in files.items()]
    files["tiny-0.1.dist-info/RECORD"] = ("\n".join([*record, "tiny-0.1.dist-info/RECORD,,"]) + "\n").encode()
    path = os.path.join(folder, "tiny-0.1-py3-none-any.whl")
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return path


def test_everyday_work_in_a_workspace_of_the_hidden_home_folder(in_real_home):
    home, ws, engine = in_real_home
    box = Toolbox(engine, sandbox="workspace", guard="none", grace=0.3)
    # what the home folder shows: the workspace, the kernel's Python where it lies there, secret-free settings
    allowed = {os.path.relpath(p, home).split("/")[0]
               for p in (ws, *interpreter_paths(), *(os.path.join(home, s) for s in HOME_SHOWN))
               if p.startswith(home + "/") and os.path.exists(p)}
    listed = bash(box, "ls -A ~")["output"].split()
    assert os.path.basename(ws) in listed and set(listed) <= allowed, (listed, allowed)
    work = bash(box, "echo two >> tracked && git status --short && git log --oneline | wc -l")
    assert work["output"] == " M tracked\n1\n", work
    python = bash(box, f"{sys.executable} -c 'import sys, json; print(sys.version_info[0])'")
    assert python["output"] == "3\n", python
    wheel = tiny_wheel(ws)
    installed = bash(box, f"{sys.executable} -m venv venv && PIP_DISABLE_PIP_VERSION_CHECK=1 venv/bin/python -m pip "
                          f"install -q --no-index --no-deps {wheel} && venv/bin/python -c 'import tiny; print(tiny.VALUE)'",
                     timeout=120_000)
    assert "42" in installed["output"].splitlines(), installed  # (pip warns that its cache in ~ is read-only)
    bash(box, "mkdir -p sub && cd sub && export WALL_MARK=kept")
    assert bash(box, "pwd; echo $WALL_MARK")["output"] == f"{ws}/sub\nkept\n"
    started = bash(box, "cat ../tracked; ls -A ~ | wc -l", run_in_background=True)
    deadline = time.monotonic() + 30
    seen = ""
    while True:
        reply = box.dispatch("BashOutput", {"bash_id": started["shell_id"]})
        seen += reply["output"]
        if reply["finished_and_read"]:
            break
        assert time.monotonic() < deadline, "the background shell did not end"
        time.sleep(0.05)
    assert seen == f"one\ntwo\n{len(listed)}\n", seen


@pytest.fixture
def fake_home(bwrap_works, logs, monkeypatch):
    """A fake home (HOME) with a workspace outside it, as an MCP client starts a server."""
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-home-agent-", dir="/var/tmp"))
    home, ws = f"{top}/home", f"{top}/ws"
    os.makedirs(f"{home}/.config/tool")
    os.mkdir(ws)
    with open(f"{home}/.config/tool/settings", "w") as fh:
        fh.write("shown\n")
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv(sb.BWRAP_VAR, raising=False)
    monkeypatch.chdir(ws)
    engine = Engine(log_dir=logs, options=RunOptions(grace=0.3))
    try:
        yield home, engine
    finally:
        engine.close()
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
def test_a_store_made_after_the_sandbox_was_set_stays_hidden(fake_home, standby):
    home, engine = fake_home
    engine.standby = standby
    box = Toolbox(engine, sandbox="auto", guard="none", grace=0.3, readable=["~/.config/tool"])
    assert bash(box, "cat ~/.config/tool/settings")["output"] == "shown\n"
    for name, text in ((".kaggle/kaggle.json", '{"key": "KAGGLE-SECRET"}'), (".cache/huggingface/token", "hf_SECRET"),
                       (".config/tool/../newtool/token", "NEW-SECRET")):
        os.makedirs(os.path.dirname(os.path.join(home, name)), exist_ok=True)
        with open(os.path.join(home, name), "w") as fh:
            fh.write(text)
    if standby:  # the standby the next call takes was started after the first call
        engine.warm_for(box.sandbox.sandbox).wait_ready(READY)
    answer = bash(box, "grep -rs SECRET ~ || echo hidden; ls -A ~ ~/.config")
    assert answer["output"] == f"hidden\n{home}:\n.config\n\n{home}/.config:\ntool\n", answer
    line = sandbox_line(box)  # what %mcp and the server's start say
    assert line.startswith("sandbox workspace: writable ") and "; hidden: the home folder but ~/.config/tool" in line


def test_read_only_mode_shows_its_folder_in_the_hidden_home(in_real_home):
    """``read-only`` is no use if the project cannot be read: the folder it would have made writable is shown,
    read-only, while the rest of the home folder stays hidden."""
    _home, ws, engine = in_real_home
    box = Toolbox(engine, sandbox="read-only", guard="none", grace=0.3)
    answer = bash(box, "cat tracked; touch new 2>/dev/null || echo refused; git log --oneline | wc -l")
    assert answer["output"] == "one\nrefused\n1\n" and answer["sandbox"].startswith("sandbox read-only"), answer
    assert not os.path.exists(f"{ws}/new")
