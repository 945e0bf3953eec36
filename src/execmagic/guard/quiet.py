"""Texts a check's walk passes whole: read before, each command in them one the walk passes at once with nothing to
walk or judge, whatever the names (``$(basename "$f")`` in a script's loop, walked again at every turn)."""

from __future__ import annotations

from ..shell.words import WRITES, Subshells
from .commands import Assignments, Command
from .dash_words import as_dash_reads
from .inert import has_code, inert, inert_word
from .readings import Readings
from .subscripts import tests

__all__ = ["quiet_text"]


def quiet_text(text: str, readings: Readings) -> bool:
    """Whether a check's walk of ``text`` (read before) yields nothing, whatever the names, the directory and the depth
    it runs at: no dash reading of its own, no fork bomb, no function, and every command passed at once by the loop of
    ``walk.walk`` with nothing to walk or judge -- no test, no code, no redirection that writes (asked once a text;
    a script's loop walked the same ``$(basename "$f")`` again at every turn, with other names each time)."""
    reading = readings.texts.get(text)
    if reading is None or reading.items is None:
        return False
    if reading.quiet is None:
        reading.quiet = not reading.bomb and not reading.defines and as_dash_reads(text) is None and all(
            map(_passed_quietly, reading.items))
    return reading.quiet


def _passed_quietly(item: Command | str | Assignments) -> bool:
    """Whether the loop of a check's ``walk.walk`` passes ``item`` with nothing to walk or judge, whatever the names
    (assignments too: what they give is forgotten at the end of a text so walked, a ``$(…)``'s body)."""
    if type(item) is Command:  # (./s.sh may run what the text wrote there: .written)
        return inert(item) and not tests(item) and not has_code(item) and WRITES.isdisjoint(
            [op for op, _ in item.redirects]) and not (item.words and "/" in item.words[0])
    return type(item) is not Subshells or inert_word(item.word)
