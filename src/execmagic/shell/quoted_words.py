"""Words of plain text, quotes and the expansions a walk only passes: what the word splitter (:mod:`.lexer`) reads at
once, and their words.

Most words with a quote or a ``$`` are spelled alike (``"$IN"``, ``'^#'``, ``--out="$HOME/x"``,
``"out/$(basename "$f" .csv).txt"``, ``"${N:-none}"``, ``n=$((n + 1))``).  Read a piece at a time, each piece took a
turn of the splitter's loop and a word in progress, each ``$(…)``, ``${…}`` and ``$((…))`` a call to ask where it ends;
matched here, a word is made at once, and made once per spelling (but for the bodies of its ``$(…)``, which are cut
from the text where they stand).  Kept apart from the splitter's walker so that each stays small.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .ends import PASSED_PIECE, PASSED_REACH, SIMPLE_ARITH, SIMPLE_PARAM, Ends, arith_known
from .patterns import lazy_pattern
from .words import Word

__all__ = ["QUOTED_WORD", "Expansion", "Quoted", "made_with_bodies", "quoted_word"]

#: A word of plain characters, closed quotes, escapes, ``$NAME``, and the ``${…}``, ``$((…))`` and ``$(…)`` whose end
#: the splitter finds by a match, not a walk (:func:`~.ends.param_end`, :func:`~.ends.arith_or_command`,
#: :func:`~.ends.paren_end`): no ``$'…'``, no backtick, standing alone.  Every alternative starts with its own
#: character (a plain one, ``'``, ``"``, ``\\``, ``$``; after a ``$``: a name's, ``{``, ``((``, ``(``) and takes one
#: character, one quote or one expansion: no text matches two ways, so a failed match is never tried again another
#: way.  (``#`` starts no word: a comment; ``2>``: digits before ``<``/``>`` name a descriptor, hence the end it
#: needs: a blank, ``;``, ``&``, ``|`` or the end.)  A ``$(…)`` body is matched to :data:`~.ends.PASSED_REACH`
#: pieces at most, as :func:`~.ends.paren_end` matches it (a place to go back to for each: its memory bounded).
_DOLLAR = r"\$(?=[A-Za-z0-9_?@*#!-])"  # what follows a bare $ is read as any plain text
_PARAM = rf"\$\{{{SIMPLE_PARAM}"
_ARITH = rf"\$\(\({SIMPLE_ARITH}"
_BODY = rf"(?:{PASSED_PIECE}){{0,{PASSED_REACH - 1}}}"
_SUB = rf"\$\({_BODY}\)"
_CHAR = r"[^ \t\n'\"\\$`;&|()<>#]"
_DQ = rf'"(?:[^"\\$`]|\\[^\n]|{_DOLLAR}|{_PARAM}|{_ARITH}|{_SUB})*"'
_QPIECE = rf"{_CHAR}|'[^']*'|{_DQ}|\\[^\n]|{_DOLLAR}|{_PARAM}|{_ARITH}|{_SUB}"
QUOTED_WORD = lazy_pattern(rf"(?:{_QPIECE})(?:{_QPIECE}|#)*(?=[ \t\n;&|]|\Z)", often=True)
#: The pieces of a word matched so, each in its group: plain text, '…', "…", \x, ${…}, $((…)), $(…) (its body), $.
_PIECES = lazy_pattern(rf"({_CHAR}+|#+)|'([^']*)'|\"((?:[^\"\\$`]|\\[^\n]|{_DOLLAR}|{_PARAM}|{_ARITH}|{_SUB})*)\""
                       rf"|\\([^\n])|({_PARAM})|({_ARITH})|\$\(({_BODY})\)|\$", often=True)
#: In "…": an escape, a ${…}, a $((…)), a $(…) (its body), a $.
_DQ_SPECIAL = lazy_pattern(rf"\\(.)|({_PARAM})|({_ARITH})|\$\(({_BODY})\)|\$", re.DOTALL, often=True)
#: The skeleton of a piece of each kind but plain text (itself): quoted text blanked, an expansion as any ``$(…)``.
_SKELETONS = {0: "$", 2: "''", 3: '""', 4: "''", 5: "$()", 6: "$()", 7: "$()"}

#: Where an expansion of a word stands in its text: ``(kind, start, stop, at, quoted)`` -- ``(``: a ``$(…)``, its body
#: from ``start`` to its ``)`` at ``stop``; ``{``: a ``${…}``, its text from ``start`` to its ``}`` at ``stop``;
#: ``((``: a ``$((…))``, its text from ``start`` to after its ``))`` at ``stop`` (offsets in the word's text as
#: written); ``at``: where it starts in the word; ``quoted``: in "…".
Expansion = tuple[str, int, int, int, bool]
#: A word read at once: its word, its skeleton, the pieces it took, and its expansions (none: the word as it stands).
Quoted = tuple[Word, str, int, tuple[Expansion, ...]]


def quoted_word(text: str, i: int, known: dict[str, Quoted | None]) -> tuple[int, Quoted] | None:
    """The word spelled as :data:`QUOTED_WORD` at ``i`` (at a word's start, outside any arithmetic), or ``None``: where
    it ends; and its word (its text with quotes removed, whether any of it was quoted, where each ``$`` stands in it),
    its skeleton (quoted parts blanked), how many pieces it took, as the splitter reads it one piece at a time, and
    where its expansions stand (to be made with its bodies: :func:`made_with_bodies`).

    ``known``: the words read so far, by their text (one per reading): a script writes the same ``"$IN"`` again and
    again, and a word is made once (none is changed once read); ``None``: one the splitter reads otherwise."""
    found = QUOTED_WORD.match(text, i)
    if found is None:
        return None
    source = found.group()
    read = known.get(source, False)
    if read is False:
        read = known[source] = _quoted_word(source)
    return None if read is None else (found.end(), read)  # type: ignore[return-value]


def made_with_bodies(read: Quoted, text: str, i: int, ends: Ends | None, log: dict[int, tuple[int, bool]],
                     body: Callable[[int, int], str]) -> Word | None:
    """The word ``read`` at ``i`` in ``text``, each ``$(…)`` in it with its body cut from the text (``body``, as the
    splitter cuts one); ``None`` where an end a walk found (``ends``, and ``log`` for the ``$((…))``), which the
    splitter looks up first, is not the one matched (it read the text otherwise: a piece at a time, as it does)."""
    word, _, _, expansions = read
    base = 0 if ends is None else ends.base
    subs: dict[int, tuple[int, str]] = {}
    for kind, start, stop, at, quoted in expansions:
        start, stop = start + i, stop + i
        if kind == "(":
            if ends is not None and ends.found.get(base + start, base + stop) != base + stop:
                return None
            subs[at] = (at + stop - start + 3, body(start, stop))
        elif kind == "{":
            if ends is not None and ends.params.get((base + start, quoted), base + stop) != base + stop:
                return None
        elif log.get(start, (stop, False)) != (stop, False) or arith_known(text, start, ends) not in (None, (stop,
                                                                                                           False)):
            return None
    if not subs:
        return word
    made = Word(word, [body for _, body in subs.values()], None, word.quoted, live=word.live)
    made.subs = subs
    if word.plain is not None:
        made.plain = word.plain
    return made


def _quoted_word(source: str) -> Quoted | None:
    """:func:`quoted_word` of all of ``source`` (``None``: a ``$(…)`` in it the splitter walks -- one over
    :data:`~.ends.PASSED_REACH` characters, or with ``case`` in it, where a ``)`` may end no body)."""
    parts: list[str] = []
    skeleton: list[str] = []
    live: list[int] = []
    plain: list[tuple[int, int]] = []  # where it holds text as written (words.Word.plain: a brace expression's)
    expansions: list[Expansion] = []
    length, quoted, pieces = 0, False, 0
    for piece in _PIECES.finditer(source):
        kind = piece.lastindex or 0
        pieces += 1
        if kind == 1:
            part = piece.group()
            if part[0] != "#":  # (as the splitter reads it: a # in a word is a character of its own)
                plain.append((length, length + len(part)))
        elif kind == 3:
            part, pieces = _double_quoted(piece.group(3), piece.start(3), length, live, expansions, pieces)
        elif kind == 0 or kind >= 5:
            live.append(length)
            part = piece.group()
            if kind >= 5:
                expansions.append(_expansion(piece, 0, kind - 5, length, False))
        else:  # '…' and \x
            part = piece.group(kind)
        quoted |= 2 <= kind <= 4
        skeleton.append(part if kind == 1 else _SKELETONS[kind])
        parts.append(part)
        length += len(part)
    if any(kind == "(" and ("case" in source[start:stop] or stop - start >= PASSED_REACH)
           for kind, start, stop, _, _ in expansions):
        return None
    word = Word("".join(parts), (), None, quoted, live=live)
    if "{" in word:  # (as the splitter's: where the word is plain is asked of a word with a brace alone)
        word.plain = tuple(plain)
    return word, "".join(skeleton), pieces, tuple(expansions)


def _expansion(found: re.Match[str], offset: int, kind: int, at: int, quoted: bool) -> Expansion:
    """The expansion ``found`` (``kind`` 0: ``${…}``, 1: ``$((…))``, 2: ``$(…)``; its groups the next three from the
    first of :data:`_PIECES` or :data:`_DQ_SPECIAL` that holds one) at ``offset`` in the word's text."""
    start, end = found.span()
    if kind == 0:
        return "{", offset + start + 2, offset + end - 1, at, quoted
    if kind == 1:
        return "((", offset + start + 3, offset + end, at, quoted
    return "(", offset + start + 2, offset + end - 1, at, quoted


def _double_quoted(inside: str, offset: int, length: int, live: list[int], expansions: list[Expansion],
                   pieces: int) -> tuple[str, int]:
    """The text of ``"inside"`` (at ``offset`` in the word's text, at ``length`` in its word), each ``$`` in it noted
    in ``live`` and each expansion in ``expansions``; the pieces so far."""
    if "$" not in inside and "\\" not in inside:
        return inside, pieces
    parts, start = [], 0
    for special in _DQ_SPECIAL.finditer(inside):
        parts.append(inside[start:special.start()])
        escaped = special.group(1)
        if escaped is None:
            at = length + sum(map(len, parts))
            live.append(at)
            parts.append(special.group())
            if special.lastindex:
                expansions.append(_expansion(special, offset, special.lastindex - 2, at, True))
        else:
            parts.append(escaped if escaped in '$`"\\' else "\\" + escaped)
        start = special.end()
        pieces += 1
    parts.append(inside[start:])
    return "".join(parts), pieces
