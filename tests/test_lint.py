"""ruff and mypy, as configured in pyproject.toml, are clean: the README's one test command checks them."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    done = _run("ruff", "check", "--no-cache", "src", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_is_clean():
    done = _run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_module_over_400_lines_says_why():
    """Small modules with one job: one that grows past 400 lines is split by job, or says in its
    docstring why it stays whole ("Over 400 lines, on purpose: ...")."""
    import ast
    from pathlib import Path

    root = Path(ROOT)
    too_long = []
    for path in sorted((root / "src" / "execmagic").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 400 and "over 400 lines" not in (ast.get_docstring(ast.parse(text)) or "").lower():
            too_long.append(str(path.relative_to(root)))
    assert not too_long, too_long
