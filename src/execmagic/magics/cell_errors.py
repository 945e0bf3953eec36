"""What a cell shows when it stops: a failed command, an interrupt, a start that failed, a mistake.

Each is one line, never a traceback: an exception with ``_render_traceback_`` is shown by IPython as
those lines (red where the front end shows colour), and a ``UsageError`` as its text.
:func:`engine_errors` words the engine's deliberate errors for a notebook user: the magic's own
override or setting named as the way out.
"""

from __future__ import annotations

import contextlib
import os
import sys
from types import TracebackType
from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from ..process.errors import CommandFailed, PreExecError, ShellLimitReached, UnknownShell, UsageProblem

if TYPE_CHECKING:
    from ..process.results import Result

__all__ = ["CellCommandFailed", "CommandInterrupted", "StartFailed", "engine_errors"]


class _OneRedLine:
    """Mixin: IPython shows an exception with ``_render_traceback_`` as these lines, no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31m{self}\x1b[0m" if _colours_on() else str(self)]


def _colours_on() -> bool:
    """Colour as IPython itself would: never with ``colors = 'nocolor'`` (or ``NO_COLOR`` set); in a
    kernel, yes (the front end renders the codes, as it does IPython's own tracebacks); elsewhere only
    when stdout is a terminal, so a pipe, a file or a log gets the plain line, not escape codes."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or str(getattr(shell, "colors", "")).lower() == "nocolor" or os.environ.get("NO_COLOR"):
        return False
    if getattr(shell, "kernel", None) is not None:
        return True
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


class CellCommandFailed(_OneRedLine, CommandFailed):
    """A failed command in a cell: shown as one red line (no Python traceback); stops "Run all".

    The ✘ summary just above it already says what ran, how long and where, so this line does not
    repeat the command: it says how it ended (which is all ``jupyter execute`` and papermill print,
    after the cell's source) and what is new -- the run stops here, and how not to.
    """

    def __init__(self, result: Result) -> None:

        super().__init__(result)
        self.args = (f"command failed ({result.outcome()}): the run stops here; --no-raise carries on",)

    def __str__(self) -> str:
        return self.args[0]


class CommandInterrupted(_OneRedLine, KeyboardInterrupt):
    """The user interrupted the cell; the command's processes are already stopped.

    As with :class:`CellCommandFailed`, the ✘ summary just above says what ran and that it was
    interrupted; this line says only what is new.
    """


class StartFailed(_OneRedLine, Exception):
    """A background command could not start (``could not start: working directory does not exist 'data'``);
    ``code`` is the errno name (``ENOENT``), for code to read."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def engine_errors() -> contextlib.AbstractContextManager[None]:
    """Turn the engine's deliberate errors into what a notebook user should see: one line, no traceback."""
    return _ENGINE_ERRORS


class _EngineErrors:
    """:func:`engine_errors`: a plain context manager, holding nothing (a run enters it five times: a generator's
    costs several times as much to enter and leave), that imports the error classes when there is one to word."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if isinstance(exc, Exception):
            _reword(exc)


_ENGINE_ERRORS = _EngineErrors()


def _reword(exc: Exception) -> None:
    """Raise ``exc`` as a notebook user should see it, when it is one of the engine's deliberate errors."""
    from ..guard.policy import AuditUnavailable, CommandRefused
    from ..process.sandbox import SandboxProblem, SandboxUnavailable
    from .people import start_words, usage_words  # (a module of its own, imported with the first error to word)

    if isinstance(exc, SandboxUnavailable):  # a named mode that cannot work: nothing runs unconfined instead
        raise UsageError(f"{exc}; or run it unconfined with --sandbox-mode off") from None
    if isinstance(exc, SandboxProblem):  # a writable root that cannot be one (the home folder, /, a missing folder)
        raise UsageError(f"{usage_words(exc)}; set ExecMagics.allowed_dirs to the project's folders, or use"
                         " --sandbox-mode read-only") from None
    if isinstance(exc, CommandRefused):  # worded for a notebook user: the magic's own override
        raise UsageError(f"{exc.refusal.describe()}; pass --allow-dangerous to run it anyway") from None
    if isinstance(exc, UnknownShell):  # worded for a notebook user: how to start one here
        raise UsageError(f"{exc}{'' if exc.known else '; start one with %bg'}") from None
    if isinstance(exc, ShellLimitReached):
        raise UsageError(f"{exc} (%kill one, or raise ExecMagics.max_background_shells)") from None
    if isinstance(exc, UsageProblem):
        raise UsageError(usage_words(exc)) from None
    if isinstance(exc, AuditUnavailable):
        raise UsageError(str(exc)) from None
    if isinstance(exc, PreExecError):
        raise StartFailed(start_words(exc), exc.code) from None
