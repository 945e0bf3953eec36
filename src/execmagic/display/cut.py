"""Text cut to a number of characters for the page: its start and its end, on whole lines where it can.

One piece for every way output reaches a cell (the live stream's tail, a result's panes in each mime
type), so a row of data is never shown half and each of them keeps within the display budget.
"""

from __future__ import annotations

__all__ = ["head", "head_and_tail", "tail"]

#: A cut moves to a line's edge only when that keeps at least this share of the room: a text of a few
#: very long lines (or none) is cut inside a line rather than shown as almost nothing.
LINE_SHARE = 0.5


def head(text: str, room: int) -> str:
    """The start of ``text`` in at most ``room`` characters, ending after a newline when one is near."""
    if len(text) <= room:
        return text
    part = text[:max(room, 0)]
    end = part.rfind("\n") + 1
    return part[:end] if end and end >= room * LINE_SHARE else part


def tail(text: str, room: int) -> str:
    """The end of ``text`` in at most ``room`` characters, starting a line when a line start is near."""
    if len(text) <= room:
        return text
    if room <= 0:
        return ""
    part = text[-room:]
    if text[-room - 1] == "\n":
        return part
    start = part.find("\n") + 1
    return part[start:] if start and len(part) - start >= room * LINE_SHARE else part


def head_and_tail(text: str, room: int) -> tuple[str, str] | None:
    """``text``'s start and end within ``room`` characters together (``None``: it fits whole)."""
    if len(text) <= room:
        return None
    front = room - room // 2
    return head(text, front), tail(text, room - front)
