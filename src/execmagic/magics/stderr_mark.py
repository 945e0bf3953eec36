"""A terminal's stderr with every line a command wrote there marked ``stderr│``.

A notebook shows stderr in a colour of its own; its markdown export marks each such line
``stderr│`` (the template in ``jupyter-config/nbconvert``), and the README's tour shows them so.
A terminal shows both streams alike, so there the same mark goes before each line: one marking
wherever output is shown as text.  Only on a terminal: in a kernel the front end marks stderr
itself, and a file or a pipe gets the bytes as the command wrote them.
"""

from __future__ import annotations

from typing import Any, TextIO, cast

__all__ = ["MARK", "StderrMarks"]

MARK = "stderr│ "


class StderrMarks:
    """Where one run's stderr stands (at a line's start or not), across the pieces it arrives in."""

    def __init__(self) -> None:
        self.at_line_start = True

    def on(self, stream: TextIO) -> TextIO:
        """``stream`` itself, or on a terminal (not a kernel's) a writer that marks each line."""
        return cast(TextIO, _Marked(stream, self)) if _terminal(stream) else stream

    def mark(self, text: str) -> str:
        if not text:
            return text
        marked = (MARK if self.at_line_start else "") + text.replace("\n", "\n" + MARK)
        self.at_line_start = text.endswith("\n")
        return marked[: -len(MARK)] if self.at_line_start else marked


class _Marked:
    """The writes LiveOutput makes (``write``, ``flush``), each line marked."""

    def __init__(self, stream: TextIO, marks: StderrMarks) -> None:
        self.stream = stream
        self.marks = marks

    def write(self, text: str) -> int:
        return self.stream.write(self.marks.mark(text))

    def flush(self) -> None:
        self.stream.flush()


def _terminal(stream: Any) -> bool:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
