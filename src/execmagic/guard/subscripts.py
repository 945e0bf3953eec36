"""Code in an array subscript of a value bash evaluates as arithmetic or as a name: ``a[$(CMD)]`` runs CMD.

``x='a[$(rm -rf /)]'`` is a quoted string -- data -- until bash reads ``x`` as a number: ``((x))``,
``$((x))``, ``$[x]``, ``let x``, ``arr[x]=1``, ``${a[x]}``, ``[[ x -eq 1 ]]``, ``for ((i=x;;))``, an
assignment to a ``declare -i`` name.  Then it evaluates ``a[…]``, and expands the subscript as a word:
the command in it runs (tried with ``touch`` in bash 5.2; quotes in the subscript do not stop it).  So
do names handed to builtins that read them as ``NAME[SUBSCRIPT]``: ``printf -v``, ``read``, ``declare``,
``test -v``, ``[[ -v ]]``, a ``declare -n`` reference.

Where bash reads a value so is too many places to follow, and a value may be used long after it was given.
So the rule is about values, not uses: wherever the text gives a value -- an assignment, an argument of
``declare``/``local``/``export``/``readonly``/``typeset``/``let``, ``printf -v``, what ``read`` and
``mapfile`` read from a here-string -- or hands a word to ``[[``, ``[`` or ``test``, the code that a
subscript in it would run (``NAME[ … $(CMD) … ]`` or backticks there) is walked as code that runs.  A
session's variable is looked at when the text names it, or names one whose value names it (``x=y`` and
``y='a[$(…)]'``).  Elsewhere such text stays data: ``echo 'a[$(rm -rf /)]'`` prints it, and bash runs
``$(…)`` in a plain value nowhere but through ``eval`` (which the walk follows already).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..shell.ends import backtick_body, paren_end
from ..shell.words import Word
from .armed import armed, reached
from .commands import DECLARES, Command, program

__all__ = ["armed", "bracketed", "evaluated", "reached", "subscript_bodies", "subscript_code", "tests"]

#: Builtins whose every argument is a value given, a name read as ``NAME[SUBSCRIPT]``, or arithmetic.
_GIVERS = frozenset({*DECLARES, "let", "printf", "read", "mapfile", "readarray", "[[", "[", "test"})
#: Builtins that give names what they read on stdin (a here-string's text is a value then).
_READERS = frozenset({"read", "mapfile", "readarray"})


def subscript_code(text: str) -> list[str]:
    """The bodies of the ``$(…)`` and backticks that stand after a ``[`` in ``text`` (quotes do not hide them: bash
    reads a subscript as a word of its own), each once; none when no subscript holds one."""
    if not armed(text):
        return []
    bodies, at = [], text.find("[")
    while 0 <= at < len(text):
        dollar, tick = text.find("$(", at), text.find("`", at)
        if dollar < 0 and tick < 0:
            break
        if tick < 0 or 0 <= dollar < tick:
            end = paren_end(text, dollar + 2)
            bodies.append(text[dollar + 2:end])
            at = end + 1
        else:
            body, at = backtick_body(text, tick + 1)
            bodies.append(body)
    return [body for body in bodies if body.strip()]


def evaluated(command: Command) -> Iterator[Word]:
    """The text ``command`` gives as values or hands to a test (see the module's docstring), where it may hold a
    subscript's code."""
    words = command.words
    if command.values:  # x=( 'a[$(…)]' ): each is a value given
        yield from (word for word in words if armed(word))
        return
    name = command.unwrapped[0][:2]
    giving = bool(name) and program(name[0]) in _GIVERS and (program(name[0]) != "printf" or name[1:] == ["-v"])
    leading = True  # the assignments before the command's name (X=… or NAME[…]=…): values given
    for word in words:
        leading = leading and bool(_GIVEN.match(word))
        if (leading or giving) and "[" in word and armed(word):
            yield word
    if giving and program(name[0]) in _READERS:
        stdin = command.stdin()
        if stdin is not None and "[" in stdin:
            yield stdin


def bracketed(command: Command) -> bool:
    """Whether a word of ``command`` or what it reads holds a ``[``: none, and :func:`evaluated` finds nothing (asked
    first of every command a walk judges: most have none, and the look costs no generator)."""
    if "[" in "".join(command.words):  # (one look at them all)
        return True
    return bool(command.redirects) and any("[" in target for _, target in command.redirects)


#: A value given before a command's name: ``X=…``, ``X+=…``, ``X[…]=…``.
_GIVEN = re.compile(r"[A-Za-z_]\w*(?:\[.*\])?\+?=", re.DOTALL)


#: Commands that test what they are given: a value or a name there may be read as a number or a NAME[SUBSCRIPT].
_TESTS = frozenset({"[[", "[", "test"})


def tests(command: Command) -> bool:
    """Whether ``command``, one the walk passes as inert, may still give a value or read one as a number: a test, an
    assignment to ``NAME[…]``, an array's values (asked of every such command: one look or two)."""
    return command.values or (bool(command.words) and (command.words[0] in _TESTS or "[" in command.words[0]))


def subscript_bodies(command: Command) -> Iterator[str]:
    """The code in the subscripts of what ``command`` gives or tests (:func:`evaluated`), but for what runs as its
    words are expanded (walked there: not twice, at every level of nesting)."""
    for text in evaluated(command):
        for body in subscript_code(text):
            if body not in text.code:
                yield body
