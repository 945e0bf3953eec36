"""Engine-wide settings reach every user of the shared engine, whoever made it first.

A notebook sets ``%config ExecMagics.audit_log = …`` and then hands a model a Toolbox before any
magic ran: the Toolbox's calls are audited and confined all the same.  Each case runs in a fresh
interpreter, so that no engine exists before the one under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(120)


def run_in_fresh_shell(code: str, cwd: str | None = None) -> str:
    prelude = textwrap.dedent("""
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_line_magic("load_ext", "execmagic")
        import execmagic
    """)
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=90, check=False, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("order", ["config-then-toolbox", "toolbox-then-config"])
def test_a_toolbox_made_before_any_magic_honours_the_notebooks_settings(tmp_path, order):
    audit, allowed, outside = tmp_path / "audit.jsonl", tmp_path / "ok", tmp_path / "no"
    allowed.mkdir()
    outside.mkdir()
    config = f"""
ip.run_line_magic("config", "ExecMagics.audit_log = {str(audit)!r}")
ip.run_line_magic("config", "ExecMagics.allowed_dirs = [{str(allowed)!r}]")
"""
    toolbox = "box = execmagic.Toolbox(grace=0.3, sandbox='off')\n"  # the settings under test, not the walls
    out = run_in_fresh_shell((config + toolbox if order == "config-then-toolbox" else toolbox + config) + f"""
import json
ok = box.dispatch("Bash", {{"command": "echo inside"}})
refused = box.dispatch("Bash", {{"command": "cd {outside} && pwd"}})
print(json.dumps([ok, refused]))
box.engine.close(0.3)
""", cwd=str(allowed))
    ok, refused = json.loads(out.splitlines()[-1])
    assert "inside" in json.dumps(ok)
    assert "outside the allowed directories" in json.dumps(refused)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert any(line["command"] == "echo inside" for line in lines)


def test_a_toolbox_keeps_its_own_guard_level(tmp_path):
    """Per-caller settings stay per caller: the notebook's guard does not loosen a Toolbox's ``all``."""
    out = run_in_fresh_shell("""
ip.run_line_magic("config", "ExecMagics.guard = 'catastrophic'")
box = execmagic.Toolbox(grace=0.3)
print(box.guard)
box.engine.close(0.3)
""")
    assert out.split() == ["all"]
