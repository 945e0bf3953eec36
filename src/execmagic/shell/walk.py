"""The one reading of shell text: where quotes, substitutions and heredocs begin and end.

Three questions are asked of shell text, and all are answered here, from one walk over it:

- *Where does a template stand?* (:class:`ShellScanner`, for templating): the context at each
  offset -- code, ``"…"``, ``'…'``, ``$'…'``, a heredoc, arithmetic, a comment, inside backticks or
  ``"${…}"`` -- which decides how a value is written there;
- *What are its words?* (:func:`tokenize`, for the guard): the text split into words and operators
  as a POSIX shell splits it, quotes removed, with the ``$(…)``/backtick/``<(…)`` bodies the shell
  would run;
- *Which token is which text?* (:func:`source_tokens`, for the standby's "surely parses" check in
  :mod:`.plain_syntax`): the same tokens, each with the text it was read from.

The walk (:class:`ShellScanner`'s frame stack) tracks exactly what changes how a character is read:
quotes (``'…'``, ``"…"``, ``$'…'``), backslashes, ``$(…)``, backticks, ``${…}``, ``$((…))``,
heredocs (quoted or not, ``<<-``) and comments.  It follows bash where bash surprises, each case
a test judged by bash (``tests/process/test_shell_lex.py``): a backtick ends at the next backtick,
quotes or not; ``${…}`` counts no brackets, and ``((…))`` reads no ``${…}``; a ``case`` pattern's
``)`` does not end a ``$(…)``; a heredoc's delimiter line ends its body whatever is open in it;
``$$'`` is the pid and a quote; the word after ``>&`` is expanded twice; a syntax error inside
``NAME=( … )`` is skipped and bash goes on at a later line.  Where the word splitter meets a
substitution it asks the same walk where it ends (:func:`paren_end`, :func:`backtick_end`), so the
two never disagree on nesting.

Every reading is linear in the text's length, nesting included: the frame stack keeps the index of
each kind of frame the walk asks about (so a step costs the same 4,000 frames deep), a ``$((`` inside
a ``$((`` is looked up in the walk that passed it rather than walked again, a ``$(…)`` body read again (the
guard reads each as code, at every level it follows) carries the ends its text's walk found (:class:`Ends`)
and looks its own substitutions' ends up there, and every step is counted
against a budget linear in the text (:mod:`.work`) -- text that would need more is refused, never read
halfway.  And it is quick (every ``%exec`` reads its cell): plain stretches of words, operators and
blanks are split by regex at once; a run of one opener (``$(``, ``${``, ``$((``, ``"$(``, ``(`` or ``)``
in arithmetic, ``)`` closing ``( … )``) is one step, counted as one per opener; a frame knows its stops
from when it is opened; a plain backtick body is passed at once.  No regex is asked to look further than
what it consumes, so none is quadratic where no count of steps would see it.

It follows quoting and nesting, not the grammar: odd text (an unclosed quote, an unbalanced
parenthesis) is read as far as it goes, never raised on.  Hand-written on purpose: measured against
tree-sitter-bash on the templating, guard and parse corpora (``tests/benchmarks/shell_front_end.md``),
an error-tolerant parser got cases wrong that this walk gets right.

Over 400 lines, on purpose: it is the one place shell text is read; split, it would be three
readings again.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, SupportsIndex

from .scanning import Context, Scanner
from .work import bounded, step, uncollected

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["REDIRECTS", "STDIN_REDIRECTS", "WRITES", "Op", "ShellScanner", "Word", "ansi_c_quoting", "backtick_end",
           "live_substitutions", "paren_end", "source_spans", "source_tokens", "tokenize", "unescape"]

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


# -- the walk: one frame per quote, substitution, heredoc or comment open at a position ----------------
class _Frame:
    """One thing open at a position.  A plain class whose defaults live on it: a walk opens one at nearly every
    step, and setting two fields costs a third of setting ten."""

    kind: str            # code, dquote, squote, ansi, heredoc, heredoc-quoted, arith, param, comment, backtick
    closer: str          # what ends a code frame: "" (top), ")" for $( … ), "`", "}" for ${ … }
    depth = 0            # open parentheses inside an arith frame
    cases = 0            # open "case … esac" inside a $( … ) frame
    loop = False         # an arithmetic "for (( …; …; … ))", whose ";" are its own
    delimiter = ""
    strip_tabs = False
    in_dquote = False
    array = False        # a code frame that is a compound assignment, NAME=( … ): words only
    start = -1           # where the text of a "$((" frame starts: its end is noted in the walk's arith_log
    opened = -1          # where the text of a "( … )" frame starts, when its end is noted in the walk's ends
    bare = False         # an arith frame opened by "((": its start is given only when it is clean
    clean = False        # an arith frame a walk begun inside it would read alike (its end is shared with bodies)
    #: Set when the frame is opened (what is below it cannot change while it is open): the characters
    #: after which the walk has something to decide in it, and for a ${…} (or a '…' in one) the index of
    #: the innermost frame below that is neither (``outer``) and that is not a ${…} (``outer_only``).
    stops: re.Pattern[str]
    outer = -1
    outer_only = -1

    def __init__(self, kind: str, closer: str = "", *, loop: bool = False, delimiter: str = "",
                 strip_tabs: bool = False, in_dquote: bool = False, array: bool = False, start: int = -1) -> None:
        self.kind, self.closer = kind, closer
        if loop:
            self.loop = True
        if delimiter:
            self.delimiter = delimiter
        if strip_tabs:
            self.strip_tabs = True
        if in_dquote:
            self.in_dquote = True
        if array:
            self.array = True
        if start >= 0:
            self.start = start


# The characters after which a scanner in each frame has something to decide.
_SHELL_STOPS = {
    "code": re.compile(r"[\\'\"`$#()<>\n]"),
    "param": re.compile(r"[\\'\"`$}]"),  # inside ${…} only quotes, substitutions and its "}" count
    "array": re.compile(r"[\\'\"`$#()<>;&|\n]"),
    "dupword": re.compile(r"[\\'\"`$\s;&|<>()]"),
    "dquote": re.compile(r'[\\"`$]'),
    "squote": re.compile(r"'"),
    "ansi": re.compile(r"[\\']"),
    "heredoc": re.compile(r"[\\`$\n]"),
    "heredoc-quoted": re.compile(r"\n"),
    "arith": re.compile(r"[\\'\"`$()\];]"),
    "comment": re.compile(r"\n"),
    "psquote": re.compile(r"[\\'\"`$]"),
}
#: Frames where a backtick that ends no `…` does something other than open one.
_QUIET_BACKTICK = frozenset({"squote", "ansi", "comment", "heredoc-quoted", "psquote"})
#: Frames where a backslash is an ordinary character (inside backticks, ``\\\\`` is still one backslash).
_LITERAL_BACKSLASH = frozenset({"squote", "heredoc-quoted", "comment"})
_CODE_WORDS = re.compile(r"[\\'\"`$#()<>\n]|\bcase(?=[ \t])|\besac(?=[\s;)&|]|$)")
_DOLLAR_QUOTE, _ESCAPED = re.compile(r"\$(?=['\"])"), re.compile(r"\\(.)")  # a heredoc's word, unquoted
_QUOTES = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"")
_HEREDOC_OP = re.compile(r"<<(-?)[ \t]*((?:[^\s;&|<>()'\"\\]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.)+)")
# a keyword after which a command (so "case") can stand
#: Runs of one opener (each opens the same frame inside the last): read at once.
_ARITH_RUN, _PAREN_RUN = re.compile(r"(?:\$\(\()+"), re.compile(r"(?:\$\((?!\())+")
_PARAM_RUN = re.compile(r"(?:\$\{)+")
_QUOTED_PAREN_RUN = re.compile(r'(?:"\$\((?!\())+')
#: A ``$( … )`` body with nothing in it that the walk stops at (no quote, escape, substitution, bracket,
#: redirection, comment or newline), up to its ``)``.
_SIMPLE_BODY = re.compile(r"[^\\'\"`$#()<>\n]*\)")
#: ``(( … ))`` with nothing in it that arithmetic's walk stops at (no bracket, quote, substitution, escape or ``;``).
_SIMPLE_ARITHMETIC = re.compile(r"\(\([^\\'\"`$();\]]*\)\)")
_OPENS, _CLOSES = re.compile(r"\(+"), re.compile(r"\)+")
_FOR_BEFORE = re.compile(r"(?<![\w$])for[ \t]*$")  # read in the few characters before a "((" alone
_KEYWORD_BEFORE = re.compile(r"(?<![\w$])(?:then|do|else|elif|if|while|until|time)$")
#: The word before a ``(`` that makes it a compound assignment: ``NAME=(``, ``NAME+=(``, ``NAME[k]=(``.
_ARRAY_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\n]*\])?\+?=")
_WORD_START_BEFORE = frozenset(" \t\n;&|(<>")
_WORD_BEFORE = frozenset(" \t\n;&|(")  # not ")": $(…)#x is one word


#: What the walk asks of the frames below the top, each class kept as the stack indices of the frames it
#: holds, so that asking costs the same however deep the nesting is (4,000 open ``$(`` cost the square of
#: that when every step looked through them all).  (The innermost frame that is not a ``${…}`` is kept on
#: the ``${…}`` frames themselves, and ``)``-closed frames are only counted.)
_CLASSES: dict[str, Callable[[str, str], bool]] = {
    "backtick": lambda kind, closer: kind == "backtick",
    "plain-backtick": lambda kind, closer: kind == "backtick" and closer == "`",
    "heredoc": lambda kind, closer: kind == "heredoc",
    "any-heredoc": lambda kind, closer: kind in ("heredoc", "heredoc-quoted"),
    "dquote-or-param": lambda kind, closer: kind in ("dquote", "param"),
    "param": lambda kind, closer: kind == "param",
    "dupword": lambda kind, closer: kind == "dupword",
}
_PARAMS = ("param", "psquote")
_Kind = tuple[tuple[str, ...], tuple[tuple[re.Pattern[str], ...], ...]]
#: By a frame's kind and closer: its classes, and its stops by whether it stands in backticks and in a heredoc body.
_KINDS: dict[tuple[str, str], _Kind] = {}


def _kind(kind: str, closer: str) -> _Kind:
    classes = tuple(name for name, holds in _CLASSES.items() if holds(kind, closer))
    stops = tuple(tuple(_stops_for(kind, closer, False, ticks, body) for body in (False, True))
                  for ticks in (False, True))
    _KINDS[kind, closer] = classes, stops
    return classes, stops


class _Stack(list[_Frame]):
    """The frames open at a position, with the index of every frame of each class in :data:`_CLASSES`."""

    def __init__(self, frames: Iterable[_Frame] = ()) -> None:
        super().__init__()
        self.at: dict[str, list[int]] = {"backtick": [], "plain-backtick": [], "heredoc": [], "any-heredoc": [],
                                         "dquote-or-param": [], "param": [], "dupword": []}  # (_CLASSES, spelled out)
        #: The unquoted heredocs open, by the line that ends them: ``(delimiter, strip_tabs)`` → their indices.
        self.ended_by: dict[tuple[str, bool], list[int]] = {}
        self.parens = 0  # frames closed by ")"
        self.extend(frames)

    def append(self, frame: _Frame) -> None:
        kind, closer, at, index = frame.kind, frame.closer, self.at, len(self)
        classes, stops = _KINDS.get((kind, closer)) or _kind(kind, closer)
        heredocs_below = bool(at["heredoc"])
        for name in classes:
            at[name].append(index)
        if kind == "heredoc":
            self.ended_by.setdefault((frame.delimiter, frame.strip_tabs), []).append(index)
        elif kind in _PARAMS:
            below = self[index - 1]
            frame.outer = below.outer if below.kind in _PARAMS else index - 1
            frame.outer_only = below.outer_only if below.kind == "param" else index - 1
        if frame.array:
            frame.stops = _stops_for(kind, closer, True, bool(at["backtick"]), heredocs_below)
        else:
            frame.stops = stops[bool(at["backtick"])][heredocs_below]
        if closer == ")":
            self.parens += 1
        list.append(self, frame)

    def append_run(self, frames: list[_Frame]) -> None:
        """Open ``frames``, each inside the one before, all of one kind (not a heredoc): a run of ``$(`` read at once.

        What is below each but the first is the same as below the first, plus frames of its kind (none a
        backtick or a heredoc that was not already there): each has the first's stops and outer frames.
        """
        first, rest = frames[0], frames[1:]
        self.append(first)
        index, at = len(self), self.at
        for name in _KINDS[first.kind, first.closer][0]:
            at[name].extend(range(index, index + len(rest)))
        for frame in rest:
            frame.stops, frame.outer, frame.outer_only = first.stops, first.outer, first.outer_only
        if first.closer == ")":
            self.parens += len(rest)
        list.extend(self, rest)

    def append_plain(self, frames: list[_Frame]) -> None:
        """Open ``frames``, each inside the one before, none a backtick, a heredoc, a ``${…}`` or ``NAME=(``: what
        is below each is what is below the first plus frames that change no stops (a mixed run read at once)."""
        at, index = self.at, len(self)
        ticks, bodies = bool(at["backtick"]), bool(at["heredoc"])
        for frame in frames:
            classes, stops = _KINDS.get((frame.kind, frame.closer)) or _kind(frame.kind, frame.closer)
            frame.stops = stops[ticks][bodies]
            for name in classes:
                at[name].append(index)
            index += 1
        self.parens += sum(frame.closer == ")" for frame in frames)
        list.extend(self, frames)

    def extend(self, frames: Iterable[_Frame]) -> None:
        for frame in frames:
            self.append(frame)

    def pop(self, index: SupportsIndex = -1) -> _Frame:
        assert index == -1, "only the top frame is ever popped"
        frame = list.pop(self)
        at = self.at
        for name in _KINDS[frame.kind, frame.closer][0]:
            at[name].pop()
        if frame.closer == ")":
            self.parens -= 1
        if frame.kind == "heredoc":
            self.ended_by[frame.delimiter, frame.strip_tabs].pop()
        return frame

    def cut(self, at: int) -> None:
        """Close every frame from index ``at`` up (each was opened once: closing them all is linear overall)."""
        while len(self) > at:
            self.pop()

    def innermost(self, name: str) -> int:
        """The index of the innermost frame of class ``name``, or -1."""
        indices = self.at[name]
        return indices[-1] if indices else -1

    def number(self, name: str, below_top: bool = False) -> int:
        """How many frames of class ``name`` are open (not counting the top frame with ``below_top``)."""
        indices = self.at[name]
        return len(indices) - (below_top and bool(indices) and indices[-1] == len(self) - 1)

    def outermost_code(self) -> int:
        """The index of the innermost frame that is neither a ``${…}`` nor a ``'…'`` in one (the top, mostly)."""
        top = self[-1]
        return top.outer if top.kind in _PARAMS else len(self) - 1


@functools.cache
def _stops_for(kind: str, closer: str, array: bool, in_backticks: bool, in_heredoc_body: bool) -> re.Pattern[str]:
    """A frame's stops, and more where something encloses it.

    Inside backticks every frame also stops at a backtick (which may end them all) and a backslash
    (``\\```); inside a heredoc body at every newline (a delimiter line ends the body, whatever is open).
    """
    if array:
        name = "array"
    elif kind == "code" and closer == ")":
        name = "case"  # inside $( … ) a case pattern's ")" must not end it
    else:
        name = "code" if kind == "backtick" else kind
    extra = ([r"[`\\]"] if in_backticks else []) + ([r"\n"] if in_heredoc_body else [])
    pattern = _CODE_WORDS.pattern if name == "case" else _SHELL_STOPS[name].pattern
    return re.compile("|".join([*extra, pattern]))


def _word_start(text: str, i: int) -> int:
    """Where the word that ends at ``i`` starts: after the last blank, ``;``, ``&``, ``|`` or ``(`` before it.

    Read back one character at a time, never past the previous ``(``: asked at each ``(``, the words
    read back are disjoint, so all of them cost one pass over the text (``rfind`` from the start did not).
    """
    start = i
    while start and text[start - 1] not in _WORD_BEFORE:
        start -= 1
    return start


class ShellScanner(Scanner):
    """The walk: reports the context at each template's offset (``run``), and is what
    :func:`paren_end` and :func:`backtick_end` step through from inside a substitution."""

    def __init__(self, text: str, spans: list[tuple[int, int]], ansi_c: bool | None) -> None:
        super().__init__(text, spans)
        self.ansi_c = ansi_c
        self.stack = _Stack([_Frame("code")])
        self.pending: collections.deque[_Frame] = collections.deque()  # heredocs whose bodies start at the next newline
        self.broken = False  # past a syntax error bash recovers from: where it goes on is not known here
        #: Where each ``$((`` met so far ends (the index after it) and whether bash read it as a ``$( (…); … )``
        #: command substitution: noted once in one walk, so that nothing inside it need be walked again.
        self.arith_log: dict[int, tuple[int, bool]] = {}
        #: The same, for clean frames (offset by ``base``), shared with the text's bodies (``Ends.arith``).
        self.shared: dict[int, tuple[int, bool]] | None = None
        #: Steps taken at once beyond one: a run of k "(" or "$(" read in one step counts as k (a walk begun
        #: again over the same nesting must cost what it would one at a time, so the budget still bounds it).
        self.jumped = 0
        #: Where each ``( … )`` the walk opened ends (the index of its ``)``, or :data:`UNCLOSED`), by where its text
        #: starts, offset by ``base`` -- noted only when asked (see :func:`paren_end`): ``None``, not noted.
        self.ends: dict[int, int] | None = None
        self.base = 0
        #: Frames below this index are read here otherwise than a walk begun inside them would read them (a
        #: backtick opened in them took a ``"…"`` below them for its own): their ends are not noted.
        self.tainted_upto = 0

    def _paren(self, start: int) -> _Frame:
        """A ``( … )`` frame whose text starts at ``start``, its end noted when the walk notes ends."""
        frame = _Frame("code", ")")
        if self.ends is not None:
            self._note_run([frame], start, 1)
        return frame

    def _note_run(self, frames: list[_Frame], first: int, stride: int) -> None:
        """Note where the text of each of ``frames`` starts (``first``, then every ``stride`` on), if a walk begun
        inside one would read it as this one does: nothing below it that a walk begun there would not see (a
        backtick, a heredoc's body or one yet to come)."""
        stack = self.stack
        if stack.at["backtick"] or stack.at["any-heredoc"] or self.pending:
            return
        for index, frame in enumerate(frames):
            frame.opened = first + index * stride
        self.tainted_upto = min(self.tainted_upto, len(stack))  # what was tainted at this index was closed since

    def _ended(self, frame: _Frame, at: int) -> None:
        """A noted frame closed by the ``)`` at ``at`` (already popped): note its end, unless it was tainted."""
        below = len(self.stack)
        if below < self.tainted_upto:
            self.tainted_upto = below
        else:
            self.ends[self.base + frame.opened] = self.base + at  # type: ignore[index]

    def _note_bare(self, frame: _Frame, start: int) -> None:
        """Note where the text of a ``((`` frame starts (its end then goes in ``arith_log``), as :meth:`_note_run`."""
        if self._clean_below():
            frame.start, frame.bare, frame.clean = start, True, True

    def _clean_below(self) -> bool:
        """Whether a frame opened now is read as a walk begun inside it would read it (see :meth:`_note_run`)."""
        stack = self.stack
        if stack.at["backtick"] or stack.at["any-heredoc"] or self.pending:
            return False
        self.tainted_upto = min(self.tainted_upto, len(stack))  # what was tainted at this index was closed since
        return True

    def _arith_ended(self, frame: _Frame, end: int, command: bool) -> None:
        """An arith frame (just popped) ends before ``end``: note it in the walk's log (a ``((`` frame only if clean)
        and, clean, in the log shared with the text's bodies."""
        below = len(self.stack)
        clean = frame.clean and below >= self.tainted_upto
        if frame.clean and not clean:
            self.tainted_upto = below
        if clean or not frame.bare:
            self.arith_log[frame.start] = (end, command)
        if clean and self.shared is not None:
            self.shared[self.base + frame.start] = (self.base + end, command)

    def _push_backtick(self, closer: str) -> None:
        """Open a backtick frame; one that takes a ``"…"`` below it for its own taints the frames open (a walk
        begun inside one of them would not see that quote)."""
        in_dquote = self._in_dquote()
        if in_dquote:
            self.tainted_upto = len(self.stack)
        self.stack.append(_Frame("backtick", closer, in_dquote=in_dquote))

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
            return Context("unparsed", backticks=ticks)
        top = frames[-1]
        kind = top.kind
        twice = frames.number("dupword") > 0
        ends = tuple((frames[at].delimiter, frames[at].strip_tabs) for at in frames.at["any-heredoc"])
        if kind in ("backtick", "dupword"):
            kind = "code"
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
                self.stack.pop()
            else:  # code, ${…}, arithmetic, the word after >&: "…" opens
                self.stack.append(_Frame("dquote"))
            return i + 1
        if ch == "'" and kind not in ("param", "arith"):
            if kind in ("squote", "ansi", "psquote"):
                self.stack.pop()
            else:
                self.stack.append(_Frame("squote"))
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
        if not at or not self.stack[at].in_dquote or self.stack.innermost("param") > at:
            return False
        if kind == "dquote" and len(self.stack) - 1 > at:
            self.stack.pop()
            return True
        if kind in ("code", "backtick", "dupword"):
            self.stack.append(_Frame("dquote"))
            return True
        return False

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
            self.stack.cut(ticks[-1])
            return True
        return False

    def _escaped_backtick(self, i: int) -> int:
        """Inside `…`, a \\` opens (or closes) a nested command substitution: one more layer.

        Like a plain backtick one level up, it closes the nested one whatever was opened inside it;
        inside a quote directly in the outer `…` it is a quoted backtick, nothing more.
        """
        at = self._innermost_backtick()
        if self.stack[at].closer == "\\`":
            self.stack.cut(at)
        elif self.stack[-1].kind in ("code", "backtick", "dquote", "param", "dupword", "heredoc"):
            self._push_backtick("\\`")
        return i + 2

    def _in_dquote(self) -> bool:
        """Whether a backtick opened here stands in "…": bash then reads ``\\"`` in it as ``"``.

        Not inside a ``${…}`` there (``"${x:-`…`}"``): bash keeps ``\\"`` as written in that one.
        """
        at = self.stack.innermost("dquote-or-param")
        return at >= 0 and self.stack[at].kind == "dquote"

    def _dollar(self, i: int) -> int:
        text = self.text
        nxt = text[i + 1:i + 3]
        after = nxt[:1]
        # a run of "$((", "$(" or "${" opens the same frame in each (what decides it is the text alone)
        if after == "(":
            if nxt == "((":
                end = _ARITH_RUN.match(text, i).end()  # type: ignore[union-attr]
                frames = [_Frame("arith", start=start) for start in range(i + 3, end + 1, 3)]
                if self.shared is not None and self._clean_below():
                    for frame in frames:
                        frame.clean = True
                self.stack.append_run(frames)
                self.jumped += (end - i) // 3 - 1
                return end
            quoted_run = _QUOTED_PAREN_RUN.match(text, i + 2)
            if quoted_run:  # "$( again and again: "…" then $( … ) in each
                end = quoted_run.end()
                units = (end - i - 2) // 3
                self.stack.append(self._paren(i + 2))
                frames = [frame for _ in range(units) for frame in (_Frame("dquote"), _Frame("code", ")"))]
                if self.ends is not None:
                    self._note_run(frames[1::2], i + 5, 3)
                self.stack.append_plain(frames)
                self.jumped += 2 * units
                return end
            if not text.startswith("$(", i + 2):
                self.stack.append(self._paren(i + 2))
                return i + 2
            end = _PAREN_RUN.match(text, i).end()  # type: ignore[union-attr]
            frames = [_Frame("code", ")") for _ in range(i, end, 2)]
            if self.ends is not None:
                self._note_run(frames, i + 2, 2)
            self.stack.append_run(frames)
            self.jumped += (end - i) // 2 - 1
            return end
        if after == "{":
            if self.stack[-1].kind == "arith":  # in arithmetic bash counts parentheses only: ${x/a/(} opens one
                return i + 2
            end = _PARAM_RUN.match(text, i).end()  # type: ignore[union-attr]
            self.stack.append_run([_Frame("param", "}") for _ in range(i, end, 2)])
            self.jumped += (end - i) // 2 - 1
            return end
        if after == "$":
            return i + 2  # $$, the shell's pid: a "$" after it starts nothing (not $'…', not $(…))
        if after == "[":  # $[ … ], bash's old arithmetic
            self.stack.append(_Frame("arith", "]"))
            return i + 2
        if after not in ("'", '"'):
            return i + 1
        top = self.stack[-1].kind
        quoted = top in ("dquote", "heredoc", "psquote") or self._quoted_param(self.stack[-1])
        if after == "'" and quoted:
            return i + 1  # "$" then a plain "'" (bash reads no $'…' there)
        if after == "'":
            if self.ansi_c is False:
                return i + 1  # dash: "$" then an ordinary '…'
            self.stack.append(_Frame("ansi"))
            return i + 2
        if not quoted:  # $"…": "…" translated for the locale
            self.stack.append(_Frame("dquote"))
            return i + 2
        return i + 1

    def _arith(self, frame: _Frame, i: int, ch: str) -> int:
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
                self.stack.pop()
                if frame.start >= 0:
                    self._arith_ended(frame, i + 2, False)
                return i + 2
        elif ch == "]" and frame.closer == "]" and not frame.depth:
            self.stack.pop()
        elif ch == ";" and not frame.loop and frame.closer != "]":
            # no arithmetic holds a ";": bash read "$((" / "((" as two subshells, "( (…); …)"
            self.stack.pop()  # filed again below as what it now is
            frame.kind, frame.closer, frame.depth = "code", ")", 0
            self.stack.append(frame)
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        return i + 1

    def _command_position(self, i: int) -> bool:
        """Whether a word at ``i`` stands where a command (so a keyword) can: after ``;``, ``&``,
        ``|``, ``(``, a newline, or at the start of a ``$( … )``."""
        j = i
        while j > 0 and self.text[j - 1] in " \t":
            j -= 1
        if j == 0 or self.text[j - 1] in ";&|(\n{!" or self.text.startswith("$(", j - 2):
            return True
        return _KEYWORD_BEFORE.search(self.text, max(0, j - 6), j) is not None

    def _quoted_param(self, frame: _Frame) -> bool:
        """A ``${…}`` inside ``"…"`` or a heredoc: bash reads a ``'`` there as a plain character."""
        if frame.kind != "param":
            return False
        outer = self.stack[frame.outer_only]
        return outer.kind in ("dquote", "heredoc")

    def _param(self, frame: _Frame, i: int, ch: str) -> int:
        """Inside ``${…}`` bash pairs only quotes and substitutions: the first other ``}`` ends it.

        No bracket is counted there (``${x:-(}`` and ``${x:-{a}`` are whole), no ``#`` starts a
        comment and no ``<<`` a heredoc.
        """
        if ch == "'":
            # inside "${…}" bash pairs single quotes (a "}" between them does not close it) but
            # reads them as plain characters: the text between is as live as the "…" around it
            self.stack.append(_Frame("psquote" if self._quoted_param(frame) else "squote"))
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        elif ch == "}":
            self.stack.pop()
        return i + 1

    def _code(self, frame: _Frame, i: int, ch: str) -> int:
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
        at_word_start = i == 0 or text[i - 1] in _WORD_START_BEFORE
        if ch in "ce":  # the words case / esac (only $( … ) frames stop at them)
            if ch == "c" and self._command_position(i):
                frame.cases += 1
            elif ch == "e" and frame.cases and (i == 0 or text[i - 1] in " \t\n;"):
                frame.cases -= 1  # an empty "case x in esac" too
            return i + 4
        if ch == "'":
            self.stack.append(_Frame("squote"))
        elif ch == '"':
            self.stack.append(_Frame("dquote"))
        elif ch == "#" and at_word_start:
            self.stack.append(_Frame("comment"))  # to the newline, or to the backtick that ends a `…`
        elif ch == "(":
            double = text.startswith("((", i)
            before = text[max(0, i - 8):i] if double else ""
            after_for = "for" in before and bool(_FOR_BEFORE.search(before))
            if double and (at_word_start or after_for or _KEYWORD_BEFORE.search(text, max(0, i - 6), i)):
                simple = _SIMPLE_ARITHMETIC.match(text, i)
                if simple and simple.end() < self.horizon and "\n" not in simple.group():
                    return simple.end()  # nothing in it stops the walk, and no template stands in it
                frame = _Frame("arith", loop=after_for)
                if not after_for:
                    self._note_bare(frame, i + 2)
                self.stack.append(frame)
                return i + 2
            # a subshell, a group, a function's () or a case's (pattern), or NAME=( … ): its own frame
            array = i > 0 and text[i - 1] == "=" and bool(_ARRAY_ASSIGNMENT.fullmatch(text, _word_start(text, i), i))
            self.stack.append(_Frame("code", closer=")", array=True) if array else self._paren(i + 1))
        elif ch == ")":
            return self._close_parens(frame, i)
        elif ch == "<":
            return self._heredoc_operator(i)
        elif ch == ">":
            return self._duplicating(i)
        elif ch == "\n" and self.pending:
            return self._heredoc_line(None, i + 1)
        return i + 1

    def _close_parens(self, frame: _Frame, i: int) -> int:
        """At ``)`` in code: it ends the frame if that is a ``( … )`` (not in a case pattern), and each ``)``
        right after it the next one while that is one too (a run read at once); where to go on."""
        stack, text, start = self.stack, self.text, i
        while frame.closer == ")" and not frame.cases and frame.kind == "code":  # a case pattern's ")" is not the end
            stack.pop()
            if frame.opened >= 0:
                self._ended(frame, i)
            if frame.start >= 0:  # a "$((" that a ";" made a command substitution
                self._arith_ended(frame, i + 1, True)
            i += 1
            if not text.startswith(")", i):
                return i
            frame = stack[-1]
            self.jumped += 1
        return i if i > start else i + 1  # (a ")" the frame now on top does not end: its business)

    def _duplicating(self, i: int) -> int:
        """At ``>``: a ``>&`` or ``1>&`` opens the word bash may expand twice (see :func:`_duplicated_word`)."""
        text = self.text
        if not text.startswith(">&", i):
            return i + 1
        digits = i
        while digits and text[digits - 1].isdigit():
            digits -= 1
        fd_given = digits < i and (digits == 0 or text[digits - 1] in _WORD_START_BEFORE)
        if fd_given and text[digits:i] != "1":
            return i + 2  # 2>&1, 3>&-: another descriptor, read once
        after = i + 2
        while text.startswith((" ", "\t"), after):
            after += 1
        self.stack.append(_Frame("dupword"))
        return after

    def _duplicated_word(self, i: int, ch: str) -> int:
        """Inside the word after ``>&``: quotes nest as anywhere; a blank or an operator ends the word.

        When that word is not a number (``>&file``, meaning ``&>file``), bash expands it a second time,
        so ``>&'$(cmd)'`` runs ``cmd``: every place in it is reported with ``expanded_twice``.
        """
        if ch == "'":
            self.stack.append(_Frame("squote"))
            return i + 1
        if ch == '"':
            self.stack.append(_Frame("dquote"))
            return i + 1
        self.stack.pop()
        return i  # the blank or operator is the enclosing frame's business

    def _heredoc_operator(self, i: int) -> int:
        text = self.text
        if text.startswith("<<<", i):
            return i + 3
        match = _HEREDOC_OP.match(text, i)
        if match is None:
            return i + 1
        word = _DOLLAR_QUOTE.sub("", match.group(2))  # $'EOF' ends at EOF, as bash reads it
        quoted = any(c in word for c in "'\"\\")
        delimiter = _ESCAPED.sub(r"\1", _QUOTES.sub(lambda m: m.group(1) or m.group(2) or "", word))
        self.pending.append(_Frame("heredoc-quoted" if quoted else "heredoc", delimiter=delimiter,
                                   strip_tabs=bool(match.group(1))))
        return match.end()

    def _heredoc_line(self, current: _Frame | None, start: int) -> int:
        """At the start of a line: end the current heredoc at its delimiter line, open the next pending one."""
        text = self.text
        if current is not None:
            line_end = text.find("\n", start)
            line = text[start:len(text) if line_end < 0 else line_end]
            line = line.lstrip("\t") if current.strip_tabs else line
            in_substitution = self.stack.parens - (self.stack[-1].closer == ")") > 0
            if in_substitution and line.startswith(current.delimiter + ")"):
                self.stack.pop()  # bash also ends the body at "EOF)" inside $( … ); the ")" is code
                return start + (len(text[start:]) - len(text[start:].lstrip("\t"))) + len(current.delimiter)
            if line != current.delimiter:
                return start
            self.stack.pop()
            start = len(text) if line_end < 0 else line_end + 1
        if self.pending:
            self.stack.append(self.pending.popleft())
            return self._heredoc_line(self.stack[-1], start) if self._at_delimiter(start) else start
        return start

    def _body_ends(self, i: int) -> int | None:
        """At a newline inside something open in a heredoc body: does the next line end that body?

        Bash reads a heredoc's body line by line up to its delimiter line before it reads anything
        in it, so the delimiter ends the body whatever quote or substitution is open there (only a
        backslash before the newline joins the lines).  Returns where to go on, or ``None``.
        """
        if not self.stack.number("heredoc", below_top=True):
            return None
        escapes = i
        while escapes and self.text[escapes - 1] == "\\":
            escapes -= 1
        if (i - escapes) % 2:
            return None
        line_end = self.text.find("\n", i + 1)
        line = self.text[i + 1:len(self.text) if line_end < 0 else line_end]
        ends = self.stack.ended_by
        # the outermost body this line ends (a heredoc's delimiter line is read as written, or less its tabs)
        found = [ends[key][0] for key in ((line, False), (line.lstrip("\t"), True)) if ends.get(key)]
        at = min(found, default=len(self.stack) - 1)
        if at >= len(self.stack) - 1:
            return None
        frame = self.stack[at]
        self.stack.cut(at + 1)
        return self._heredoc_line(frame, i + 1)

    def _at_delimiter(self, start: int, frame: _Frame | None = None) -> bool:
        frame = frame or self.stack[-1]
        line_end = self.text.find("\n", start)
        line = self.text[start:len(self.text) if line_end < 0 else line_end]
        return (line.lstrip("\t") if frame.strip_tabs else line) == frame.delimiter


# -- where a substitution ends: the same walk, started inside it ---------------------------------------
def _close(text: str, start: int, *frames: _Frame, log: dict[int, tuple[int, bool]] | None = None,
           ends: Ends | None = None) -> int | None:
    """The index after the closer of the innermost of ``frames`` (opened just before ``start``), or ``None``.

    ``log``: where to note the end of every ``$((`` the walk passes (see :func:`_arith_or_command`); ``ends``:
    where to note the end of every ``( … )`` (see :func:`paren_end`).
    """
    walk = ShellScanner(text, [], ansi_c=True)
    if log is not None:
        walk.arith_log = log
    if ends is not None:
        walk.ends, walk.base, walk.shared = ends.found, ends.base, ends.arith
    stack, walk_step = walk.stack, walk._step
    stack.extend(frames)
    depth, pos, taken = len(stack), start, 0
    while True:
        stop = stack[-1].stops.search(text, pos)
        if stop is None:
            step(taken + walk.jumped)
            _arith_open(walk, log, ends)
            if ends is not None and ends.whole:  # open to the end of the text: open in it, whatever follows
                ends.unclosed(stack[walk.tainted_upto:])
            return None
        pos = walk_step(stop.start())
        taken += 1  # counted here, told once: one walk is linear; what the count bounds is walks begun again
        if len(stack) < depth:
            step(taken + walk.jumped)
            return pos


#: The end noted for a ``( … )`` still open where the text read ends.
UNCLOSED = sys.maxsize


class Ends:
    """Where the ``( … )`` of one text end, by where their text starts, as the walks over it found them: shared by the
    readings of the substitutions in it (each a :class:`Body`), so that none walks again what one walked.

    A walk's reading of a ``( … )`` depends only on the text from its start on (what it looks back at stops at
    its ``(``), so where one ends is the same read from the whole text or from a body cut out of it -- up to
    the body's end: ``found`` holds indices in the text all bodies were cut from (``base`` is where the text
    read now starts in it), and an end past a body's is no end in it.  ``whole``: the text read now runs to
    the end of that text, so what is still open at its end is open there too.
    """

    def __init__(self, found: dict[int, int] | None = None, base: int = 0, whole: bool = True,
                 arith: dict[int, tuple[int, bool]] | None = None) -> None:
        self.found = {} if found is None else found
        self.base, self.whole = base, whole
        #: Where each arithmetic ends and whether it became a command, the same way (see :func:`_arith_or_command`).
        self.arith: dict[int, tuple[int, bool]] = {} if arith is None else arith

    def unclosed(self, frames: Iterable[_Frame]) -> None:
        for frame in frames:
            if frame.opened >= 0:
                self.found[self.base + frame.opened] = UNCLOSED

    def body(self, text: str, start: int, end: int) -> Body:
        """``text[start:end]`` (a substitution's body in the text read now) as a :class:`Body` sharing these ends."""
        body = Body(text[start:end])
        body.ends = Ends(self.found, self.base + start, self.whole and end >= len(text), self.arith)
        return body


class Body(str):
    """The text of a substitution, cut from the text it was read in, with the ends that reading found (:class:`Ends`).
    """

    ends: Ends | None = None


def _arith_open(walk: ShellScanner, log: dict[int, tuple[int, bool]] | None, ends: Ends | None) -> None:
    """Note the arithmetic still open where the walk ran out of text: it never ends (in the log shared with bodies,
    only when the text read runs to the end of the text they were cut from)."""
    shared = ends.arith if ends is not None and ends.whole else None
    if log is None and shared is None:
        return
    end = len(walk.text) + 1
    for index, frame in enumerate(walk.stack):
        if frame.start < 0:
            continue
        clean = frame.clean and index >= walk.tainted_upto
        if log is not None and (clean or not frame.bare):
            log.setdefault(frame.start, (end, frame.kind != "arith"))
        if shared is not None and clean:
            shared.setdefault(walk.base + frame.start, (walk.base + end, frame.kind != "arith"))


def paren_end(text: str, start: int, ends: Ends | None = None) -> int:
    """The index of the ``)`` closing the ``(`` just before ``start`` (quotes respected), or the end of ``text``.

    ``ends``: where the ``( … )`` of ``text`` end, as far as known -- looked up, and noted by the walk.
    """
    if ends is not None:
        found = ends.found.get(ends.base + start)
        if found is not None:
            step()
            return min(found - ends.base, len(text))
    simple = _SIMPLE_BODY.match(text, start)
    if simple and "case" not in simple.group():  # $(date), $(wc -l f): its first ")" ends it
        step()
        return simple.end() - 1
    frame = _Frame("code", closer=")")
    if ends is not None:
        frame.opened = start
    end = _close(text, start, frame, ends=ends)
    return len(text) if end is None else end - 1


def _backtick(text: str, start: int) -> tuple[str, int]:
    """The body of the backticks opened just before ``start`` (its own escapes removed), and the index after them."""
    tick = text.find("`", start)
    if tick >= 0 and "\\" not in text[start:tick] and "<<" not in text[start:tick]:
        return text[start:tick], tick + 1  # nothing in it can hide a backtick: no escape, no heredoc's word
    end = _close(text, start, _Frame("backtick", closer="`"))
    body = text[start:] if end is None else text[start:end - 1]
    return re.sub(r"\\([`$\\])", r"\1", body), len(text) + 1 if end is None else end


def backtick_end(text: str, start: int) -> int:
    """The index after the backtick closing the one just before ``start``."""
    return _backtick(text, start)[1]


def _arith_or_command(text: str, start: int, log: dict[int, tuple[int, bool]],
                      ends: Ends | None = None) -> tuple[int, bool]:
    """The index of the last ``)`` of the ``$((`` opened just before ``start`` (or the end of ``text``), and
    whether bash reads it as a command substitution: ``$((a); b)`` is ``$( (a); b )``, which runs ``a`` and ``b``.

    Bash counts parentheses there (``${x/a/(}`` opens one).  ``log`` holds what earlier walks of ``text``
    found: the walk that reads one ``$((`` notes where each ``$((`` inside it ends, so text nested
    thousands deep is walked once, not once per level.  ``ends`` as for :func:`paren_end`.
    """
    found = log.get(start) or _arith_known(text, start, ends)
    if found is None:
        frame = _Frame("arith", start=start)
        if _close(text, start, frame, log=log, ends=ends) is None:
            log[start] = (len(text) + 1, frame.kind != "arith")
        found = log[start]
    end, command = found
    return end - 1, command


def _arith_known(text: str, start: int, ends: Ends | None) -> tuple[int, bool] | None:
    """Where the arithmetic whose text starts at ``start`` ends (the index after it) and whether it became a command,
    as a walk of the text ``text`` was cut from noted it in ``ends`` (``None`` when not noted, or noted as ending
    past the end of a body: whether it became a command there is not known from it)."""
    if ends is None:
        return None
    base = ends.base
    found = ends.arith.get(base + start)
    if found is None:
        return None
    end = found[0] - base
    if end <= len(text) or (end == len(text) + 1 and ends.whole):
        return end, found[1]
    return None


def _param_end(text: str, start: int, in_dquote: bool, ends: Ends | None = None) -> int:
    """The index of the ``}`` closing the ``${`` just before ``start``, or the end of ``text`` (``ends``: noted)."""
    frames = (_Frame("dquote"), _Frame("param", closer="}")) if in_dquote else (_Frame("param", closer="}"),)
    end = _close(text, start, *frames, ends=ends)
    return len(text) if end is None else end - 1


# -- words: the text split as a shell splits it -------------------------------------------------------
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
    found them (not read again: a body nested in a body was walked once per level around it).
    """

    code: tuple[str, ...] = ()
    subs: dict[int, tuple[int, str]] | None = None
    feed: str | None = None
    quoted: bool = False
    shown: str = _Shown()  # type: ignore[assignment]  # an instance's own, when given, comes first
    live: tuple[int, ...] | None = ()

    def __new__(cls, text: str, code: Iterable[str] = (), feed: str | None = None, quoted: bool = False,
                shown: str | None = None, live: Iterable[int] | None = None) -> Self:
        word = super().__new__(cls, text)
        word.code, word.feed, word.quoted = tuple(code), feed, quoted
        word.shown = text if shown is None else shown
        word.live = None if live is None else tuple(live)
        return word


class Op(str):
    """An operator token: ``;`` (also for a newline), ``&&``, ``|``, ``(``, ``>``, ``<<<``, …"""


_OPERATORS = ("<<<", "<<-", "&>>", ";;&", "<<", ">>", "&&", "||", ";;", ";&", "|&", "&>", ">|", ">&", "<&", "<>",
              "<", ">", ";", "&", "|", "(", ")")
_OPERATOR = re.compile("|".join(map(re.escape, _OPERATORS)))  # the first that fits, as the tuple is ordered
#: One token per operator: an ``Op`` holds nothing but its text, so every ``;`` can be the same one.
_OPS = {op: Op(op) for op in _OPERATORS}
#: Plain stretches of text -- words of plain characters, operators, blanks, newlines -- are read at once (most
#: commands are made of little else).  A word there stands alone: not before ``<``/``>`` (``2>``: digits there
#: name a descriptor), nor before ``((`` (arithmetic only where no word ends before it).  No ``<<``/``<<-`` (a
#: heredoc's word follows) nor ``<(``/``>(`` (a process substitution).  The operators are those of
#: :data:`_OPERATORS` in its order, so they are split by its own first fit.
_PLAIN_WORD = r"[^ \t\n'\"\\$`;&|()<>#][^ \t\n'\"\\$`;&|()<>]*(?=[ \t\n;&|)]|\((?!\()|\Z)"
_PLAIN_OP = r"<<<|&>>|;;&|>>|&&|\|\||;;|;&|\|&|&>|>\||>&|<&|<>|<(?![<(])|>(?!\()|[;&|()]"
_PLAIN_STRETCH = re.compile(f"(?:{_PLAIN_WORD}|{_PLAIN_OP}|[ \t\n]+)+")
_PLAIN_PIECE = re.compile(f"{_PLAIN_WORD}|{_PLAIN_OP}|\n")
_PIECE_OPS = {**_OPS, "\n": _OPS[";"]}
REDIRECTS = frozenset({"<<<", "<<-", "&>>", "<<", ">>", "&>", ">|", ">&", "<&", "<>", "<", ">"})
STDIN_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_PLAIN = re.compile(r"[^ \t\n'\"\\$`;&|()<>#]+")  # bash's blanks are space and tab alone: "\r" is a letter
_DQ_PLAIN = re.compile(r'[^"\\$`]+')
_LIVE = re.compile(r"\\.|\$\(|`", re.DOTALL)
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_ANSI_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
               "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def unescape(text: str) -> str:
    """``$'…'`` (and ``echo -e``/``printf``) escapes: ``\\n`` is a newline, ``\\x41`` an A."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x" and len(code) > 1:  # "\x" with no hex digit after it stays as written
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _ANSI_CHARS.get(code, "\\" + code)

    return _ANSI_ESCAPE.sub(one, text) if "\\" in text else text


def live_substitutions(text: str) -> Iterator[str]:
    """The ``$(…)`` and backtick bodies a shell runs when it expands ``text`` (an unquoted heredoc, ``${…}``)."""
    ends = text.ends if isinstance(text, Body) else None
    return _live(text, 0, len(text), {}, ends)


def _live(text: str, i: int, end: int, log: dict[int, tuple[int, bool]], ends: Ends | None = None) -> Iterator[str]:
    """:func:`live_substitutions` of ``text[i:end]``; ``log`` as for :func:`_arith_or_command`, ``ends`` as for
    :func:`paren_end` (a ``$(…)`` body is then a :class:`Body`)."""
    while True:
        step()
        match = _LIVE.search(text, i, end)
        if match is None:
            return
        if match.group() == "$(" and text.startswith("(", match.end(), end):  # $((…)): what runs inside it
            # a run of "$((" each inside the last: the first walk logged them all (read on inside each in turn)
            run = _ARITH_RUN.match(text, match.start(), end)
            for opened in range(match.start(), run.end() if run else match.end() + 1, 3):
                step()
                close, command = _arith_or_command(text, opened + 3, log, ends)
                if command:
                    yield text[opened + 2:close]
                    i = close + 1
                    break
                i = opened + 3  # read on inside it: a $(( in it is looked up in the log, not walked again
        elif match.group() == "$(":
            close = paren_end(text, match.end(), ends)  # (not "end": the search goes on to the end of the text given)
            yield text[match.end():close] if ends is None else ends.body(text, match.end(), close)
            i = close + 1
        elif match.group() == "`":
            body, i = _backtick(text, match.end())
            yield body
        else:
            i = match.end()


class _Lexer:
    """Shell text → words and operators, as a POSIX shell splits it.

    It keeps what the rules need: which text was quoted (data), which was live code
    (``$(…)``, backticks, ``<(…)``), heredoc bodies (each found with one regex search,
    so a long heredoc costs little), and a skeleton of the text with quoted parts blanked
    -- what the fork-bomb pattern reads, so ``echo ':(){ :|:& };:'`` is not one.
    """

    def __init__(self, text: str, sources: bool = False, noted: bool = False) -> None:
        self.text = text
        #: The ends of the text's ( … ), shared with its bodies: kept when they will be read again (``noted``).
        self.ends = text.ends if isinstance(text, Body) else Ends() if noted else None
        self.i = 0
        self.tokens: list[Word | Op] = []
        self.skeleton: list[str] = []
        self.heredocs: list[tuple[int, str, bool, bool]] = []  # token index, delimiter, strip tabs, quoted
        self.delimiter_next: str | None = None
        #: Where each token was read: (start, end) in the text -- kept only when asked (:func:`source_tokens`).
        self.sources: list[tuple[int, int]] | None = [] if sources else None
        self.word_start = 0
        self.arithmetic_end = 0  # where the (( … )) being read ends
        self.last_close = text.rfind("))")
        self.next_double = -1  # the first "((" at or after where it was last looked for (see _plain_stretch)
        #: See _arith_or_command; shared with the bodies where the ends are kept.
        self.arith_log: dict[int, tuple[int, bool]] = {}
        self.expanded_twice = False  # the next word is the target of >&, which bash expands twice
        self._new_word()

    def _new_word(self) -> None:
        self.parts: list[str] = []
        self.code: list[str] = []
        self.feed: str | None = None
        self.quoted = False
        self.started = False
        self.live: list[int] = []
        self.subs: dict[int, tuple[int, str]] = {}
        self.length = 0

    def _add(self, piece: str, quoted: bool = False, skeleton: str | None = None) -> None:
        self.parts.append(piece)
        self.length += len(piece)
        self.started = True
        self.quoted |= quoted
        self.skeleton.append(piece if skeleton is None else skeleton)

    def _end_word(self) -> None:
        if not self.started:
            return
        if self.expanded_twice:
            self.code.extend(live_substitutions("".join(self.parts)))
            self.expanded_twice = False
        word = Word("".join(self.parts), self.code, self.feed, self.quoted, live=self.live)
        if self.subs:
            word.subs = self.subs
        if self.delimiter_next is not None:
            self.heredocs.append((len(self.tokens), word, self.delimiter_next == "<<-", word.quoted))
            self.delimiter_next = None
        self.tokens.append(word)
        if self.sources is not None:
            self.sources.append((self.word_start, min(self.i, len(self.text))))
        self._new_word()

    def _operator(self, op: str) -> None:
        self.tokens.append(_OPS[op])
        self.expanded_twice = False
        if self.sources is not None:
            self.sources.append((self.i, self.i + len(op)))
        self.skeleton.append(op)

    def run(self) -> list[Word | Op]:
        text = self.text
        n = len(text)
        taken = 0
        while self.i < n:
            taken += 1
            i = self.i
            fresh = not (self.started or self.code or self.expanded_twice or self.heredocs)
            if fresh and self.delimiter_next is None and self._plain_stretch(i):
                continue
            begin, started = i, self.started
            plain = _PLAIN.match(text, i)
            if plain:
                self._add(plain.group())
                self.i = plain.end()
            else:
                self._step(text[i])
            if self.started and not started:
                self.word_start = begin
            if taken > 4096:
                step(taken)
                taken = 0
        step(taken)
        self._end_word()
        self._read_heredocs()
        return self.tokens

    def _plain_stretch(self, i: int) -> bool:
        """A plain stretch at ``i`` (:data:`_PLAIN_STRETCH`): its tokens at once, as one by one would; whether one was.

        It ends before a ``((`` that may be arithmetic, which is read one step at a time -- unless nothing in
        it could make it other than arithmetic that ends at its first ``))`` (then its ``(`` are plain
        operators as well).  Where the next ``((`` is is kept (found again only once passed), and the
        stretch is matched no further than it, so that no text is searched twice however many there are.
        """
        text, pos = self.text, i
        while True:
            start = max(pos, self.arithmetic_end)
            if self.next_double < start:
                found = text.find("((", start)
                self.next_double = len(text) if found < 0 else found
            cut = self.next_double if self.next_double <= self.last_close - 2 else len(text)
            stretch = _PLAIN_STRETCH.match(text, pos, cut + 2)  # "((" in view: a word just before it is not plain
            reach = stretch.end() if stretch else pos
            simple = _SIMPLE_ARITHMETIC.match(text, cut) if cut <= reach else None
            if simple is None:
                end = min(cut, reach)
                break
            self.arithmetic_end, pos = simple.end(), cut  # as _arithmetic_command would find; read on from it
        if end == i:
            return False
        pieces = _PLAIN_PIECE.findall(text, i, end)
        self.tokens.extend([_PIECE_OPS.get(piece) or str.__new__(Word, piece) for piece in pieces])  # (_Shown)
        if self.sources is not None:
            self.sources.extend([piece.span() for piece in _PLAIN_PIECE.finditer(text, i, end)])
        self.skeleton.append(text[i:end].replace("\n", ";"))
        self.i = end
        self.expanded_twice = bool(pieces) and pieces[-1] == ">&"  # a word after it, not yet read, is expanded twice
        step(len(pieces))
        return True

    def _step(self, char: str) -> None:
        text, i = self.text, self.i
        if char == "\n":
            self._end_word()
            self._operator(";")
            self.i += 1
            self._read_heredocs()
        elif char in " \t":
            self._end_word()
            self.skeleton.append(char)
            self.i += 1
        elif char == "#" and not self.started:  # a comment, to the end of the line
            end = text.find("\n", i)
            self.i = len(text) if end < 0 else end
        elif char == "#":
            self._add("#")
            self.i += 1
        elif char == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            self._add(text[i + 1:end], quoted=True, skeleton="''")
            self.i = end + 1
        elif char == '"':
            self._double_quoted()
        elif char == "\\":
            if text.startswith("\\\n", i):  # a line continuation
                self.i += 2
            else:
                self._add(text[i + 1:i + 2], quoted=True, skeleton="''")
                self.i += 2
        elif char == "$":
            self._dollar()
        elif char == "`":
            while True:  # and the next, when one opens right after it (as the next step would)
                body, self.i = _backtick(text, self.i + 1)
                self.code.append(body)
                self.live.append(self.length)
                self._add(f"`{body}`", skeleton="``")
                if not text.startswith("`", self.i):
                    break
                step()
        elif char in "<>" and text.startswith("(", i + 1):
            self._process_substitution()
        else:
            if text.startswith("((", i) and not self.started and i >= self.arithmetic_end:
                self._arithmetic_command()  # one inside a (( … )) already read: its substitutions are in
            self._redirect_or_operator()

    def _arithmetic_command(self) -> None:
        """At ``((``: note where it ends if bash reads it as arithmetic (not as two subshells).

        Its words are still judged one by one (``(`` ``(`` and what follows, as ever), but as bash
        reads it there: a ``${`` is two characters (bash counts parentheses only), and every ``$( … )``
        in it runs, quoted or not (bash reads it as it reads "…"), so those become the next word's code.
        """
        if self.last_close < self.i + 2:  # no "))" after it: it cannot be one (checked in O(1), not walked)
            return
        simple = _SIMPLE_ARITHMETIC.match(self.text, self.i)
        if simple:  # nothing in it a walk would stop at: it ends at the first "))", and nothing in it runs
            self.arithmetic_end = simple.end()
            return
        after_for = bool(self.tokens) and self.tokens[-1] == "for"
        known = None if after_for else self.arith_log.get(self.i + 2) or _arith_known(self.text, self.i + 2, self.ends)
        if known is not None:  # a walk passed it: where it ends is known
            end, arithmetic = (None if known[0] > len(self.text) else known[0]), not known[1]
        else:
            frame = _Frame("arith", loop=after_for)
            if not after_for and self.ends is not None:  # its end shared with the bodies holding it
                frame.start, frame.bare, frame.clean = self.i + 2, True, True
            end = _close(self.text, self.i + 2, frame, log=self.arith_log, ends=self.ends)
            arithmetic = frame.kind == "arith"  # a ";" in it made it subshells: kind "code"
        if end is not None and arithmetic:
            self.arithmetic_end = end
            # bash reads (( … )) as it reads "…": a '…' there is no quote, and every $( … ) in it runs
            self.code.extend(_live(self.text, self.i + 2, end - 2, self.arith_log, self.ends))

    def _double_quoted(self) -> None:
        text, i, parts = self.text, self.i + 1, []
        length = self.length  # where the next part starts in the word
        while i < len(text) and text[i] != '"':
            step()
            run = _DQ_PLAIN.match(text, i)
            if run:
                parts.append(run.group())
                i = run.end()
            elif text[i] == "\\":
                after = text[i + 1:i + 2]
                parts.append(after if after in '$`"\\' else ("" if after == "\n" else "\\" + after))
                i += 2
            elif text[i] == "$":
                self.live.append(length)
                i = self._expansion(i, parts, in_dquote=True, at=length)
            else:
                body, i = _backtick(text, i + 1)
                self.code.append(body)
                self.live.append(length)
                parts.append(f"`{body}`")
            length += len(parts[-1]) if parts else 0
        self._add("".join(parts), quoted=True, skeleton='""')
        self.i = i + 1

    def _expansion(self, i: int, parts: list[str], in_dquote: bool = False, at: int = -1) -> int:
        """``$(…)``, ``$((…))``, ``${…}`` or a plain ``$`` at ``i``: add it to ``parts``; the index after it.

        ``at``: where it starts in the word (the word so far when not given), where a ``$(…)``'s end is kept.
        """
        text = self.text
        if text.startswith("$((", i):  # arithmetic: only the substitutions inside it run
            end, command = _arith_or_command(text, i + 3, self.arith_log, self.ends)
            if command:  # $((a); b): a command substitution whose body starts with a subshell
                self.code.append(text[i + 2:end])
            else:
                self.code.extend(_live(text, i + 3, end, self.arith_log, self.ends))
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("$(", i):
            end = paren_end(text, i + 2, self.ends)
            body = self._body(i + 2, end)
            self.code.append(body)
            parts.append(text[i:end + 1])
            at = self.length if at < 0 else at
            self.subs[at] = (at + end - i + 1, body)  # (past the word's end when open: as a walk of the word finds)
            return end + 1
        if text.startswith("${", i) and i < self.arithmetic_end:  # in (( … )) bash reads no ${…}
            parts.append("${")
            return i + 2
        if text.startswith("${", i):
            end = _param_end(text, i + 2, in_dquote, self.ends)
            self.code.extend(live_substitutions(self._body(i + 2, end)))
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("$$", i):  # the shell's pid: the "$" after it starts nothing
            parts.append("$$")
            return i + 2
        parts.append("$")
        return i + 1

    def _dollar(self) -> None:
        text, i = self.text, self.i
        if text.startswith('$"', i):  # $"…" is "…" translated for the locale: read as "…"
            self.i += 1
            return
        if text.startswith("$'", i):  # ANSI-C quoting
            end = i + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            self._add(unescape(text[i + 2:end]), quoted=True, skeleton="''")
            self.i = end + 1
            return
        parts: list[str] = []
        self.live.append(self.length)
        self.i = self._expansion(i, parts)
        self._add("".join(parts), skeleton="$" if parts == ["$"] else "$()")

    def _process_substitution(self) -> None:
        text, i = self.text, self.i
        end = paren_end(text, i + 2, self.ends)
        body = self._body(i + 2, end)
        self.code.append(body)
        if not self.started and text[i] == "<":
            self.feed = body
        self._add(text[i:end + 1], skeleton="<()")
        self.i = end + 1

    def _redirect_or_operator(self) -> None:
        text, i = self.text, self.i
        fd = "".join(self.parts) if text[i] in "<>" and self.started else ""
        if fd and not self.quoted and fd.isdigit():
            self._new_word()  # "2>": the digits name a file descriptor, they are not a word
        else:
            fd = ""
            self._end_word()
        found = _OPERATOR.match(text, i)
        op = found.group() if found else text[i]
        self._operator(op)
        self.i += len(op)
        if op in ("<<", "<<-"):
            self.delimiter_next = op
        # bash expands the word after >& twice when it is not a number: >&'$(cmd)' runs cmd
        self.expanded_twice = op == ">&" and fd in ("", "1")

    def _body(self, start: int, end: int) -> str:
        """The text from ``start`` to ``end``: a :class:`Body` where the ends are kept."""
        return self.text[start:end] if self.ends is None else self.ends.body(self.text, start, end)

    def _read_heredocs(self) -> None:
        """Heredoc bodies start on the line after their ``<<``: each becomes the word its delimiter was."""
        text = self.text
        for index, delimiter, strip_tabs, quoted in self.heredocs:
            found = _end_line(delimiter, strip_tabs).search(text, self.i)
            end, resume = (found.start(), found.end() + 1) if found else (len(text), len(text))
            body = text[self.i:end]
            live = () if quoted else tuple(live_substitutions(self._body(self.i, end)))
            dollars = () if quoted else (m.start() for m in _DOLLAR.finditer(body))
            self.tokens[index] = Word(body, live, quoted=quoted, shown=delimiter, live=dollars)
            self.i = resume
        self.heredocs = []


@functools.lru_cache(maxsize=256)
def _end_line(delimiter: str, strip_tabs: bool) -> re.Pattern[str]:
    """The line that ends a heredoc's body (scripts use a few delimiters again and again: compiled once)."""
    return re.compile("^" + ("\t*" if strip_tabs else "") + re.escape(delimiter) + "$", re.MULTILINE)


_DOLLAR = re.compile(r"\$")


def tokenize(text: str, noted: bool = False) -> tuple[list[Word | Op], str]:
    """The words and operators of shell ``text``, and its skeleton: the text with quoted parts blanked.

    The skeleton is what text-shaped rules read (the fork-bomb pattern), so that
    ``echo ':(){ :|:& };:'`` -- data -- is not taken for one.  ``noted``: the bodies of its substitutions will
    be read too (the guard reads them as code): each is a :class:`Body` that shares the ends this reading
    found (a :class:`Body` given is read so, whatever ``noted`` says).
    """
    lexer = _Lexer(text, noted=noted)
    with bounded(text), uncollected():
        tokens = lexer.run()
    return tokens, "".join(lexer.skeleton)


def source_tokens(text: str) -> list[tuple[Word | Op, str]]:
    """The words and operators of shell ``text``, each with the text it was read from (a newline's ``;`` with ``"\n"``).

    What a grammar check reads (:mod:`.plain_syntax`): the token says what the shell made of the
    text, the source how it was spelled.
    """
    tokens, spans = source_spans(text)
    with uncollected():
        return [(token, text[start:end]) for token, (start, end) in zip(tokens, spans, strict=True)]


def source_spans(text: str) -> tuple[list[Word | Op], list[tuple[int, int]]]:
    """:func:`source_tokens` as the tokens and where each was read (``(start, end)``): a check that stops at the
    first token it refuses slices only what it reads."""
    lexer = _Lexer(text, sources=True)
    with bounded(text), uncollected():
        tokens = lexer.run()
    return tokens, lexer.sources or []
