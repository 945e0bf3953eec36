"""What ``${X…}`` makes of a name's values: a default, a literal end or start taken off, a part replaced, the case
changed, a slice -- as far as it can only mean one thing.

A pattern with a glob in it (``${X%/*}``), an offset that is arithmetic, anything the shell would expand again: not
known (``None``), and a path holding it is not judged.  And what ``read`` and ``mapfile`` give names from a
here-string that holds no expansion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..shell.words import Word

__all__ = ["Values", "operator", "read_values"]

Values = tuple[str, ...] | None
"""What a name may hold when a command runs (one value, or one per ``for`` item); ``None``: not known."""


def operator(values: Values, op: str | None, arg: str) -> Values:
    """``${X:-arg}``, ``${X:+arg}``, ``${X:?}``, … of ``X``'s ``values``."""
    if values is None or op is None:
        return values
    if op in (":-", "-", ":=", "="):
        return tuple(value or arg for value in values)
    if op in (":+", "+"):
        return tuple(arg if value else "" for value in values)
    if op in ("%", "%%", "#", "##"):  # ${HOME%/}: a literal end or start taken off; a pattern is not known
        if any(c in arg for c in "*?[\\$`'\""):
            return None
        cut = str.removesuffix if op.startswith("%") else str.removeprefix
        return tuple(cut(value, arg) for value in values)
    if op in ("/", "//", "^", "^^", ",", ",,", ":"):
        return _changed_value(values, op, arg)
    kept = tuple(value for value in values if value)  # ${X:?}: an empty X stops the shell before the command
    return kept or None


_GLOB_CHARS = "*?[\\$`'\"(){}"
_CASE = {"^^": str.upper, ",,": str.lower, "^": lambda v: v[:1].upper() + v[1:], ",": lambda v: v[:1].lower() + v[1:]}
_SLICE = re.compile(r"\s*(-?\d{1,18})\s*(?::\s*(-?\d{1,18})\s*)?")  # (a longer number: not known here)


def _changed_value(values: tuple[str, ...], op: str, arg: str) -> Values:
    """``${X/a/b}``, ``${X//a/b}``, ``${X^^}``, ``${X,,}``, ``${X:1:2}`` of ``X``'s ``values``; ``None`` when a
    pattern or a number in it is not a plain literal (a glob, an expansion, arithmetic)."""
    if op in _CASE:
        return tuple(map(_CASE[op], values)) if not arg else None
    if op == ":":
        found = _SLICE.fullmatch(arg)
        if found is None:
            return None
        return tuple(_slice(value, int(found.group(1)), found.group(2)) for value in values)
    pattern, _, replacement = arg.partition("/")
    anchor = pattern[:1] if pattern[:1] in ("#", "%") else ""
    pattern = pattern[len(anchor):]
    if any(c in _GLOB_CHARS for c in pattern + replacement) or not pattern:
        return None
    if anchor == "#":
        return tuple(replacement + v[len(pattern):] if v.startswith(pattern) else v for v in values)
    if anchor == "%":
        return tuple(v[:-len(pattern)] + replacement if v.endswith(pattern) else v for v in values)
    return tuple(v.replace(pattern, replacement, -1 if op == "//" else 1) for v in values)


def _slice(value: str, offset: int, length: str | None) -> str:
    start = max(len(value) + offset, 0) if offset < 0 else offset
    if length is None:
        return value[start:]
    count = int(length)
    return value[start:start + count] if count >= 0 else value[start:len(value) + count]


_LIVE = re.compile(r"[$`]")


def read_values(name: str, words: Sequence[Word], targets: Sequence[str], stdin: Word | None) -> list[Values]:
    """What ``read [-r] A B`` (or ``mapfile [-t] A``) gives its ``targets`` from a here-string or heredoc ``stdin``
    that holds no expansion, as the default ``IFS`` splits it: the first line, one field a name, the last the rest."""
    options = {w for w in words[1:] if w.startswith("-")}
    if stdin is None or _LIVE.search(stdin) or not options <= ({"-r"} if name == "read" else {"-t"}) or (
            name == "read" and "-r" not in options and "\\" in stdin) or (name != "read" and len(targets) > 1):
        return [None] * len(targets)
    line = stdin.split("\n", 1)[0]
    fields = line.split(None, len(targets) - 1) if name == "read" else [line]
    return [(fields[i] if i < len(fields) else "",) for i in range(len(targets))]
