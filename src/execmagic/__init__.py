"""execmagic: run commands from Jupyter notebooks well.

``%load_ext execmagic`` adds ``%%exec``, ``%exec`` and ``%spawn``.  The engine
under them (:mod:`execmagic.engine`) is usable without IPython.
"""

from __future__ import annotations

from typing import Any

from .engine import CommandFailed, Engine, ExecError, Result, RunOptions
from .api import (aread, akill, arun, ashells, aspawn, astart, default_engine, kill, read, run, shells,
                         spawn, start)
from .guard.policy import CommandRefused, Policy
from .agents.execute import SubprocessPrimitive, SubprocessResult, execute
from .agents.tools import Toolbox

__version__ = "0.1.0"
__all__ = [
    "CommandFailed", "CommandRefused", "Engine", "ExecError", "Policy", "Result", "RunOptions", "SubprocessPrimitive",
    "SubprocessResult", "Toolbox", "akill", "aread", "arun", "ashells", "aspawn", "astart", "default_engine",
    "execute", "kill", "load_ipython_extension", "read", "run", "shells", "spawn", "start",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext execmagic``: register the magics and the result renderers."""
    from .magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext execmagic``: stop everything the extension started and remove what it registered."""
    from .magics import unload

    unload(ipython)
