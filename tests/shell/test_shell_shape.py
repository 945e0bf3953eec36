"""The shape rules the reading layer keeps: one job per module, every public name declared, no long function.

The reader was one module of 1,300 lines with two walkers joined by two functions; it is split along
them (the walk and where a substitution ends; the words and the splitter), each module small enough
to read at once.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "execmagic" / "shell"
#: Lines a function may have: one screen, as in ``process/``.
MAX_FUNCTION_LINES = 60
#: Lines a module may have (code and docstrings), as for the whole package.
MAX_MODULE_LINES = 500
MODULES = sorted(SRC.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_every_module_declares_all_and_every_name_exists(path):
    module = importlib.import_module("execmagic.shell" + ("" if path.stem == "__init__" else "." + path.stem))
    assert hasattr(module, "__all__")
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_no_function_is_longer_than_a_screen_and_no_module_too_long(path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []
    assert text.count("\n") <= MAX_MODULE_LINES


def test_the_layer_imports_no_other_layer():
    """The ground floor: it reads text and starts nothing, so it needs nothing of the package above it."""
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{path.name} imports {'.' * node.level}{node.module}"
                assert not (node.module or "").startswith("execmagic"), f"{path.name} imports {node.module}"
