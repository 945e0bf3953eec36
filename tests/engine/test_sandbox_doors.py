"""What a sandboxed run could leave for the user's next ordinary step, and what other users could see of it.

The walls hold a command in; these tests are about the doors around them: the kernel's own environment
(which the next kernel start runs), and a run's secrets and private paths in the argv every user reads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest

from execmagic.engine import Engine, RunOptions

READ_ONLY = "Read-only file system"
#: What `pip install` of a wheel is told: no index, no cache (the fake home is read-only inside), quiet.
PIP = "bin/python -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check"


@pytest.fixture
def place(bwrap_works, monkeypatch):
    """A workspace and a fake home under /var/tmp (the host's /tmp is private inside the sandbox)."""
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-doors-", dir="/var/tmp"))
    ws, home = os.path.join(top, "ws"), os.path.join(top, "home")
    os.mkdir(ws)
    os.mkdir(home)
    monkeypatch.setenv("HOME", home)
    monkeypatch.chdir(ws)
    try:
        yield ws, home
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def engine(place, tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    yield engine
    engine.close(0.3)


def _tiny_wheel(folder: str) -> str:
    """A wheel of one empty package, made by hand (pip installs it without an index or a build)."""
    path = os.path.join(folder, "tinypkg-0.1-py3-none-any.whl")
    info = "tinypkg-0.1.dist-info"
    files = {
        "tinypkg/__init__.py": "",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{name},,\n" for name in (*files, f"{info}/RECORD")))
    return path


def _venv(path: str) -> None:
    """A virtual environment without its own pip (the base's serves, through its site-packages): fast."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", path], check=True,
                   timeout=120)


@pytest.mark.timeout(300)
def test_the_kernels_own_environment_is_read_only_inside_and_another_stays_writable(engine, place, monkeypatch):
    ws, _home = place
    wheel = _tiny_wheel(ws)
    for name in ("kernel-env", "other-env"):
        _venv(f"{ws}/{name}")
    # the kernel runs from the workspace's kernel-env (its site-packages and .pth files run at every start)
    monkeypatch.setattr(sys, "prefix", f"{ws}/kernel-env")
    monkeypatch.setattr(sys, "exec_prefix", f"{ws}/kernel-env")
    box = engine.sandbox("workspace").sandbox
    mine = engine.run_script(f"kernel-env/{PIP} {wheel}", sandbox=box)
    assert mine.exit_code != 0 and READ_ONLY in mine.stderr, mine.stderr
    assert any(note.startswith(f"the kernel's own environment ({ws}/kernel-env) is read-only in the sandbox")
               for note in mine.notes), mine.notes
    for escape in ("touch kernel-env/evil.pth", "mv kernel-env moved", "mkdir -p kernel-env/lib/x"):
        done = engine.run_script(escape, sandbox=box)
        assert done.exit_code != 0, escape
    other = engine.run_script(f"other-env/{PIP} {wheel} && other-env/bin/python -c 'import tinypkg; print(1)'",
                              sandbox=box)
    assert other.exit_code == 0 and other.stdout == "1\n", other.stderr
    assert not [p for p in os.listdir(f"{ws}/kernel-env") if p.endswith(".pth")]
    assert engine.run_script("echo plain > note.txt", sandbox=box).notes == ()  # no installer: nothing said
