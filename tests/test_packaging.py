"""Packaged as the ecosystem expects: the wheel and sdist build, their metadata renders as PyPI would show
it, and the wheel installed in a clean virtualenv gives a kernel (its shipped kernelspec) that loads the
extension and runs a command.

The build uses the backend installed beside the tests (no isolation, no download); the clean virtualenv
installs the wheel's dependencies from the package index, as a user's ``pip install`` does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The clean virtualenv drives a kernel from its own Python: the shipped kernelspec, found in that
#: environment's share folder, with the extension loaded by the kernelspec itself.
KERNEL_CHECK = """
import sys
from jupyter_client.manager import start_new_kernel

km, kc = start_new_kernel(kernel_name="execmagic", startup_timeout=60)
try:
    reply = kc.execute_interactive("%exec echo from-the-wheel", timeout=60, store_history=False,
                                   output_hook=lambda msg: print(msg["content"].get("text", ""), end=""))
    print("status:", reply["content"]["status"])
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=False)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir", str(out),
                    str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


def test_the_metadata_renders_and_says_what_the_package_is(built):
    wheel, sdist = built
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = zf.read(metadata).decode()
    assert "execmagic/py.typed" in names  # type checkers of users see the package's types
    assert any(n.endswith("share/jupyter/kernels/execmagic/kernel.json") for n in names)
    for classifier in ("Framework :: IPython", "Framework :: Jupyter", "Operating System :: POSIX :: Linux",
                       "Programming Language :: Python :: 3.10", "Typing :: Typed"):
        assert f"Classifier: {classifier}" in text


@pytest.mark.timeout(600)
def test_the_wheel_in_a_clean_venv_gives_a_kernel_that_loads_the_extension(built, tmp_path):
    wheel, _ = built
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH")}
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True,
                               text=True, timeout=540, env=clean)
    if installed.returncode != 0 and "No matching distribution" in installed.stderr:
        pytest.skip(f"the package index cannot be reached: {installed.stderr.strip().splitlines()[-1]}")
    assert installed.returncode == 0, installed.stderr
    ran = subprocess.run([str(python), "-c", KERNEL_CHECK], capture_output=True, text=True, timeout=180,
                         env={**clean, "PATH": f"{env_dir / 'bin'}{os.pathsep}{clean.get('PATH', '')}"},
                         cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "from-the-wheel\n" in ran.stdout and "status: ok" in ran.stdout, ran.stdout
