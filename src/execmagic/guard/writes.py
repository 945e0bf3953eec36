"""A command the check judges: by the rules (:func:`.rules.match`), after one look at what it writes.

A program no rule names (``ls``, ``sort``, ``python3``) breaks a rule only through what its redirections write,
and whether the four matchers of writes find anything there depends on the redirections and the directory alone:
``2>/dev/null``, ``> out/counts.txt``, ``>&2``, written after thousands of a script's commands, are each looked at
once for the check's whole life (then the matchers are asked only where one of them finds something, for the
refusal's words).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..shell.words import WRITES, Word
from .commands import Simple
from .paths import Path
from .rules import JUDGED_NAMES, WRITE_MATCHERS, Refusal, judged_writes, match

__all__ = ["judged"]

#: Redirections to paths up to this length have their answer kept.
_KEPT = 256


def judged(simple: Simple) -> Refusal | None:
    """:func:`.rules.match` of ``simple``, asked only when a rule may find something in it."""
    name = simple.name
    if name not in JUDGED_NAMES and not name.startswith("mkfs") and not writes_break(simple.redirects, simple.cwd):
        return None
    return match(simple)


def writes_break(redirects: Sequence[tuple[str, Word]], cwd: Path | None) -> bool:
    """Whether what ``redirects`` write (run in ``cwd``) breaks a rule, whatever program runs them (one no rule names:
    each matcher of writes asks for a name in :data:`.rules.JUDGED_NAMES` before it looks at anything else)."""
    writes = tuple([(op, str(target)) for op, target in redirects if op in WRITES])
    if not writes:
        return False
    for _, target in writes:
        if len(target) > _KEPT:
            return _breaks(writes, cwd)
    return _kept(writes, cwd)


@functools.lru_cache(maxsize=1024)
def _kept(writes: tuple[tuple[str, str], ...], cwd: Path | None) -> bool:
    return _breaks(writes, cwd)


def _breaks(writes: tuple[tuple[str, str], ...], cwd: Path | None) -> bool:
    if not judged_writes(writes, cwd):
        return False
    probe = Simple((), tuple((op, Word(target)) for op, target in writes), cwd)
    return any(matcher(probe) for matcher in WRITE_MATCHERS)
