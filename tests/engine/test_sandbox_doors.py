"""What a sandboxed run could leave for the user's next ordinary step, and what other users could see of it.

The walls hold a command in; these tests are about the doors around them: the kernel's own environment
(which the next kernel start runs), and a run's secrets and private paths in the argv every user reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import zipfile

import pytest

from execmagic.engine import Engine, RunOptions
from waiting import wait_until

READ_ONLY = "Read-only file system"
#: What `pip install` of a wheel is told: no index, no cache (the fake home is read-only inside), quiet.
PIP = "bin/python -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check"


@pytest.fixture
def place(sandbox_place):
    """The workspace and the fake home (``sandbox_place``, in conftest.py)."""
    return sandbox_place


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


def _every_command_line() -> dict[int, str]:
    """What any user of the machine reads of each process's argv (``ps``, ``/proc/PID/cmdline``)."""
    lines = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    lines[int(name)] = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:  # gone meanwhile
                continue
    return lines


@pytest.mark.parametrize("sandboxed", [False, True], ids=["unconfined", "sandboxed"])
@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
@pytest.mark.parametrize("size", ["small", "big"])
def test_no_secret_and_no_private_path_stands_on_any_argv(engine, place, sandboxed, standby, size):
    """A `{db_password}` value is shown as [REDACTED], and every local user could read it in `ps` while the
    run lasted; a big script's private path too.  The script goes by a descriptor instead."""
    ws, _home = place
    engine.standby = standby
    box = engine.sandbox("workspace").sandbox if sandboxed else None
    secret = f"s3cr3t-{os.urandom(6).hex()}"
    padding = f"cat > /dev/null <<'EOF'\n{('x' * 99 + chr(10)) * 1200}EOF\n" if size == "big" else ""
    script = padding + "echo {db_password} > /dev/null; touch ready; while [ -e go ]; do sleep 0.02; done; echo done"
    open(f"{ws}/go", "w").close()
    engine.run_script("true", sandbox=box)  # a first run: the standby is made for the next
    if standby:
        assert engine.warm_for(box).wait_ready(10) is not None
    _assert_off_every_argv(engine, ws, script, "bash", secret, box)


def _assert_off_every_argv(engine, ws, script, language, secret, box) -> None:
    """Run ``script`` (it makes ``ready``, then waits for ``go`` to go) and look at every argv meanwhile."""
    results = []
    worker = threading.Thread(target=lambda: results.append(
        engine.run_script(script, language, params={"db_password": secret}, sandbox=box)))
    worker.start()
    try:
        wait_until(lambda: os.path.exists(f"{ws}/ready"), 30, "the run to start")
        seen = _every_command_line()
    finally:
        os.remove(f"{ws}/go")
        worker.join(30)
    (result,) = results
    assert result.stdout == "done\n" and "[REDACTED:db_password]" in result.command, result
    private = (engine.logs.path, engine.logs.runtime())
    assert [line for line in seen.values() if secret in line or any(p in line for p in private)] == []
    assert any(" -c " in line for pid, line in seen.items() if pid != os.getpid())  # the run was looked at


@pytest.mark.parametrize("language", ["python", "sh"])
def test_a_secret_in_a_python_or_sh_cell_stays_off_the_argv_too(engine, place, language):
    ws, _home = place
    secret = f"s3cr3t-{os.urandom(6).hex()}"
    open(f"{ws}/go", "w").close()
    script = ("import os, time\nx = {db_password}\nopen('ready', 'w').close()\n"
              "while os.path.exists('go'):\n    time.sleep(0.02)\nprint('done')") if language == "python" else \
        "x={db_password}; touch ready; while [ -e go ]; do sleep 0.02; done; echo done"
    _assert_off_every_argv(engine, ws, script, language, secret, None)
