"""Whether a value may hold code that bash runs when it reads the value as a number (see :mod:`.subscripts`).

Apart from that module, and light: every check asks it of the session's variables first (a session's
``x='a[$(…)]'`` that the text's ``((x))`` runs), and most commands need no more of the guard than this and
its quick look -- the walk and its rules load only when a text needs reading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["armed", "reached"]

_NAME = re.compile(r"[A-Za-z_]\w*")


def armed(text: str) -> bool:
    """Whether ``text`` may hold a subscript's code: a ``$(`` or a backtick after a ``[``."""
    at = text.find("[")
    return at >= 0 and (text.find("$(", at) >= 0 or text.find("`", at) >= 0)


def reached(text: str, env: Mapping[str, str]) -> list[str]:
    """The session's values with a subscript's code in them (:func:`armed`) that ``text`` reaches: those of the names
    it holds, and of the names those values hold in turn (each name looked at once)."""
    holding = {name for name, value in env.items() if armed(value)}
    if not holding:
        return []
    seen: set[str] = set()
    todo = [name for name in set(_NAME.findall(text)) if name in env]
    found = []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        value = env[name]
        if name in holding:
            found.append(value)
        todo.extend(other for other in set(_NAME.findall(value)) if other in env and other not in seen)
    return found
