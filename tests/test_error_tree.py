"""The exception tree drawn in ARCHITECTURE.md is the one in the code: every class, its parent and its module."""

from __future__ import annotations

import builtins
import importlib
import inspect
import os
import pkgutil

import execmagic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARCHITECTURE = os.path.join(ROOT, "src", "execmagic", "ARCHITECTURE.md")


def _drawn() -> dict[str, tuple[str, str | None]]:
    """``{class: (parent, module path)}`` from the ``text`` block under "## Errors"."""
    with open(ARCHITECTURE, encoding="utf-8") as fh:
        text = fh.read()
    block = text.split("## Errors", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    tree: dict[str, tuple[str, str | None]] = {}
    parents: list[str] = []
    for line in block.splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        words = line.split()
        name, path = words[0], (words[1] if len(words) > 1 else None)
        del parents[depth:]
        if parents:
            tree[name] = (parents[-1], path)
        parents.append(name)
    return tree


def _in_code() -> dict[str, tuple[str, str]]:
    """``{class: (parent, module path)}`` for every exception class execmagic defines."""
    found: dict[str, tuple[str, str]] = {}
    for info in pkgutil.walk_packages(execmagic.__path__, "execmagic."):
        if info.name.endswith("__main__"):  # running it would start a program
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if not (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__):
                continue
            bases = [b for b in obj.__bases__ if issubclass(b, BaseException)]
            assert len(bases) == 1, f"{obj.__name__} has {len(bases)} exception bases: draw it, then change this test"
            path = module.__name__.removeprefix("execmagic.").replace(".", "/")
            is_package = os.path.basename(inspect.getfile(module)) == "__init__.py"
            found[obj.__name__] = (bases[0].__name__, path + ("/__init__.py" if is_package else ".py"))
    return found


def test_the_drawn_tree_is_the_codes():
    drawn, code = _drawn(), _in_code()
    ours = {name: value for name, value in drawn.items() if not hasattr(builtins, name)}
    assert ours == code


def test_every_path_it_names_exists():
    for name, (_parent, path) in _drawn().items():
        if path is not None:
            assert os.path.isfile(os.path.join(ROOT, "src", "execmagic", path)), (name, path)
