"""Language → interpreter mapping for scripts (seed 001, widened to anything on PATH)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

from .errors import UsageProblem

#: Languages with a known way to pass the script as an argument.  Python is the
#: kernel's own interpreter, so a notebook's virtualenv is the one that runs.
_INLINE: dict[str, tuple[str, ...]] = {
    "bash": ("bash", "-c"),
    "sh": ("sh", "-c"),
    "python": (sys.executable, "-c"),
    "python3": (sys.executable, "-c"),
    "node": ("node", "-e"),
    "javascript": ("node", "-e"),
    "js": ("node", "-e"),
}


def script_argv(language: str, script: str, env: Mapping[str, str], script_path: str) -> tuple[str, ...]:
    """The argv that runs ``script`` in ``language``.

    Known languages take the script inline; any other name is looked up on PATH
    and given the script as a file (written to ``script_path``), which is how
    ``ruby``, ``perl``, ``Rscript`` and most interpreters take a program.
    A name that is neither is a usage problem (no process is started).
    """
    inline = _INLINE.get(language)
    if inline is not None:
        # The interpreter being missing is a run failure (exit 127), reported when it is launched.
        return (*inline, script)
    if not language or "/" in language and not os.access(language, os.X_OK):
        raise UsageProblem(f"exec: unknown language '{language}' (EINVAL)")
    if "/" not in language and shutil.which(language, path=env.get("PATH", os.defpath)) is None:
        raise UsageProblem(
            f"exec: unknown language '{language}': no interpreter of that name on PATH (EINVAL)"
        )
    os.makedirs(os.path.dirname(script_path), exist_ok=True)
    with open(script_path, "w", encoding="utf-8") as fh:
        fh.write(script)
    return (language, script_path)
