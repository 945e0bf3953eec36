"""Module-level regular expressions compiled the first time they are used, not when their module is imported.

Compiling the guard's, the redaction's and the shell reader's patterns was about half of what the first
command's modules cost to import (some 40 ms on a slow machine, a few large patterns most of it), and a
command uses a fraction of them: ``%exec true`` a fifth.  :func:`lazy_pattern` stands where ``re.compile``
stood and compiles on the first use of a method or attribute.  Then the compiled pattern takes its place among
its module's globals, so the module's functions use it as they used it before, at the same cost (a method of the
stand-in, which a name imported elsewhere or a pattern kept in a dict still reaches, is its own attribute by
then: some 40 ns more a call than the compiled pattern's, whose method lookups Python specializes).  Two threads
using a pattern for the first time at once may both compile it: harmless (the same pattern, and ``re`` keeps a
cache).

A public pattern a package re-exports stays ``re.compile``'d (``guard.SECRET_VALUE``): its readers may expect a
compiled pattern, and the same object wherever they import it from.

``often``: a pattern most commands use (the guard's quick look, redaction, the standby's grammar check) is
compiled ahead, while the notebook waits for its first command (:func:`compile_often`, which
``magics/ahead.py`` calls once the engine is made), instead of by that command.

In the lowest layer, as every layer holds such patterns; the standard library alone.
"""

from __future__ import annotations

import re
import sys
from typing import Any, AnyStr, cast

__all__ = ["LazyPattern", "compile_often", "lazy_pattern"]

#: What a compiled pattern does that callers call: made the object's own attributes once it is compiled.
_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")
#: The patterns made with ``often=True``, not yet handed to :func:`compile_often` (a few dozen: a list).
_OFTEN: list[LazyPattern] = []


class LazyPattern:
    """A regular expression, compiled by the first use of a method or attribute (:mod:`.patterns`).

    ``pattern`` is there from the start (patterns are built from one another's text without compiling any)."""

    def __init__(self, pattern: str | bytes, flags: int = 0, home: dict[str, Any] | None = None) -> None:
        self.pattern = pattern
        self._flags = flags
        self._home = home

    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern; its methods become this object's, and it takes this object's place in the
        globals of the module that made it (``home``), so later uses do not come here."""
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = re.compile(self.pattern, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
            if self._home is not None:
                for name, value in list(self._home.items()):
                    if value is self:
                        self._home[name] = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:
        """A method's or attribute's first use (``flags``, ``groups``, ``groupindex``…): the pattern compiled."""
        if name.startswith("__") or name in ("_compiled", "_flags", "_home", "pattern"):  # probes; a half-made one
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r}, {self._flags!r})"


def lazy_pattern(pattern: AnyStr, flags: int = 0, *, often: bool = False) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)`` when first used (typed as what it stands for: a compiled pattern).

    ``often``: most commands use it; :func:`compile_often` compiles it ahead.  Called where a module's globals are
    assigned (its compiled pattern replaces it there)."""
    lazy = LazyPattern(pattern, flags, sys._getframe(1).f_globals)
    if often:
        _OFTEN.append(lazy)
    return cast("re.Pattern[AnyStr]", lazy)


def compile_often() -> None:
    """Compile the patterns made with ``often=True`` that are not compiled yet (those of modules imported so far)."""
    while _OFTEN:
        try:
            lazy = _OFTEN.pop(0)
        except IndexError:  # another thread took the last meanwhile
            return
        lazy.compiled()
