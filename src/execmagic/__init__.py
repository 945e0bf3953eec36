"""execmagic: run commands from Jupyter notebooks well.

``%load_ext execmagic`` adds ``%%exec``, ``%exec`` and ``%spawn``.  The engine
under them (:mod:`execmagic.engine`) is usable without IPython.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .process.lazy import lazy_exports

#: Where each public name lives: imported on first use (PEP 562), so ``%load_ext execmagic`` does not
#: pay for the agent tools, plugins, the asyncio API or the guardrail lexers before a cell needs them.
_LAZY = {
    **dict.fromkeys(("SubprocessPrimitive", "SubprocessResult", "execute"), "agents.execute"),
    **dict.fromkeys(("ManifestError", "PluginManifest", "PluginTool", "load_manifest"), "agents.plugins"),
    "Toolbox": "agents.tools",
    **dict.fromkeys(("akill", "aread", "arun", "ashells", "aspawn", "astart", "close_default_engine",
                     "default_engine", "kill", "read", "run", "shells", "spawn", "start"), "api"),
    **dict.fromkeys(("Engine", "Plan"), "engine.engine"),
    **dict.fromkeys(("AuditUnavailable", "CommandRefused", "Policy", "Refusal"), "guard.policy"),
    **dict.fromkeys(("CommandFailed", "ExecError", "PreExecError", "ShellLimitReached", "TemplateError",
                     "UnknownShell", "UsageProblem"), "process.errors"),
    "CancelToken": "process.foreground",
    **dict.fromkeys(("KillOutcome", "Result", "ShellInfo", "ShellOutput", "StreamCapture"), "process.results"),
    "RunOptions": "process.spec",
    **dict.fromkeys(("SlurmBackend", "SlurmOptions"), "background.backends.slurm"),
}

__version__ = "0.1.0"
#: Everything a user needs, from one place (pinned by tests/test_public_surface.py).
__all__ = [
    "AuditUnavailable", "CancelToken", "CommandFailed", "CommandRefused", "Engine", "ExecError", "KillOutcome",
    "ManifestError", "Plan", "PluginManifest", "PluginTool", "Policy", "PreExecError", "Refusal", "Result",
    "RunOptions", "ShellInfo", "ShellLimitReached", "ShellOutput", "SlurmBackend", "SlurmOptions", "StreamCapture",
    "SubprocessPrimitive", "SubprocessResult", "TemplateError", "Toolbox", "UnknownShell", "UsageProblem", "akill",
    "aread", "arun", "ashells", "aspawn", "astart", "close_default_engine", "default_engine", "execute", "kill",
    "load_ipython_extension", "load_manifest", "read", "run", "shells", "spawn", "start", "unload_ipython_extension",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


if TYPE_CHECKING:  # what type checkers and editors see: the names, as if imported here
    from .agents.execute import SubprocessPrimitive, SubprocessResult, execute
    from .agents.plugins import ManifestError, PluginManifest, PluginTool, load_manifest
    from .agents.tools import Toolbox
    from .api import (
        akill,
        aread,
        arun,
        ashells,
        aspawn,
        astart,
        close_default_engine,
        default_engine,
        kill,
        read,
        run,
        shells,
        spawn,
        start,
    )
    from .background.backends.slurm import SlurmBackend, SlurmOptions
    from .engine.engine import Engine, Plan
    from .guard.policy import AuditUnavailable, CommandRefused, Policy, Refusal
    from .process.errors import (
        CommandFailed,
        ExecError,
        PreExecError,
        ShellLimitReached,
        TemplateError,
        UnknownShell,
        UsageProblem,
    )
    from .process.foreground import CancelToken
    from .process.results import KillOutcome, Result, ShellInfo, ShellOutput, StreamCapture
    from .process.spec import RunOptions


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext execmagic``: register the magics and the result renderers."""
    from .magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext execmagic``: stop everything the extension started and remove what it registered.

    ``%reload_ext execmagic`` calls this and then :func:`load_ipython_extension`: the background shells
    are kept for the reloaded magics (listed, readable, killable), since a reload is not a goodbye."""
    from .magics import reloading, unload

    unload(ipython, keep_shells=reloading(ipython))
