"""The exceptions the engine raises on purpose.

An expected outcome of running a program (non-zero exit, timeout, interrupt, a
command that is not installed) is a :class:`~execmagic.engine.results.Result`
value.  These exceptions are for requests the engine cannot carry out at all:
a malformed template, an unknown language, a bad option.  Each message is one
line a person can act on.
"""

from __future__ import annotations

import typing

if typing.TYPE_CHECKING:  # pragma: no cover
    from .results import Result

__all__ = [
    "CommandFailed", "ExecError", "PreExecError", "ShellLimitReached", "TemplateError", "UnknownShell", "UsageProblem",
]


class ExecError(Exception):
    """Base class of every error the engine raises on purpose."""


class UsageProblem(ExecError):
    """The caller asked for something malformed (bad option, unknown language, bad env entry)."""


class TemplateError(UsageProblem):
    """A ``${VAR}`` / ``{name}`` template could not be expanded."""


class PreExecError(ExecError):
    """A command could not be started; ``str()`` is the seed's ``exec: <issue> (<CODE>)`` line.

    Raised inside the engine and turned into a failed ``Result`` (``error`` from
    ``str()``, ``error_code`` from :attr:`code`) by the run functions, so callers see a
    value, the same as any other failed run -- and read the fields, never the line.
    """

    def __init__(self, issue: str, code: str, exit_code: int = 127) -> None:
        self.issue = issue
        self.code = code
        self.exit_code = exit_code
        super().__init__(f"exec: {issue} ({code})")


class CommandFailed(ExecError):
    """Raised by :meth:`Result.check` when a command did not succeed."""

    def __init__(self, result: Result) -> None:
        self.result = result
        super().__init__(result.describe())


class UnknownShell(UsageProblem):
    """No background shell has the given id; the message lists the ids that exist (each caller adds
    how to start one in its own words: ``%bg``, ``run_in_background``)."""

    def __init__(self, shell_id: str, known: list[str]) -> None:
        self.shell_id = shell_id
        self.known = known
        super().__init__(f"no background shell {shell_id!r} (known: {', '.join(known) if known else 'none yet'})")


class ShellLimitReached(ExecError):
    """Starting one more background shell would pass the configured limit (``running``, ``limit``)."""

    def __init__(self, running: int, limit: int) -> None:
        self.running = running
        self.limit = limit
        super().__init__(f"{running} background shells are running, the limit is {limit}; stop some first")
