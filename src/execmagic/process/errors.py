"""The exceptions the engine raises on purpose.

An expected outcome of running a program (non-zero exit, timeout, interrupt, a
command that is not installed) is a :class:`~execmagic.process.results.Result`
value.  These exceptions are for requests the engine cannot carry out at all:
a malformed template, an unknown language, a bad option.  Each message is one
line a person can act on.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable

from .plural import counted

if typing.TYPE_CHECKING:  # pragma: no cover
    from .results import Result

__all__ = [
    "CommandFailed", "ExecError", "MalformedEntry", "PreExecError", "ShellLimitReached", "TemplateError",
    "UnknownLanguage",
    "UnknownShell", "UsageProblem", "did_you_mean", "shown_value",
]

#: Characters of a user's value an error message quotes: enough to recognise it, and a message
#: stays one line a person reads (a 10,000-character ``--name`` or path is not echoed whole).
SHOWN_CHARS = 80


class ExecError(Exception):
    """Base class of every error the engine raises on purpose."""


class UsageProblem(ExecError):
    """The caller asked for something malformed (bad option, unknown language, bad env entry)."""


class TemplateError(UsageProblem):
    """A ``${VAR}`` / ``{name}`` template could not be expanded."""


class PreExecError(ExecError):
    """A command could not be started; ``str()`` is one ``exec: <issue> (<CODE>)`` line.

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


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to a mistyped ``word`` (``pyhton`` → ``python``), or ``None``."""
    import difflib  # for a mistake only: not at every import of this module (%load_ext among them)

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


def shown_value(value: object, limit: int = SHOWN_CHARS, *, quoted: bool = True) -> str:
    """A user's value as an error message quotes it: ``repr(value)`` when short, else its first
    ``limit`` characters and its length, ``'aaaa…' (10000 characters)``.

    Every message that echoes a value goes through here, so a long value is cut the same way
    wherever it is refused; the error keeps the whole value in its fields for code to read.
    ``quoted=False`` is for the messages that name a string bare (``exec: NAME not found in PATH``).
    """
    if isinstance(value, (str, bytes)):
        unit = "characters" if isinstance(value, str) else "bytes"
        if not quoted and isinstance(value, str):
            return value if len(value) <= limit else f"{value[:limit]}… ({len(value)} {unit})"
        if len(value) <= limit:
            return repr(value)
        head = repr(value[:limit])
        return f"{head[:-1]}…{head[-1]} ({len(value)} {unit})"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


class UnknownShell(UsageProblem):
    """No background shell has the given id; the message lists the ids that exist (each caller adds
    how to start one in its own words: ``%bg``, ``run_in_background``) and the closest one."""

    def __init__(self, shell_id: str, known: list[str]) -> None:
        self.shell_id = shell_id
        self.known = known
        self.suggestion = did_you_mean(shell_id, known)
        hint = f"; did you mean {self.suggestion!r}?" if self.suggestion else ""  # one of ours: short
        ids = ", ".join(known) if known else "none yet"
        super().__init__(f"no background shell {shown_value(shell_id)} (known: {ids}){hint}")


class MalformedEntry(UsageProblem):
    """A ``NAME=VALUE`` entry (of ``what``: ``env``, ``param``) that is not one (``problem``: what is wrong)."""

    def __init__(self, what: str, entry: str, problem: str) -> None:
        self.what = what
        self.entry = entry
        self.problem = problem
        super().__init__(f"exec: malformed {what} entry {shown_value(entry)}: {problem} (EINVAL)")


class UnknownLanguage(UsageProblem):
    """A ``%%exec`` language that is neither known nor an interpreter on PATH (``suggestion``: the
    closest name that would work)."""

    def __init__(self, language: str, suggestion: str | None) -> None:
        self.language = language
        self.suggestion = suggestion
        why = "" if not language or "/" in language else ": no interpreter of that name on PATH"
        hint = f"; did you mean {suggestion!r}?" if suggestion else ""
        super().__init__(f"exec: unknown language {shown_value(language)}{why} (EINVAL){hint}")


class ShellLimitReached(ExecError):
    """Starting one more background shell would pass the configured limit (``running``, ``limit``)."""

    def __init__(self, running: int, limit: int) -> None:
        self.running = running
        self.limit = limit
        verb = "is" if running == 1 else "are"
        super().__init__(f"{counted(running, 'background shell')} {verb} running, the limit is {limit};"
                         " stop some first")
