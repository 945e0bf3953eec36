"""Messages that count say "1 line", not "1 lines"."""

from __future__ import annotations

from execmagic.display.render import short_command
from execmagic.process.errors import ShellLimitReached


def test_one_is_singular_and_more_are_plural():
    assert str(ShellLimitReached(1, 1)).startswith("1 background shell is running, the limit is 1")
    assert str(ShellLimitReached(2, 2)).startswith("2 background shells are running")
    assert short_command("make\nmake test") == "make … (+1 line)"
    assert short_command("a\nb\nc") == "a … (+2 lines)"
