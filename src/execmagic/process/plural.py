"""Counted nouns and lists in messages: ``1 line``, ``2 lines``; ``a, b or c``.

Every message that counts something says it through :func:`counted`, so "1 background shells are
running" or "+1 lines" cannot come back one message at a time; a list of choices made from a table
(the sandbox modes, the client formats) through :func:`listed`, so a row added reads right at once.
"""

from __future__ import annotations

__all__ = ["counted", "listed"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``counted(1, "line")`` → ``"1 line"``; ``counted(3, "process", "processes")`` → ``"3 processes"``."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def listed(items: list[str], last: str = "or") -> str:
    """``listed(["a", "b", "c"])`` → ``"a, b or c"``; one item is itself."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"
