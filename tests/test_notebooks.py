"""The notebooks as users meet them: a runbook stops at its failed step, nbval's comparison is live,
nbconvert's HTML shows rendered summaries, and a terminal shows text only."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
SANITIZE = os.path.join(ROOT, "tests", "nbval_sanitize.cfg")


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)


def test_runbook_stops_at_the_first_failed_step(tmp_path):
    nb = load("runbook.ipynb")
    for cell in nb.cells:  # as a user's "Run all" would: fresh, and no cell expected to fail
        cell.metadata.pop("tags", None)
        if cell.cell_type == "code":
            cell.execution_count, cell.outputs = None, []
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError, match="command failed: exit 1"):
        client.execute(env={**os.environ, "TMPDIR": str(tmp_path)})  # its project dir stays in tmp_path
    executed = [c for c in nb.cells if c.cell_type == "code" and c.get("execution_count")]
    last = executed[-1]
    assert "sed -i" in last.source  # the failing step is the last one that ran
    assert nb.cells[-1].get("execution_count") is None  # the cleanup never ran
    assert next(o for o in last.outputs if o.output_type == "error").traceback == [
        "\x1b[31mcommand failed: exit 1 · sed -i 's/a + b/a + b + 1/' calc/__init__.py … (+2 lines)\x1b[0m"]


def _run_nbval(path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval",
         "--nbval-current-env", f"--nbval-sanitize-with={SANITIZE}", f"--rootdir={path.parent}", str(path)],
        capture_output=True, text=True, timeout=300, cwd=str(path.parent),
    )


def test_nbval_comparison_is_live(tmp_path):
    nb = load("tour.ipynb")
    changed = copy.deepcopy(nb)
    for cell in changed.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and "hello from bash" in output.get("text", ""):
                output["text"] = output["text"].replace("hello from bash", "hello from zsh")
                break
        else:
            continue
        break
    else:
        pytest.fail("the tour no longer prints 'hello from bash'")
    path = tmp_path / "tour_changed.ipynb"
    nbformat.write(changed, str(path))
    with open(os.path.join(NOTEBOOKS, "conftest.py")) as fh:
        (tmp_path / "conftest.py").write_text(fh.read())
    result = _run_nbval(path)
    assert result.returncode == 1, result.stdout[-2000:]
    assert "Cell outputs differ" in result.stdout and "hello from zsh" in result.stdout


def test_nbconvert_html_shows_rendered_summaries(tmp_path):
    out = tmp_path / "tour.html"
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--execute", "--output", str(out),
         os.path.join(NOTEBOOKS, "tour.ipynb")],
        check=True, capture_output=True, timeout=300, cwd=str(tmp_path), env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    page = out.read_text(encoding="utf-8")
    assert page.count('class="execmagic-result"') >= 15
    assert "✔ exit 0" in page and "✘ exit 2" in page and '<table class="execmagic-shells"' in page
    assert "IOPub data rate exceeded" not in page


def test_terminal_ipython_shows_text_only(tmp_path):
    script = "%load_ext execmagic\n%exec echo from-terminal\n%bg --name t sleep 30\n%bg\n%kill t\n"
    result = subprocess.run([sys.executable, "-m", "IPython", "--colors=nocolor", "--no-banner", "-c", script],
                            capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "from-terminal\n✔ exit 0 · " in result.stdout
    assert "▶ t · pid " in result.stdout and "■ t stopped with SIGTERM" in result.stdout
    assert "<div" not in result.stdout and "<table" not in result.stdout and "vnd.execmagic" not in result.stdout


def test_a_token_in_a_templated_command_never_reaches_the_saved_notebook(tmp_path):
    """The command runs with the token; the summary, the provenance and a failure line show it redacted."""
    token = "ghp_" + "Zq9" * 12
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in (
        "%load_ext execmagic\nimport os\ntok = os.environ['T_SECRET']\ndb_password = tok[::-1]",
        '%exec printf %s "Authorization: token {tok}" | wc -c',
        "%exec --dry-run curl -u admin:{db_password} -H 'Authorization: token {tok}' https://example.invalid",
        "%exec --no-raise test {tok} = nope",
        "%bg --name t sleep 0.1; echo {tok} > /dev/null\n%bg",
        "%exec --out r echo {db_password} > /dev/null\nr",
    )]
    client = NotebookClient(nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute(env={**os.environ, "T_SECRET": token, "TMPDIR": str(tmp_path)})
    path = tmp_path / "saved.ipynb"
    nbformat.write(nb, str(path))
    saved = path.read_text()
    assert nb.cells[1].outputs[0]["text"].strip() == str(len("Authorization: token ") + len(token))  # it ran
    assert "[REDACTED" in saved
    assert token not in saved and token[::-1] not in saved
