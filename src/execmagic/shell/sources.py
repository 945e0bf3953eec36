"""Which token is which text: the splitter's tokens (:mod:`.lexer`), each with the text it was read from.

What a grammar check reads (:mod:`.plain_syntax`): the token says what the shell made of the text, the source how it
was spelled -- ``"$IN"`` is the word ``$IN``, quoted; a newline is a ``;`` spelled ``"\n"``.
"""

from __future__ import annotations

from .lexer import _Lexer
from .words import Op, Word
from .work import bounded, uncollected

__all__ = ["source_spans", "source_spellings", "source_texts", "source_tokens"]


def source_tokens(text: str) -> list[tuple[Word | Op, str]]:
    """The words and operators of shell ``text``, each with the text it was read from."""
    return list(zip(*source_texts(text), strict=True))


def source_texts(text: str) -> tuple[list[Word | Op], list[str]]:
    """The words and operators of shell ``text``, and the text each was read from (a plain piece's is itself: no text
    is sliced again)."""
    return _read(text, spelled=True)  # type: ignore[return-value]


def source_spellings(text: str) -> list[str]:
    """The text each word and operator of shell ``text`` was read from (:func:`source_texts`'s second), alone.

    What the standby's check reads, on every ``%exec``: the reading makes no token for a piece of a plain stretch
    (most of a script), whose text tells all the check asks -- in a script of assignments, a word made for each
    line cost a third of the reading."""
    return _read(text, spelled=True, made=False)[1]  # type: ignore[return-value]


def source_spans(text: str) -> tuple[list[Word | Op], list[tuple[int, int]]]:
    """The words and operators of shell ``text``, and where each was read (``(start, end)``)."""
    return _read(text, spelled=False)  # type: ignore[return-value]


def _read(text: str, spelled: bool, made: bool = True) -> tuple[list[Word | Op], list[tuple[int, int]] | list[str]]:
    lexer = _Lexer(text, sources=True, spelled=spelled, made=made)
    with bounded(text), uncollected():
        return lexer.run(), lexer.sources or []
