"""Plain stretches of shell text: what the word splitter (:mod:`.lexer`) reads at once, and their tokens.

Most commands are made of little else than words of plain characters, operators, blanks and newlines; a
stretch of them is matched by one regex and split by another, not read a character at a time.  Kept apart
from the splitter's walker so that each stays small.
"""

from __future__ import annotations

import functools
import re

from .words import OPS, Op, Subshells, Word

__all__ = ["ARITH_STRETCH", "PLAIN_PIECE", "PLAIN_STRETCH", "plain_tokens"]

#: A word there stands alone: not before ``<``/``>`` (``2>``: digits there name a descriptor), nor before ``((``
#: (arithmetic only where no word ends before it).  No ``<<``/``<<-`` (a heredoc's word follows) nor ``<(``/``>(``
#: (a process substitution).  The operators are those of :data:`~.words.OPERATORS` in its order, so they are split
#: by its own first fit.
_PLAIN_WORD = r"[^ \t\n'\"\\$`;&|()<>#][^ \t\n'\"\\$`;&|()<>]*(?=[ \t\n;&|)]|\((?!\()|\Z)"
_PLAIN_OP = r"<<<|&>>|;;&|>>|&&|\|\||;;|;&|\|&|&>|>\||>&|<&|<>|<(?![<(])|>(?!\()|[;&|()]"
PLAIN_STRETCH = re.compile(f"(?:{_PLAIN_WORD}|{_PLAIN_OP}|[ \t\n]+)+")
PLAIN_PIECE = re.compile(f"{_PLAIN_WORD}|{_PLAIN_OP}|\n")
#: The same pieces, a ``((WORD))`` as one (see :class:`~.words.Subshells`).
_JOINED_PIECE = re.compile(rf"\(\({_PLAIN_WORD}\)\)|{_PLAIN_WORD}|{_PLAIN_OP}|\n")
#: A plain stretch whose every ``((`` opens a ``SIMPLE_ARITHMETIC`` made of plain pieces (``((1))``, ``((i++))``):
#: what the splitter reads through one ``((`` at a time, matched at once.  Its ``(`` is no operator before another
#: ``(``, and the words in it are plain ones that hold no ``]`` (a stop of arithmetic) and no ``;`` follows.
_ARITH_WORD = r"[^ \t\n'\"\\$`;&|()<>#\]][^ \t\n'\"\\$`;&|()<>\]]*(?=[ \t\n&|)])"
_ARITH_OP = r"&>>|>>|&&|\|\||\|&|&>|>\||>&|<&|<>|<(?![<(])|>(?!\()|[&|]"
ARITH_STRETCH = re.compile(rf"(?:(?P<arith>\(\((?:{_ARITH_WORD}|{_ARITH_OP}|[ \t\n]+)*\)\))|{_PLAIN_WORD}"
                           rf"|{_PLAIN_OP[:-len('[;&|()]')]}[;&|)]|\((?!\()|[ \t\n]+)+")
_PIECE_OPS = {**OPS, "\n": OPS[";"]}


def plain_tokens(text: str, start: int, end: int, joined: bool) -> tuple[list[str], list[Word | Op]]:
    """The pieces of the plain stretch ``text[start:end]`` and their tokens (``joined``: a ``((WORD))`` one token)."""
    if not joined:
        pieces = PLAIN_PIECE.findall(text, start, end)
        return pieces, [_PIECE_OPS.get(piece) or str.__new__(Word, piece) for piece in pieces]  # (words.Word._Shown)
    pieces = _JOINED_PIECE.findall(text, start, end)
    return pieces, [_PIECE_OPS.get(piece) or (str.__new__(Word, piece) if piece[0] != "(" else _subshells(piece))
                    for piece in pieces]


@functools.lru_cache(maxsize=1024)
def _subshells(piece: str) -> Word | Op:
    """The token of a ``((WORD))``: one per text (a script writes the same few again and again; none is changed)."""
    token = Subshells(piece)
    token.word = str.__new__(Word, piece[2:-2])
    return token  # type: ignore[return-value]
