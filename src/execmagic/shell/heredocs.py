"""Heredocs as the word splitter (:mod:`.lexer`) reads them: the operator and its word at once, and each body, from
the line after, as the word its delimiter was.

Kept apart from the splitter's walker so that each stays small: a heredoc's reading writes the tokens, sources and
skeleton the walker does (:class:`HeredocReading` is its base), but reads nothing of the word in progress.
"""

from __future__ import annotations

from typing import Any

from .ends import Ends, live_between
from .frames import delimiter_line
from .patterns import lazy_pattern
from .words import OPS, Op, Word

__all__ = ["HeredocReading"]

_DOLLAR = lazy_pattern(r"\$")
#: A heredoc whose word is a name, plain or in quotes, that ends its word: ``<<EOF``, ``<< 'EOF' |``, ``<<-"END";``
#: (and group 5: the newline that ends its line, when nothing but blanks stands before it).
_PLAIN_HEREDOC = lazy_pattern(r"(<<-?)[ \t]*(?:([A-Za-z_][A-Za-z0-9_]*)|'([A-Za-z_][A-Za-z0-9_]*)'"
                              r"|\"([A-Za-z_][A-Za-z0-9_]*)\")(?:[ \t]*(\n)|(?=[ \t;&|]))")


class HeredocReading:
    """The heredocs of the splitter's reading (its fields, set by :class:`~.lexer._Lexer`)."""

    text: str
    i: int
    tokens: list[Word | Op]
    skeleton: list[str]
    heredocs: list[tuple[int, str, bool, bool]]  # token index, delimiter, strip tabs, quoted
    read_bodies: dict[tuple[str, bool], tuple[tuple[str, ...], tuple[int, ...]]]  # (_heredoc_body)
    plain_bodies: dict[tuple[str, str, bool], Word]  # (_plain_body)
    sources: list[Any] | None
    spelled: bool
    ends: Ends | None
    arithmetic_end: int
    expanded_twice: bool
    untold: int

    def _source(self, start: int, end: int) -> None:
        self.sources.append(self.text[start:end] if self.spelled else (start, end))  # type: ignore[union-attr]

    def _plain_heredoc(self, i: int) -> bool:
        """At ``<<NAME``, ``<<'NAME'`` or ``<<"NAME"`` ending its word (:data:`_PLAIN_HEREDOC`), nothing read since the
        last word: the operator and its word at once -- and where nothing but blanks follows on its line and no other
        heredoc waits, the newline and the body -- as one by one would; whether it was one.

        How scripts write files (``cat <<EOF``, ``cat <<'EOF' | python3 -``): read one piece at a time, each took four
        turns of the loop."""
        if not self.text.startswith("<<", i) or i < self.arithmetic_end:  # (in (( … )) a shift)
            return False
        found = _PLAIN_HEREDOC.match(self.text, i)
        if found is None:
            return False
        op, kind = found.group(1), 2 if found.start(2) >= 0 else 3 if found.start(3) >= 0 else 4
        delimiter, quoted, strip = found.group(kind), kind > 2, op == "<<-"
        word = found.start(kind) - quoted, found.end(kind) + quoted  # (its quotes too)
        for start, end in ((i, i + len(op)), word) if self.sources is not None else ():
            self._source(start, end)
        self.skeleton.append(self.text[i:word[0]] + ("''" if kind == 3 else '""' if quoted else delimiter))
        self.expanded_twice = False
        newline = found.end(5) - 1
        if newline < 0 or self.heredocs:  # its body waits for its line's end
            self.heredocs.append((len(self.tokens) + 1, delimiter, strip, quoted))
            self.tokens.extend((OPS[op], str.__new__(Word, delimiter)))
            self.i = word[1]
            self.untold += 2
            return True
        closing = delimiter_line(delimiter, strip).search(self.text, newline + 1)
        if closing is None:  # (its body runs to the end of the text: read as any, below)
            self.heredocs.append((len(self.tokens) + 1, delimiter, strip, quoted))
            body = str.__new__(Word, delimiter)
        else:
            body = self._plain_body(newline + 1, closing.start(), delimiter, quoted)
        self.tokens.extend((OPS[op], body, OPS[";"]))
        if self.sources is not None:
            self._source(newline, newline + 1)
        self.skeleton.append(self.text[word[1]:newline] + ";")
        self.i = newline + 1 if closing is None else closing.end() + 1
        if closing is None:
            self._read_heredocs()
        self.untold += 3
        return True

    def _plain_body(self, start: int, end: int, delimiter: str, quoted: bool) -> Word:
        """The word of a heredoc's body from ``start`` to its delimiter line at ``end`` (as :meth:`_read_heredocs` makes
        it): one per body text, delimiter and quoting (a script writes the same one again and again; no word is changed
        once read)."""
        body = self.text[start:end]
        word = self.plain_bodies.get((body, delimiter, quoted))
        if word is None:
            self.i = start
            live, dollars = self.read_bodies.get((body, quoted)) or self._heredoc_body(body, quoted, end)
            word = self.plain_bodies[body, delimiter, quoted] = Word(body, live, quoted=quoted, shown=delimiter,
                                                                     live=dollars)
        return word

    def _read_heredocs(self) -> None:
        """Heredoc bodies start on the line after their ``<<``: each becomes the word its delimiter was.

        The code of a substitution in the delimiter's word is kept with the body's.  No shell runs it there, but the
        reading may have taken into the word what a shell did not: in backticks, a backtick ends the word
        (`` `cat <<E`; rm -rf / ``: bash's backticks hold ``cat <<E``, and ``rm`` runs after them), where the reading
        took the backtick into the word and the rest of the text into a substitution in it -- code then walked.
        """
        text = self.text
        for index, delimiter, strip_tabs, quoted in self.heredocs:
            found = delimiter_line(delimiter, strip_tabs).search(text, self.i)
            end, resume = (found.start(), found.end() + 1) if found else (len(text), len(text))
            body = text[self.i:end]
            live, dollars = self.read_bodies.get((body, quoted)) or self._heredoc_body(body, quoted, end)
            if getattr(delimiter, "code", ()):
                live = (*live, *delimiter.code)  # type: ignore[attr-defined]
            self.tokens[index] = Word(body, live, quoted=quoted, shown=delimiter, live=dollars)
            self.i = resume
        self.heredocs = []

    def _heredoc_body(self, body: str, quoted: bool, end: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
        """What runs in a heredoc's ``body`` (starting here, ending at ``end``) and where its ``$`` stand; kept by its
        text: a script that writes the same heredoc again and again has it read once (its code is the same text,
        read alike wherever it stands, as the walk's own passing of a body walked before takes it)."""
        if quoted or ("$(" not in body and "`" not in body):  # (nothing in it runs: most heredocs)
            live: tuple[str, ...] = ()
        else:  # (the body's text need not be a Body itself: only what runs in it is read again)
            ends = None if self.ends is None else self.ends.within(self.text, self.i, end)
            live = tuple(live_between(body, 0, len(body), {}, ends))
        dollars = () if quoted else tuple(m.start() for m in _DOLLAR.finditer(body))
        if end < len(self.text):  # (one that runs to the end of the text is read so: its walks note what never ends)
            self.read_bodies[body, quoted] = live, dollars
        return live, dollars
