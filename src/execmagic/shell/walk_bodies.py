"""Where one text holds another: backticks, heredoc bodies, the word after ``>&``, and the ends noted.

The part of the walk (:class:`~.walk.ShellScanner`) that deals with text inside text: a backtick's
body ends at the next backtick whatever is open in it, a heredoc's body at its delimiter line
whatever is open in it, the word after ``>&`` is expanded a second time; and where a substitution
ends is noted (:class:`~.ends.Ends`) only when a walk begun inside it would read it alike -- nothing
below it that such a walk would not see.  Split from the walk (:mod:`.walk`, the step and what each
frame kind does) by size: the walk's state and these are a base class it extends.
"""

from __future__ import annotations

import collections
from itertools import repeat

from .frames import Frame, Stack, delimiter_line
from .patterns import lazy_pattern
from .scanning import Scanner

__all__ = ["WORD_START_BEFORE", "WalkBodies"]

#: What may stand before a word's start (a word after one of these starts there).
WORD_START_BEFORE = frozenset(" \t\n;&|(<>")
_DOLLAR_QUOTE, _ESCAPED = lazy_pattern(r"\$(?=['\"])"), lazy_pattern(r"\\(.)")  # a heredoc's word, unquoted
_QUOTING = lazy_pattern(r"['\"\\\\$]")  # what a heredoc's word is read through before it is its delimiter
_QUOTES = lazy_pattern(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"")
_TABS = lazy_pattern(r"\t*")


#: A heredoc's word up to the first backtick no backslash escapes (the rest of the word, in a `…`, is outside it).
_BEFORE_BACKTICK = lazy_pattern(r"(?:[^`\\]|\\.)*")
_HEREDOC_OP = lazy_pattern(r"<<(-?)[ \t]*((?:[^\s;&|<>()'\"\\]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.)+)")


class WalkBodies(Scanner):
    """The walk's state, and what it does at backticks and heredocs (the rest is :class:`~.walk.ShellScanner`)."""


    def __init__(self, text: str, spans: list[tuple[int, int]], ansi_c: bool | None) -> None:
        super().__init__(text, spans)
        self.ansi_c = ansi_c
        self.stack = Stack([Frame("code")])
        self.pending: collections.deque[Frame] = collections.deque()  # heredocs whose bodies start at the next newline
        self.broken = False  # past a syntax error bash recovers from: where it goes on is not known here
        self.why = ""  # (see Context.why)
        #: Where each ``$((`` met so far ends (the index after it) and whether bash read it as a ``$( (…); … )``
        #: command substitution: noted once in one walk, so that nothing inside it need be walked again.
        self.arith_log: dict[int, tuple[int, bool]] = {}
        #: The same, for clean frames (offset by ``base``), shared with the text's bodies (``Ends.arith``).
        self.shared: dict[int, tuple[int, bool]] | None = None
        #: Where each ``${…}`` ends, by where its text starts (offset by ``base``) and whether it stands in quotes.
        self.params: dict[tuple[int, bool], int] | None = None
        #: Steps taken at once beyond one: a run of k "(" or "$(" read in one step counts as k (a walk begun
        #: again over the same nesting must cost what it would one at a time, so the budget still bounds it).
        self.jumped = 0
        #: Where each ``( … )`` the walk opened ends (the index of its ``)``, or :data:`UNCLOSED`), by where its text
        #: starts, offset by ``base`` -- noted only when asked (see :func:`paren_end`): ``None``, not noted.
        self.ends: dict[int, int] | None = None
        self.base = 0
        #: The stack index of the innermost frame that another walk found never closes in this text (``-1``: none
        #: yet): nothing below it closes either, so the walk runs out of text there and need read no further.
        self.out = -1

    def _paren(self, start: int) -> Frame:
        """A ``( … )`` frame whose text starts at ``start``, its end noted when the walk notes ends."""
        frame = Frame("code", ")")
        if self.ends is not None and self._clean_below():  # (_note_run of this one frame, at once: a third of them)
            frame.opened = start
            if self.ends.get(self.base + start, -1) >= self.base + len(self.text):
                self._runs_out(len(self.stack))
        return frame

    def _note_run(self, frames: list[Frame], first: int, stride: int, in_dquote: bool = False) -> None:
        """Note where the text of each of ``frames`` starts (``first``, then every ``stride`` on), if a walk begun
        inside one would read it as this one does: nothing below it that a walk begun there would not see (a
        backtick, a heredoc's body or one yet to come).  ``frames`` are opened next, one inside the other
        (``in_dquote``: each in a ``"…"`` of its own, opened with it)."""
        stack = self.stack
        if stack.at["backtick"] or stack.at["any-heredoc"] or self.pending:
            return
        ends, base, limit = self.ends, self.base, self.base + len(self.text)
        starts = range(first, first + stride * len(frames), stride)
        collections.deque(map(setattr, frames, repeat("opened"), starts), maxlen=0)  # (frame.opened = start: in C)
        if ends and not in_dquote:  # (none noted yet: nothing to look up, 4,000 "$(" at once or not)
            found = list(map(ends.get, map(base.__add__, starts), repeat(-1)))
            if found and max(found) >= limit:  # the innermost that never closes, as another walk found
                self._runs_out(len(stack) + max(at for at, end in enumerate(found) if end >= limit))

    def _note_bare(self, frame: Frame, start: int) -> None:
        """Note where the text of a ``((`` frame starts (its end then goes in ``arith_log``), as :meth:`_note_run`."""
        if self._clean_below():
            frame.start, frame.bare, frame.clean = start, True, True
            self._arith_runs_out([frame])

    def _arith_runs_out(self, frames: list[Frame]) -> None:
        """``frames`` (clean arithmetic, opened next, one inside the other): note whether another walk found one
        never ends in this text (see :meth:`_runs_out`)."""
        shared, base = self.shared, self.base
        if not shared:
            return
        limit = base + len(self.text)
        for index, frame in enumerate(frames):
            found = shared.get(base + frame.start)
            if found is not None and found[0] > limit:
                self._runs_out(len(self.stack) + index)

    def _runs_out(self, index: int) -> None:
        """The frame opened next at stack ``index`` never closes in this text, as another walk found it (noted as
        read by a walk begun inside it): the walk runs out of text there (:attr:`out`).

        Read here as there unless a backtick in it would take a ``"…"`` below it for its own (a walk begun inside it
        sees none): then it is read to the end as ever.  (A ``${…}`` is itself what such a backtick would find.)
        """
        if not self._in_dquote():
            self.out = max(self.out, index)

    def _clean_below(self) -> bool:
        """Whether a frame opened now is read as a walk begun inside it would read it (see :meth:`_note_run`)."""
        stack = self.stack
        return not (stack.at["backtick"] or stack.at["any-heredoc"] or self.pending)

    def _arith_ended(self, frame: Frame, end: int, command: bool) -> None:
        """An arith frame (just popped) ends before ``end``: note it in the walk's log (a ``((`` frame only if clean)
        and, clean, in the log shared with the text's bodies."""
        clean = frame.clean and not frame.tainted
        if clean or not frame.bare:
            self.arith_log[frame.start] = (end, command)
        if clean and self.shared is not None:
            self.shared[self.base + frame.start] = (self.base + end, command)

    def _param_ended(self, frame: Frame, at: int) -> None:
        """A noted ``${…}`` frame closed by the ``}`` at ``at`` (already popped): note its end, unless tainted."""
        if not frame.tainted and self.params is not None:
            self.params[self.base + frame.param_at, frame.in_quotes] = self.base + at

    def _push_backtick(self, closer: str) -> None:
        """Open a backtick frame, noting whether it stands in "…" (see :meth:`_quote_in_backticks`)."""
        at = self.stack.innermost("dquote-or-param")
        frame = Frame("backtick", closer, in_dquote=at >= 0 and self.stack[at].kind == "dquote")
        if frame.in_dquote:
            frame.quote_at = at
        self.stack.append(frame)

    def _open_backtick(self, i: int) -> int:
        """At a backtick that opens a `…`: where to go on.

        A plain `…` ends at the next backtick, closing whatever was opened in it since: with no backslash in
        between (no \\` hides one) and no heredoc word (whose delimiter could), nothing in it changes what comes
        after -- unless a syntax error in a ``NAME=(`` there does, or a heredoc body is open around it (its
        delimiter line would end it) -- so it is passed at once when no template stands in it.
        """
        text, stack = self.text, self.stack
        while not (stack.at["backtick"] or stack.at["any-heredoc"] or self.pending):
            end = text.find("`", i + 1)
            body = text[i + 1:end]
            if not 0 < end < self.horizon or "\\" in body or "<<" in body or "=(" in body:
                break
            if not text.startswith("`", end + 1):
                return end + 1
            i = end + 1  # another opens at once: ``…``…
            self.jumped += 1
        self._push_backtick("`")
        return i + 1

    def _quote_in_backticks(self, kind: str) -> bool:
        """At ``\\"`` inside a `…` that stands in "…": the backtick level makes it a ``"`` of the command
        inside (``"`echo \\"{v}\\"`"``), so it opens or closes "…" there; whether it did."""
        at = self._innermost_backtick()
        if not at or not self.stack[at].in_dquote:
            return False
        self._taint(at)
        if self.stack.innermost("param") > at:
            return False
        if kind == "dquote" and len(self.stack) - 1 > at:
            self.stack.pop()
            return True
        if kind in ("code", "backtick", "dupword"):
            self.stack.open_quote("dquote")
            return True
        return False

    def _taint(self, at: int) -> None:
        """At ``\\"`` in the backtick at stack index ``at``, in a ``"…"`` below it: a walk begun inside a frame between
        them would not see that ``"…"`` and read this ``\\"`` otherwise, so their ends are not noted (those below the
        ``"…"`` see it too, those above the backtick are noted in no case).

        Marked from the backtick down to the first frame marked already: every frame between that one and the
        ``"…"`` was marked with it (its ``"…"`` is this one or below it: one between would be the innermost), so each
        frame is marked once however many backticks take a ``"…"`` below it."""
        stack = self.stack
        index, quote = at - 1, stack[at].quote_at
        while index > quote and not stack[index].tainted:
            stack[index].tainted = True
            index -= 1

    def _in_backticks(self) -> bool:
        return bool(self.stack.at["backtick"])

    def _innermost_backtick(self) -> int:
        """The stack index of the innermost backtick frame, or 0 (the top-level frame is never one)."""
        return max(self.stack.innermost("backtick"), 0)

    def _close_backtick(self) -> bool:
        """A plain backtick ends the `…` that is open, with whatever was opened inside it since.

        Bash reads a backtick's body up to the next backtick not preceded by a backslash, quotes
        or not (only then is the body parsed), so ``echo `echo '`'`` ends at the second backtick.
        Only one plain `…` is ever open: a plain backtick inside one closes it.
        """
        ticks = self.stack.at["plain-backtick"]
        if ticks and ticks[-1]:  # (the frame at 0 is never one)
            self._cut_backtick(ticks[-1])
            return True
        return False

    def _cut_backtick(self, at: int) -> None:
        """End the backtick at stack index ``at``, and the heredocs opened in it whose bodies have not begun: bash
        reads a backtick's body before it parses it, so their bodies are in it or nowhere (``echo `cat <<x```:
        the lines after it are code to bash, not the body of ``x``)."""
        self.stack.cut(at)
        if self.pending:
            self.pending = collections.deque(frame for frame in self.pending if frame.tick < at)

    def _escaped_backtick(self, i: int) -> int:
        """Inside `…`, a \\` opens (or closes) a nested command substitution: one more layer.

        Like a plain backtick one level up, it closes the nested one whatever was opened inside it;
        inside a quote directly in the outer `…` it is a quoted backtick, nothing more.
        """
        at = self._innermost_backtick()
        if self.stack[at].closer == "\\`":
            self._cut_backtick(at)
        elif self.stack[-1].kind in ("code", "backtick", "dquote", "param", "dupword", "heredoc"):
            self._push_backtick("\\`")
        return i + 2

    def _in_dquote(self) -> bool:
        """Whether a backtick opened here stands in "…": bash then reads ``\\"`` in it as ``"``.

        Not inside a ``${…}`` there (``"${x:-`…`}"``): bash keeps ``\\"`` as written in that one.
        """
        at = self.stack.innermost("dquote-or-param")
        return at >= 0 and self.stack[at].kind == "dquote"

    def _heredoc_operator(self, i: int) -> int:
        text = self.text
        if text.startswith("<<<", i):
            return i + 3
        match = _HEREDOC_OP.match(text, i)
        if match is None:
            return i + 1
        ticks = self.stack.at["backtick"]
        word, tick = match.group(2), ticks[-1] if ticks else 0
        # in a `…` a backtick ends the word, quoted or not (it ends the `…`): the body would be in the `…`, which
        # ends on this line -- none.  Where a template is placed; the reader's walks (none placed) read on as before:
        # cut, their walks over random text found no end far more often (and the reader's lexer keeps such code)
        if tick and self.spans and "`" in word:
            before = _BEFORE_BACKTICK.match(word)
            if before is not None and before.end() < len(word):
                return match.start(2) + before.end()
        if _QUOTING.search(word) is None:  # EOF, END: the word as written (most heredocs)
            quoted, delimiter = False, word
        else:
            word = _DOLLAR_QUOTE.sub("", word)  # $'EOF' ends at EOF, as bash reads it
            quoted = any(c in word for c in "'\"\\")
            delimiter = _ESCAPED.sub(r"\1", _QUOTES.sub(lambda m: m.group(1) or m.group(2) or "", word))
        heredoc = Frame("heredoc-quoted" if quoted else "heredoc", delimiter=delimiter, strip_tabs=bool(match.group(1)))
        heredoc.tick, heredoc.parens = tick, self.stack.parens
        self.pending.append(heredoc)
        return match.end()

    def _heredoc_line(self, current: Frame | None, start: int) -> int:
        """At the start of a line: end the current heredoc at its delimiter line, open the next pending one."""
        text = self.text
        if current is not None:
            line_end = text.find("\n", start)
            line = text[start:len(text) if line_end < 0 else line_end]
            line = line.lstrip("\t") if current.strip_tabs else line
            in_substitution = self.stack.parens - (self.stack[-1].closer == ")") > 0
            if in_substitution and line.startswith(current.delimiter + ")"):
                self.stack.pop()  # bash also ends the body at "EOF)" inside $( … ); the ")" is code
                return _TABS.match(text, start).end() + len(current.delimiter)  # type: ignore[union-attr]
            if line != current.delimiter:
                return start
            self.stack.pop()
            start = len(text) if line_end < 0 else line_end + 1
        while self.pending:
            heredoc = self.pending.popleft()
            passed = self._passed_body(heredoc, start) if len(self.stack) == 1 else None
            if passed is None:
                self.stack.append(heredoc)
                return self._heredoc_line(heredoc, start) if self._at_delimiter(start) else start
            start = passed
        return start

    def _passed_body(self, heredoc: Frame, start: int) -> int | None:
        """Where the text goes on after the body of ``heredoc`` (opened at the top level, its body starting at
        ``start``) when no template stands in it or its delimiter line: bash reads the body to that line whatever
        is in it, and nothing is open around it that the body could end or a line in it end otherwise.  A script
        of heredocs took six steps of the walk each (the body's line, a ``$(`` and a quote in it, its newlines)."""
        found = delimiter_line(heredoc.delimiter, heredoc.strip_tabs).search(self.text, start)
        if found is None or found.end() >= self.horizon:
            return None
        if heredoc.kind == "heredoc" and self.text.find("\\\n", start, found.start()) >= 0:
            return None  # (a backslash may join a line to the next in it: read on the way it is read)
        return min(found.end() + 1, len(self.text))

    def _body_ends(self, i: int) -> int | None:
        """At a newline inside something open in a heredoc body: does the next line end that body?

        Bash reads a heredoc's body line by line up to its delimiter line before it reads anything
        in it, so the delimiter ends the body whatever quote or substitution is open there (only a
        backslash before the newline joins the lines).  Returns where to go on, or ``None``.
        """
        stack, text = self.stack, self.text
        heredocs = stack.at["heredoc"]
        if not heredocs or (len(heredocs) == 1 and heredocs[0] == len(stack) - 1):  # none open below the top
            return None
        line_end = text.find("\n", i + 1)
        line = text[i + 1:len(text) if line_end < 0 else line_end]
        ends = stack.ended_by
        # the outermost body this line ends (a heredoc's delimiter line is read as written, or less its tabs)
        as_written, less_tabs = ends.get((line, False)), ends.get((line.lstrip("\t"), True))
        if not (as_written or less_tabs):  # (every newline in a body asks: most lines end none)
            return None
        at = min(found[0] for found in (as_written, less_tabs) if found)
        if at >= len(stack) - 1:
            return None
        escapes = i
        while escapes and text[escapes - 1] == "\\":
            escapes -= 1
        if (i - escapes) % 2:
            return None
        frame = self.stack[at]
        self.stack.cut(at + 1)
        return self._heredoc_line(frame, i + 1)

    def _at_delimiter(self, start: int, frame: Frame | None = None) -> bool:
        frame = frame or self.stack[-1]
        line_end = self.text.find("\n", start)
        line = self.text[start:len(self.text) if line_end < 0 else line_end]
        return (line.lstrip("\t") if frame.strip_tabs else line) == frame.delimiter

    def _duplicating(self, i: int) -> int:
        """At ``>``: a ``>&`` or ``1>&`` opens the word bash may expand twice (see :func:`_duplicated_word`)."""
        text = self.text
        if not text.startswith(">&", i):
            return i + 1
        digits = i
        while digits and text[digits - 1].isdigit():
            digits -= 1
        fd_given = digits < i and (digits == 0 or text[digits - 1] in WORD_START_BEFORE)
        if fd_given and text[digits:i] != "1":
            return i + 2  # 2>&1, 3>&-: another descriptor, read once
        after = i + 2
        while text.startswith((" ", "\t"), after):
            after += 1
        self.stack.append(Frame("dupword"))
        return after

    def _duplicated_word(self, i: int, ch: str) -> int:
        """Inside the word after ``>&``: quotes nest as anywhere; a blank or an operator ends the word.

        When that word is not a number (``>&file``, meaning ``&>file``), bash expands it a second time,
        so ``>&'$(cmd)'`` runs ``cmd``: every place in it is reported with ``expanded_twice``.
        """
        if ch == "'":
            self.stack.open_quote("squote")
            return i + 1
        if ch == '"':
            self.stack.open_quote("dquote")
            return i + 1
        self.stack.pop()
        return i  # the blank or operator is the enclosing frame's business
