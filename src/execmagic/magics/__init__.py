"""The IPython side: magics that translate to engine calls.  ``load``/``unload`` wire them into a shell."""

from __future__ import annotations

import atexit
import sys
from types import FrameType
from typing import Any

from . import ahead, renderers
from .ahead import FIRST_RUN_MODULES
from .bg_magics import BackgroundMagics
from .exec_magics import CellCommandFailed, CommandInterrupted, ExecMagics, StartFailed
from .mcp_magics import McpMagics

__all__ = ["FIRST_RUN_MODULES", "BackgroundMagics", "CellCommandFailed", "CommandInterrupted", "ExecMagics",
           "McpMagics", "StartFailed", "load", "reloading", "unload"]

_LOADED: dict[int, tuple[ExecMagics, BackgroundMagics, McpMagics]] = {}


def load(shell: Any) -> None:
    """Register the magics and renderers; stop the background shells when the interpreter exits."""
    if id(shell) in _LOADED:
        return
    exec_magics = ExecMagics(shell=shell)
    bg_magics = BackgroundMagics(shell, exec_magics)
    mcp_magics = McpMagics(shell, exec_magics)
    shell.register_magics(exec_magics)
    shell.register_magics(bg_magics)
    shell.register_magics(mcp_magics)
    # so %config SlurmBackend.partition = "gpu" finds each backend's settings
    shell.configurables.extend(exec_magics.backend_settings.values())
    renderers.register(shell, view=exec_magics.display_view)  # when IPython makes its formatters
    # the notebook's engine-wide settings reach the process-wide engine whoever makes it first (a Toolbox too)
    from ..engine.default import set_default_configurer

    set_default_configurer(exec_magics.apply_engine_settings)
    atexit.register(_close_at_exit, exec_magics, mcp_magics)
    _LOADED[id(shell)] = (exec_magics, bg_magics, mcp_magics)
    ahead.start(shell, exec_magics, loaded=lambda: _LOADED.get(id(shell), (None,))[0] is exec_magics)


#: Longest grace for background shells when the interpreter exits: a kernel being shut down
#: or restarted should be gone in seconds, whatever a stubborn shell does with SIGTERM.
EXIT_GRACE = 1.0


def _close_engine(grace: float | None = None) -> None:
    """Close the process-wide engine if a command (or :mod:`.ahead`) made one (else there is nothing to
    stop, and nothing worth importing while the interpreter exits)."""
    default = sys.modules.get("execmagic.engine.default")
    if default is not None:
        default.close_default_engine(grace)


def _close_at_exit(exec_magics: ExecMagics, mcp_magics: McpMagics) -> None:
    ahead.exiting()  # an engine made ahead after this would outlive the close below
    mcp_magics.stop()  # no new calls from outside once the shells are being stopped
    _close_engine(grace=min(exec_magics.kill_grace, EXIT_GRACE))


def reloading(shell: Any) -> bool:
    """Whether this unload is the first half of ``%reload_ext``.

    IPython's ``ExtensionManager.reload_extension`` calls the extension's unload hook, re-imports the
    package's ``__init__`` (its submodules, and with them the process-wide engine, stay as they are),
    then calls the load hook; nothing tells the unload hook which of the two it is part of.  That
    method's frame on the stack, for this shell's extension manager, is the one witness.
    """
    manager = getattr(shell, "extension_manager", None)
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "reload_extension" and manager is not None \
                and frame.f_locals.get("self") is manager:
            return True
        frame = frame.f_back
    return False


def unload(shell: Any, keep_shells: bool = False) -> None:
    """Stop the MCP server and every background shell, then remove the magics, renderers and exit hook.

    ``keep_shells`` (a reload): the engine -- its session, background shells and watchdog -- is left
    running for the magics the next :func:`load` makes.
    """
    with ahead.LOCK:  # an engine being made ahead for these magics is made before, and closed here
        loaded = _LOADED.pop(id(shell), None)
        if loaded is None:
            return
        loaded[2].stop()
        default = sys.modules.get("execmagic.engine.default")
        if default is not None:
            default.set_default_configurer(None)
        if not keep_shells:
            _close_engine()
    atexit.unregister(_close_at_exit)
    registry = shell.magics_manager.magics
    for settings in loaded[0].backend_settings.values():
        if settings in getattr(shell, "configurables", []):
            shell.configurables.remove(settings)
    for magics in loaded:
        for kind, names in magics.magics.items():
            for name in names:
                func = registry[kind].get(name)
                if getattr(func, "__self__", None) is magics:
                    del registry[kind][name]
        if magics in getattr(shell, "configurables", []):
            shell.configurables.remove(magics)
    renderers.unregister(shell)
