"""Brace expansion: the words bash makes of one word with ``{a,b}`` or ``{1..3}`` in it, before any other expansion.

``{rm,-rf,/}`` is the three words ``rm -rf /``, and ``r{m,} -rf /`` runs ``rm r -rf /``: what a guard reads as
one harmless word is a command.  bash expands braces first, on the word as written, so only braces, commas and
``..`` that were neither quoted nor inside an expansion count (``'{a,b}'``, ``\\{a,b}``, ``${x,}`` are text).  The
reader (:mod:`.lexer`) tells which characters of a word were so (:attr:`~.words.Word.plain`); this follows bash's
own reading (``braces.c``: the leftmost ``{`` that has a ``}`` after a ``,`` or ``..`` at its level, the amble split
at its commas or read as a sequence, then the rest of the word) and was checked against ``bash -c 'printf …'``.

What it makes is bounded by an :class:`Allowance` (characters made and characters read, for one check): a word of
twelve characters, ``{1..9}{1..9}…``, makes millions of words, and a word of ``{`` with no ``}`` is read again from
each of them.  Past the allowance the text is too complex to read (:class:`~.work.ShellTooComplex`): refused, not
guessed.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

from .patterns import lazy_pattern
from .words import Word
from .work import ShellTooComplex

__all__ = ["Allowance", "brace_words"]

#: A piece of a word made: a slice ``(start, end)`` of the word as written, or text a sequence made.
_Piece = tuple[int, int] | str
_Made = list[list[_Piece]]
#: How far apart a sequence's ends may be, at most (``{1..99999999999}`` is never listed): past it, too complex.
_MAX_SEQUENCE = 1 << 20
#: What a word made costs of the allowance, against one for a character read: about what the check of the word costs
#: against the reading of a character.
_MADE = 4


class Allowance:
    """What brace expansion may still do in one check: characters made and read (``left``); past it, too complex."""

    def __init__(self, left: int) -> None:
        self.left = self.limit = left

    def spend(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise ShellTooComplex(self.limit)


def brace_words(word: Word, allowance: Allowance) -> list[Word] | None:
    """The words bash's brace expansion makes of ``word`` (an unquoted empty one dropped), or ``None`` when it makes
    none other than ``word`` itself."""
    if word.plain is None:  # a word of plain characters: what it makes, as text (a script repeats a few)
        texts = _plain_words(str(word), allowance)
        if texts is None:
            return None
        allowance.spend(_MADE * len(texts))
        return [Word(text, shown=word.shown if i == 0 else "", live=()) for i, text in enumerate(texts) if text]
    made = _made(word, allowance)
    if made is None:
        return None
    kept = [made_word for pieces in made if (made_word := _word(word, pieces)) or word.quoted]
    if kept:  # the first word kept runs the word's code and shows it as written ({,$(…)}: not the empty one)
        kept[0].code, kept[0].shown = word.code, word.shown
    return kept


def _made(word: Word, allowance: Allowance) -> _Made | None:
    plain = _plain_text(word)
    if plain is None:
        return None
    made = _Expander(word, plain, allowance).expand(0, len(word))
    return None if len(made) == 1 and made[0] == [(0, len(word))] else made


@functools.lru_cache(maxsize=1024)
def _plain_words(word: str, allowance: Allowance) -> tuple[str, ...] | None:
    """What a word of plain characters makes (the allowance is spent the first time only: its caller spends what
    each time makes again)."""
    made = _made(Word(word), allowance)
    if made is None:
        return None
    return tuple("".join(word[p[0]:p[1]] if isinstance(p, tuple) else p for p in pieces) for pieces in made)


def _plain_text(word: Word) -> str | None:
    """``word`` with every character bash does not read as written (quoted, or in an expansion) a NUL: where a brace
    expression's braces, commas and ``..`` may stand.  ``None`` when none can (no ``{``, then ``,`` or ``..``, then
    ``}``): most words, told by a few searches."""
    spans = word.plain
    if spans is None:  # a word of plain characters alone
        plain = str(word)
    else:
        pieces: list[str] = []
        at = 0
        for start, end in spans:
            pieces += ("\0" * (start - at), word[start:end])
            at = end
        plain = "".join(pieces) + "\0" * (len(word) - at)
    start = plain.find("{")
    if start < 0 or plain.find("}", start) < 0:
        return None
    if plain.find(",", start) < 0 and plain.find("..", start) < 0:
        return None  # ({a}, ${x,}{a}: no expression; and no "{" is read to the end of the word again and again)
    return plain


_COMMA = lazy_pattern(",")
#: What bash's brace_gobbler looks at; every other character it passes.
_STRUCTURE = lazy_pattern(r"[{},]|\.\.")


class _Expander:
    """bash's ``brace_expand`` over slices of one word, each made word a list of pieces (see :data:`_Piece`)."""

    def __init__(self, word: str, plain: str, allowance: Allowance) -> None:
        self.word, self.plain, self.allowance = word, plain, allowance

    def expand(self, start: int, end: int) -> _Made:
        """The words ``word[start:end]`` makes."""
        whole: _Made = [[(start, end)]] if start < end else [[]]
        opened = self._open(start, start, end)
        while opened >= 0:
            closed = self._simple_list(opened, end)
            if closed < 0:
                closed = self._gobble(opened + 1, end, "}")
            if closed >= 0:
                break
            opened = self._open(start, opened + 1, end)
        else:
            return whole
        amble: _Made | None
        # any comma makes it a list, even one quoted or in an expansion (bash asks only that none escapes it): one
        # alternative then, the braces gone -- {/bin/rm${x:+,}} is /bin/rm to bash, once the ${…} is empty
        if self.word.find(",", opened + 1, closed) >= 0:
            amble = self._alternatives(opened + 1, closed)
        else:
            amble = self._sequence(opened + 1, closed)
            if amble is None and closed + 1 >= end:
                return whole
            if amble is None:  # {a}{b,c}: the first stays as written, the rest is read on
                amble = [[(opened, closed + 1)]]
        made = _product([[(start, opened)]] if start < opened else [[]], amble, self.allowance)
        if closed + 1 < end:
            made = _product(made, self.expand(closed + 1, end), self.allowance)
        return made

    def _open(self, start: int, at: int, end: int) -> int:
        """The next ``{`` from ``at`` that may open an expression (bash passes one at the start before ``}``)."""
        plain = self.plain
        while True:
            at = plain.find("{", at, end)
            if at < 0 or not (at == start and plain.startswith("}", at + 1)):
                return at
            at += 1

    def _simple_list(self, opened: int, end: int) -> int:
        """Where the list opened at ``opened`` closes when it holds no brace and a comma comes before its ``}``
        (``{a,b}``: what :meth:`_gobble` finds, by a few searches in C), else -1 (read it as bash does)."""
        plain = self.plain
        closed = plain.find("}", opened + 1, end)
        if closed < 0 or plain.find(",", opened + 1, closed) < 0 or plain.find("{", opened + 1, closed) >= 0:
            return -1
        self.allowance.spend(closed - opened)
        return closed

    def _gobble(self, at: int, end: int, stop: str) -> int:
        """Where bash's ``brace_gobbler`` stops from ``at``: the first ``stop`` at level 0 (a ``}`` only after a
        ``,`` or a ``..`` at that level), or -1 at ``end``."""
        plain, level, commas = self.plain, 0, stop != "}"
        # what is read is charged (read again from every "{" that opens none: bounded, not quadratic); only that:
        # charged the rest of the word, each of mkdir {d0,…,d299}'s alternatives cost as much as all after it
        for found in _STRUCTURE.finditer(plain, at, end):
            c, i = found.group(), found.start()
            if c == stop and level == 0 and commas:
                self.allowance.spend(i - at)
                return i
            if c == "{":
                level += 1
            elif c == "}" and level:
                level -= 1
            elif stop == "}" and level == 0 and (c == "," or (c == ".." and not plain.startswith("}", i + 2))):
                commas = True
        self.allowance.spend(end - at)
        return -1

    def _alternatives(self, start: int, end: int) -> _Made:
        """``a,b,{c,d}``: each alternative's words, in order.  The commas that end one are found in one read of
        the list (looked for from each alternative again, a long list's last ones were read once per alternative)."""
        self.allowance.spend(end - start)
        if self.plain.find("{", start, end) < 0:  # no brace in it (a long list, {d0,…,d9999}): each comma ends one
            commas: Sequence[int] = [m.start() for m in _COMMA.finditer(self.plain, start, end)]
        else:
            commas = self._level_commas(start, end)
        made: _Made = []
        at = start
        for comma in itertools.chain(commas, (end,)):
            if self.plain.find("{", at, comma) < 0:  # a plain alternative: itself (what expand would make of it)
                made.append([(at, comma)] if at < comma else [])
            else:
                made.extend(self.expand(at, comma))
            at = comma + 1
        return made

    def _level_commas(self, start: int, end: int) -> list[int]:
        """The commas of ``plain[start:end]`` outside every brace in it (a ``}`` with none open is passed)."""
        level, commas = 0, []
        for found in _STRUCTURE.finditer(self.plain, start, end):
            c = found.group()
            if c == "{":
                level += 1
            elif c == "}":
                level = max(level - 1, 0)
            elif c == "," and level == 0:
                commas.append(found.start())
        return commas

    def _sequence(self, start: int, end: int) -> _Made | None:
        """``1..5``, ``a..e``, ``01..10..2`` as bash lists it; ``None`` when it is none."""
        if "\0" in self.plain[start:end]:
            return None
        parts = self.word[start:end].split("..")
        if len(parts) not in (2, 3):
            return None
        step = _integer(parts[2]) if len(parts) == 3 else 1
        if step is None:
            return None
        step = abs(step) or 1
        first, last = _integer(parts[0]), _integer(parts[1])
        if first is not None and last is not None:
            width = max(len(parts[0]), len(parts[1])) if _padded(parts[0]) or _padded(parts[1]) else 0
            values = _range(first, last, step, self.allowance)
            return [[f"{v:0{width}d}"] for v in values]
        if len(parts[0]) == 1 == len(parts[1]) and parts[0].isalpha() and parts[1].isalpha() and \
                parts[0].isascii() and parts[1].isascii():
            return [[chr(v)] for v in _range(ord(parts[0]), ord(parts[1]), step, self.allowance)]
        return None


def _integer(text: str) -> int | None:
    """A sequence's end as bash reads it; ``None`` when it is none (not decimal, or past a 64-bit number)."""
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isdigit() and digits.isascii()) or len(digits.lstrip("0")) > 18:
        return None
    return int(text[:len(text) - len(digits)] + (digits.lstrip("0") or "0"))


def _padded(text: str) -> bool:
    digits = text.lstrip("+-")
    return len(digits) > 1 and digits.startswith("0")


def _range(first: int, last: int, step: int, allowance: Allowance) -> range:
    if abs(last - first) // step > _MAX_SEQUENCE:
        raise ShellTooComplex(allowance.limit)
    allowance.spend(_MADE * (abs(last - first) // step + 1))
    return range(first, last + 1, step) if first <= last else range(first, last - 1, -step)


def _product(heads: _Made, tails: _Made, allowance: Allowance) -> _Made:
    """Every head followed by every tail (bash's ``array_concat``), counted against ``allowance``."""
    allowance.spend(_MADE * len(heads) * len(tails))
    return [head + tail for head in heads for tail in tails]


def _word(word: Word, pieces: Sequence[_Piece]) -> Word:
    """The word ``pieces`` of ``word`` make: where its expansions start moved with them (no code: the caller gives
    the word's to the first word kept, and its shown text, as a refusal quotes the word as written)."""
    parts: list[str] = []
    live: list[int] | None = None if word.live is None else []
    subs: dict[int, tuple[int, str]] = {}
    length = 0
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece)
            length += len(piece)
            continue
        start, end = piece
        parts.append(word[start:end])
        if live is not None:
            live.extend(at - start + length for at in word.live or () if start <= at < end)
        for at, (stop, body) in (word.subs or {}).items():
            if start <= at < end:
                subs[at - start + length] = (stop - start + length, body)
        length += end - start
    made = Word("".join(parts), (), None, word.quoted, "", live=live)
    if subs:
        made.subs = subs
    return made
