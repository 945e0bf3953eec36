"""The IPython side: magics that translate to engine calls.  ``load``/``unload`` wire them into a shell."""

from __future__ import annotations

import atexit
import importlib
import sys
import threading
from types import FrameType
from typing import Any

from ..display import formatters
from .bg_magics import BackgroundMagics
from .exec_magics import CellCommandFailed, CommandInterrupted, ExecMagics, StartFailed
from .mcp_magics import McpMagics

__all__ = ["BackgroundMagics", "CellCommandFailed", "CommandInterrupted", "ExecMagics", "McpMagics", "StartFailed",
           "load", "reloading", "unload"]

_LOADED: dict[int, tuple[ExecMagics, BackgroundMagics, McpMagics]] = {}
#: What the first command needs that registering the magics does not: imported on a thread of its own once
#: they are registered, while the notebook waits for its next cell, so that the first ``%exec`` does not pay
#: for it (about 100 ms of its 120, by ``python -X importtime``).  Imports only: no engine is made and no
#: process starts until a command runs -- the extension is often loaded by a profile into every kernel,
#: most of which may never run a command, and a standby bash and a watchdog in each would be a cost
#: those kernels pay for nothing (and the first command's own start of them is a few ms of its run).
#: (The import graph has no circle, which a test holds: two threads importing at once cannot deadlock.)
FIRST_RUN_MODULES = ("execmagic.engine.engine", "execmagic.guard.policy", "execmagic.display.render",
                     "execmagic.magics.kernel_io", "execmagic.magics.live", "execmagic.process.watchdog")
#: Seconds the import-ahead waits for the cell that loaded the extension to end (IPython's
#: ``post_run_cell``) before it starts anyway: a load outside a cell (a profile's ``extensions``, a
#: script) has no cell to wait for.
AHEAD_WAIT = 0.05
#: The interpreter's thread switch interval (seconds) while importing ahead: the kernel's own threads (its
#: reply, the idle status the frontend waits for) then get the GIL within this, not the default 5 ms each
#: time -- at the default, the imports delayed the load cell's end by about 13 ms.
AHEAD_SWITCH_INTERVAL = 0.0005


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
    formatters.register(shell, view=exec_magics.display_view)
    # the notebook's engine-wide settings reach the process-wide engine whoever makes it first (a Toolbox too)
    from ..engine.default import set_default_configurer

    set_default_configurer(exec_magics.apply_engine_settings)
    atexit.register(_close_at_exit, exec_magics, mcp_magics)
    _LOADED[id(shell)] = (exec_magics, bg_magics, mcp_magics)
    _start_import_ahead(shell, exec_magics)


def _start_import_ahead(shell: Any, exec_magics: ExecMagics) -> None:
    """Start :func:`_import_ahead` on its thread, told when the cell that loaded the extension is over."""
    cell_over = threading.Event()
    events = getattr(shell, "events", None)
    if events is not None:
        def over(*_: Any) -> None:
            cell_over.set()
            events.unregister("post_run_cell", over)

        events.register("post_run_cell", over)
    threading.Thread(target=_import_ahead, args=(cell_over, exec_magics), name="execmagic-import-ahead",
                     daemon=True).start()


def _import_ahead(cell_over: threading.Event, exec_magics: ExecMagics) -> None:
    """Once the loading cell is over (or after :data:`AHEAD_WAIT`), import :data:`FIRST_RUN_MODULES` and build
    ``%exec``'s parser, at a short switch interval; a module that fails to import is left to the first
    command, which imports it again and shows why in its cell."""
    cell_over.wait(AHEAD_WAIT)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, AHEAD_SWITCH_INTERVAL))
    try:
        for name in FIRST_RUN_MODULES:
            importlib.import_module(name)
        exec_magics.exec_line.parser  # noqa: B018  # built here, not by the first %exec
    except Exception:
        return
    finally:
        if sys.getswitchinterval() == min(interval, AHEAD_SWITCH_INTERVAL):  # unless someone set one meanwhile
            sys.setswitchinterval(interval)


#: Longest grace for background shells when the interpreter exits: a kernel being shut down
#: or restarted should be gone in seconds, whatever a stubborn shell does with SIGTERM.
EXIT_GRACE = 1.0


def _close_engine(grace: float | None = None) -> None:
    """Close the process-wide engine if a command ever made one (else there is nothing to stop,
    and nothing worth importing while the interpreter exits)."""
    default = sys.modules.get("execmagic.engine.default")
    if default is not None:
        default.close_default_engine(grace)


def _close_at_exit(exec_magics: ExecMagics, mcp_magics: McpMagics) -> None:
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
    formatters.unregister(shell)
