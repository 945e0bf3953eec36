"""Names a package re-exports, imported the first time one is used (PEP 562).

``%load_ext execmagic`` should cost a few milliseconds in a kernel that starts with it; a package
``__init__`` that imports every module it re-exports makes each import of one small module pay
for all of them (the guardrail lexers, the agent tools, the asyncio API).  A package lists where
each name lives and gets a module ``__getattr__`` that imports it on first use.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, where: Mapping[str, str], namespace: dict[str, Any], *,
                 module: str | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where`` maps a name to its module,
    relative to the package (``"engine"``, or ``"..process.spec"`` for a sibling package).

    ``module``: a module of the package whose names these are (``guard.check`` re-exporting what the
    rules define, which only some commands need), when not the package itself."""
    owner = module or package

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if module.startswith(".") else f".{module}", package), name)
        namespace[name] = value  # the next use is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    if owner == package:
        _keep_names_over_submodules(package, {name for name, module in where.items() if module == name})
    return __getattr__, __dir__


def _keep_names_over_submodules(package: str, names: set[str]) -> None:
    """A name exported from the submodule of the same name (``guard.check`` the function, from
    ``guard/check.py``) stays the exported object when that submodule is imported.

    Importing ``package.name`` sets the attribute ``name`` of the package to the submodule; an
    eager ``from .name import name`` in ``__init__`` used to bind it back to the function.  A
    lazy package does it as the import system sets it.
    """
    if not names:
        return

    def __setattr__(self: types.ModuleType, name: str, value: Any) -> None:
        if name in names and isinstance(value, types.ModuleType) and value.__name__ == f"{package}.{name}":
            value = getattr(value, name)
        types.ModuleType.__setattr__(self, name, value)

    module = sys.modules[package]
    module.__class__ = type("LazyPackage", (types.ModuleType,), {"__setattr__": __setattr__})
