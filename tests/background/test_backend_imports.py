"""The backends import in one direction: no circle between modules, counting the imports made inside
functions (a factory's, a lazy one's), which a circle hides behind until a refactoring moves them."""

from __future__ import annotations

import ast
import os

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
PACKAGE = os.path.join(SRC, "execmagic")


def _modules():
    """Every module of execmagic by dotted name (a package by its own name), with its file."""
    for root, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                parts = os.path.relpath(os.path.join(root, name), SRC)[:-3].split(os.sep)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                yield ".".join(parts), os.path.join(root, name)


def _targets(module, path, known):
    """The modules ``module`` imports anywhere in its file (in functions and ``TYPE_CHECKING`` too)."""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names]
            yield from [name for name in names if name in known] or ([target] if target in known else [])
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)


def _graph():
    files = dict(_modules())
    return {module: set(_targets(module, path, files)) - {module} for module, path in files.items()}


def _circles(graph):
    """Every strongly connected group of more than one module (Tarjan's walk, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(start):
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_the_walk_sees_imports_made_inside_functions():
    graph = _graph()
    assert "execmagic.background.backends.slurm.backend" in graph["execmagic.background.backends.slurm.spec"]
    assert "execmagic.background.backends.slurm.cli" in graph["execmagic.background.backends.slurm.backend"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_circle_between_the_backends_modules():
    backends = "execmagic.background.backends"
    circles = [group for group in _circles(_graph()) if any(m.startswith(backends) for m in group)]
    assert circles == []
