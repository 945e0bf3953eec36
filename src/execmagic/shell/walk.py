"""The walk over shell text: what is open at each offset, as bash would read it.

Templating asks it where a value stands (:class:`ShellScanner`: code, ``"…"``, ``'…'``, ``$'…'``, a
heredoc, arithmetic, a comment, inside backticks or ``"${…}"`` -- which decides how a value is
written there), and the word splitter asks the same walk, begun inside a substitution, where that
ends (:mod:`.ends`), so the two never disagree on nesting.

The walk tracks exactly what changes how a character is read: quotes (``'…'``, ``"…"``, ``$'…'``),
backslashes, ``$(…)``, backticks, ``${…}``, ``$((…))``, heredocs (quoted or not, ``<<-``) and
comments.  It follows bash where bash surprises, each case a test judged by bash
(``tests/shell/test_shell_lex.py``): a backtick ends at the next backtick, quotes or not; ``${…}``
counts no brackets, and ``((…))`` reads no ``${…}``, but a quote in it is one (and ``$[ … ]`` counts ``[``,
not parentheses); a ``case`` pattern's ``)`` does not end a ``$(…)``; a heredoc's delimiter line ends its
body whatever is open in it; ``$$'`` is the pid and a quote; the word after ``>&`` is expanded twice; a
syntax error inside ``NAME=( … )`` is skipped and bash goes on at a later line.

Every reading is linear in the text's length, nesting included: the frame stack (:mod:`.frames`)
keeps the index of each kind of frame the walk asks about (so a step costs the same 4,000 frames
deep), a ``$((`` inside a ``$((`` is looked up in the walk that passed it rather than walked again,
a body read again looks its substitutions' ends up in its text's walk (:mod:`.walk_bodies`,
:class:`~.ends.Ends`), and every step is counted against a budget linear in the text (:mod:`.work`)
-- text that would need more is refused, never read halfway.  And it is quick (every ``%exec``
reads its cell): a run of one opener (``$(``, ``${``, ``$((``, ``"$(``, ``(`` or ``)`` in
arithmetic, ``)`` closing ``( … )``) is one step, counted as one per opener; a frame knows its stops
from when it is opened; a plain backtick body is passed at once.  No regex is asked to look further
than what it consumes, so none is quadratic where no count of steps would see it.

It follows quoting and nesting, not the grammar: odd text is read as far as it goes, never raised
on.  Hand-written on purpose: tree-sitter-bash got cases wrong that it gets right (the templating,
guard and parse corpora: ``tests/benchmarks/shell_front_end.md``).

Over 400 lines, on purpose: :class:`ShellScanner` is the walk's one step (what each character does in each
frame); its bodies' half is :mod:`.walk_bodies` already, and a step split further would reach across.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Callable
from operator import attrgetter

from .frames import ARITH_RUN, SIMPLE_ARITHMETIC, Frame
from .patterns import lazy_pattern
from .scanning import Context
from .walk_bodies import WORD_START_BEFORE, WalkBodies
from .work import step, uncollected

__all__ = ["ShellScanner", "ansi_c_quoting"]

_ANSI_C = {"bash": True, "zsh": True, "ksh": True, "mksh": True, "dash": False}


@functools.cache
def ansi_c_quoting(language: str) -> bool | None:
    """Whether the shell reads ``$'…'`` as ANSI-C quoting (bash, zsh, ksh) or as ``$`` then ``'…'`` (dash).

    ``sh`` is whichever shell the system links it to; ``None`` means unknown, and then no
    value is placed inside ``$'…'`` at all (either reading would let a value escape the other).
    """
    if language == "sh":
        found = shutil.which("sh")
        language = os.path.basename(os.path.realpath(found)) if found else ""
    return _ANSI_C.get(language)


#: Frames where a backtick that ends no `…` does something other than open one.
_QUIET_BACKTICK = frozenset({"squote", "ansi", "comment", "heredoc-quoted", "psquote"})
#: Frames where a backslash is an ordinary character (inside backticks, ``\\\\`` is still one backslash).
_LITERAL_BACKSLASH = frozenset({"squote", "heredoc-quoted", "comment"})
#: Runs of one opener (each opens the same frame inside the last): read at once.
_PAREN_RUN = lazy_pattern(r"(?:\$\((?!\())+")
_PARAM_RUN = lazy_pattern(r"(?:\$\{)+")
_QUOTED_PAREN_RUN = lazy_pattern(r'(?:"\$\((?!\())+')
_OPENS, _CLOSES = lazy_pattern(r"\(+"), lazy_pattern(r"\)+")
#: More ``SIMPLE_ARITHMETIC`` on the line, each after blanks (see :meth:`ShellScanner._simple_run`).
_SIMPLE_RUN = lazy_pattern(r"(?:[ \t]+\(\([^\\'\"`$();\]\n]*\)\))*")
#: What a frame a ``)`` closes in code holds (its closer, open case patterns, kind, where a ``$((`` starts), and
#: what those are in a ``( … )`` frame it closes (see :meth:`ShellScanner._close_run`).
_CLOSING, _CLOSABLE = attrgetter("closer", "cases", "kind", "start"), (")", 0, "code", -1)
_OPENED, _TAINTED = attrgetter("opened"), attrgetter("tainted")
_FOR_BEFORE = lazy_pattern(r"(?<![\w$])for[ \t]*$")  # read in the few characters before a "((" alone
_KEYWORD_BEFORE = lazy_pattern(r"(?<![\w$])(?:then|do|else|elif|if|while|until|time)$")
#: The word before a ``(`` that makes it a compound assignment: ``NAME=(``, ``NAME+=(``, ``NAME[k]=(``.
_ARRAY_ASSIGNMENT = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]*\])?\+?=")
_WORD_BEFORE = frozenset(" \t\n;&|(")  # not ")": $(…)#x is one word


def _word_start(text: str, i: int) -> int:
    """Where the word that ends at ``i`` starts: after the last blank, ``;``, ``&``, ``|`` or ``(`` before it.

    Read back one character at a time, never past the previous ``(``: asked at each ``(``, the words
    read back are disjoint, so all of them cost one pass over the text (``rfind`` from the start did not).
    """
    start = i
    while start and text[start - 1] not in _WORD_BEFORE:
        start -= 1
    return start


class ShellScanner(WalkBodies):
    """The walk: reports the context at each template's offset (``run``), and is what
    :func:`paren_end` and :func:`backtick_end` step through from inside a substitution."""
    def run(self, replaced: Callable[[int, Context], bool] | None = None) -> dict[int, Context]:
        with uncollected():
            found = super().run(replaced)
        step(self.jumped)
        return found

    def _stops(self) -> re.Pattern[str]:
        return self.stack[-1].stops

    def _context(self) -> Context:
        frames = self.stack
        ticks = tuple(frames[at].in_dquote for at in reversed(frames.at["backtick"]))
        if self.broken:
            return Context("unparsed", backticks=ticks, why=self.why)
        top = frames[-1]
        kind = top.kind
        twice = frames.number("dupword") > 0
        ends = tuple((frames[at].delimiter, frames[at].strip_tabs) for at in frames.at["any-heredoc"])
        if kind in ("backtick", "dupword"):
            kind = "code"
        elif top.in_arith:  # '…' in arithmetic: it expands as the arithmetic around it does
            kind = "arith"
        elif kind == "ansi" and self.ansi_c is None:
            kind = "ansi-unknown"
        elif kind in ("param", "psquote"):  # ${…} is read like the quoting around it
            outer = frames[frames.outermost_code()]
            kind = "code" if outer.kind in ("backtick", "dupword") else outer.kind
            top = outer
            return Context(kind, delimiter=top.delimiter, strip_tabs=top.strip_tabs, backticks=ticks,
                           in_param=kind != "code", expanded_twice=twice, heredoc_ends=ends)
        return Context(kind, delimiter=top.delimiter, strip_tabs=top.strip_tabs, backticks=ticks,
                       expanded_twice=twice, heredoc_ends=ends)

    def _step(self, i: int) -> int:
        frame = self.stack[-1]
        text = self.text
        ch = text[i]
        kind = frame.kind
        # the commonest first: what the frames that stop at each of these do with it, in the order below
        if ch == "$":
            return self._dollar(i)
        if ch == "(" or ch == ")":
            return self._arith(frame, i, ch) if kind == "arith" else self._code(frame, i, ch)
        if ch == '"' and kind != "psquote":
            if kind == "dquote":
                self.stack.close_quote()
            else:  # code, ${…}, arithmetic, the word after >&: "…" opens
                self.stack.open_quote("dquote")
            return i + 1
        if ch == "'" and kind not in ("param", "arith"):
            if kind in ("squote", "ansi", "psquote"):
                self.stack.close_quote()
            else:
                self.stack.open_quote("squote")
            return i + 1
        if ch == "`" and kind not in _QUIET_BACKTICK:
            if not self._close_backtick():
                return self._open_backtick(i)
            return i + 1
        if ch == "\n" and kind != "heredoc":
            body_end = self._body_ends(i)
            if body_end is not None:
                return body_end
        if ch == "\\":
            return self._backslash(kind, i)
        if ch == "`" and self._close_backtick():
            return i + 1
        if kind == "psquote" and ch == "'":
            self.stack.pop()
            return i + 1
        if kind in ("squote", "ansi"):
            self.stack.pop()
            return i + 1
        if kind == "comment":
            self.stack.pop()
            return i  # the newline (or closing backtick) is the enclosing frame's business
        if kind == "heredoc-quoted" or (kind == "heredoc" and ch == "\n"):
            return self._heredoc_line(frame, i + 1)
        if ch == "$":
            return self._dollar(i)
        if ch == "`":
            self._push_backtick("`")
            return i + 1
        if kind in ("dquote", "psquote"):
            if ch == '"' and kind == "dquote":
                self.stack.pop()
            return i + 1
        if kind == "arith":
            return self._arith(frame, i, ch)
        return self._code(frame, i, ch)

    def _backslash(self, kind: str, i: int) -> int:
        """At a backslash in a frame of ``kind``: where the walk goes on (past what it escapes there)."""
        text = self.text
        if text.startswith("`", i + 1) and self._in_backticks():
            return self._escaped_backtick(i)
        if text.startswith('"', i + 1) and self._quote_in_backticks(kind):
            return i + 2
        if kind in _LITERAL_BACKSLASH:  # only stopped at inside backticks, whose level removes "\\" alone
            return i + (2 if text.startswith("\\", i + 1) else 1)
        return i + 2

    def _dollar(self, i: int) -> int:
        text = self.text
        nxt = text[i + 1:i + 3]
        after = nxt[:1]
        if after == "(":
            return self._dollar_paren(i, nxt == "((")
        if after == "{":  # a run of "${" opens the same frame in each
            if self.stack[-1].kind == "arith":  # in arithmetic bash counts parentheses only: ${x/a/(} opens one
                return i + 2
            end = _PARAM_RUN.match(text, i).end()  # type: ignore[union-attr]
            frames = self.stack.alike((("param", "}"),), (end - i) // 2)
            noted = self.params is not None and self._clean_below()
            below = len(self.stack)
            self.stack.append_alike(frames)
            if noted:
                self._note_params(frames, i + 2, below)
            self.jumped += (end - i) // 2 - 1
            return end
        if after == "$":
            return i + 2  # $$, the shell's pid: a "$" after it starts nothing (not $'…', not $(…))
        if after == "[":  # $[ … ], bash's old arithmetic: its end noted as a $(( … )) one's is
            frame = Frame("arith", "]", start=i + 2)
            frame.clean = self.shared is not None and self._clean_below()
            if frame.clean:
                self._arith_runs_out([frame])
            self.stack.append(frame)
            return i + 2
        if after not in ("'", '"'):
            return i + 1
        return self._dollar_quote(i, after)

    def _dollar_paren(self, i: int, double: bool) -> int:
        """At ``$((`` (``double``) or ``$(``: a run of them opens the same frame in each (the text alone decides it)."""
        text = self.text
        if double:
            end = ARITH_RUN.match(text, i).end()  # type: ignore[union-attr]
            clean = self.shared is not None and self._clean_below()
            frames = Frame.arith_run(range(i + 3, end + 3, 3), clean, self.stack.stops_for("arith", ""))
            if clean:
                self._arith_runs_out(frames)
            self.stack.append_run(frames, alike=True)
            self.jumped += (end - i) // 3 - 1
            return end
        quoted_run = _QUOTED_PAREN_RUN.match(text, i + 2)
        if quoted_run:  # "$( again and again: "…" then $( … ) in each
            end = quoted_run.end()
            units = (end - i - 2) // 3
            self.stack.append(self._paren(i + 2))
            frames = self.stack.alike((("dquote", ""), ("code", ")")), units)
            if self.ends is not None:
                self._note_run(frames[1::2], i + 5, 3, in_dquote=True)
            self.stack.append_alike(frames, period=2)
            self.jumped += 2 * units
            return end
        if not text.startswith("$(", i + 2):
            self.stack.append(self._paren(i + 2))
            return i + 2
        end = _PAREN_RUN.match(text, i).end()  # type: ignore[union-attr]
        frames = self.stack.alike((("code", ")"),), (end - i) // 2)
        if self.ends is not None:
            self._note_run(frames, i + 2, 2)
        self.stack.append_alike(frames)
        self.jumped += (end - i) // 2 - 1
        return end

    def _dollar_quote(self, i: int, after: str) -> int:
        """At ``$'`` or ``$"``: ANSI-C quoting, a translated ``"…"``, or a plain ``$`` where bash reads neither."""
        top = self.stack[-1].kind
        quoted = top in ("dquote", "heredoc", "psquote") or self._quoted_param(self.stack[-1])
        if after == "'" and quoted:
            return i + 1  # "$" then a plain "'" (bash reads no $'…' there)
        if after == "'":
            if self.ansi_c is False:
                return i + 1  # dash: "$" then an ordinary '…'
            self.stack.append(Frame("ansi"))
            return i + 2
        if not quoted:  # $"…": "…" translated for the locale
            self.stack.open_quote("dquote")
            return i + 2
        return i + 1

    def _arith(self, frame: Frame, i: int, ch: str) -> int:
        if ch == "'" or ch == '"':  # bash's parser reads quotes in arithmetic: a ")" or "]" in them ends nothing
            self.stack.append(Frame("squote", in_arith=True) if ch == "'" else Frame("dquote"))
            return i + 1
        if frame.closer == "]":  # $[ … ], bash's old arithmetic: it counts "[" there (not parentheses) to its "]"
            if ch == "]" and not frame.depth:
                self.stack.pop()
                self._arith_ended(frame, i + 1, False)
            elif ch == "[" or ch == "]":
                frame.depth += 1 if ch == "[" else -1
            return i + 1
        if ch == "(":  # a run of them at once
            end = _OPENS.match(self.text, i).end()  # type: ignore[union-attr]
            frame.depth += end - i
            self.jumped += end - i - 1
            return end
        if ch == ")":
            if frame.depth:  # a run of them, as far as the depth goes (never looked at further: read once)
                closes = _CLOSES.match(self.text, i, i + frame.depth).end() - i  # type: ignore[union-attr]
                frame.depth -= closes
                self.jumped += closes - 1
                return i + closes
            if self.text.startswith("))", i):
                return self._arith_run_ends(i)
            if not frame.loop:  # a ")" that closes no "(" ends bash's arithmetic, and not as one: "$((a) | b)" is
                self.stack.pop()  # "$( (a) | b )" (this ")" closes "(a"), "((a) | b)" two subshells
                frame.kind, frame.closer = "code", ")"
                self.stack.append(frame)
                return i + 1
        elif ch == ";" and not frame.loop:
            # no arithmetic holds a ";": bash read "$((" / "((" as two subshells, "( (…); …)"
            self.stack.pop()  # filed again below as what it now is
            frame.kind, frame.closer, frame.depth = "code", ")", 0
            self.stack.append(frame)
        return i + 1

    def _arith_run_ends(self, i: int) -> int:
        """At ``))`` ending the arithmetic on top (no ``(`` open in it): it ends, and each ``))`` right after it the
        arithmetic below while that is one too, at once (as many steps); where to go on."""
        closed = self.stack.close_run(self.text, i, arith=True)
        for at, ended in enumerate(reversed(closed)):  # (the top first: it ends at i + 2)
            if ended.start >= 0:
                self._arith_ended(ended, i + 2 * at + 2, False)
        self.jumped += len(closed) - 1
        return i + 2 * len(closed)

    def _command_position(self, i: int) -> bool:
        """Whether a word at ``i`` stands where a command (so a keyword) can: after ``;``, ``&``,
        ``|``, ``(``, a newline, or at the start of a ``$( … )``."""
        j = i
        while j > 0 and self.text[j - 1] in " \t":
            j -= 1
        if j == 0 or self.text[j - 1] in ";&|(\n{!" or self.text.startswith("$(", j - 2):
            return True
        return _KEYWORD_BEFORE.search(self.text, max(0, j - 6), j) is not None

    def _quoted_param(self, frame: Frame) -> bool:
        """A ``${…}`` inside ``"…"`` or a heredoc: bash reads a ``'`` there as a plain character."""
        if frame.kind != "param":
            return False
        outer = self.stack[frame.outer_only]
        return outer.kind in ("dquote", "heredoc")

    def _note_params(self, frames: list[Frame], first: int, below: int) -> None:
        """Note where the text of each of a run of ``${`` frames starts (each as param_end would read it), and
        whether another walk found one never ends in this text (see :meth:`_runs_out`)."""
        params, base = self.params, self.base
        limit, quoted = base + len(self.text), self._quoted_param(frames[0])
        for index, frame in enumerate(frames):
            frame.param_at, frame.in_quotes = first + 2 * index, quoted
        for index, frame in enumerate(frames if params else ()):
            if params.get((base + frame.param_at, quoted), -1) >= limit:  # type: ignore[union-attr]
                self.out = max(self.out, below + index)

    def _param(self, frame: Frame, i: int, ch: str) -> int:
        """Inside ``${…}`` bash pairs only quotes and substitutions: the first other ``}`` ends it.

        No bracket is counted there (``${x:-(}`` and ``${x:-{a}`` are whole), no ``#`` starts a
        comment and no ``<<`` a heredoc.
        """
        if ch == "'":
            # inside "${…}" bash pairs single quotes (a "}" between them does not close it) but
            # reads them as plain characters: the text between is as live as the "…" around it
            self.stack.append(Frame("psquote" if self._quoted_param(frame) else "squote"))
        elif ch == '"':
            self.stack.open_quote("dquote")
        elif ch == "}":
            self.stack.pop()
            if frame.param_at >= 0:
                self._param_ended(frame, i)
        return i + 1

    def _code(self, frame: Frame, i: int, ch: str) -> int:
        if frame.kind == "param":
            return self._param(frame, i, ch)
        if frame.kind == "dupword":
            return self._duplicated_word(i, ch)
        if frame.array and ch in ";&|<>(":
            # bash reports the syntax error and goes on reading at a later line: nothing after it is
            # read here as bash would (a value there could be a command), so every place is unknown
            self.broken = True
            return i + 1
        text = self.text
        at_word_start = i == 0 or text[i - 1] in WORD_START_BEFORE
        if ch in "ce":  # the words case / esac (only $( … ) frames stop at them)
            if ch == "c" and self._command_position(i):
                frame.cases += 1
            elif ch == "e" and frame.cases and (i == 0 or text[i - 1] in " \t\n;"):
                frame.cases -= 1  # an empty "case x in esac" too
            return i + 4
        if ch == "'":
            self.stack.open_quote("squote")
        elif ch == '"':
            self.stack.open_quote("dquote")
        elif ch == "#" and at_word_start:
            self.stack.append(Frame("comment"))  # to the newline, or to the backtick that ends a `…`
        elif ch == "(":
            if self._empty_parens(i):
                return i + 2
            double = text.startswith("((", i)
            before = text[max(0, i - 8):i] if double else ""
            after_for = "for" in before and bool(_FOR_BEFORE.search(before))
            if double and (at_word_start or after_for or _KEYWORD_BEFORE.search(text, max(0, i - 6), i)):
                simple = SIMPLE_ARITHMETIC.match(text, i)
                if simple and simple.end() < self.horizon and "\n" not in simple.group():
                    return self._simple_run(simple.end())  # nothing in it stops the walk, and no template stands in it
                frame = Frame("arith", loop=after_for)
                if not after_for:
                    self._note_bare(frame, i + 2)
                self.stack.append(frame)
                return i + 2
            # a subshell, a group, a function's () or a case's (pattern), or NAME=( … ): its own frame
            array = i > 0 and text[i - 1] == "=" and bool(_ARRAY_ASSIGNMENT.fullmatch(text, _word_start(text, i), i))
            self.stack.append(Frame("code", closer=")", array=True) if array else self._paren(i + 1))
        elif ch == ")":
            return self._close_parens(frame, i)
        elif ch == "<":
            return self._heredoc_operator(i)
        elif ch == ">":
            return self._duplicating(i)
        elif ch == "\n" and self.pending:
            return self._heredoc_line(None, i + 1)
        return i + 1

    def _simple_run(self, end: int) -> int:
        """After a ``(( … ))`` passed at once (ending at ``end``): the same again after blanks (at a word's start, so
        arithmetic too), each passed as it would be, at once; where the last ends (``((1)) ((1)) …``: one step each)."""
        run = _SIMPLE_RUN.match(self.text, end)
        if run is None or run.end() == end or run.end() >= self.horizon:
            return end
        self.jumped += run.group().count("((")
        return run.end()

    def _empty_parens(self, i: int) -> bool:
        """At ``()`` in code (a function's ``name()``), no end noted, no heredoc pending, no ``NAME=()``: a frame that
        the next step would close, passed at once (two steps, counted as two)."""
        text = self.text
        empty = text.startswith(")", i + 1) and self.ends is None and not self.pending and text[i - 1:i] != "="
        if empty:
            self.jumped += 1
        return empty

    def _close_run(self, i: int) -> int:
        """At a run of ``)``, no heredoc pending: the ``( … )`` frames on top that it ends closed at once, as
        :meth:`_close_parens` closes them one by one (:meth:`~.frames.Stack.close_run`); the index after the last."""
        closed = self.stack.close_run(self.text, i)
        if closed:
            if self.ends is not None:  # noted frames' ends (the top one closes at i, the one below it at i + 1, …)
                self._closed_at(closed, i + len(closed) - 1)
            self.jumped += len(closed) - 1
        return i + len(closed)

    def _closed_at(self, closed: list[Frame], last: int) -> None:
        """Note where each of ``closed`` (``( … )`` frames, the top last) ends: the top at ``last``, each below it one
        later -- each whose start was noted, unless it was read otherwise here (see :meth:`_close_parens`)."""
        base, ends = self.base, self.ends
        assert ends is not None
        opened = list(map(_OPENED, closed))
        if -1 in opened or any(map(_TAINTED, closed)):
            ends.update({base + frame.opened: base + last - at for at, frame in enumerate(closed)
                         if frame.opened >= 0 and not frame.tainted})
        else:
            ends.update(zip(map(base.__add__, opened), range(base + last, base + last - len(closed), -1), strict=True))

    def _close_parens(self, frame: Frame, i: int) -> int:
        """At ``)`` in code: it ends the frame if that is a ``( … )`` (not in a case pattern), and each ``)``
        right after it the next one while that is one too (a run read at once); where to go on."""
        stack, text, start = self.stack, self.text, i
        if not self.pending and text.startswith("))", i):  # a run of them: what it closes at once, the rest as ever
            i = self._close_run(i)
            if i > start and not text.startswith(")", i):
                return i
            if i > start:
                frame = stack[-1]
                self.jumped += 1
        while frame.closer == ")" and not frame.cases and frame.kind == "code":  # a case pattern's ")" is not the end
            list.pop(stack)  # (Stack.pop, less what a ( … ) frame needs not: it is in no class, only counted)
            stack.parens -= 1
            if frame.opened >= 0 and not frame.tainted:  # a noted frame's end, unless it was read otherwise here
                self.ends[self.base + frame.opened] = self.base + i  # type: ignore[index]
            if frame.start >= 0:  # a "$((" that a ";" made a command substitution
                self._arith_ended(frame, i + 1, True)
            i += 1
            if self.pending and self.pending[-1].parens > stack.parens and self.ansi_c is not True and self.spans:
                # its body not begun: dash ends it at the ")" of a $( … ) (the next lines are code) and reads that of
                # a ( … ) on the next lines, as bash reads both -- which this is the walk does not tell apart
                self.broken, self.why = True, "heredoc-in-parens"
            if not text.startswith(")", i):
                return i
            frame = stack[-1]
            self.jumped += 1
        return i if i > start else i + 1  # (a ")" the frame now on top does not end: its business)
