"""Which names a glob may stand for: ``r?``, ``r[m]``, ``/bin/r*`` run the program whose file they match.

The check cannot look at the files, so a glob where a command's name stands is each program the walk acts on that it
may name.  Matched as :func:`fnmatch.fnmatchcase` matches (bash's ``[^…]`` is its ``[!…]``), but read in time linear
in the glob: fnmatch's translation reads on to the end from each ``[`` no ``]`` closes, and a glob longer than any
name is no name at all (compiled, the pattern of a word of 4,000 such took 0.3 s).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

from .commands import Command

__all__ = ["GLOB", "named_by", "runs_glob"]

#: A character that makes a word a glob (``[`` not alone: ``[ -s f ]`` is the test command).
GLOB = re.compile(r"[*?]|\[(?!\[?[\s;&|]|\[?\Z)")


def runs_glob(command: Command) -> bool:
    """Whether ``command`` runs a path that is a glob (``/bin/r?``): asked of each pipeline walked, before
    ``inert.glob_variants`` looks at what it may name."""
    return bool(words := command.unwrapped[0]) and "/" in words[0] and GLOB.search(words[0]) is not None


def named_by(glob: str, names: Iterable[str]) -> tuple[str, ...]:
    """The ``names`` that ``glob`` (a word's last part) matches, in their order; none without a glob character."""
    return _named_by(glob, tuple(names)) if GLOB.search(glob) is not None else ()


@functools.lru_cache(maxsize=256)
def _named_by(glob: str, names: tuple[str, ...]) -> tuple[str, ...]:
    if _shortest(glob, longest := max(map(len, names), default=0)) > longest:
        return ()  # (a long word is no name)
    if any(part in glob for part in ("[:", "[.", "[=", "\\")):  # [[:alpha:]]m, r[[.m.]], r[\m]: read as fnmatch
        return names  # does not read them, they may be any of the names

    try:
        pattern = re.compile("".join(_parts(glob)) + r"\Z", re.DOTALL)
    except re.error:  # a range backwards ([z-a]), or of "-": what it may name is not known, so it may be any of them
        return names
    return tuple(name for name in names if pattern.match(name))


def _parts(glob: str) -> Iterator[str]:
    """``glob`` as a regular expression, piece by piece, as fnmatch reads it (a ``[`` no ``]`` closes is itself)."""
    at, end = 0, len(glob)
    while at < end:
        char = glob[at]
        if char == "[" and (closed := _closing(glob, at)) > 0:
            inside = at + 1 + (glob[at + 1:at + 2] in ("!", "^"))
            body = "".join(c if c == "-" else re.escape(c) for c in glob[inside:closed])
            if "--" in body:  # ([a--]: a range to "-", or from it; read by no rule here)
                raise re.error("a range of '-'")
            yield f"[{'^' if inside > at + 1 else ''}{body}]"
            at = closed + 1
            continue
        yield ".*" if char == "*" else "." if char == "?" else re.escape(char)
        at += 1
        while char == "*" and glob.startswith("*", at):  # (one for a run of them)
            at += 1


def _closing(glob: str, at: int) -> int:
    """Where the ``]`` that closes the bracket expression opened at ``at`` is, or -1 (then the ``[`` is itself); a
    ``]`` right after ``[`` or ``[!`` is in it."""
    inside = at + 1 + (glob[at + 1:at + 2] in ("!", "^"))
    return glob.find("]", inside + (glob[inside:inside + 1] == "]"))


def _shortest(glob: str, limit: int) -> int:
    """The fewest characters ``glob`` matches -- one for each character, ``?`` and bracket expression, none for a
    ``*`` -- counted up to one past ``limit``."""
    count, at, end = 0, 0, len(glob)
    while at < end and count <= limit:
        closed = _closing(glob, at) if glob[at] == "[" else -1
        count += glob[at] != "*"
        at = closed + 1 if closed > 0 else at + 1
    return count
