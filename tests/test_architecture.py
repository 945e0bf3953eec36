"""ARCHITECTURE.md names only files that exist: a page that sends a new engineer to a moved or renamed
module costs more than no page.

Every path in backticks is checked: ``src/…``, ``tests/…``, ``notebooks/…`` from the repository's root,
``execmagic/…`` from ``src/``, and a path that starts with a layer's folder (the layers of the page's own
diagram) from ``src/execmagic/``, as the page says its paths are.  Bare file names (``base.py``, beside a
folder the sentence names) and patterns (``slurm_*.py``) are left alone.
"""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "src", "execmagic")
PAGE = os.path.join(PACKAGE, "ARCHITECTURE.md")
#: A span that is a path: no spaces, no pattern, at least one folder.
PATH = re.compile(r"[A-Za-z_][\w.-]*(?:/[\w.-]+)*/?")


def page() -> str:
    with open(PAGE, encoding="utf-8") as fh:
        return fh.read()


def layers(text: str) -> set[str]:
    """The folders of the page's layer diagram (``process  <-  guard, background  <-  …``)."""
    diagram = next(line for line in text.splitlines() if "<-" in line)
    return set(re.findall(r"[a-z_]+", diagram))


def named_paths(text: str, folders: set[str]) -> list[tuple[str, str]]:
    """``(as named, where it must be)`` for every path in backticks; ``folders``: the layers' folders."""
    bases = {"src": ROOT, "tests": ROOT, "notebooks": ROOT, "execmagic": os.path.join(ROOT, "src")}
    bases.update(dict.fromkeys(folders, PACKAGE))
    found = []
    for span in re.findall(r"`([^`\n]+)`", text):
        head = span.split("/", 1)[0]
        if "/" in span and PATH.fullmatch(span) and head in bases:
            found.append((span, os.path.join(bases[head], span)))
    return found


def test_every_path_the_page_names_exists():
    text = page()
    named = named_paths(text, layers(text))
    assert len(named) > 40, "the page names its modules; fewer than expected were found: is the pattern right?"
    missing = [span for span, where in named if not os.path.exists(where)]
    assert not missing, f"ARCHITECTURE.md names paths that do not exist: {missing}"


def test_the_where_to_add_table_names_real_files():
    text = page()
    section = text.split("## Where to add", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert any("client format" in row for row in rows) and any("sandbox mode" in row for row in rows)
    for row in rows:
        files = named_paths(row.split("|")[2], layers(text))
        assert files, f"a row names no file: {row}"


def test_a_missing_path_is_caught():
    """The check itself: a made-up module, in each spelling, is found missing."""
    for span in ("engine/no_such_module.py", "src/execmagic/nowhere.py", "execmagic/nowhere/", "tests/nope.py"):
        (named, where), = named_paths(f"see `{span}` here", {"process", "engine"})
        assert named == span and not os.path.exists(where)
    assert named_paths("`base.py`, `slurm_*.py`, `/dev/fd/N`, `a b/c`, `~/x`, `guard/x.py`", {"engine"}) == []
