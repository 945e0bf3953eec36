"""The public face: ``execmagic.__all__`` is pinned, and every name the README and notebooks use
imports."""

from __future__ import annotations

import importlib
import os
import re
import warnings

import nbformat

import execmagic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC = [
    "AuditUnavailable", "CancelToken", "CommandFailed", "CommandRefused", "Engine", "ExecError", "KillOutcome",
    "ManifestError", "Plan", "PluginManifest", "PluginTool", "Policy", "PreExecError", "Refusal", "Result",
    "RunOptions", "ShellInfo", "ShellLimitReached", "ShellOutput", "SlurmBackend", "SlurmOptions", "StreamCapture", "SubprocessPrimitive",
    "SubprocessResult", "TemplateError", "Toolbox", "UnknownShell", "UsageProblem", "akill", "aread", "arun",
    "ashells", "aspawn", "astart", "close_default_engine", "default_engine", "execute", "kill", "load_ipython_extension",
    "load_manifest", "read", "run", "shells", "spawn", "start", "unload_ipython_extension",
]


def test_the_public_names_are_pinned():
    assert sorted(execmagic.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(execmagic, name) is not None


def _code_of_docs():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        yield "README.md", "\n".join(re.findall(r"```python\n(.*?)```", fh.read(), re.S))
    for name in sorted(os.listdir(os.path.join(ROOT, "notebooks"))):
        if name.endswith(".ipynb"):
            nb = nbformat.read(os.path.join(ROOT, "notebooks", name), as_version=4)
            yield name, "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_every_name_the_docs_use_imports():
    seen = 0
    for where, code in _code_of_docs():
        for module, names in re.findall(r"^\s*from (execmagic[\w.]*) import ([\w, ]+)", code, re.M):
            with warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)  # the docs use the current paths
                imported = importlib.import_module(module)
            for name in (n.strip() for n in names.split(",")):
                assert hasattr(imported, name), f"{where}: {module} has no {name}"
                seen += 1
        for name in re.findall(r"\bexecmagic\.([A-Za-z_]\w*)\b", code):
            assert hasattr(execmagic, name) or importlib.util.find_spec(f"execmagic.{name}"), f"{where}: {name}"
            seen += 1
    assert seen >= 10

