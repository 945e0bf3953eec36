"""The README is true to the code and short enough to finish: its two commands are the ones CI runs,
its links lead somewhere, every option and setting it names exists, every Python block runs as
shown, and the full reference it links to is generated from the magics' own help and is current."""

from __future__ import annotations

import os
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.testing.globalipapp import start_ipython

from execmagic.magics.reference import MAGICS, REFERENCE_FILE, help_text, render_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
#: The README's two commands, word for word: a newcomer pastes them into a fresh clone.
TOUR_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q '.[tour]' && .venv/bin/jupyter nbconvert "
                "--to markdown --execute --stdout --NbConvertBase.display_data_priority=text/plain "
                "--template-file jupyter-config/nbconvert/tour.md.j2 notebooks/tour.ipynb")
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest"


@pytest.fixture(scope="module")
def shell():
    ip = start_ipython() or InteractiveShell.instance()
    ip.run_line_magic("load_ext", "execmagic")
    yield ip
    ip.run_line_magic("unload_ext", "execmagic")


@pytest.fixture(scope="module")
def readme():
    with open(README, encoding="utf-8") as fh:
        return fh.read()


def test_reference_file_is_current(shell):
    with open(REFERENCE_FILE, encoding="utf-8") as fh:
        assert fh.read() == render_file(shell), (
            "the reference is stale: .venv/bin/python -m execmagic.magics.reference --write")


def test_reference_is_what_the_question_mark_shows(shell):
    for kind, name in MAGICS:
        prefix = "%%" if kind == "cell" else "%"
        info = shell.object_inspect(prefix + name)
        assert info["found"] and help_text(shell, kind, name) in info["docstring"]


def test_readme_is_short_enough_to_finish(readme):
    """Counted in words, not lines (a line cap only makes lines longer), and prose no wider than the code: a
    newcomer reads it to the end on one screen's width."""
    assert len(readme.split()) < 3300
    prose, in_code = [], False
    for line in readme.splitlines():
        in_code = in_code != line.startswith("```")
        if not in_code and not line.startswith(("```", "|")):
            prose.append(line)
    assert [line for line in prose if len(line) > 120] == []


def test_the_two_commands_are_there_word_for_word_and_ci_runs_the_second(readme):
    blocks = re.findall(r"```bash\n(.*?)```", readme, re.S)
    assert blocks[:2] == [TOUR_COMMAND + "\n", TEST_COMMAND + "\n"]
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        assert TEST_COMMAND in fh.read()
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as fh:
        assert re.search(r"^tour = \[", fh.read(), re.M), "the tour command installs the 'tour' extra"


def test_links_lead_somewhere(readme):
    anchors = {re.sub(r"[^\w\- ]", "", title).strip().lower().replace(" ", "-")
               for title in re.findall(r"^#+ (.+)$", readme, re.M)}
    for target in re.findall(r"\]\(([^)]+)\)", readme):
        if target.startswith("#"):
            assert target[1:] in anchors, target
        elif "://" not in target:
            assert os.path.exists(os.path.join(ROOT, target.split("#")[0])), target


def test_no_paths_of_a_machine_and_no_insider_words(readme):
    with open(REFERENCE_FILE, encoding="utf-8") as fh:
        reference = fh.read()
    for text in (readme, reference):
        assert "/work/" not in text and "/home/you" not in text
        assert not re.search(r"\bseeds?\b|SubprocessPrimitive", text, re.I)


def test_every_listed_option_and_setting_exists(shell, readme):
    every_help = "\n".join(help_text(shell, kind, name) for kind, name in MAGICS)
    options = re.findall(r"^\| `(--[a-z-]+)", readme, re.M)
    assert len(options) >= 12
    for option in options:
        assert option in every_help, f"README lists {option}, which no magic has"
    magics = shell.magics_manager.registry["ExecMagics"]
    traits = re.findall(r"^\| `([a-z_]+)` \| `", readme, re.M)
    assert len(traits) >= 5
    configurable = set(magics.traits(config=True))
    assert set(traits) <= configurable, f"README lists settings ExecMagics lacks: {set(traits) - configurable}"
    for name in traits:  # the README's default is the real one
        row = re.search(rf"^\| `{name}` \| `([^`]*)`", readme, re.M)
        assert row and row.group(1) == repr(magics.trait_defaults(name)), name
    with open(REFERENCE_FILE, encoding="utf-8") as fh:
        assert configurable == set(re.findall(r"^\| `([a-z_]+)` \| `", fh.read(), re.M))
    for magic in set(re.findall(r"(?<![%\w])%%?([a-z_]+)\b", readme)) - {"config", "load_ext", "unload_ext", "s"}:
        assert magic in shell.magics_manager.magics["line"] or magic in shell.magics_manager.magics["cell"], magic


def test_every_slurm_trait_is_in_the_cluster_page(readme):
    from execmagic.magics.cluster import SlurmBackend

    assert "(src/execmagic/background/backends/slurm/slurm.md)" in readme
    with open(os.path.join(ROOT, "src", "execmagic", "background", "backends", "slurm", "slurm.md"), encoding="utf-8") as fh:
        page = fh.read()
    for name in SlurmBackend.class_traits(config=True):
        assert f"`SlurmBackend.{name}`" in page or f"`.{name}`" in page, f"slurm.md lacks SlurmBackend.{name}"
    for option in ("--on", "--partition", "--cpus", "--mem", "--gpus", "--time", "--account", "--sbatch-args"):
        assert option in page


def test_the_tour_as_markdown_tells_stderr_apart():
    """Markdown has no colour: the README's tour command marks every stderr line, and only those."""
    import nbformat
    from nbconvert import MarkdownExporter

    cell = nbformat.v4.new_code_cell("%exec ls /nope; echo fine", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="fine\n"),
        nbformat.v4.new_output("stream", name="stderr", text="ls: /nope: No such file\nsecond line\n")])
    exporter = MarkdownExporter(template_file=os.path.join(ROOT, "jupyter-config", "nbconvert", "tour.md.j2"))
    body, _ = exporter.from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    assert "    fine\n" in body and "stderr│ fine" not in body
    assert "    stderr│ ls: /nope: No such file\n    stderr│ second line\n" in body


#: README blocks that cannot run here, by a word they contain, and why: visible in the test's skip reason.
NEEDS_MORE_THAN_THIS_MACHINE = {
    "import anthropic": "calls Anthropic's API: needs the network and an ANTHROPIC_API_KEY",
}
#: What the README's blocks name, made in a throwaway folder: a tiny project with a Makefile (``make test``,
#: ``make all``), tests that ``pytest -q`` runs and ``ruff check`` accepts, and a git repository ``repo``.
PROJECT = {
    "Makefile": "test:\n\tpython -m pytest -q tests\nall:\n\t@echo built\n",
    "tests/test_sum.py": "def test_sum():\n    assert sum([1, 2]) == 3\n",
}


def _python_blocks() -> list:
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    blocks = []
    for match in re.finditer(r"```python\n(.*?)```", text, re.S):
        line = text.count("\n", 0, match.start()) + 1
        skips = [why for word, why in NEEDS_MORE_THAN_THIS_MACHINE.items() if word in match.group(1)]
        marks = [pytest.mark.skip(reason=f"README.md:{line} {skips[0]}")] if skips else []
        blocks.append(pytest.param(match.group(1), id=f"README.md:{line}", marks=marks))
    return blocks


def test_some_python_blocks_run_here():
    """The skip rule must not swallow them all."""
    runnable = [b for b in _python_blocks() if not b.marks]
    assert runnable, "every ```python block of the README is skipped"


@pytest.mark.parametrize("block", _python_blocks())
def test_every_python_block_runs_as_shown(block, tmp_path):
    """Each block, word for word, as a script in a fresh interpreter (this one's), in a folder holding
    what it names; it must end without an exception, and whatever it started must be gone (conftest)."""
    import subprocess
    import sys

    for name, content in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    subprocess.run(["git", "init", "-q", "repo"], cwd=tmp_path, check=True, timeout=30)
    script = tmp_path.parent / f"{tmp_path.name}-block.py"  # beside the project, not in it: ruff checks that
    script.write_text(block)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # the tiny project's pytest: seconds faster
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
