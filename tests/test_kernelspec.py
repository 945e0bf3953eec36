"""The opt-in kernelspec: a built wheel, installed in a fresh virtualenv, brings a
"Python 3 (execmagic)" kernel whose magics answer without any %load_ext."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CLIENT = textwrap.dedent("""
    import sys
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = KernelSpecManager().get_kernel_spec("execmagic")
    assert spec.display_name == "Python 3 (execmagic)", spec.display_name
    assert spec.resource_dir.startswith(sys.prefix), spec.resource_dir
    km = KernelManager(kernel_name="execmagic")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        msg_id = kc.execute("%exec echo from-the-wheel-kernel\\nimport execmagic; print(execmagic.__file__)")
        text = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                text.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                print("ERROR", msg["content"]["evalue"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        print("".join(text), end="")
    finally:
        kc.stop_channels()
        km.shutdown_kernel()
""")


@pytest.mark.timeout(600)
def test_wheel_kernelspec_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), ROOT],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("execmagic-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True, timeout=600)
    assert (venv / "share" / "jupyter" / "kernels" / "execmagic" / "kernel.json").exists()
    result = subprocess.run([python, "-c", CLIENT], capture_output=True, text=True, timeout=180, cwd=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "from-the-wheel-kernel"
    assert lines[1].startswith(str(venv)), lines  # the wheel's copy, not this checkout
