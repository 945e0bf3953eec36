"""What a command prints when it only prints text it was given: ``echo``, ``printf``, ``cat`` of a heredoc -- and
``pwd``, where the walk knows the directory (a ``cd`` it followed: ``cd / && rm -rf "$(pwd)"``).

``$(echo /)`` is ``/`` (:meth:`.names.Names.printed`), and ``echo 'rm -rf /' | sh`` runs ``rm -rf /`` (the walk): what
such a command prints is known from its words, and is read as a word or as code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..shell.words import STDIN_REDIRECTS, unescape
from .commands import ASSIGNMENT, WRAPPERS, Command, program

__all__ = ["emitted", "may_emit"]


def _printf(fmt: str, args: Sequence[str]) -> str:
    """What ``printf FMT ARGS…`` prints (the format reused while arguments remain, as printf does)."""
    pending, out = list(args), []
    while True:
        used, pos = 0, 0
        for match in re.finditer(r"%(?:%|[-+ #0-9.]*[a-zA-Z])", fmt):
            out.append(fmt[pos:match.start()])
            if match.group() == "%%":
                out.append("%")
            else:
                used += 1
                out.append(pending.pop(0) if pending else "")
            pos = match.end()
        out.append(fmt[pos:])
        if not pending or not used:
            return unescape("".join(out))


#: The programs :func:`emitted` knows what they print of (a name it learns goes here too: see :func:`may_emit`).
_PRINTERS = frozenset({"echo", "printf", "cat", ":", "true", "false", "pwd"})


def may_emit(command: Command) -> bool:
    """Whether :func:`emitted` of ``command``, its words expanded, may be other than ``None``: not when its first
    word is plain (no expansion; a spelled-out home folder makes it ``~…``, of the same basename or ``~``), no
    assignment and names neither a printer nor a wrapper (which :func:`.commands.unwrap` would take off)."""
    words = command.words
    if not words:
        return False
    first = words[0]
    if first.live != () or first.code or ASSIGNMENT.match(first):
        return True
    name = program(first)
    return name in _PRINTERS or name in WRAPPERS


def emitted(command: Command, pwd: Sequence[str] | None = None) -> str | None:
    """What a pipeline stage prints when it only prints text it was given: echo, printf, cat of a heredoc (each of
    :data:`_PRINTERS`); ``pwd`` the values of ``$PWD``, when known (one: what ``pwd`` prints)."""
    words = command.unwrapped[0]
    name, args = command.program, list(words[1:])
    if name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args.pop(0)
        return unescape(" ".join(args))
    if name == "printf":
        args = args[1:] if args[:1] == ["--"] else args
        return _printf(args[0], args[1:]) if args and args[0] != "-v" else None
    if name == "cat" and not args:  # (a here-string ends with a newline)
        return None if (fed := command.fed()) is None or fed[0] not in STDIN_REDIRECTS else fed[1] + "\n" if (
            fed[0] == "<<<") else fed[1]
    if name == "pwd" and pwd is not None and len(pwd) == 1 and all(arg == "-L" for arg in args):
        return pwd[0] + "\n"
    if name in (":", "true", "false") and not args:  # nothing: rm -rf /$(true) is rm -rf /
        return ""
    return None
