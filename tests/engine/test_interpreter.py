"""``execmagic.run`` and ``execmagic.spawn`` from a program find its interpreter's own tools first, as
the magics do: a venv's Python started with another environment first on PATH once ran that
environment's ``pytest``."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
import execmagic
print(execmagic.run("python -c 'import sys; print(sys.prefix)'").stdout.strip())
print(execmagic.spawn(["python", "-c", "import sys; print(sys.prefix)"]).stdout.strip())
"""


def test_run_and_spawn_take_the_interpreters_own_python_before_an_inherited_path(tmp_path):
    other = tmp_path / "other-env" / "bin"
    other.mkdir(parents=True)
    impostor = other / "python"
    impostor.write_text("#!/bin/sh\necho another environment\n")
    impostor.chmod(0o755)
    env = {**os.environ, "PATH": f"{other}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
           "EXECMAGIC_STANDBY": "0"}
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [sys.prefix, sys.prefix]
