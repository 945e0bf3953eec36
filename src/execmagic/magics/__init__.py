"""The IPython side: magics that translate to engine calls.  ``load``/``unload`` wire them into a shell."""

from __future__ import annotations

from typing import Any

from ..display import formatters
from .exec_magics import CellCommandFailed, CommandInterrupted, ExecMagics

__all__ = ["CellCommandFailed", "CommandInterrupted", "ExecMagics", "load", "unload"]

_LOADED: dict[int, ExecMagics] = {}


def load(shell: Any) -> None:
    if id(shell) in _LOADED:
        return
    magics = ExecMagics(shell=shell)
    shell.register_magics(magics)
    formatters.register(shell)
    _LOADED[id(shell)] = magics


def unload(shell: Any) -> None:
    magics = _LOADED.pop(id(shell), None)
    if magics is None:
        return
    registry = shell.magics_manager.magics
    for kind, names in magics.magics.items():
        for name, func in names.items():
            if registry[kind].get(name) == func:
                del registry[kind][name]
    if magics in getattr(shell, "configurables", []):
        shell.configurables.remove(magics)
    formatters.unregister(shell)
