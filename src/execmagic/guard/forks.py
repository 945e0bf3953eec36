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
from collections.abc import Iterator

from ..shell.patterns import lazy_pattern
from .word_starts import at_word_start

__all__ = ["DEFINES_FUNCTION", "ENDLESS", "FORK_CALLS", "defines_function", "fork_bomb"]

#: A character of a function's name: anything but blanks, brackets and the shell's operators.
_NAME_CHAR = r"[^\s(){}|&;<>]"
#: ``function NAME [()] BODY`` or ``NAME () BODY``, the body ``{…}`` or ``(…)``; a ``NAME`` starts only where a run of
#: name characters does (the lookbehind), so each run is tried once.  A body is read to the first brace (or
#: parenthesis) after its opening one, so no two bodies' readings overlap: linear in the text however many there are.
_FUNCTION = lazy_pattern(rf"(?:\bfunction\s+(?P<keyword>{_NAME_CHAR}+)\s*(?:\(\s*\))?"
                         rf"|(?<!{_NAME_CHAR})(?P<name>{_NAME_CHAR}+)\s*\(\s*\))"
                         rf"\s*(?:\{{(?P<body>[^{{}}]*)\}}|\((?P<subshell>[^()]*)\))")
_RUN = lazy_pattern(rf"{_NAME_CHAR}+")
#: Where a function may be defined: ``NAME () {`` / ``NAME () (`` or ``function NAME`` (what :data:`_FUNCTION` needs).
DEFINES_FUNCTION = lazy_pattern(rf"\(\s*\)\s*[{{(]|\bfunction\s+{_NAME_CHAR}+")
_OPENS_BODY = lazy_pattern(r"\(\s*\)\s*[{(]")
_KEYWORD = lazy_pattern(at_word_start([rf"function\s+{_NAME_CHAR}+"]))
#: Where :data:`_FUNCTION` may match (see :func:`_functions`): a ``function`` keyword, or the ``(`` of a ``()`` with a
#: body after it, from which the name is found looking back (the text read backwards: :data:`_NAME_BACK`).
_KEYWORD_AT = lazy_pattern(at_word_start([r"function(?=\s)"]))
_PARENS_AT = lazy_pattern(r"\((?=\s*\)\s*[{(])")
_NAME_BACK = lazy_pattern(rf"\s*{_NAME_CHAR}+")
#: A name where it stands as a command word: after a blank, ``;``, ``&``, ``|`` or ``(``, before a blank, ``;``,
#: ``&``, ``|``, ``)`` or the end (a run of name characters, whole: only a run's start has such a character before it).
_CALL = lazy_pattern(rf"(?<=[\s;&|(]){_NAME_CHAR}+(?=[\s;&|)]|\Z)")
#: What joins two runs of the function at once: ``f|f``, ``f |& f``, ``f & f``.
_AT_ONCE = lazy_pattern(r"\s*(?:\|&?|&)\s*")
_WORD_CHAR = lazy_pattern(r"[\w:]")
_CALL_AFTER = lazy_pattern(r"[\s;&|)]")
FORK_CALLS = lazy_pattern(r"\bfork\s+while\s+fork\b|\bwhile\b.{0,20}\bfork\s*\(\s*\)", re.DOTALL)


def defines_function(skeleton: str) -> bool:
    """Whether :data:`DEFINES_FUNCTION` is found in ``skeleton``: each of its two ways looked for alone, as a pattern
    that starts with a character or a word is (the two at once tried ``\\b`` at every offset: 18 ms a MB)."""
    return _OPENS_BODY.search(skeleton) is not None or (
        "function" in skeleton and _KEYWORD.search(skeleton) is not None)


def fork_bomb(skeleton: str, functions: bool = True) -> str | None:
    """A function that runs itself twice at once (``f|f&``, ``f & f``), then is called, or an endless loop that
    starts a process in the background at every turn: the text of it.

    ``functions``: whether the text may define one (:data:`DEFINES_FUNCTION`), when the caller has looked already."""
    flood = _flood(skeleton) if "do" in skeleton else None
    if flood is not None:
        return flood
    if not functions:  # (no function defined: the search of a MB cost a tenth of its check)
        return None
    calls = _Calls(skeleton)
    for function in _functions(skeleton):
        name = function.group("keyword") or function.group("name")
        body = function.group("body")
        if not _runs_twice(name, function.group("subshell") if body is None else body):
            continue
        end = function.end()
        first = calls.first(name, end)
        if skeleton.startswith(name, end) and _ends_call(skeleton, end + len(name)):
            first = end  # right after the "}": nothing need stand between
        if first is not None:
            stop = first + len(name) + (first + len(name) < len(skeleton))
            return skeleton[function.start():stop].strip()
    return None


#: A ``(`` in fewer than one in this many characters: each ``()`` with a body after it is tried (:func:`_functions`).
_SPARSE = 64


def _functions(skeleton: str) -> Iterator[re.Match[str]]:
    """:data:`_FUNCTION`'s matches in ``skeleton``, as ``finditer`` finds them, but tried only where one may start: at a
    ``function`` keyword, and at the start of the name before a ``()`` with a body after it.  (Tried at every offset,
    the pattern took 70 ms a MB of a script that defines a function: a run of name characters was read to its end at
    each of its starts, and every offset was tried.)"""
    if skeleton.count("(") * _SPARSE > len(skeleton):  # (many: the pattern tried at every offset costs less, and
        yield from _FUNCTION.finditer(skeleton)  # finds the first at once: a fork bomb's is near the start)
        return
    starts = [found.start() for found in _KEYWORD_AT.finditer(skeleton)] if "function" in skeleton else []
    backwards = None
    for paren in _PARENS_AT.finditer(skeleton):
        if backwards is None:
            backwards = skeleton[::-1]  # (the name before it, found in C: names are disjoint runs, each read once)
        name = _NAME_BACK.match(backwards, len(skeleton) - paren.start())
        if name is not None:  # (a name is the whole run: the pattern's lookbehind, and no "(" in a name)
            starts.append(len(skeleton) - name.end())
    end = 0
    for start in sorted(starts):
        if start >= end and (function := _FUNCTION.match(skeleton, start)) is not None:
            yield function
            end = function.end()


class _Calls:
    """Where the text calls a name, asked for each function that runs itself twice.

    The first few names are looked for one by one from where their definition ends (a fork bomb's call is near:
    indexing every name of a MB took a third of its check); past them every call is indexed once, so that many
    functions never called cost one reading of the text, not one each."""

    _ONE_BY_ONE = 8

    def __init__(self, skeleton: str) -> None:
        self.skeleton = skeleton
        self.searched = 0
        self.index: dict[str, list[int]] | None = None

    def first(self, name: str, end: int) -> int | None:
        """Where ``name`` is first called at or after ``end``."""
        if self.index is None and self.searched < self._ONE_BY_ONE:
            self.searched += 1
            found = re.compile(rf"(?<=[\s;&|(]){re.escape(name)}(?=[\s;&|)]|\Z)").search(self.skeleton, end)
            return None if found is None else found.start()
        if self.index is None:
            self.index = _calls(self.skeleton)
        starts = self.index.get(name, [])
        at = bisect.bisect_left(starts, end)
        return starts[at] if at < len(starts) else None


#: A condition that always holds: ``true``, ``:`` (by path too), ``[ 1 ]`` (a test of one word that is no
#: expansion), ``test 1``, ``((1))``, ``! false``.
_TRUE = (r"(?:(?:(?:/usr)?/bin/)?true|:|\[\[?[ \t]+[\w.+/]+[ \t]+\]\]?|test[ \t]+[\w.+/]+"
         r"|\(\([ \t]*[1-9][0-9]*[ \t]*\)\)|![ \t]+(?:(?:/usr)?/bin/)?false)")
#: One that never does: ``false``, ``((0))``, ``! true``, ``! :``.
_FALSE = r"(?:(?:(?:/usr)?/bin/)?false|\(\([ \t]*0[ \t]*\)\)|![ \t]+(?:(?:(?:/usr)?/bin/)?true|:))"
#: A loop that never ends by its condition: ``while true``, ``while [ 1 ]``, ``until false``, ``for ((;;))`` (with a
#: start and a step too: ``for ((i=0;;i++))``).
_LOOPS = [rf"while[ \t]+{_TRUE}", rf"until[ \t]+{_FALSE}", r"for[ \t]*\(\([^;()]*;[ \t]*;[^;()]*\)\)"]
ENDLESS = lazy_pattern(f"(?:{at_word_start(_LOOPS)})" r"[ \t]*(?:[;\n][\s;]*)?do\b")
_DONE = lazy_pattern(at_word_start(["done"], after=r"\b"))
#: A body whose last command is put in the background (``… &`` then ``done``), not ``&&``, ``>&``, ``&>``.
_BACKGROUND_LAST = lazy_pattern(r"(?<![&>|])&[ \t;]*\Z")
_WAIT = lazy_pattern(r"\bwait\b")


def _flood(skeleton: str) -> str | None:
    """``while :; do bash & done``, ``for ((;;)); do sleep 1 & done``: a process more at every turn, none waited for,
    and the turns never stop -- the machine stalls as under ``:(){ :|:& };:``.  Each loop's body is read up to the
    first ``done`` after it, an outer loop's not at all (the inner one's is): no text is read twice."""
    loops = list(ENDLESS.finditer(skeleton))
    if not loops:
        return None
    dones = [found.start() for found in _DONE.finditer(skeleton)]
    for index, loop in enumerate(loops):
        at = bisect.bisect_left(dones, loop.end())
        if at == len(dones) or (index + 1 < len(loops) and loops[index + 1].start() < dones[at]):
            continue  # (no end, or another loop opens in it)
        body = skeleton[loop.end():dones[at]]
        if _BACKGROUND_LAST.search(body) and not _WAIT.search(body):
            return skeleton[loop.start():dones[at] + 4].strip()
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
    for run in _CALL.finditer(skeleton):
        calls.setdefault(run.group(), []).append(run.start())
    return calls
