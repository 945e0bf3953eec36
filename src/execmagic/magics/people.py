"""The engine's errors in a notebook user's words.

The engine's own strings are ``exec: <issue> (<CODE>)``, a format programs rely on (``Result.error``,
``execute()``'s answers); the errno name (``EINVAL``, ``ENOENT``) is for them, and it stays in the
fields (``code``, ``error_code``).  The one line a person reads when a magic refuses or cannot start
something is built here from the same fields, without it.
"""

from __future__ import annotations

from ..process.errors import MalformedEntry, PreExecError, UnknownLanguage, UsageProblem, shown_value

__all__ = ["start_words", "usage_words"]


def usage_words(exc: UsageProblem) -> str:
    """What was malformed, and what to do, for a ``UsageError``."""
    from ..process.sandbox import SandboxProblem

    if isinstance(exc, UnknownLanguage):
        why = "" if not exc.language or "/" in exc.language else ": no interpreter of that name on PATH"
        hint = f"; did you mean {exc.suggestion!r}?" if exc.suggestion else ""
        return f"unknown language {shown_value(exc.language)}{why}{hint}"
    if isinstance(exc, MalformedEntry):
        return f"malformed {exc.what} entry {shown_value(exc.entry)}: {exc.problem}"
    if isinstance(exc, SandboxProblem):
        about = f" with {exc.path!r}" if exc.path else ""
        return f"cannot sandbox{about}: {exc.why}"
    return str(exc)


def start_words(exc: PreExecError) -> str:
    """Why a background command could not start."""
    return f"could not start: {exc.issue}"
