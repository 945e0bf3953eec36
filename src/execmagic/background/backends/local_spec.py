"""``--on local``: local processes, the default backend (its :class:`~.registry.BackendSpec`).

A module of its own, as every backend's spec is, so the registry can list the backends without
importing them; this one takes no options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Backend
from .registry import BackendSpec

__all__ = ["SPEC"]


def _make(values: Mapping[str, Any], grace: float) -> Backend:
    from .local import LocalBackend

    return LocalBackend()


SPEC = BackendSpec(name="local", help="default", make=_make)
