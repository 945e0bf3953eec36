"""A backend package's public names, imported when first asked for.

The registry imports a backend's ``spec`` module when the magics load, and importing it imports its
package first: so a package's ``__init__`` names its public classes without importing them, and the
backend's own modules (its client, its handle) load when a command first runs there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``where`` from its module (``where``:
    name to module under the package)."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return getattr_
