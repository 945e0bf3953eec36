"""The process-wide engine: one session and one set of background shells per process.

The magics, ``execmagic.run``, the agent tools and plugins all use it unless given an
:class:`Engine` of their own, so ``%exec cd data`` and ``execmagic.run("ls")`` share a session.
It lives here, below every caller, so that none of them imports upward to reach it.

Settings that are engine-wide (a notebook's audit log, allowed folders, log folder…) reach it
through one *configurer*: whoever owns them (the magics) registers it once, and it is applied when
the engine is made -- by whichever caller comes first, a Toolbox made before any magic ran too --
and again whenever a setting changes (:func:`reconfigure_default`).  Importing this module is cheap:
the engine itself is imported when it is first made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["close_default_engine", "current_default_engine", "default_engine", "reconfigure_default",
           "set_default_configurer"]

_default: Engine | None = None
_configurer: Callable[[Engine], None] | None = None
_default_lock = threading.RLock()  # reentrant: a configurer may ask for the engine it is configuring


def default_engine() -> Engine:
    """The process-wide engine (created on first use, with the registered configurer applied)."""
    global _default
    with _default_lock:
        if _default is None:
            from .engine import Engine

            _default = Engine()
            if _configurer is not None:
                _configurer(_default)
        return _default


def current_default_engine() -> Engine | None:
    """The process-wide engine if something made it, else ``None`` (nothing is made)."""
    return _default


def set_default_configurer(configurer: Callable[[Engine], None] | None) -> None:
    """Register what applies the engine-wide settings (``None``: none); applied at once to an engine
    that already exists."""
    global _configurer
    with _default_lock:
        _configurer = configurer
        if configurer is not None and _default is not None:
            configurer(_default)


def reconfigure_default() -> None:
    """Apply the engine-wide settings again (one changed), to the engine if there is one."""
    with _default_lock:
        if _default is not None and _configurer is not None:
            _configurer(_default)


def close_default_engine(grace: float | None = None) -> None:
    """Stop the process-wide engine's background shells (``grace`` before SIGKILL) and forget it;
    the next use starts afresh."""
    global _default
    with _default_lock:
        engine, _default = _default, None
    if engine is not None:
        engine.close(grace)
