"""The kernel's own tools first: ``pip``, ``python``, ``jupyter`` resolve to the running interpreter's.

A kernel started by a Jupyter that lives elsewhere often has a PATH on which
its interpreter's ``bin`` is missing or late, so ``%exec pip install x``
installs into some other environment and ``import x`` then fails -- the reason
IPython has ``%pip``.  With ``prefer_kernel_env`` the engine puts that folder
first on the PATH the kernel gave it (never on a PATH the user set), and says so
in the result when it changed which ``pip``/``python`` a command runs.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import MutableMapping

__all__ = ["KERNEL_BIN", "kernel_bin_first", "kernel_tool_notes"]

#: The folder of the interpreter running this engine (a venv's ``bin`` is kept as it is, not resolved).
KERNEL_BIN = os.path.dirname(sys.executable) if sys.executable else ""
_TOOLS = re.compile(r"(?<![\w./-])(pip3?|python3?|jupyter|ipython)(?![\w./-])")


def kernel_bin_first(env: MutableMapping[str, str]) -> str | None:
    """Put :data:`KERNEL_BIN` first on ``env``'s PATH; return the PATH it had, or ``None`` if unchanged."""
    path = env.get("PATH", os.defpath)
    if not KERNEL_BIN or path.split(os.pathsep, 1)[0] == KERNEL_BIN:
        return None
    env["PATH"] = KERNEL_BIN + os.pathsep + path
    return path


def kernel_tool_notes(text: str, path: str, previous_path: str | None) -> tuple[str, ...]:
    """Notes for the tools named in ``text`` that ``path`` resolves in the kernel's folder and
    ``previous_path`` resolved elsewhere (or not at all)."""
    if previous_path is None:
        return ()
    notes = []
    for name in dict.fromkeys(_TOOLS.findall(text)):
        now = shutil.which(name, path=path)
        if now and os.path.dirname(now) == KERNEL_BIN and shutil.which(name, path=previous_path) != now:
            notes.append(f"{name} is the kernel's own ({now})")
    return tuple(notes)
