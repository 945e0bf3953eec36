"""The simple commands a text or an argv runs, as word lists: what a caller that lists them (a test, a tool) reads.

The walk (:mod:`.walk`) yields them as :class:`~.commands.Simple` values, with refusals among them; these are their
words alone, wrappers taken off, nested code's commands included, in the order a shell gets to them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .commands import Simple
from .walk import walk, walk_argv

__all__ = ["argv_commands", "simple_commands"]


def simple_commands(text: str) -> Iterator[list[str]]:
    """Every simple command shell ``text`` would run, as word lists (wrappers removed), nested ones included."""
    for item in walk(text, None, 0):
        if isinstance(item, Simple) and item.words:
            yield [str(word) for word in item.words]


def argv_commands(argv: Sequence[str]) -> Iterator[list[str]]:
    """The simple commands an argv would run (itself, and what a ``bash -c`` inside it runs)."""
    for item in walk_argv(argv):
        if isinstance(item, Simple) and item.words:
            yield [str(word) for word in item.words]
