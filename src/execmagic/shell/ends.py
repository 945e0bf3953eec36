"""Where a substitution ends: the same walk, begun inside it; and the ends a walk found, kept for its bodies.

The word splitter (:mod:`.lexer`) asks here where a ``$(…)``, a backtick, a ``${…}`` or a ``$((…))``
ends, so that it and the walk never disagree on nesting.  A body read again (the guard reads each
``$(…)`` as code, at every level it follows) is a :class:`Body` that carries the ends its text's
walk found, and looks its own substitutions' ends up there instead of walking to them again.  A body
whose walk would do nothing but pass it (``$(basename "$f")``, ``${N:-none}``, ``$((n + 1))``) is matched
at once: a notebook's script has one every few lines, and a walk made for each cost more than the rest of
its reading.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator

from .frames import ARITH_RUN, Frame
from .patterns import lazy_pattern
from .walk import ShellScanner
from .work import step

__all__ = ["PASSED_PIECE", "PASSED_REACH", "SIMPLE_ARITH", "SIMPLE_PARAM", "UNCLOSED", "Body", "Ends", "arith_known",
           "arith_or_command", "backtick_body", "backtick_end", "live_between", "live_substitutions", "param_end",
           "paren_end", "walk_to_close"]

#: A ``$( … )`` body with nothing in it that the walk stops at (no quote, escape, substitution, bracket,
#: redirection, comment or newline), up to its ``)``.
_BARE_BODY = lazy_pattern(r"[^\\'\"`$#()<>\n]*\)")
#: One whose walk does no more than pass it: plain characters, closed ``'…'``, ``"…"`` with no escape or
#: substitution, a ``$`` that opens nothing (``$f``, ``$1``), a ``<`` or ``>`` that opens no heredoc, no ``>&`` word
#: and no ``<(`` (``$(basename "$f" .csv)``, ``$(wc -l < f)``).  Each alternative starts with a character of its own
#: (no text matches two ways), but the match keeps a place to go back to for each character: it is tried on the first
#: ``PASSED_REACH`` characters alone (a longer body is walked), so its memory is bounded (a MB took 120 MB).
_PLAIN_DOLLAR = r"\$(?![({\['\"$])"
PASSED_PIECE = rf"""[^\\'"`$#()<>\n]|'[^']*'|"(?:[^"\\`$]|{_PLAIN_DOLLAR})*"|{_PLAIN_DOLLAR}|<(?!<)|>(?!&)"""
_PASSED_BODY = lazy_pattern(rf"(?:{PASSED_PIECE})*\)")
PASSED_REACH = 2048
#: A ``${…}`` body with nothing in it a walk stops at but its ``}``; a ``$((…))`` one with nothing its walk stops at
#: but the ``))`` that ends it; the same for a ``$[…]`` (its ``]``).
SIMPLE_PARAM = r"[^\\'\"`$}]*\}"
SIMPLE_ARITH = r"[^\\'\"`$();\]]*\)\)"
_SIMPLE_PARAM = lazy_pattern(SIMPLE_PARAM)
_SIMPLE_ARITH = {")": re.compile(SIMPLE_ARITH), "]": re.compile(r"[^\\'\"`$\[\]]*\]")}
_LIVE = lazy_pattern(r"\\.|\$\(|`", re.DOTALL)


def walk_to_close(text: str, start: int, *frames: Frame, log: dict[int, tuple[int, bool]] | None = None,
           ends: Ends | None = None) -> int | None:
    """The index after the closer of the innermost of ``frames`` (opened just before ``start``), or ``None``.

    ``log``: where to note the end of every ``$((`` the walk passes (see :func:`arith_or_command`); ``ends``:
    where to note the end of every ``( … )`` (see :func:`paren_end`).
    """
    walk = ShellScanner(text, [], ansi_c=True)
    if log is not None:
        walk.arith_log = log
    if ends is not None:
        walk.ends, walk.base, walk.shared, walk.params = ends.found, ends.base, ends.arith, ends.params
    stack, walk_step = walk.stack, walk._step
    stack.extend(frames)
    depth, pos, taken = len(stack), start, 0
    while True:
        stop = stack[-1].stops.search(text, pos)
        if stop is None or walk.out >= 0:
            if stop is not None:  # a frame open now never closes, as another walk found: nor does any below it
                _ran_out(walk)
            step(taken + walk.jumped)
            _arith_open(walk, log, ends)
            if ends is not None and ends.whole:  # open to the end of the text: open in it, whatever follows
                ends.unclosed(frame for frame in stack if not frame.tainted)
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
    the end of that text, so what is still open at its end is open there too.  ``bodies``: the bodies cut
    are :class:`Body` (to be read again); else plain text (the ends serve the reading that notes them alone).
    """

    def __init__(self, found: dict[int, int] | None = None, base: int = 0, whole: bool = True,
                 arith: dict[int, tuple[int, bool]] | None = None,
                 params: dict[tuple[int, bool], int] | None = None, bodies: bool = True) -> None:
        self.found = {} if found is None else found
        self.base, self.whole, self.bodies = base, whole, bodies
        #: Where each arithmetic ends and whether it became a command, the same way (see :func:`arith_or_command`).
        self.arith: dict[int, tuple[int, bool]] = {} if arith is None else arith
        #: Where each ``${…}`` ends, by where its text starts and whether it stands in ``"…"`` (see :func:`param_end`).
        self.params: dict[tuple[int, bool], int] = {} if params is None else params

    def unclosed(self, frames: Iterable[Frame]) -> None:
        for frame in frames:
            if frame.opened >= 0:
                self.found[self.base + frame.opened] = UNCLOSED
            elif frame.param_at >= 0:
                self.params[self.base + frame.param_at, frame.in_quotes] = UNCLOSED

    def body(self, text: str, start: int, end: int) -> str:
        """``text[start:end]`` (a substitution's body in the text read now) as a :class:`Body` sharing these ends
        (as plain text where the bodies are not read again: ``bodies``)."""
        if not self.bodies:
            return text[start:end]
        body = Body(text[start:end])
        body.ends = self.within(text, start, end)
        return body

    def within(self, text: str, start: int, end: int) -> Ends:
        """These ends, for ``text[start:end]`` of the text read now (see :meth:`body`)."""
        return Ends(self.found, self.base + start, self.whole and end >= len(text), self.arith, self.params,
                    self.bodies)


class Body(str):
    """The text of a substitution, cut from the text it was read in, with the ends that reading found (:class:`Ends`).
    """

    ends: Ends | None = None


def _ran_out(walk: ShellScanner) -> None:
    """Leave the walk as it would be at the end of its text, from the frame another walk found never closes
    (:attr:`~.walk_bodies.WalkBodies.out`): what is below it stays as it is now (nothing after is read by it),
    what was opened inside it is not known (it may close) and is dropped, and an arithmetic one is what that
    walk found it became."""
    stack = walk.stack
    stack.cut(walk.out + 1)
    top = stack[-1]
    found = walk.shared.get(walk.base + top.start) if top.clean and walk.shared is not None else None
    if found is not None and found[1] and top.kind == "arith":  # it became a command: "$((a); b …"
        stack.pop()
        top.kind, top.closer, top.depth = "code", ")", 0
        stack.append(top)


def _arith_open(walk: ShellScanner, log: dict[int, tuple[int, bool]] | None, ends: Ends | None) -> None:
    """Note the arithmetic still open where the walk ran out of text: it never ends (in the log shared with bodies,
    only when the text read runs to the end of the text they were cut from)."""
    shared = ends.arith if ends is not None and ends.whole else None
    if log is None and shared is None:
        return
    end = len(walk.text) + 1
    # (4,000 and more open at once: each answer made in a comprehension, and only those not noted yet kept)
    found = [(frame.start, frame.kind != "arith", frame.clean and not frame.tainted, frame.bare)
             for frame in walk.stack if frame.start >= 0]
    if log is not None:
        log.update({start: (end, command) for start, command, clean, bare in found
                    if (clean or not bare) and start not in log})
    if shared is not None:
        base = walk.base
        shared.update({base + start: (base + end, command) for start, command, clean, _ in found
                       if clean and base + start not in shared})


def paren_end(text: str, start: int, ends: Ends | None = None) -> int:
    """The index of the ``)`` closing the ``(`` just before ``start`` (quotes respected), or the end of ``text``.

    ``ends``: where the ``( … )`` of ``text`` end, as far as known -- looked up, and noted by the walk.
    """
    if ends is not None:
        found = ends.found.get(ends.base + start)
        if found is not None:
            step()
            return min(found - ends.base, len(text))
    if text.find(")", start) < 0:  # a ( … ) ends only at a ")": with none after it, it is open to the end
        step()  # (the search passes no more than the walk would: it stops at the first ")", which the walk reaches)
        return len(text)
    simple = _BARE_BODY.match(text, start) or _PASSED_BODY.match(text, start, start + PASSED_REACH)
    if simple and "case" not in simple.group():  # $(date), $(basename "$f"): its first ")" ends it
        step()
        return simple.end() - 1
    frame = Frame("code", closer=")")
    if ends is not None:
        frame.opened = start
    end = walk_to_close(text, start, frame, ends=ends)
    return len(text) if end is None else end - 1


def backtick_body(text: str, start: int) -> tuple[str, int]:
    """The body of the backticks opened just before ``start`` (its own escapes removed), and the index after them."""
    tick = text.find("`", start)
    if tick >= 0 and "\\" not in text[start:tick] and "<<" not in text[start:tick]:
        return text[start:tick], tick + 1  # nothing in it can hide a backtick: no escape, no heredoc's word
    end = walk_to_close(text, start, Frame("backtick", closer="`"))
    body = text[start:] if end is None else text[start:end - 1]
    return re.sub(r"\\([`$\\])", r"\1", body), len(text) + 1 if end is None else end


def backtick_end(text: str, start: int) -> int:
    """The index after the backtick closing the one just before ``start``."""
    return backtick_body(text, start)[1]


def arith_or_command(text: str, start: int, log: dict[int, tuple[int, bool]],
                      ends: Ends | None = None, closer: str = ")") -> tuple[int, bool]:
    """The index of the last ``)`` of the ``$((`` opened just before ``start`` (or the end of ``text``), and
    whether bash reads it as a command substitution: ``$((a); b)`` is ``$( (a); b )``, which runs ``a`` and ``b``.

    Bash counts parentheses there (``${x/a/(}`` opens one).  ``log`` holds what earlier walks of ``text``
    found: the walk that reads one ``$((`` notes where each ``$((`` inside it ends, so text nested
    thousands deep is walked once, not once per level.  ``ends`` as for :func:`paren_end`.  ``closer`` ``]``: the
    ``$[`` opened just before ``start`` instead (bash's old arithmetic, never a command), the index of its ``]``.
    """
    found = log.get(start) or arith_known(text, start, ends)
    simple = None if found is not None else _SIMPLE_ARITH[closer].match(text, start)
    if simple is not None:  # (as its walk finds and notes it: it ends there, arithmetic)
        step()
        found = log[start] = (simple.end(), False)
    elif found is None:
        frame = Frame("arith", closer, start=start)
        if walk_to_close(text, start, frame, log=log, ends=ends) is None:
            log[start] = (len(text) + 1, frame.kind != "arith")
        found = log[start]
    end, command = found
    return end - 1, command


def arith_known(text: str, start: int, ends: Ends | None) -> tuple[int, bool] | None:
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


def param_end(text: str, start: int, in_dquote: bool, ends: Ends | None = None) -> int:
    """The index of the ``}`` closing the ``${`` just before ``start``, or the end of ``text`` (``ends``: noted)."""
    if ends is not None:
        found = ends.params.get((ends.base + start, in_dquote))
        if found is not None:
            step()
            return min(found - ends.base, len(text))
    if text.find("}", start) < 0:  # a ${…} ends only at a "}" (as a ( … ) at a ")": see paren_end)
        step()
        return len(text)
    simple = _SIMPLE_PARAM.match(text, start)
    if simple:  # ${NAME}, "${N:-none}": its first "}" ends it
        step()
        return simple.end() - 1
    frames = (Frame("dquote"), Frame("param", closer="}")) if in_dquote else (Frame("param", closer="}"),)
    if ends is not None:
        frames[-1].param_at, frames[-1].in_quotes = start, in_dquote
    end = walk_to_close(text, start, *frames, ends=ends)
    return len(text) if end is None else end - 1


def live_substitutions(text: str) -> Iterator[str]:
    """The ``$(…)`` and backtick bodies a shell runs when it expands ``text`` (an unquoted heredoc, ``${…}``)."""
    ends = text.ends if isinstance(text, Body) else None
    return live_between(text, 0, len(text), {}, ends)


def live_between(text: str, i: int, end: int, log: dict[int, tuple[int, bool]],
                 ends: Ends | None = None) -> Iterator[str]:
    """:func:`live_substitutions` of ``text[i:end]``; ``log`` as for :func:`arith_or_command`, ``ends`` as for
    :func:`paren_end` (a ``$(…)`` body is then a :class:`Body`)."""
    while True:
        step()
        match = _LIVE.search(text, i, end)
        if match is None:
            return
        if match.group() == "$(" and text.startswith("(", match.end(), end):  # $((…)): what runs inside it
            # a run of "$((" each inside the last: the first walk logged them all (read on inside each in turn)
            run = ARITH_RUN.match(text, match.start(), end)
            taken = 0
            for opened in range(match.start(), run.end() if run else match.end() + 1, 3):
                taken += 1
                found = log.get(opened + 3)  # (arith_or_command's own first look, without a call: 4,000 deep)
                close, command = (found[0] - 1, found[1]) if found else arith_or_command(text, opened + 3, log, ends)
                if command:
                    break
                i = opened + 3  # read on inside it: a $(( in it is looked up in the log, not walked again
            step(taken)
            if command:
                yield text[opened + 2:close] if ends is None else ends.body(text, opened + 2, close)
                i = close + 1
        elif match.group() == "$(":
            close = paren_end(text, match.end(), ends)  # (not "end": the search goes on to the end of the text given)
            yield text[match.end():close] if ends is None else ends.body(text, match.end(), close)
            i = close + 1
        elif match.group() == "`":
            body, i = backtick_body(text, match.end())
            yield body
        else:
            i = match.end()
