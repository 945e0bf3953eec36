"""execmagic: run commands from Jupyter notebooks well.

``%load_ext execmagic`` adds ``%%exec``, ``%exec`` and ``%spawn``.  The engine
under them (:mod:`execmagic.engine`) is usable without IPython.
"""

from __future__ import annotations

from typing import Any

from .engine import CommandFailed, Engine, ExecError, Result, RunOptions

__version__ = "0.1.0"
__all__ = ["CommandFailed", "Engine", "ExecError", "Result", "RunOptions", "load_ipython_extension",
           "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext execmagic``: register the magics and the result renderers."""
    from .magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext execmagic``: stop everything the extension started and remove what it registered."""
    from .magics import unload

    unload(ipython)
