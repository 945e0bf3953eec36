"""What one check has read of its text, kept for the rest of the check: each text read once, whatever asks.

The same text is asked about again and again: a ``$(…)`` body is read when its word is expanded (what it prints),
when the walk asks whether it downloads something, and when the walk runs it as code -- and, nested, at every level
around it; a script's loop runs the same body with other names at every turn, and a script of data work names the
same few programs in the same few bodies thousands of times.  What a text *is* -- its tokens, its fork bomb, its
commands -- does not depend on the names it runs with, so it is read once here (a :class:`Reading`); what it *does*
with the names is the walk's.
"""

from __future__ import annotations

import dataclasses

from ..shell.braces import Allowance
from ..shell.ends import backtick_end, paren_end
from ..shell.lexer import tokenize
from ..shell.words import Op, Word
from .commands import Assignments, Command, grouped
from .forks import defines_function, fork_bomb

__all__ = ["Reading", "Readings"]

#: What brace expansion may make in a check of a short text: ``for i in {1..1000}`` is ordinary.
_BRACES_AT_LEAST = 64 * 1024


@dataclasses.dataclass
class Reading:
    """One text as read: its tokens and skeleton, whether it may define a function, its fork bomb, and its commands.

    ``items``: what :func:`~.commands.parse` makes of the tokens, with a ``";"`` after the last (the walk's loop
    ends a pipeline there), kept when no word of it may make a brace expression (see :meth:`Readings.items`): shared,
    never changed by a caller.  ``quiet``: whether a check's walk of the text yields nothing, whatever the names, the
    directory and the depth it runs at (set by the walk, which knows what that takes; ``None``: not asked yet).
    """

    tokens: list[Word | Op]
    skeleton: str
    defines: bool
    bomb: str | None
    items: list[Command | str | Assignments] | None = None
    quiet: bool | None = None


@dataclasses.dataclass
class Readings:
    """What one check has read of its text, kept for the rest of the check (see the module's docstring)."""

    texts: dict[str, Reading] = dataclasses.field(default_factory=dict)
    #: Where the substitution opened just before an offset of a word ends (see :meth:`end`).
    ends: dict[tuple[str, int], int] = dataclasses.field(default_factory=dict)
    #: Whether code run in a ``$(…)`` body downloads something, found once per body and depth (each level of
    #: nesting asked it again of every level inside: twice the work per level).
    downloads: dict[tuple[str, int], bool] = dataclasses.field(default_factory=dict)
    #: Whether the walk yields every simple command, or (for a check) only those a rule may judge.
    every: bool = True
    #: The bodies whose walk gave nothing to judge, by body, directory, depth and names (see ``walk._bodies``).
    quiet: dict[tuple[str, tuple[str, ...] | None, int, int], object] = dataclasses.field(default_factory=dict)
    #: What brace expansion may still make in this check (``{1..9}{1..9}…`` makes millions of words): bounded by the
    #: length of the first text read, the checked one (set then).
    allowance: Allowance | None = None
    #: The files a printer wrote, by where each is: the commands that wrote it, expanded (see :mod:`.written`).
    scripts: dict[tuple[str, ...], list[Command | Word]] = dataclasses.field(default_factory=dict)
    #: What each of :attr:`scripts` holds, joined once (a script run again and again was joined, and hashed, each time).
    codes: dict[tuple[str, ...], Word] = dataclasses.field(default_factory=dict)
    #: The characters of written scripts the walk may still walk (see :mod:`.written`).
    scripts_left: int = 0

    def read(self, text: str) -> Reading:
        """``text`` read once for the check: :func:`~execmagic.shell.lexer.tokenize`, then what the walk looks for
        in its skeleton first (a function defined, a fork bomb)."""
        found = self.texts.get(text)
        if found is None:
            if self.allowance is None:
                # (a text of nothing but {a,b} words takes about three a character: see shell.braces._MADE)
                self.allowance = Allowance(4 * len(text) + _BRACES_AT_LEAST)
            tokens, skeleton = tokenize(text, noted=True, joined=True)
            defines = defines_function(skeleton)  # (looked for once: the fork bombs' search needs it too)
            found = self.texts[text] = Reading(tokens, skeleton, defines, fork_bomb(skeleton, defines))
        return found

    def tokenize(self, text: str) -> tuple[list[Word | Op], str]:
        """:func:`~execmagic.shell.lexer.tokenize` of ``text``, read once for the check (the list is shared:
        never changed by a caller)."""
        reading = self.read(text)
        return reading.tokens, reading.skeleton

    def items(self, reading: Reading) -> list[Command | str | Assignments]:
        """The commands and operators of a text read (:attr:`Reading.items`): never changed by a caller.  A check's
        (not :attr:`every`) has each run of commands that only assign plainly as one :class:`.commands.Assignments`.

        They are parsed once when no word may make a brace expression (a ``{`` then a ``,`` or ``..`` and a ``}``:
        most texts), since then a parse spends nothing of the check's :attr:`allowance`; else anew each time, as
        each parse spends what its brace expressions make (the bound on them is the same however often a text is
        read)."""
        if reading.items is not None:
            return reading.items
        # (a check's: a run of plain assignments as one item, what its walk makes of them at once)
        items, braced = grouped(reading.tokens, self.allowance, runs=not self.every)
        items.append(";")
        if not braced:
            reading.items = items
        return items

    def end(self, word: str, start: int) -> int:
        """The index after the ``$(…)`` or backtick substitution of ``word`` at ``start``."""
        if word.startswith("``", start):  # an empty one ends at once (no walk started for it)
            return start + 2
        key = (word, start)
        found = self.ends.get(key)
        if found is None:
            dollar = word[start] == "$"
            found = self.ends[key] = paren_end(word, start + 2) + 1 if dollar else backtick_end(word, start + 1)
        return found

