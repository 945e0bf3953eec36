"""The process-wide engine: one session and one set of background shells per process.

The magics, ``execmagic.run``, the agent tools and plugins all use it unless given an
:class:`Engine` of their own, so ``%exec cd data`` and ``execmagic.run("ls")`` share a session.
It lives here, below every caller, so that none of them imports upward to reach it.
"""

from __future__ import annotations

import threading

from .engine import Engine

__all__ = ["close_default_engine", "default_engine"]

_default: Engine | None = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The process-wide engine (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Engine()
        return _default


def close_default_engine(grace: float | None = None) -> None:
    """Stop the process-wide engine's background shells (``grace`` before SIGKILL) and forget it;
    the next use starts afresh."""
    global _default
    with _default_lock:
        engine, _default = _default, None
    if engine is not None:
        engine.close(grace)
