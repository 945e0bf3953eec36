"""Fork bombs: a function that runs itself twice at once, then is called -- a shape of the text.

A function's body is a group ``{ …; }`` or a subshell ``( … )`` (``:() ( :|:& ); :`` multiplies as
``:(){ :|:& };:`` does): the one pattern reads both, each body up to the first bracket of its kind.

Read in time linear in the text, whatever it holds: a pattern that tries a name at every offset of a
long word (``(?P<name>[^…]+)\\s*\\(``) costs the square of the word's length -- a 300,000-character
argument froze the check for minutes.  So a function's name is tried only where a run of name
characters starts, the body is split into runs once, and the calls after the definitions are
indexed once for the whole text.
"""

from __future__ import annotations

import bisect
import itertools
import re

__all__ = ["FORK_CALLS", "fork_bomb"]

#: A character of a function's name: anything but blanks, brackets and the shell's operators.
_NAME_CHAR = r"[^\s(){}|&;<>]"
#: ``function NAME [()] BODY`` or ``NAME () BODY``, the body ``{…}`` or ``(…)``; a ``NAME`` starts only where a run of
#: name characters does (the lookbehind), so each run is tried once.  A body is read to the first brace (or
#: parenthesis) after its opening one, so no two bodies' readings overlap: linear in the text however many there are.
_FUNCTION = re.compile(rf"(?:\bfunction\s+(?P<keyword>{_NAME_CHAR}+)\s*(?:\(\s*\))?"
                       rf"|(?<!{_NAME_CHAR})(?P<name>{_NAME_CHAR}+)\s*\(\s*\))"
                       rf"\s*(?:\{{(?P<body>[^{{}}]*)\}}|\((?P<subshell>[^()]*)\))")
_RUN = re.compile(rf"{_NAME_CHAR}+")
#: What joins two runs of the function at once: ``f|f``, ``f |& f``, ``f & f``.
_AT_ONCE = re.compile(r"\s*(?:\|&?|&)\s*")
_WORD_CHAR = re.compile(r"[\w:]")
_CALL_BEFORE = re.compile(r"[\s;&|(]")
_CALL_AFTER = re.compile(r"[\s;&|)]")
FORK_CALLS = re.compile(r"\bfork\s+while\s+fork\b|\bwhile\b.{0,20}\bfork\s*\(\s*\)", re.DOTALL)


def fork_bomb(skeleton: str) -> str | None:
    """A function that runs itself twice at once (``f|f&``, ``f & f``), then is called: the text of it."""
    if ("{" not in skeleton or "}" not in skeleton) and "(" not in skeleton:  # (no function body: the search of a MB
        return None  # cost a tenth of its check)
    calls: dict[str, list[int]] | None = None
    for function in _FUNCTION.finditer(skeleton):
        name = function.group("keyword") or function.group("name")
        body = function.group("body")
        if not _runs_twice(name, function.group("subshell") if body is None else body):
            continue
        if calls is None:
            calls = _calls(skeleton)
        end = function.end()
        starts = calls.get(name, [])
        at = bisect.bisect_left(starts, end)
        first = starts[at] if at < len(starts) else None
        if skeleton.startswith(name, end) and _ends_call(skeleton, end + len(name)):
            first = end  # right after the "}": nothing need stand between
        if first is not None:
            stop = first + len(name) + (first + len(name) < len(skeleton))
            return skeleton[function.start():stop].strip()
    return None


def _runs_twice(name: str, body: str) -> bool:
    """Whether ``body`` runs ``name`` twice at once: ``name`` ending a run, ``|``/``&`` and ``name`` starting the next.

    A name may end a longer run after a character that is not a letter, digit, ``_`` or ``:`` (``x.f|f``).
    """
    for first, second in itertools.pairwise(_RUN.finditer(body)):
        if not (first.group().endswith(name) and second.group().startswith(name)):
            continue
        before, after = first.end() - len(name) - 1, second.start() + len(name)
        if before >= first.start() and _WORD_CHAR.match(body[before]):
            continue
        if after < second.end() and _WORD_CHAR.match(body[after]):
            continue
        if _AT_ONCE.fullmatch(body, first.end(), second.start()):
            return True
    return False


def _ends_call(text: str, end: int) -> bool:
    return end == len(text) or _CALL_AFTER.match(text, end) is not None


def _calls(skeleton: str) -> dict[str, list[int]]:
    """Where each name stands as a command word (after a blank, ``;``, ``&``, ``|`` or ``(``), in order."""
    calls: dict[str, list[int]] = {}
    for run in _RUN.finditer(skeleton):
        start = run.start()
        if start and _CALL_BEFORE.match(skeleton, start - 1) and _ends_call(skeleton, run.end()):
            calls.setdefault(run.group(), []).append(start)
    return calls
