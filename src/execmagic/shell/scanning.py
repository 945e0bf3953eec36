"""What every context scanner shares: the :class:`Context` it reports and the loop that finds it.

A scanner jumps from one interesting character (a quote, an escape, a substitution) to the
next with one regex search, acts on it, and reports the context at each template's start;
a template's own text is skipped (it is replaced, never read as code).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from .work import step

__all__ = ["Context", "Scanner"]


@dataclasses.dataclass(frozen=True)
class Context:
    """The context of one offset.

    ``kind`` is one of: ``code`` (shell words), ``dquote``, ``squote``, ``ansi`` (``$'…'``),
    ``heredoc`` / ``heredoc-quoted`` (``delimiter`` and ``strip_tabs`` tell where it ends),
    ``arith`` (``$((…))``), ``comment``, ``unparsed`` (after a syntax error bash recovers from, or where the
    shell's reading is not known: ``why``);
    for Python ``py-code``, ``py-string``, ``py-comment`` (``prefix``/``quote`` say which string
    literal); for JavaScript ``js-code``, ``js-string``,
    ``js-template``, ``js-comment``, ``js-block-comment``; ``plain`` for other languages.
    ``backticks`` lists, innermost first, whether each enclosing old-style backtick
    substitution is itself inside double quotes (each one adds a layer of backslash escaping).
    """

    kind: str
    quote: str = ""
    prefix: str = ""
    delimiter: str = ""
    strip_tabs: bool = False
    backticks: tuple[bool, ...] = ()
    #: Inside ``${…}`` (within ``"…"`` or a heredoc), where bash pairs single quotes even there.
    in_param: bool = False
    #: In the word after ``>&`` (or ``1>&``), which bash expands a second time when it is not a number.
    expanded_twice: bool = False
    #: The delimiter (and whether tabs are stripped) of every heredoc whose body holds this place, however
    #: deeply nested in it: a line of the value equal to one would end that body early.
    heredoc_ends: tuple[tuple[str, bool], ...] = ()
    #: For ``unparsed``: why the place is not known (``""``: a syntax error in ``NAME=( … )``; ``"heredoc-in-parens"``:
    #: a heredoc opened in ``( … )`` or ``$( … )`` of a shell that may be dash, see ``WalkBodies._heredoc_operator``).
    why: str = ""


class Scanner:
    """The loop every language shares: jump to the next interesting character or template, act on it."""

    def __init__(self, text: str, spans: list[tuple[int, int]]) -> None:
        self.text = text
        self.spans = spans
        #: Where the next span starts (while :meth:`run` runs): a step may jump over text only short of it.
        self.horizon = len(text) + 1

    def run(self, replaced: Callable[[int, Context], bool] | None = None) -> dict[int, Context]:
        """The context at each span's start.  ``replaced(start, context)``, asked at each span in order,
        says whether its text is replaced (skipped, never read) or stays as written (read as the text it
        is, since what the interpreter reads next depends on it); without it every span is replaced."""
        found: dict[int, Context] = {}
        text, pos, index, taken = self.text, 0, 0, 0
        stops, act = self._stops, self._step
        while index < len(self.spans):
            taken += 1
            stop = stops().search(text, pos)
            end = stop.start() if stop else len(text)
            start, span_end = self.spans[index]
            if start <= end:
                found[start] = context = self._context()
                if replaced is None or replaced(start, context):
                    pos = max(pos, span_end)
                index += 1
                continue
            if stop is None:
                break
            self.horizon = start
            pos = act(stop.start())
        step(taken)  # one walk, linear: counted as it goes, told at its end
        return found

    def _stops(self) -> re.Pattern[str]:
        raise NotImplementedError

    def _context(self) -> Context:
        raise NotImplementedError

    def _step(self, i: int) -> int:
        """Act on the interesting character at ``i``; return where to search on."""
        raise NotImplementedError
