"""ARCHITECTURE.md's backend section is true where ``tests/test_architecture.py`` (every path it names
exists) cannot see: each remote backend's package has the shape the section says, and the toy is the
files it counts."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "src", "execmagic")
BACKENDS = os.path.join(PACKAGE, "background", "backends")


def _section(title):
    with open(os.path.join(PACKAGE, "ARCHITECTURE.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def test_each_remote_backend_is_a_package_of_the_shape_the_section_says():
    for name, client in (("slurm", "cli.py"), ("ray", "client.py")):
        files = set(os.listdir(os.path.join(BACKENDS, name)))
        assert {"__init__.py", "spec.py", "options.py", "backend.py", "handle.py", "status.py", client,
                f"{name}.md"} <= files


def test_the_toy_is_the_four_files_the_section_counts():
    toy = os.path.join(ROOT, "tests", "background", "toy_backend")
    assert sorted(name for name in os.listdir(toy) if name.endswith(".py")) == [
        "__init__.py", "backend.py", "handle.py", "spec.py"]
    said = " ".join(_section("Background shells and backends").split())
    assert "four files (`__init__.py`, `spec.py`, `backend.py`, `handle.py`)" in said
