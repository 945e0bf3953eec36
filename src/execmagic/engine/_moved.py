"""Old module paths (``execmagic.engine.plugins`` …) still import, for one release, with a warning.

The engine's modules moved into layers (``process``, ``background``, ``guard``, ``agents``, and
``execmagic.api``).  Code that imports an old path gets the new module -- the same object, so
``isinstance`` and monkeypatching keep working -- and a :class:`DeprecationWarning` naming the new
path.  ``python -m execmagic.engine.watchdog`` has a real module of its own (``-m`` needs code).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old dotted path -> new dotted path.
MOVED = {
    f"execmagic.engine.{old}": f"execmagic.{new}" for old, new in {
        "api": "api", "capture": "process.capture", "checks": "process.checks", "errors": "process.errors",
        "plugins": "agents.plugins", "policy": "guard.policy", "primitive": "agents.execute",
        "results": "process.results", "retention": "process.retention", "rules": "guard",
        "run": "process.foreground", "runner": "engine.engine", "secrets": "guard.secrets",
        "shells": "background.registry", "spawn": "process.launch", "spec": "process.spec",
        "stop": "process.stop", "tools": "agents.tools",
    }.items()
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there (or from execmagic)",
                      DeprecationWarning, stacklevel=3)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module is the new one, already executed."""


def install() -> None:
    """Register the aliases once per process."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
