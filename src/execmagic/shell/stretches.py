"""Plain stretches of shell text: what the word splitter (:mod:`.lexer`) reads at once, and their tokens.

Most commands are made of little else than words of plain characters, operators, blanks and newlines; a
stretch of them is matched by one regex and split by another, not read a character at a time.  Kept apart
from the splitter's walker so that each stays small.
"""

from __future__ import annotations

import functools

from .frames import SIMPLE_ARITHMETIC
from .patterns import lazy_pattern
from .words import OPS, Op, Subshells, Word

__all__ = ["ARITH_STRETCH", "LINE_STRETCH", "PLAIN_PIECE", "PLAIN_STRETCH", "known_pieces", "plain_tokens", "spanned",
           "stretch_end"]

#: A word there stands alone: not before ``<``/``>`` (``2>``: digits there name a descriptor), nor before ``((``
#: (arithmetic only where no word ends before it).  No ``<<``/``<<-`` (a heredoc's word follows) nor ``<(``/``>(``
#: (a process substitution).  The operators are those of :data:`~.words.OPERATORS` in its order, so they are split
#: by its own first fit.
_PLAIN_WORD = r"[^ \t\n'\"\\$`;&|()<>#][^ \t\n'\"\\$`;&|()<>]*(?=[ \t\n;&|)]|\((?!\()|\Z)"
_PLAIN_OP = r"<<<|&>>|;;&|>>|&&|\|\||;;|;&|\|&|&>|>\||>&|<&|<>|<(?![<(])|>(?!\()|[;&|()]"
PLAIN_STRETCH = lazy_pattern(f"(?:{_PLAIN_WORD}|{_PLAIN_OP}|[ \t\n]+)+")
PLAIN_PIECE = lazy_pattern(f"{_PLAIN_WORD}|{_PLAIN_OP}|\n", often=True)
#: The same pieces, a ``((WORD))`` as one (see :class:`~.words.Subshells`).
_JOINED_PIECE = lazy_pattern(rf"\(\({_PLAIN_WORD}\)\)|{_PLAIN_WORD}|{_PLAIN_OP}|\n", often=True)
#: A plain stretch whose every ``((`` opens a ``SIMPLE_ARITHMETIC`` made of plain pieces (``((1))``, ``((i++))``):
#: what the splitter reads through one ``((`` at a time, matched at once.  Its ``(`` is no operator before another
#: ``(``, and the words in it are plain ones that hold no ``]`` (a stop of arithmetic) and no ``;`` follows.  (The
#: ``((…))`` is tried last: no other piece starts at a ``((``, and most pieces are the others.)
_ARITH_WORD = r"[^ \t\n'\"\\$`;&|()<>#\]][^ \t\n'\"\\$`;&|()<>\]]*(?=[ \t\n&|)])"
_ARITH_OP = r"&>>|>>|&&|\|\||\|&|&>|>\||>&|<&|<>|<(?![<(])|>(?!\()|[&|]"
ARITH_STRETCH = lazy_pattern(rf"(?:{_PLAIN_WORD}|{_PLAIN_OP[:-len('[;&|()]')]}[;&|)]|\((?!\()|[ \t\n]+"
                             rf"|(?P<arith>\(\((?:{_ARITH_WORD}|{_ARITH_OP}|[ \t\n]+)*\)\)))+", often=True)
#: A plain stretch to its line's end at most (its newline too) with no ``((`` in it, none passed: what the splitter
#: reads at once while heredocs wait for their bodies, which start on the next line -- there it reads a ``((`` one step
#: at a time, as it read all of such a line (``cat <<'EOF' | python3 -``) before.
LINE_STRETCH = lazy_pattern(rf"(?:{_PLAIN_WORD}|{_PLAIN_OP[:-len('[;&|()]')]}[;&|)]|\((?!\()|[ \t]+)*\n?")
_PIECE_OPS = {**OPS, "\n": OPS[";"]}
#: Text with no character that ends a plain stretch or makes a piece of it other than a word, a blank, a newline or an
#: operator of ``;&|`` (no quote, ``$``, backtick, ``#``, bracket, ``<`` or ``>``), to its last blank or newline (no
#: operator goes on past one: ``|&>``): a plain stretch, its every word followed by one of them, which the stretch's
#: pattern took a piece at a time (in a script of assignments, nine tenths of its time).
_SAFE_RUN = lazy_pattern(r"[^'\"\\$`#()<>]*[ \t\n]", often=True)
#: How far one match of :data:`_SAFE_RUN` reads (a long word with no blank after it -- a MB of base64 -- is gone back
#: over to its start); a run that went over half of it goes on from where it ended.
_RUN_WINDOW = 4096


def stretch_end(text: str, i: int, arithmetic_end: int, next_double: int, last_close: int) -> tuple[int, int, int]:
    """Where the plain stretch at ``i`` ends; and where the arithmetic it passes ends, and the next ``((``, as kept.

    It ends before a ``((`` that may be arithmetic, which is read one step at a time -- unless nothing in it could
    make it other than arithmetic that ends at its first ``))`` (then its ``(`` are plain operators as well).
    ``arithmetic_end``: where the ``((…))`` last passed ends; ``next_double``: the first ``((`` at or after where it
    was last looked for (found again only once passed), and the stretch is matched no further than it, so that no
    text is searched twice however many there are; ``last_close``: the last ``))`` of the text.
    """
    pos = i
    if arithmetic_end <= i:
        pos, arithmetic_end, done = _at_once(text, i, arithmetic_end)
        if done:
            return pos, arithmetic_end, next_double
    while True:
        start = max(pos, arithmetic_end)
        if next_double < start:
            found = text.find("((", start)
            next_double = len(text) if found < 0 else found
        cut = next_double if next_double <= last_close - 2 else len(text)
        stretch = PLAIN_STRETCH.match(text, pos, cut + 2)  # "((" in view: a word just before it is not plain
        reach = stretch.end() if stretch else pos
        simple = SIMPLE_ARITHMETIC.match(text, cut) if cut <= reach else None
        if simple is None:
            return min(cut, reach), arithmetic_end, next_double
        arithmetic_end, pos = simple.end(), cut  # as _arithmetic_command would find; read on from it


def _at_once(text: str, i: int, arithmetic_end: int) -> tuple[int, int, bool]:
    """How far the loop of :func:`stretch_end` reads from ``i`` through plain pieces and plain ``((…))``, read at once
    (:data:`ARITH_STRETCH`); where the last such ``((…))`` ends; and whether the stretch ends there.

    A stretch goes on alike from any of its pieces, so the loop reads on from where this stops -- unless it stopped
    where no ``((`` stands: there a plain stretch stops at once too.  (So does the pattern: from the end of the
    :data:`_SAFE_RUN` at ``i``, a plain stretch passed at once, it reads on as it would have read on there.)
    """
    run = _SAFE_RUN.match(text, i, i + _RUN_WINDOW)
    while run is not None:  # (a window at a time: the match goes back from its end to the last blank)
        start, i = i, run.end()
        run = _SAFE_RUN.match(text, i, i + _RUN_WINDOW) if i - start > _RUN_WINDOW // 2 else None
    if text[i:i + 1] in "'\"\\$`#":  # (most stop before a quote or a $: no piece starts there, nor a "((")
        return i, arithmetic_end, True
    fast = ARITH_STRETCH.match(text, i)
    if fast is None:
        return i, arithmetic_end, not text.startswith("((", i)
    if fast.start("arith") >= 0:
        arithmetic_end = fast.end("arith")
    return fast.end(), arithmetic_end, not text.startswith("((", fast.end())


def plain_tokens(text: str, start: int, end: int, joined: bool,
                 known: dict[str, Word | Op] | None) -> tuple[list[str], list[Word | Op]]:
    """The pieces of the plain stretch ``text[start:end]`` and their tokens (``joined``: a ``((WORD))`` one token).

    ``known``: the token of each piece read before (from :func:`known_pieces`, one per reading): a script writes the
    same words again and again (``echo``, ``|``, ``grep``, a file's name), and a word is made once (none is changed once
    read; a word made anew cost more than the rest of its reading).  ``None``: no token is wanted, only where each
    was read (:func:`~.sources.source_spellings`): each piece stands for its token."""
    pieces = (_JOINED_PIECE if joined else PLAIN_PIECE).findall(text, start, end)
    if known is None:
        return pieces, pieces
    if len(pieces) > 8:  # (the pieces not known yet found by set: each then looked up in C, a million "(" at once)
        for piece in set(pieces).difference(known):
            known[piece] = _subshells(piece) if piece[0] == "(" else str.__new__(Word, piece)  # (words.Word._Shown)
        return pieces, list(map(known.__getitem__, pieces))
    return pieces, [known.get(piece) or (known.setdefault(piece, str.__new__(Word, piece)) if piece[0] != "("
                                         else _subshells(piece)) for piece in pieces]


def known_pieces() -> dict[str, Word | Op]:
    """What :func:`plain_tokens` knows at the start of a reading: the operators (a newline is a ``;``)."""
    return dict(_PIECE_OPS)


@functools.lru_cache(maxsize=1024)
def _subshells(piece: str) -> Word | Op:
    """The token of a ``((WORD))``: one per text (a script writes the same few again and again; none is changed)."""
    token = Subshells(piece)
    token.word = str.__new__(Word, piece[2:-2])
    return token  # type: ignore[return-value]


_UNMARKED = lazy_pattern(r"[^#]+")


def spanned(piece: Word) -> Word:
    """The word of a plain piece with a ``{`` in it as the splitter makes it a piece at a time: where it is plain given
    as the runs without a ``#`` (each ``#`` is read on its own, not as plain text), not as ``None`` (all of it)."""
    word = Word(piece, live=())
    word.plain = tuple(run.span() for run in _UNMARKED.finditer(piece))
    return word
