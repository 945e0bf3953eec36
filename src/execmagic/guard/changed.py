"""What a command does to the names a walk knows, beyond plain assignments: the names it gives values read at run
time (``read d``), loops over, unsets or refers to, or that it may set any name (``source``, ``eval``) -- what
:meth:`.names.Names.remember` applies after a pipeline."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..shell.words import Word
from .commands import ASSIGNMENT, DECLARES, Command
from .options import operands_of
from .printers import emitted
from .values import Values, read_values

__all__ = ["MAX_VALUES", "NAME", "REF", "changed"]

NAME = re.compile(r"[A-Za-z_]\w*")
#: Values a word may take at most (``for d in a b c`` makes one per item); the rest are not judged.
MAX_VALUES = 16
#: How a ``declare -n`` reference is kept among the values: ``&r`` holds the name ``r`` refers to.
REF = "&"
#: Commands that give a name a value read at run time: the name is unknown afterwards.
_READ_VALUES = {"read": {"-d", "-i", "-n", "-N", "-p", "-t", "-u"},
                "mapfile": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"},
                "readarray": {"-d", "-n", "-O", "-s", "-u", "-C", "-c"}}


_LIVE = re.compile(r"[$`]")


#: The programs :func:`changed` finds a change of names in (and ``for``, ``select``, as written).
_CHANGERS = frozenset({*_READ_VALUES, "printf", "getopts", "let", "set", "unset", *DECLARES, "source", ".", "eval"})


def changed(command: Command) -> Sequence[tuple[str, Values]]:
    """The names a command gives values the check cannot know (``read d``), loops over, or unsets;
    ``("", None)`` when it may set any name (``source``, ``eval``, ``export $(…)``)."""
    words = command.unwrapped[0]
    if not words:
        return ()
    name = command.program
    if name not in _CHANGERS and words[0] not in ("for", "select"):  # (most commands: one look, no generator)
        return ()
    return list(_changes(command, words, name))


def _kept_values(items: tuple[Word, ...]) -> tuple[Word, ...]:
    """The values of a ``for`` loop a check keeps: all of them up to :data:`MAX_VALUES`; past it, each once, those a
    rule may judge first (a path, an option, an expansion, a program the walk acts on), so that ``for X in`` 16
    harmless names ``rm`` still runs ``rm`` (the first 16 were kept, and the rest dropped)."""
    if len(items) <= MAX_VALUES:
        return items
    from .inert import inert_word  # (only for a long list: inert's tables import much)

    unique = tuple(dict.fromkeys(items))
    return tuple(sorted(unique, key=lambda item: _LIVE.search(item) is None and not item.startswith(
        ("/", "~", "-", ".")) and inert_word(item)))[:MAX_VALUES]


def _changes(command: Command, words: list[Word], name: str) -> Iterator[tuple[str, Values]]:
    if words[0] in ("for", "select") and not words[0].quoted and len(words) > 1:
        items = tuple(words[3:]) if words[2:3] == ["in"] else None
        yield words[1], _kept_values(items) if items else None
    elif name in _READ_VALUES:  # read -a NAME: NAME is an operand here too
        targets = operands_of(words[1:], _READ_VALUES[name]) or ["REPLY" if name == "read" else "MAPFILE"]
        yield from zip(targets, read_values(name, words, targets, command.stdin()), strict=True)
    elif name == "printf" and words[1:2] == ["-v"] and len(words) > 3:  # printf -v x '%s' rm: what it would print
        printed = emitted(Command([words[0], *words[3:]])) if not any(_LIVE.search(w) for w in words[3:]) else None
        yield words[2], None if printed is None else (printed,)
    elif name == "getopts" and len(words) > 2:
        yield words[2], None
    elif name == "let":
        for word in words[1:]:
            yield word.split("=", 1)[0].strip("+-*/%<>&|^ "), None
    elif name == "set" and len(words) > 1 and (words[1] == "--" or not words[1].startswith(("-", "+"))):
        given = words[2:] if words[1] == "--" else words[1:]  # set -- a b c: $1, $2, $3, $@
        known = not any(_LIVE.search(word) for word in given)
        for index in range(1, 10):  # (one not given is empty)
            yield str(index), (given[index - 1] if index <= len(given) else "",) if known else None
        yield from ((each, (" ".join(given),) if known else None) for each in "@*")
    elif name == "unset" and "-f" not in words:
        for target in operands_of(words[1:]):
            yield target, ("",)
    elif name in DECLARES and any(w.startswith("-") and "n" in w for w in words[1:]):  # declare -n r=x
        for word in words[1:]:
            if ASSIGNMENT.match(word):
                target = word.split("=", 1)[1]
                yield REF + word.split("=", 1)[0], (target,) if NAME.fullmatch(target) else None
    elif name in ("source", ".", "eval") or (
            name in DECLARES and any("$" in w or "`" in w for w in words[1:] if not ASSIGNMENT.match(w))):
        yield "", None
