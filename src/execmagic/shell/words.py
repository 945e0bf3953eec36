"""A shell word after quote removal, an operator, and what the rules read of them.

What the word splitter (:mod:`.lexer`) makes of shell text: :class:`Word` (with the code it runs and
where its expansions stand), :class:`Op`, the redirection operators, and ``$'…'``'s escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .patterns import lazy_pattern

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["OPERATOR", "OPERATORS", "OPS", "REDIRECTS", "STDIN_REDIRECTS", "WRITES", "Op", "Subshells", "Word",
           "ansi_end", "unescape"]


class _Shown:
    """A word's ``shown`` when none was given: the word itself (a plain word is then made by ``str.__new__`` alone)."""

    def __get__(self, word: Word | None, owner: type) -> Any:
        return self if word is None else str.__str__(word)


class Word(str):
    """A shell word after quote removal (``$VAR``, ``~`` and ``$(…)`` are left as written).

    ``code``: the bodies of the ``$(…)``, backticks and ``<(…)`` in it that the shell runs (not those
    in single quotes); ``feed``: the body when the word is a process substitution ``<(…)``;
    ``quoted``: some of it was quoted; ``shown``: how it is shown (a heredoc shows its delimiter);
    ``live``: where in the text each ``$`` or backtick the shell expands starts (``None``: not known, all count);
    ``subs``: for a ``$(…)`` (or a backtick's) start there, where it ends in the word and its body, as the reading
    found them (not read again: a body nested in a body was walked once per level around it);
    ``plain``: where the word holds text as written -- neither quoted nor expanded, where a brace expression can stand
    (``(start, end)`` spans; ``None``: all of it, a word of plain characters alone; see :mod:`.braces`).
    """

    code: tuple[str, ...] = ()
    subs: dict[int, tuple[int, str]] | None = None
    feed: str | None = None
    quoted: bool = False
    shown: str = _Shown()  # type: ignore[assignment]  # an instance's own, when given, comes first
    live: tuple[int, ...] | None = ()
    plain: tuple[tuple[int, int], ...] | None = None

    def __new__(cls, text: str, code: Iterable[str] = (), feed: str | None = None, quoted: bool = False,
                shown: str | None = None, live: Iterable[int] | None = None) -> Self:
        word = super().__new__(cls, text)
        word.code, word.feed, word.quoted = tuple(code), feed, quoted
        word.shown = text if shown is None else shown
        word.live = None if live is None else tuple(live)
        return word


class Op(str):
    """An operator token: ``;`` (also for a newline), ``&&``, ``|``, ``(``, ``>``, ``<<<``, …"""


class Subshells(str):
    """``((WORD))`` of a plain stretch as one token, for the guard: dash reads it as a subshell in a subshell around
    the command ``WORD`` (bash as arithmetic), and the guard walks it as such -- most often a command that runs
    nothing it judges, passed at once.  Read as ``(``, ``(``, ``WORD``, ``)``, ``)``, a script of ``((1))`` again and
    again gave a million tokens a MB to group into commands and walk.  ``word``: the plain word."""

    word: Word


OPERATORS = ("<<<", "<<-", "&>>", ";;&", "<<", ">>", "&&", "||", ";;", ";&", "|&", "&>", ">|", ">&", "<&", "<>",
             "<", ">", ";", "&", "|", "(", ")")
#: The first operator that fits, as :data:`OPERATORS` is ordered.
OPERATOR = re.compile("|".join(map(re.escape, OPERATORS)))
#: One token per operator: an ``Op`` holds nothing but its text, so every ``;`` can be the same one.
OPS = {op: Op(op) for op in OPERATORS}
REDIRECTS = frozenset({"<<<", "<<-", "&>>", "<<", ">>", "&>", ">|", ">&", "<&", "<>", "<", ">"})
STDIN_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_ANSI_ESCAPE = lazy_pattern(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|c.|[0-7]{1,3}|.)", re.DOTALL)
_ANSI_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
               "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


_ANSI_BODY = lazy_pattern(r"(?:[^'\\]|\\[\s\S])*")


def ansi_end(text: str, start: int) -> int:
    """Where the ``$'…'`` whose text starts at ``start`` ends: the index of its closing ``'``, or past the end of
    ``text`` (a backslash takes the character after it, even the last one's, which is past the end)."""
    end = _ANSI_BODY.match(text, start).end()  # type: ignore[union-attr]  # (a star: it always matches)
    return end + 2 if text.startswith("\\", end) else end


def unescape(text: str) -> str:
    """``$'…'`` (and ``echo -e``/``printf``) escapes: ``\\n`` is a newline, ``\\x41`` and ``\\u0041`` an A."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:  # "\x" with no hex digit after it stays as written
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] == "c" and len(code) > 1:  # \cX: the control character
            return chr(ord(code[1]) & 0x1F)
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _ANSI_CHARS.get(code, "\\" + code)

    return _ANSI_ESCAPE.sub(one, text) if "\\" in text else text
