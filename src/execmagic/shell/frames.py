"""What is open at a position of shell text: one frame per quote, substitution, heredoc or comment.

The walk (:mod:`.walk`) keeps a stack of frames.  Each frame knows, from when it is opened, the
characters after which the walk has something to decide in it (its stops: more inside backticks
and heredoc bodies), and the stack keeps the index of every frame of each class the walk asks
about, so that a step costs the same however deep the nesting is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from itertools import takewhile
from operator import attrgetter
from typing import SupportsIndex

__all__ = ["ARITH_RUN", "SIMPLE_ARITHMETIC", "Frame", "Stack", "delimiter_line"]


class Frame:
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
    quote_at = -1        # a backtick's: the stack index of the "…" it stands in (when in_dquote)
    tainted = False      # read otherwise than a walk begun inside it would read it: its end is not noted
    in_arith = False     # a '…' inside arithmetic: it ends there as a quote, and what is in it expands as arithmetic
    array = False        # a code frame that is a compound assignment, NAME=( … ): words only
    start = -1           # where the text of a "$((" frame starts: its end is noted in the walk's arith_log
    opened = -1          # where the text of a "( … )" frame starts, when its end is noted in the walk's ends
    param_at = -1        # the same for a "${…}" frame (noted with whether it stands in quotes: in_quotes)
    in_quotes = False
    bare = False         # an arith frame opened by "((": its start is given only when it is clean
    clean = False        # an arith frame a walk begun inside it would read alike (its end is shared with bodies)
    parens = 0           # a heredoc's: the ( … ) frames open where it was opened
    tick = 0             # a heredoc's: the stack index of the backtick it was opened in (0: none), whose end ends it
    #: Set when the frame is opened (what is below it cannot change while it is open): the characters
    #: after which the walk has something to decide in it, and for a ${…} (or a '…' in one) the index of
    #: the innermost frame below that is neither (``outer``) and that is not a ${…} (``outer_only``).
    stops: re.Pattern[str]
    outer = -1
    outer_only = -1

    def __init__(self, kind: str, closer: str = "", *, loop: bool = False, delimiter: str = "",
                 strip_tabs: bool = False, in_dquote: bool = False, array: bool = False, start: int = -1,
                 in_arith: bool = False) -> None:
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
        if in_arith:
            self.in_arith = True
        if start >= 0:
            self.start = start

    @classmethod
    def run(cls, kind: str, closer: str, count: int) -> list[Frame]:
        """``count`` frames of ``kind`` and ``closer`` and nothing else (4,000 ``$(`` at once: no __init__)."""
        new, frames = cls.__new__, []
        for _ in range(count):
            frame = new(cls)
            frame.kind, frame.closer = kind, closer
            frames.append(frame)
        return frames

    @classmethod
    def arith_run(cls, starts: range, clean: bool, stops: re.Pattern[str]) -> list[Frame]:
        """A ``$((`` frame for each of ``starts`` (where its text starts), each inside the one before, ``clean`` all
        or none, with the ``stops`` they get where they are opened (:meth:`Stack.stops_for`): what they share is
        their class's, what each holds its own (333,000 open at once: each made with one field, not seven)."""
        new, frames = cls.__new__, []
        run = _run_class(clean, stops)
        for start in starts:
            frame = new(run)
            frame.start = start
            frames.append(frame)
        return frames


#: For :meth:`Stack.close_run`: what a frame a ``)`` in code holds (its closer, open case patterns, kind, where a
#: ``$((`` starts) and what those are in a ``( … )`` frame it closes; a run of ``)``; one ``)`` a frame.  The same
#: for a ``))`` in arithmetic and an arithmetic frame (``((`` or ``$((``, not ``$[``) with no ``(`` open in it.
_PAREN_CLOSING = (attrgetter("closer", "cases", "kind", "start"), frozenset({(")", 0, "code", -1)}),
                  re.compile(r"\)+"), 1)
_ARITH_CLOSING = (attrgetter("closer", "kind", "depth"), frozenset({("", "arith", 0), (")", "arith", 0)}),
                  re.compile(r"(?:\)\))+"), 2)
#: How many frames of a run make it worth a class of their own (see :meth:`Stack.alike`).
_SHARED_FROM = 64
#: The class of a ``'…'`` and of a ``"…"`` frame opened in code (see :meth:`Stack.open_quote`).
_QUOTES: dict[str, type[Frame]] = {kind: type("QuoteFrame", (Frame,), {"kind": kind, "closer": ""})
                                   for kind in ("squote", "dquote")}


@functools.lru_cache(maxsize=64)
def _alike_class(fields: tuple[tuple[str, object], ...]) -> type[Frame]:
    """The class of frames that share ``fields`` (see :meth:`Stack.alike`): one per kind of place, kept."""
    return type("AlikeFrame", (Frame,), dict(fields))


@functools.lru_cache(maxsize=64)
def _run_class(clean: bool, stops: re.Pattern[str]) -> type[Frame]:
    """The class of the frames of a run of ``$((`` (see :meth:`Frame.arith_run`): one per kind of place, kept."""
    return type("ArithRunFrame", (Frame,), {"kind": "arith", "closer": "", "clean": clean, "stops": stops})


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
    "arith-bracket": re.compile(r"[\\'\"`$\[\]]"),  # $[ … ]: bash counts "[" there, not parentheses
    "comment": re.compile(r"\n"),
    "psquote": re.compile(r"[\\'\"`$]"),
}
_CODE_WORDS = re.compile(r"[\\'\"`$#()<>\n]|\bcase(?=[ \t])|\besac(?=[\s;)&|]|$)")
#: Runs of ``$((`` (each opens the same frame inside the last): read at once.
ARITH_RUN = re.compile(r"(?:\$\(\()+")
#: ``(( … ))`` with nothing in it that arithmetic's walk stops at (no bracket, quote, substitution, escape or ``;``).
SIMPLE_ARITHMETIC = re.compile(r"\(\([^\\'\"`$();\]]*\)\)")


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


class Stack(list[Frame]):
    """The frames open at a position, with the index of every frame of each class in :data:`_CLASSES`."""

    def __init__(self, frames: Iterable[Frame] = ()) -> None:
        super().__init__()
        self.at: dict[str, list[int]] = {"backtick": [], "plain-backtick": [], "heredoc": [], "any-heredoc": [],
                                         "dquote-or-param": [], "param": [], "dupword": []}  # (_CLASSES, spelled out)
        #: The unquoted heredocs open, by the line that ends them: ``(delimiter, strip_tabs)`` → their indices.
        self.ended_by: dict[tuple[str, bool], list[int]] = {}
        self.parens = 0  # frames closed by ")"
        self.extend(frames)

    def append(self, frame: Frame) -> None:
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

    def append_run(self, frames: list[Frame], alike: bool = False) -> None:
        """Open ``frames``, each inside the one before, all of one kind (not a heredoc): a run of ``$(`` read at once.

        What is below each but the first is the same as below the first, plus frames of its kind (none a
        backtick or a heredoc that was not already there): each has the first's stops and outer frames (``alike``:
        they have them already, from :meth:`Frame.arith_run`).
        """
        first, rest = frames[0], frames[1:]
        self.append(first)
        index, at = len(self), self.at
        for name in _KINDS[first.kind, first.closer][0]:
            at[name].extend(range(index, index + len(rest)))
        for frame in () if alike else rest:
            frame.stops, frame.outer, frame.outer_only = first.stops, first.outer, first.outer_only
        if first.closer == ")":
            self.parens += len(rest)
        list.extend(self, rest)

    def alike(self, kinds: tuple[tuple[str, str], ...], units: int) -> list[Frame]:
        """``units`` times a frame of each of ``kinds`` (kind and closer), to open next (:meth:`append_alike`), each
        inside the one before, each as :meth:`append` makes it; not a backtick, a heredoc nor ``NAME=(``, and a
        ``${…}`` only alone.  What is below each is what is below the first plus frames that change none of this.

        What they share (their kind, closer and stops; a ``${…}``'s outer frames) is held by a class of theirs, kept:
        500,000 ``${`` open at once are each made and let go as a bare object, with no field of its own (each given
        its fields took half the time of the walk).  A short run is made of plain frames, given their fields as they
        are opened (a class costs more).
        """
        if units * len(kinds) < _SHARED_FROM:
            return [Frame(kind, closer) for _ in range(units) for kind, closer in kinds]
        index, classes = len(self), []
        for kind, closer in kinds:
            fields: dict[str, object] = {"kind": kind, "closer": closer, "stops": self.stops_for(kind, closer)}
            if kind == "param":
                below = self[index - 1]
                fields["outer"] = below.outer if below.kind in _PARAMS else index - 1
                fields["outer_only"] = below.outer_only if below.kind == "param" else index - 1
            classes.append(_alike_class(tuple(fields.items())))
        new = Frame.__new__
        return [new(alike) for _ in range(units) for alike in classes]

    def append_alike(self, frames: list[Frame], period: int = 1) -> None:
        """Open ``frames`` made by :meth:`alike` (of ``period`` kinds), each inside the one before."""
        if len(frames) < _SHARED_FROM and period == 1:  # plain frames, given their fields as they are opened
            self.append_run(frames)
            return
        if len(frames) < _SHARED_FROM:
            self._append_plain(frames)
            return
        index, at = len(self), self.at
        classes: dict[str, list[int]] = {}
        for first in range(period):
            kind, closer = frames[first].kind, frames[first].closer
            for name in (_KINDS.get((kind, closer)) or _kind(kind, closer))[0]:
                classes.setdefault(name, []).append(first)
            if closer == ")":
                self.parens += len(range(first, len(frames), period))
        for name, firsts in classes.items():
            at[name].extend(sorted(index + unit + first for unit in range(0, len(frames), period) for first in firsts)
                            if len(firsts) > 1 else range(index + firsts[0], index + len(frames), period))
        list.extend(self, frames)

    def _append_plain(self, frames: list[Frame]) -> None:
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

    def close_run(self, text: str, i: int, arith: bool = False) -> list[Frame]:
        """At a run of ``)`` in code (``text[i]``), nothing but the frames to say what it closes: the ``( … )`` frames
        on top that it ends (none a case pattern's, none a ``$((`` a ``;`` made a command), closed at once -- each
        ``)`` one, as far as both go; those frames, the top last.  ``arith``: a run of ``))`` in arithmetic, and the
        arithmetic frames on top with no ``(`` open in them, each ``))`` one.  (4,000 ``)`` closing 4,000 ``$(``: a
        frame popped and its end noted each, in a turn of a loop.)  The run and the frames are read in windows that
        double while all close: what is read beyond what closes is less than what closes, or one window (linear)."""
        fields, closable, closes, width = _ARITH_CLOSING if arith else _PAREN_CLOSING
        count, window = 0, 16
        while True:
            run = closes.match(text, i + width * count, i + width * (count + window))
            below = len(self) - count  # (the frames below those closed so far: the next to close is at below - 1)
            frames = self[max(below - ((run.end() - run.start()) // width if run else 0), 1):below]
            took = len(list(takewhile(closable.__contains__, map(fields, reversed(frames)))))
            count += took
            if took < window:
                break
            window *= 2
        closed = self[len(self) - count:]
        del self[len(self) - count:]  # (neither kind is in a class: only a ( … ) is counted)
        self.parens -= 0 if arith else count
        return closed

    def open_quote(self, kind: str) -> None:
        """Open a ``'…'`` or ``"…"`` frame (``kind``: ``squote``, ``dquote``) as :meth:`append` opens ``Frame(kind)``,
        at once: what a walk opens most (two frames in three, in random text), each made with its one field."""
        at = self.at
        frame = Frame.__new__(_QUOTES[kind])
        frame.stops = (_KINDS.get((kind, "")) or _kind(kind, ""))[1][bool(at["backtick"])][bool(at["heredoc"])]
        if kind == "dquote":
            at["dquote-or-param"].append(len(self))
        list.append(self, frame)

    def close_quote(self) -> None:
        """Close the frame on top, a quote (``'…'``, ``"…"``, ``$'…'``, a ``'…'`` in ``"${…}"``), as :meth:`pop`."""
        if list.pop(self).kind == "dquote":
            self.at["dquote-or-param"].pop()

    def stops_for(self, kind: str, closer: str) -> re.Pattern[str]:
        """The stops :meth:`append` gives a frame of ``kind`` and ``closer`` opened now (not a ``NAME=(`` one)."""
        stops = (_KINDS.get((kind, closer)) or _kind(kind, closer))[1]
        return stops[bool(self.at["backtick"])][bool(self.at["heredoc"])]

    def extend(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            self.append(frame)

    def pop(self, index: SupportsIndex = -1) -> Frame:
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
    elif kind == "arith" and closer == "]":
        name = "arith-bracket"
    else:
        name = "code" if kind == "backtick" else kind
    extra = ([r"[`\\]"] if in_backticks else []) + ([r"\n"] if in_heredoc_body else [])
    pattern = _CODE_WORDS.pattern if name == "case" else _SHELL_STOPS[name].pattern
    return re.compile("|".join([*extra, pattern]))


@functools.lru_cache(maxsize=256)
def delimiter_line(delimiter: str, strip_tabs: bool) -> re.Pattern[str]:
    """The line that ends a heredoc's body (scripts use a few delimiters again and again: compiled once)."""
    return re.compile("^" + ("\t*" if strip_tabs else "") + re.escape(delimiter) + "$", re.MULTILINE)
