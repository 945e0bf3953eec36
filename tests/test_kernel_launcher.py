"""A kernel from execmagic's kernelspecs imports nothing from the notebook's folder while it starts.

``python -m ipykernel_launcher`` puts that folder first on the module path: an ``ipykernel_launcher.py``
(or a ``traitlets.py``, ``zmq.py``...) written there by anything that could write the folder -- a sandboxed
agent -- runs, unconfined, at the next kernel start.  Real kernels, started and restarted in a folder
holding such plants, run none of them, and still import a module that stands next to the notebook.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from execmagic.magics.kernel_launcher import BOOTSTRAP, kernel_argv
from execmagic.magics.kernelspec import kernel_dict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Modules a kernel imports while it starts (and one a notebook's code imports from the standard library).
PLANTED = ("ipykernel_launcher", "traitlets", "zmq", "tornado", "json", "execmagic")


def _plant(folder, marks) -> None:
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(marks / name)!r}, 'w').close()\n")
    (folder / "next_to_the_notebook.py").write_text("ANSWER = 42\n")


def _run(kc, code: str) -> str:
    out = []

    def hook(msg):
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("ERROR " + msg["content"]["ename"] + ": " + msg["content"]["evalue"] + "\n")

    kc.execute_interactive(code, output_hook=hook, timeout=120)
    return "".join(out)


#: A Python 3.10 with ipykernel (and execmagic's dependencies) to start a kernel of: named by this variable, as
#: a machine with one has it (3.10 has no ``-P``: its kernelspec starts through the bootstrap).
PYTHON310_VAR = "EXECMAGIC_TEST_PYTHON310"


def _python310() -> str:
    python = os.environ.get(PYTHON310_VAR, "")
    if not python or not os.access(python, os.X_OK):
        pytest.skip(f"no Python 3.10 with ipykernel named in {PYTHON310_VAR} (this machine's Python is "
                    f"{sys.version_info.major}.{sys.version_info.minor})")
    return python


@pytest.mark.kernel
@pytest.mark.timeout(300)
@pytest.mark.parametrize("form", ["safe-path", "bootstrap", "python3.10"])
def test_a_kernel_restarted_in_a_folder_with_planted_modules_runs_none_of_them(tmp_path, form):
    """``safe-path``: what install-kernel writes for this Python (``-P``, 3.11 and newer); ``bootstrap``: the
    wheel's kernelspec (``-c``); ``python3.10``: what install-kernel writes for 3.10 (``-c`` too), run by 3.10."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    folder, marks, specs = tmp_path / "notebooks", tmp_path / "marks", tmp_path / "kernels"
    for path in (folder, marks, specs / "launcher-test"):
        path.mkdir(parents=True)
    _plant(folder, marks)
    spec = kernel_dict("launcher test")
    if form == "python3.10":
        spec["argv"] = [*kernel_argv(_python310(), safe_path=False), *spec["argv"][spec["argv"].index("-f"):]]
    elif form == "bootstrap":
        with open(os.path.join(ROOT, "jupyter-config", "kernels", "execmagic", "kernel.json")) as fh:
            shipped = json.load(fh)["argv"]
        assert shipped[1:3] == ["-c", BOOTSTRAP]
        spec["argv"] = [sys.executable, *shipped[1:]]
    else:
        assert spec["argv"][spec["argv"].index("-m") - 1] == "-P"
    (specs / "launcher-test" / "kernel.json").write_text(json.dumps(spec))
    km = KernelManager(kernel_name="launcher-test", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs)]))
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    km.start_kernel(cwd=str(folder), env=env)
    try:
        for _start in ("first", "restarted"):
            kc = km.client()
            kc.start_channels()
            try:
                kc.wait_for_ready(timeout=120)
                out = _run(kc, "import next_to_the_notebook, json, sys, execmagic\n"
                               "print(next_to_the_notebook.ANSWER, json.__file__ != 'json.py' and 'notebooks' not in"
                               " json.__file__, sys.path[-1] == '', 'notebooks' not in execmagic.__file__)\n"
                               "%exec echo magics-loaded")
            finally:
                kc.stop_channels()
            assert out == "42 True True True\nmagics-loaded\n", out
            assert sorted(os.listdir(marks)) == [], f"planted modules ran: {os.listdir(marks)}"
            km.restart_kernel(now=True)
    finally:
        km.shutdown_kernel(now=True)
