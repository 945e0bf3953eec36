"""execmagic: run commands from Jupyter notebooks well.

``%load_ext execmagic`` adds ``%%exec``, ``%exec`` and ``%spawn``.  The engine
under them (:mod:`execmagic.engine`) is usable without IPython.
"""

from __future__ import annotations

from typing import Any

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


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext execmagic``: register the magics and the result renderers."""
    from .magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext execmagic``: stop everything the extension started and remove what it registered."""
    from .magics import unload

    unload(ipython)
