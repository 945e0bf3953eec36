"""Reading a background shell's log files: cursors, whole-line cuts, the filter, the tail.

The log files are the single record of what a shell printed, whichever backend ran it; a read is
a byte range ``[cursor, end)`` of one of them.  Everything here is a plain function of a path,
offsets and options: no threads, no processes, no shared state, so it is tested on files written
by the test itself.  The registry decides *when* to read (under its lock, waiting for news); these
functions decide *what* a read returns.
"""

from __future__ import annotations

import codecs
import functools
import os
import time
from typing import Any, BinaryIO

from ..process.errors import UsageProblem, shown_value
from ..process.private import open_own_file
from ..process.records import record
from .regex_cost import repeat_cost

__all__ = [
    "FILTER_BUDGET",
    "MAX_FILTER_CHARS",
    "MAX_FILTER_COST",
    "Cut",
    "InvalidFilter",
    "compile_filter",
    "cursor_for",
    "filter_lines",
    "last_line_end",
    "read_cut",
    "readable_end",
    "tail_lines",
    "utf8_hold_back",
]

#: Seconds one read's filter may spend matching.  A filter is a regex someone typed -- or a model
#: sent -- and some regexes backtrack for longer than the universe lasts (``(a|aa)+$`` on a line of
#: sixty ``a``).  Past the budget the filter gives up and the rest of the lines are returned
#: unfiltered, said so: nothing is lost and nothing freezes.  Python's ``re`` cannot be stopped
#: mid-match (it holds the GIL); the ``regex`` engine takes a timeout, which is why it is used here.
FILTER_BUDGET = 1.0

#: The longest filter accepted: a line-picking regex is a few dozen characters, and the cost of
#: judging a pattern before compiling it grows with its length.
MAX_FILTER_CHARS = 1000
#: The most pieces a filter may unroll when compiled (see :func:`~.regex_cost.repeat_cost`):
#: ``x{100000}`` compiles to about 30 MB, ``(?:x{65535}){65535}`` to more memory than the machine
#: has -- with no timeout that covers compiling, and a ``MemoryError`` that took the kernel down.
MAX_FILTER_COST = 100_000

#: Block size when looking backwards for the last newline (one read covers most lines).
_BLOCK = 1 << 16


@record
class Cut:
    """What one read of one stream returns."""

    text: str
    #: Bytes left out at the start to stay within ``max_bytes`` (0: none).
    skipped: int = 0
    #: Lines the filter dropped (``None``: no filter was given).
    filtered_out: int | None = None
    #: The filter ran out of :data:`FILTER_BUDGET`; the lines after that point are returned unfiltered.
    filter_gave_up: bool = False


class InvalidFilter(UsageProblem):
    """A ``--filter`` that is no regex, or asks more of the compiler than a filter may (``reason``)."""

    def __init__(self, pattern: str, reason: str) -> None:
        self.pattern = pattern
        self.reason = reason
        super().__init__(f"invalid filter regex {shown_value(pattern)}: {reason}")


def compile_filter(pattern: str | None) -> Any:
    """The ``--filter`` regex (Python's syntax), or a one-line :class:`InvalidFilter` (not a traceback).

    The pattern's size is judged from its text before it is compiled (see :data:`MAX_FILTER_COST`):
    the match timeout does not cover compiling, and a compile that runs out of memory must not be
    the first sign.  What compiling raises anyway (``MemoryError`` included) is the same one line.
    """
    if pattern is None:
        return None
    if len(pattern) > MAX_FILTER_CHARS:
        raise InvalidFilter(pattern, f"a filter is at most {MAX_FILTER_CHARS:,} characters")
    cost = repeat_cost(pattern)
    if cost > MAX_FILTER_COST:
        raise InvalidFilter(pattern, f"its repeats ask for {cost:,} copies when compiled, more than the"
                                     f" {MAX_FILTER_COST:,} a filter may (use + or * instead of large {{n}} counts)")
    return _kept(pattern) if cost <= _KEPT_COST else _compiled(pattern)


#: The cost up to which a compiled filter is kept for the next read (a ``--follow`` reads every
#: second): a few kilobytes each.  A costlier one is compiled again at each read, so no cache holds
#: tens of megabytes -- the engine's own cache would keep 500 patterns; it is not used.
_KEPT_COST = 1000


@functools.lru_cache(maxsize=32)
def _kept(pattern: str) -> Any:
    return _compiled(pattern)


def _compiled(pattern: str) -> Any:
    import regex as regex_engine  # only where a filter is asked for: it is not needed to start

    try:
        return regex_engine.compile(pattern, cache_pattern=False)
    except (regex_engine.error, OverflowError, RecursionError, MemoryError) as exc:
        raise InvalidFilter(pattern, " ".join(str(exc).split()) or type(exc).__name__) from None


def cursor_for(cursors: dict[str, dict[str, int]], reader: str, streams: tuple[str, ...]) -> dict[str, int]:
    """``reader``'s cursor (byte offset per stream), starting at 0: each reader has its own, so
    an agent polling a shell does not take the lines a person is about to read."""
    return cursors.setdefault(reader, {name: 0 for name in streams})


def utf8_hold_back(tail: bytes) -> int:
    """How many bytes at the end of ``tail`` are a UTF-8 character whose rest is not written yet.

    A read stops before them, so a character split across two writes is never decoded as
    replacement characters; the next read returns it whole.
    """
    for back in range(1, len(tail) + 1):
        byte = tail[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead byte
            continue
        need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
        return back if need > back else 0
    return 0


def last_line_end(fh: BinaryIO, start: int, end: int) -> int:
    """The offset just past the last newline in ``[start, end)`` of ``fh``, or ``start`` when there is
    none.  Searched backwards in blocks: a long unfinished line is not read more than once."""
    pos = end
    while pos > start:
        block_start = max(start, pos - _BLOCK)
        fh.seek(block_start)
        block = fh.read(pos - block_start)
        nl = block.rfind(b"\n")
        if nl >= 0:
            return block_start + nl + 1
        pos = block_start
    return start


def readable_end(path: str, start: int, end: int, *, growing: bool, whole_lines: bool) -> int:
    """Where a read of ``[start, end)`` may stop.

    While the log is still ``growing``, an incomplete UTF-8 character is held back and, when
    ``whole_lines`` (a filter needs whole lines to match), an unfinished line too; once the
    shell is done everything up to ``end`` is returned as it is.
    """
    if not growing or end <= start:
        return end
    with os.fdopen(open_own_file(path), "rb") as fh:
        if whole_lines:
            return last_line_end(fh, start, end)
        tail_start = max(start, end - 3)
        fh.seek(tail_start)
        tail = fh.read(end - tail_start)
    return end - utf8_hold_back(tail)


def tail_lines(text: str, count: int) -> str:
    """The last ``count`` lines of ``text`` (0: none)."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[-count:]) if count else ""


def filter_lines(text: str, regex: Any, budget: float = FILTER_BUDGET) -> tuple[str, int, bool]:
    """The lines of ``text`` that ``regex`` finds something in, how many lines it dropped, and whether
    it gave up: past ``budget`` seconds the remaining lines are kept unfiltered."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    deadline = time.monotonic() + budget
    for i, line in enumerate(lines):
        try:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if regex.search(line, timeout=left):
                kept.append(line)
        except TimeoutError:
            dropped = i - len(kept)
            return "".join(kept + lines[i:]), dropped, True
    return "".join(kept), len(lines) - len(kept), False


def read_cut(path: str, start: int, end: int, *, max_bytes: int, tail: int | None = None,
             regex: Any = None, budget: float = FILTER_BUDGET) -> Cut:
    """Bytes ``[start, end)`` of the log at ``path`` as text: at most the last ``max_bytes`` of them
    (then starting on a whole line), then the last ``tail`` lines, then only lines ``regex`` matches.

    Undecodable bytes become U+FFFD rather than an error: a shell's output is not ours to reject.
    """
    skipped = 0
    if end - start > max_bytes:
        skipped = end - max_bytes - start
        start = end - max_bytes
    with os.fdopen(open_own_file(path), "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    text = codecs.decode(data, "utf-8", "replace")
    if skipped and "\n" in text:
        text = text[text.index("\n") + 1:]  # start on a whole line
    if tail is not None:
        text = tail_lines(text, tail)
    filtered, gave_up = None, False
    if regex is not None:
        text, filtered, gave_up = filter_lines(text, regex, budget)
    return Cut(text, skipped, filtered, gave_up)
