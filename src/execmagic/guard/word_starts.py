"""Patterns of words that start where a word does (``\\bdone\\b``), spelled so that a search skips the rest in C.

A search with a pattern that starts with ``\\b`` tries the whole pattern at every offset of the text: ``re`` knows no
character a match must start with, so it cannot skip to the next place one may.  The check searches the whole of a
script this way several times (the words every rule needs, the loops that never end, each ``done``): 20 to 60 ms a MB
each, more than the walk of most of its commands.  Spelled as ``d(?<=\\bd)one\\b`` -- the first character, then the
boundary before it looked behind -- each alternative starts with a character, and the search goes from one such
character to the next without trying the pattern in between (7 to 10 times faster).  It matches what ``\\bdone\\b``
matches, where it does, with the same alternatives tried in the same order at each place.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["at_word_start"]


def at_word_start(alternatives: Sequence[str], after: str = "") -> str:
    """``\\b(?:ALT|…)AFTER`` as alternatives that each start with a character (see the module's docstring), to be
    put in a group (``(?:…)…``) or between other such alternatives: the search skips only when every alternative at
    the top of the pattern starts with a character.

    Each of ``alternatives`` starts with a word character as written (no escape, no class): the pattern tried there
    alone.  Alternatives that start with the same character keep their order, as one group after it; groups of
    different first characters cannot both match at one place, so their order changes nothing.  ``after``: what
    follows each (``\\b``).
    """
    groups: dict[str, list[str]] = {}
    for alternative in alternatives:
        first = alternative[0]
        if not (first.isalnum() or first == "_") or not first.isascii():
            raise ValueError(f"an alternative must start with a word character: {alternative!r}")
        groups.setdefault(first, []).append(alternative[1:])
    return "|".join(rf"{first}(?<=\b{first})(?:{'|'.join(rests)}){after}" for first, rests in groups.items())
