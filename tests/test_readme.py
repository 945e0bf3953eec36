"""The README is true to the code: its magics reference is the magics' own help, and every option
and trait it lists exists."""

from __future__ import annotations

import os
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.testing.globalipapp import start_ipython

from execmagic.magics.reference import MAGICS, current_section, help_text, render

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


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


def test_magics_reference_is_current(shell, readme):
    assert current_section(readme) == render(shell), (
        "README's magics reference is stale: python -m execmagic.magics.reference --write README.md")


def test_reference_is_what_the_question_mark_shows(shell):
    for kind, name in MAGICS:
        prefix = "%%" if kind == "cell" else "%"
        info = shell.object_inspect(prefix + name)
        assert info["found"] and help_text(shell, kind, name) in info["docstring"]


def test_every_listed_option_and_trait_exists(shell, readme):
    every_help = "\n".join(help_text(shell, kind, name) for kind, name in MAGICS)
    options = re.findall(r"^\| `(--[a-z-]+)", readme, re.M)
    assert len(options) >= 12
    for option in options:
        assert option in every_help, f"README lists {option}, which no magic has"
    magics = shell.magics_manager.registry["ExecMagics"]
    traits = re.findall(r"^\| `([a-z_]+)` \| `", readme, re.M)
    assert len(traits) >= 12
    for trait in traits:
        assert magics.has_trait(trait), f"README lists the trait {trait}, which ExecMagics lacks"
    configurable = {name for name, t in magics.traits(config=True).items()}
    assert configurable == set(traits), f"traits missing from the README: {configurable - set(traits)}"
    for magic in set(re.findall(r"(?<![%\w])%%?([a-z_]+)\b", readme)) - {"config", "load_ext", "unload_ext", "s"}:
        assert magic in shell.magics_manager.magics["line"] or magic in shell.magics_manager.magics["cell"], magic


def test_every_slurm_trait_is_in_the_cluster_section(readme):
    from execmagic.magics.cluster import SlurmBackend

    section = readme[readme.index("## On a SLURM cluster"):]
    section = section[:section.index("\n## ", 1)]
    for name in SlurmBackend.class_traits(config=True):
        assert f"`SlurmBackend.{name}`" in section or f"`.{name}`" in section, f"README lacks SlurmBackend.{name}"
    for option in ("--on", "--partition", "--cpus", "--mem", "--gpus", "--time", "--account", "--sbatch-args"):
        assert option in section
