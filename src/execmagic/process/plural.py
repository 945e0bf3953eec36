"""Counted nouns in messages: ``1 line``, ``2 lines``.

Every message that counts something says it through :func:`counted`, so "1 background shells are
running" or "+1 lines" cannot come back one message at a time.
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``counted(1, "line")`` → ``"1 line"``; ``counted(3, "process", "processes")`` → ``"3 processes"``."""
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"
