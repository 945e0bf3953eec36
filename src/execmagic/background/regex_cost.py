"""How much a regex asks of the compiler, read from its text before anything compiles it.

The ``regex`` engine (like Python's ``re``) unrolls a fixed repeat when it compiles:
``x{65535}`` becomes 65,535 nodes, and ``(?:x{65535}){65535}`` four billion of them -- gigabytes,
allocated before the first match, with no timeout that covers compiling.  A filter is text a
person or a model typed, so its cost is judged from the text first: :func:`repeat_cost` is the
number of pieces the compiled pattern could hold, the sum over every atom (a character, an
escape, a class) of the product of the repeat counts around it.  ``\\d{4}`` costs 4,
``x{1,1000}`` 1,000, ``(?:x{300}){300}`` 90,000, ``a{9999}b{9999}`` 19,998.  Summing rather than
taking the largest product matters: a thousand characters hold a hundred ``a{99999}``, each
harmless alone.

Counting is conservative, never optimistic: a range ``{n,m}`` counts ``m`` (the engine unrolls
only fixed repeats today, but nothing promises it), an open ``{n,}`` counts ``n``, and ``*``,
``+``, ``?`` count 1 (a loop, never unrolled).  Alternatives add up (every branch is compiled).
Where the text could be read two ways the reading that counts more wins: a class ends at its
first ``]`` (``[]a]`` then counts ``a]`` as atoms too), a ``(?#…)`` comment at its first ``)``.
Where the structure cannot be followed -- unbalanced parentheses as this reading sees them, or
verbose mode (``(?x)``), where ``#`` starts a comment that could hide a ``[`` or ``(`` -- the
cost falls back to a bound that needs no structure at all: the pattern's length times the
product of every count any ``{`` in it could start (read as verbose mode reads a count, which
allows spaces and comments between its digits).  That refuses only what could be huge, so a
filter this module cannot follow is still accepted when its counts are small.
"""

from __future__ import annotations

import math
import re

__all__ = ["repeat_cost"]

#: A counted repeat: ``{n}``, ``{n,}``, ``{,m}``, ``{n,m}``.  Spaces are allowed inside because the
#: engine allows them in verbose mode; counting a literal ``{ 5 }`` as a repeat only overcounts.
_COUNTED = re.compile(r"\{\s*(\d*)\s*(?:(,)\s*(\d*)\s*)?\}")
#: An inline flag group that may turn verbose mode on (``(?x)``, ``(?ix:``): overmatching only
#: means the structure-free bound is used.
_VERBOSE = re.compile(r"\(\?[a-z0-9-]*x[a-z0-9-]*[:)]", re.IGNORECASE)  # not (?P<idx>…)


def _count(match: re.Match[str]) -> int | None:
    """The most times a counted repeat may repeat (``None``: it is no repeat, e.g. ``{}``)."""
    low, comma, high = match.groups()
    return _count_of(low, bool(comma), high or "")


def _count_of(low: str, comma: bool, high: str) -> int | None:
    """:func:`_count` from the digits before and after the comma."""
    if not low and not (comma and high):
        return None if not comma else 1  # "{}" is literal text; "{,}" is an unbounded loop
    if comma and high:
        return max(int(high), 1)
    return max(int(low), 1)  # {n} and {n,}: an open repeat unrolls its n required copies


def _verbose_count(pattern: str, start: int) -> int | None:
    """The count of a repeat at ``pattern[start] == "{"`` read as verbose mode reads it, where
    whitespace and ``#`` comments may stand between its digits (``{6 5535}`` is 65,535).  Read
    this way even outside verbose mode, a count is never less than the engine's."""
    parts, i = [""], start + 1
    while i < len(pattern):
        char = pattern[i]
        if char.isdigit():
            parts[-1] += char
        elif char == "#":
            end = pattern.find("\n", i)
            i = len(pattern) if end < 0 else end
        elif char == "," and len(parts) == 1:
            parts.append("")
        elif char == "}":
            return _count_of(parts[0], len(parts) > 1, parts[-1] if len(parts) > 1 else "")
        elif not char.isspace():
            return None
        i += 1
    return None


def _structure_free_bound(pattern: str) -> int:
    """Length times the product of every count any ``{`` could start: above any nesting."""
    counts = (_verbose_count(pattern, i) for i, char in enumerate(pattern) if char == "{")
    return len(pattern) * math.prod(count for count in counts if count is not None)


def _class_end(pattern: str, i: int, *, as_engine: bool) -> int:
    """Where the class opened at ``i`` ends.  ``as_engine``: as the engine reads it (a ``]`` first, or
    after ``^``, is a member; ``\\`` escapes); else at the first ``]`` -- the two readings differ only
    in how much text they hide, and the cost takes the larger of what each sees."""
    if not as_engine:
        end = pattern.find("]", i + 1)
        return len(pattern) if end < 0 else end + 1
    j = i + 1 + (pattern.startswith("^", i + 1))
    j += pattern.startswith("]", j)
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
        elif pattern[j] == "]":
            return j + 1
        else:
            j += 1
    return len(pattern)


def _structured_cost(pattern: str, *, as_engine: bool = True, comments: bool = True) -> int | None:
    """The sum over atoms of the product of the repeats around them; ``None`` if unbalanced.  ``comments``:
    ``(?#…)`` is skipped (else read as a group, so nothing it seems to hold goes uncounted)."""
    # One frame per open group: [cost of the finished pieces, cost of the last piece], the last
    # kept apart because a repeat right after it multiplies it.
    stack: list[list[int]] = [[0, 0]]
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        frame = stack[-1]
        if char == "{" and (match := _COUNTED.match(pattern, i)) and (count := _count(match)) is not None:
            frame[1] *= count
            i = match.end()
            continue
        if char in "*+?":
            i += 1
            continue
        if char == "|":
            frame[0], frame[1] = frame[0] + frame[1], 0
            i += 1
            continue
        if char == "(" and comments and pattern.startswith("(?#", i):
            end = pattern.find(")", i)
            i = n if end < 0 else end + 1
            continue
        if char == "(":
            stack.append([0, 0])
            i += 3 if pattern.startswith("(?:", i) else 1  # the commonest group costs nothing itself
            continue
        if char == ")":
            if len(stack) == 1:
                return None
            done, last = stack.pop()
            parent = stack[-1]
            parent[0], parent[1] = parent[0] + parent[1], done + last
            i += 1
            continue
        if char == "[":
            i = _class_end(pattern, i, as_engine=as_engine)
        else:
            i += 2 if char == "\\" else 1
        frame[0], frame[1] = frame[0] + frame[1], 1
    if len(stack) != 1:
        return None
    return stack[0][0] + stack[0][1]


def repeat_cost(pattern: str) -> int:
    """How many pieces compiling ``pattern`` could unroll, counted conservatively (see the module)."""
    if _VERBOSE.search(pattern):
        return _structure_free_bound(pattern)
    # each way of reading classes and comments, and the one that counts most: text that one reading
    # hides ("[](?#]" then "a{99999}"…) is counted by another
    readings = [_structured_cost(pattern, as_engine=engine, comments=comments)
                for engine in (True, False) for comments in (True, False)]
    if any(cost is None for cost in readings):
        return _structure_free_bound(pattern)
    return max(cost for cost in readings if cost is not None)
