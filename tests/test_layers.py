"""The architecture holds: each folder is one layer and imports point only downward.

    shell  <-  process  <-  guard, background  <-  engine  <-  agents, api  <-  display, mcp  <-  magics

``shell`` reads shell text and starts nothing: the standby in ``process`` asks its grammar, the guard
its words, templating its contexts.

``mcp`` is the thin entry of the ``execmagic-mcp`` command (its server lives in ``agents``).  The
layers are drawn, with what each holds, in ``src/execmagic/ARCHITECTURE.md``.

Inside a layer, modules import one another without a circle: a module can be read, tested and
moved with what it imports, never with what imports it.

Below the magics and display nothing imports IPython, traitlets or ipykernel, so plain Python,
asyncio orchestrators and agents can use the engine.  ``execmagic/__init__.py`` wires the layers
together and is exempt, and so is ``__main__.py`` (the command line).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "execmagic")
RANK = {"shell": 0, "process": 1, "guard": 2, "background": 2, "engine": 3, "agents": 4, "api": 4, "display": 5,
        "mcp": 5, "magics": 6}
FRONTEND = ("IPython", "traitlets", "ipykernel")


def modules():
    for root, _, files in os.walk(SRC):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                parts = os.path.relpath(path, SRC)[:-3].split(os.sep)
                yield path, parts


def imports(path, parts):
    """(layer of each execmagic module imported, or the top-level name of a third-party one)."""
    package = parts[:-1]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from .. import X" at the top: X names the layer
                    target = [node.names[0].name]
                yield node.lineno, "execmagic", target[0]
            else:
                top, _, rest = (node.module or "").partition(".")
                yield node.lineno, top, rest.split(".")[0] if top == "execmagic" else top
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top, _, rest = alias.name.partition(".")
                yield node.lineno, top, rest.split(".")[0] if top == "execmagic" else top


def _run_at_import(tree):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (read by type checkers, never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _imported(path, parts):
    """(line, execmagic module path parts, names imported from it) of each import in ``path``, those
    inside functions too (they run later, but they still make the two modules one piece to read)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in _run_at_import(tree):
        if isinstance(node, ast.ImportFrom):
            module = tuple(node.module.split(".")) if node.module else ()
            if node.level:
                package = parts[:-1]
                yield node.lineno, package[: len(package) - (node.level - 1)] + module, [a.name for a in node.names]
            elif module[:1] == ("execmagic",):
                yield node.lineno, module[1:], [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = tuple(alias.name.split("."))
                if module[:1] == ("execmagic",):
                    yield node.lineno, module[1:], [None]


def module_graph():
    """{module: {module it imports: first line}}, modules as path parts under ``execmagic``
    (``("process", "results")``, ``("engine", "__init__")``).  ``from .x import y`` is an arrow to the
    module ``x/y`` where there is one, else to ``x``; a package's ``__init__`` is a module like any other,
    and the parent package Python loads first is no arrow (else every re-export would make a circle)."""
    known = {tuple(parts): path for path, parts in modules()}

    def found(dotted):
        return next((m for m in (dotted, (*dotted, "__init__")) if m in known), None)

    graph = {}
    for parts, path in known.items():
        graph[parts] = arrows = {}
        for lineno, target, names in _imported(path, parts):
            for name in names:
                module = (found((*target, name)) if name else None) or found(target)
                if module is not None and module != parts:
                    arrows.setdefault(module, lineno)
    return graph


def circles(graph):
    """The groups of modules that reach one another through imports (Tarjan's strongly connected
    components of more than one module), each sorted."""
    order, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module):
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                found.append(sorted(group))

    for module in graph:
        if module not in order:
            visit(module)
    return found


def test_the_circle_finder_finds_circles_and_only_those():
    graph = {("a",): {("b",): 1}, ("b",): {("c",): 2}, ("c",): {("a",): 3}, ("d",): {("a",): 4}, ("e",): {}}
    assert circles(graph) == [[("a",), ("b",), ("c",)]]
    assert circles({("a",): {("b",): 1}, ("b",): {}}) == []


def test_the_graph_reads_function_level_imports_and_skips_type_checking_ones():
    graph = module_graph()
    # StreamCapture.read_bytes imports the file helpers when called; errors.py names Result for type checkers
    assert ("process", "private") in graph[("process", "results")]
    assert ("process", "results") not in graph[("process", "errors")]
    assert ("process", "checks") in graph[("engine", "plans")]  # "from ..process import checks": the module


def _place(circle):
    """The layer folder every module of ``circle`` is in, or "" when it crosses folders or is at the top."""
    tops = {parts[0] if len(parts) > 1 else "" for parts in circle}
    return tops.pop() if len(tops) == 1 else ""


@pytest.mark.parametrize("layer", [*sorted(RANK), ""], ids=lambda layer: layer or "across")
def test_no_circle_between_modules(layer):
    graph = module_graph()
    shown = []
    for circle in circles(graph):
        if _place(circle) == layer:
            shown += ["circle:"] + [f"  {'/'.join(a)}.py:{graph[a][b]} imports {'/'.join(b)}.py"
                                    for a in circle for b in circle if b in graph[a]]
    assert not shown, "modules that import one another (move what both need into a third):\n" + "\n".join(shown)


def test_every_module_sits_in_a_known_layer():
    for _path, parts in modules():
        if parts not in (["__init__"], ["__main__"]):
            assert parts[0] in RANK, f"{'/'.join(parts)}.py is in no layer; add it to RANK and the diagram in src/execmagic/ARCHITECTURE.md"


def test_imports_point_only_downward():
    wrong = []
    for path, parts in modules():
        if parts in (["__init__"], ["__main__"]):
            continue
        layer = parts[0]
        for lineno, top, target in imports(path, parts):
            if top == "execmagic" and target in RANK and target != layer and RANK[target] >= RANK[layer]:
                wrong.append(f"{os.path.relpath(path, SRC)}:{lineno} ({layer}) imports {target}")
            if top in FRONTEND and RANK[layer] < RANK["display"]:
                wrong.append(f"{os.path.relpath(path, SRC)}:{lineno} ({layer}) imports {top}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(wrong)


def test_the_engine_runs_without_ipython_loaded():
    code = ("import sys, execmagic.api, execmagic.agents.tools, execmagic.agents.plugins;"
            "assert not {'IPython', 'traitlets', 'ipykernel'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("layer", sorted(RANK))
def test_every_module_declares_its_public_names(layer):
    missing = []
    for path, parts in modules():
        with open(path, encoding="utf-8") as fh:
            if parts[0] == layer and "__all__" not in fh.read():
                missing.append(os.path.relpath(path, SRC))
    assert not missing, f"modules without __all__: {missing}"


#: What code outside ``background/backends`` may import from it: the protocols, the registry of
#: backends by name, the local backend (every shell registry's default) and the typed job state.
BACKEND_SEAM = {"base", "registry", "local", "status"}


def backend_imports(path, parts):
    """(line, module under ``background.backends`` that ``path`` imports) for every such import."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = parts[:-1][: len(parts) - 1 - (node.level - 1)] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            if not node.level:
                module = module[1:] if module[:1] == ["execmagic"] else []
            if module[:2] == ["background", "backends"]:
                if len(module) > 2:
                    yield node.lineno, module[2]
                else:
                    for alias in node.names:
                        yield node.lineno, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = alias.name.split(".")
                if module[:3] == ["execmagic", "background", "backends"] and len(module) > 3:
                    yield node.lineno, module[3]


def test_nothing_above_the_backends_imports_a_backend_by_name():
    """A new backend is one module and one line in the registry: so no caller may know one by name
    (``execmagic/__init__.py`` exempt: it re-exports ``SlurmBackend`` as the public API promises)."""
    wrong = []
    for path, parts in modules():
        if parts[:2] == ["background", "backends"] or parts in (["__init__"], ["__main__"]):
            continue
        for lineno, name in backend_imports(path, parts):
            if name not in BACKEND_SEAM and name[:1].islower():
                wrong.append(f"{os.path.relpath(path, SRC)}:{lineno} imports backends.{name}")
    assert not wrong, "imports past the backends' seam:\n" + "\n".join(wrong)
