"""``python -m execmagic install-kernel``: a Jupyter that lives in another environment starts a kernel
that has execmagic, because the kernelspec names this interpreter by its absolute path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CLIENT = textwrap.dedent("""
    import json, sys
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    name = sys.argv[1]
    spec = KernelSpecManager().get_kernel_spec(name)
    print(json.dumps({"resource_dir": spec.resource_dir, "argv0": spec.argv[0], "display": spec.display_name}))
    km = KernelManager(kernel_name=name)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=90)
        msg_id = kc.execute("%exec echo execmagic-answers\\nimport sys; print(sys.executable)")
        text = []
        while True:
            msg = kc.get_iopub_msg(timeout=90)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                text.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                text.append("ERROR " + msg["content"]["evalue"] + "\\n")
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        print("".join(text), end="")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
""")


def install(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "execmagic", "install-kernel", *args],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture(scope="module")
def other_jupyter(tmp_path_factory):
    """A virtualenv holding jupyter_client and nothing of ours: a Jupyter installed elsewhere.

    Made without pip (``--without-pip``) and filled by this environment's pip (``pip --python``):
    about 2.5 s where a plain ``venv`` with its own pip takes four times as long."""
    venv = tmp_path_factory.mktemp("other-jupyter") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                           "--disable-pip-version-check", "jupyter_client"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


@pytest.mark.kernel
@pytest.mark.timeout(600)
def test_a_jupyter_in_another_venv_starts_a_kernel_with_execmagic(other_jupyter):
    python = str(other_jupyter / "bin" / "python")
    absent = subprocess.run([python, "-c", "import execmagic"], capture_output=True, text=True, timeout=60)
    assert absent.returncode != 0, "the other environment must not have execmagic"
    name = f"execmagic-test-{uuid.uuid4().hex[:8]}"
    done = install("--prefix", str(other_jupyter), "--name", name)
    assert done.returncode == 0, done.stderr
    assert f"in {other_jupyter}" in done.stdout and sys.executable in done.stdout

    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    result = subprocess.run([python, "-c", CLIENT, name], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    first, *lines = result.stdout.splitlines()
    found = json.loads(first)
    assert found["resource_dir"].startswith(str(other_jupyter / "share" / "jupyter" / "kernels"))
    assert found["argv0"] == sys.executable and os.path.isabs(found["argv0"])
    assert found["display"] == f"Python 3 (execmagic: {name})"
    assert lines == ["execmagic-answers", sys.executable], result.stdout


def test_user_install_goes_to_the_users_jupyter_folder_and_keeps_configured_extensions(tmp_path):
    env = {**os.environ, "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    done = install("--display-name", "My kernel", env=env)
    assert done.returncode == 0, done.stderr
    spec = json.loads((tmp_path / "data" / "kernels" / "execmagic" / "kernel.json").read_text())
    assert spec["display_name"] == "My kernel"
    assert spec["argv"][0] == sys.executable
    # extra_extensions adds to the extensions of ipython_config.py instead of replacing them
    assert "--IPKernelApp.extra_extensions=execmagic" in spec["argv"]
    assert "{connection_file}" in spec["argv"]
    # nothing of the notebook's folder is imported while the kernel starts (see test_kernel_launcher.py)
    start = ["-P", "-m", "execmagic.magics.kernel_launcher"] if sys.version_info >= (3, 11) else ["-c"]
    assert spec["argv"][2:2 + len(start)] == start and "ipykernel_launcher" not in spec["argv"]
    again = install("--display-name", "My kernel, again", env=env)  # after moving an environment: install again
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["--user", "--sys-prefix"], "not allowed with argument"),
    (["--name", "has space"], "a kernel name is letters, digits"),
    (["--prefix", "/nonexistent/where"], "is not a directory"),
])
def test_mistakes_are_one_line_each(args, says):
    done = install(*args)
    assert done.returncode == 2
    assert says in done.stderr.splitlines()[-1]
    assert "Traceback" not in done.stderr


def test_unknown_command_and_no_command():
    for args in ([], ["install-kernal"]):
        done = subprocess.run([sys.executable, "-m", "execmagic", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "install-kernel" in done.stderr
    assert "did you mean 'install-kernel'?" in done.stderr
