"""ARCHITECTURE.md's backend section and its "where to add" row are true: every path they name is
there, each remote backend's package has the shape the section says, and the toy is the files it
says."""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "src", "execmagic")
BACKENDS = os.path.join(PACKAGE, "background", "backends")


def _section(title):
    with open(os.path.join(PACKAGE, "ARCHITECTURE.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def _paths(text):
    """Every quoted word that names a file or a folder (``a/b.py``, ``a/``, ``x.md``), placeholders
    (``NAME``, ``k8s``: the example) left out."""
    for word in re.findall(r"`([^`\s]+)`", text):
        if ("/" in word or re.search(r"\.(py|md|sh)$", word)) and not re.search(r"NAME|k8s|\.\*|\(", word):
            yield word


def _exists(word):
    here = [os.path.join(PACKAGE, word), os.path.join(ROOT, word), os.path.join(BACKENDS, word)]
    here += [os.path.join(BACKENDS, name, word) for name in ("slurm", "ray")]
    return any(os.path.exists(path) for path in here)


def test_every_path_the_backend_section_and_the_table_name_is_there():
    text = _section("Background shells and backends") + _section("Where to add")
    named = list(_paths(text))
    assert len(named) > 20
    assert [word for word in named if not _exists(word)] == []


def test_each_remote_backend_is_a_package_of_the_shape_the_section_says():
    for name, client in (("slurm", "cli.py"), ("ray", "client.py")):
        files = set(os.listdir(os.path.join(BACKENDS, name)))
        assert {"__init__.py", "spec.py", "options.py", "backend.py", "handle.py", client, f"{name}.md"} <= files


def test_the_toy_is_the_four_files_the_section_counts():
    toy = os.path.join(ROOT, "tests", "background", "toy_backend")
    assert sorted(name for name in os.listdir(toy) if name.endswith(".py")) == [
        "__init__.py", "backend.py", "handle.py", "spec.py"]
    said = " ".join(_section("Background shells and backends").split())
    assert "four files (`__init__.py`, `spec.py`, `backend.py`, `handle.py`)" in said
