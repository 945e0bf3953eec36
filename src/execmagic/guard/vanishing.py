"""Words that may expand to nothing: ``$X rm -rf /`` runs ``rm`` when ``X`` is empty or unset, so the walk judges the
words after them as a command too."""

from __future__ import annotations

from collections.abc import Sequence

from ..shell.words import Word

__all__ = ["unvanished"]


def unvanished(words: Sequence[Word]) -> list[Word]:
    """The words after the leading ones that may expand to nothing (unquoted, starting with an expansion whose value
    is not known: ``$()``, ``$X``, a backtick's), when there are such; else none."""
    start = 0
    while start < len(words) - 1 and _may_vanish(words[start]):
        start += 1
    return list(words[start:]) if start else []


def _may_vanish(word: Word) -> bool:
    live = word.live
    return not word.quoted and word[:1] in ("$", "`") and (live is None or 0 in live)
