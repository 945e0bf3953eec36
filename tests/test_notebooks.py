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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
SANITIZE = os.path.join(ROOT, "tests", "nbval_sanitize.cfg")


def load(name: str) -> nbformat.NotebookNode:
    return nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)


def _project_dirs(tmp_path):
    return sorted(p.name for p in tmp_path.glob("runbook-*"))


def test_jupyter_execute_stops_at_the_failing_step_before_the_cleanup(tmp_path):
    result = subprocess.run([sys.executable, "-m", "jupyter", "execute", os.path.join(NOTEBOOKS, "runbook.ipynb")],
                            capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
                            env={**os.environ, "TMPDIR": str(tmp_path)})  # its project dir lands in tmp_path
    assert result.returncode != 0, result.stderr[-2000:]
    assert "command failed (exit 1): the run stops here" in result.stderr
    assert "AssertionError: 6 != 5" in result.stderr
    assert len(_project_dirs(tmp_path)) == 1  # the cleanup never ran


def _papermill(tmp_path, *parameters: str) -> tuple[subprocess.CompletedProcess[str], nbformat.NotebookNode]:
    out = tmp_path / "out.ipynb"
    result = subprocess.run(
        [sys.executable, "-m", "papermill", "--no-progress-bar", os.path.join(NOTEBOOKS, "runbook.ipynb"), str(out),
         *parameters], capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
        env={**os.environ, "TMPDIR": str(tmp_path)})
    return result, nbformat.read(str(out), as_version=4)


def _stdout_of(nb: nbformat.NotebookNode, start: str) -> str:
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(start)]
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_papermill_parameters_reach_the_steps(tmp_path):
    result, nb = _papermill(tmp_path, "-p", "package", "mathlib", "-p", "break_on_purpose", "False")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Passed unknown parameter" not in result.stderr
    assert "./mathlib/__init__.py" in _stdout_of(nb, "%%exec --errexit --param package\ncd {project}")
    assert _stdout_of(nb, "%exec --isolated rm -rf") == "removed\n"  # ran to the end
    assert _project_dirs(tmp_path) == []


def test_papermill_stops_at_the_failing_step_before_the_cleanup(tmp_path):
    result, nb = _papermill(tmp_path)
    assert result.returncode != 0
    assert "command failed (exit 1): the run stops here" in result.stderr
    (failed,) = [c for c in nb.cells if any(o.output_type == "error" for o in c.get("outputs", []))]
    assert failed.source.startswith("%%exec --errexit\npython3 -m unittest")
    assert "FAILED (failures=1)" in "".join(o.get("text", "") for o in failed.outputs)
    assert nb.cells[-1].source.startswith("%exec --isolated rm -rf") and not nb.cells[-1].outputs
    assert len(_project_dirs(tmp_path)) == 1


def test_the_saved_runbook_passes_nbval_expecting_its_failure(tmp_path):
    """nbval checks the saved outputs; its copy tags the failing step raises-exception (the runbook
    itself must not: that tag would let jupyter execute and papermill run on), and runs the cleanup
    without comparing it (the saved run stopped before it)."""
    nb = load("runbook.ipynb")
    code = [c for c in nb.cells if c.cell_type == "code"]
    failing, cleanup = code[-2], code[-1]
    assert any(o.output_type == "error" for o in failing.outputs) and not cleanup.outputs
    failing.metadata["tags"] = ["raises-exception"]
    cleanup.metadata["tags"] = ["nbval-ignore-output"]
    path = tmp_path / "runbook_expecting_failure.ipynb"
    nbformat.write(nb, str(path))
    with open(os.path.join(NOTEBOOKS, "conftest.py")) as fh:
        (tmp_path / "conftest.py").write_text(fh.read().replace('collect_ignore = ["runbook.ipynb"]', ""))
    result = _run_nbval(path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout


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
    # stderr is told apart from stdout: its own output type, on a red background
    assert page.count('data-mime-type="application/vnd.jupyter.stderr"') >= 3
    assert ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']" in page


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
