"""What a running command shows in its cell: bounded live output and a status line updated in place.

Jupyter drops output past ~1 MB/s ("IOPub data rate exceeded") and a browser
slows down long before a page holds megabytes of text, so each command gets a
display budget: live output pauses at three quarters of it with one marker, and
at the end the last quarter shows the end of each cut stream (where errors are).
All a cell receives of the output stays within the budget; every byte is in the
log files all the same.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..agents.shaping import split_budget
from ..display.cut import head, tail
from ..process.results import Result, format_bytes
from .stderr_mark import StderrMarks

__all__ = ["LiveOutput", "StatusLine", "log_over"]

#: The share of the budget kept for the end of the output: a command's last lines say how it went.
TAIL_SHARE = 4


def log_over(budget: int) -> int:
    """Bytes of a stream past which its log is written, so that every cut of the display can point at it.

    The smallest stream the display cuts is one whose unseen part outgrows its half of the tail's room
    (both streams cut at once): more than ``budget / (2 * TAIL_SHARE)`` characters, hence as many bytes.
    """
    return max(budget // (2 * TAIL_SHARE), 1)


class LiveOutput:
    """The ``on_output`` callback of one run: writes to the cell's stdout/stderr within a budget.

    ``keep_end``: the run's end is shown by :meth:`finish` (a foreground run), so live output pauses
    at three quarters of the budget; without it (a read of a background shell, which ends when the
    read does) the whole budget is shown live.
    """

    def __init__(self, budget: int, keep_end: bool = False) -> None:
        self.budget = max(budget, 0)
        self.keep_end = keep_end
        self.tail_budget = self.budget // TAIL_SHARE if keep_end else 0
        self.live_budget = self.budget - self.tail_budget
        self.shown = {"stdout": 0, "stderr": 0}
        self.seen = {"stdout": 0, "stderr": 0}
        self.over = False
        self.ends_line = True
        self._stderr_marks = StderrMarks()

    def _stream(self, name: str) -> TextIO:
        return sys.stdout if name == "stdout" else self._stderr_marks.on(sys.stderr)

    def __call__(self, stream: str, text: str) -> None:
        self.seen[stream] += len(text)
        if self.over:
            return
        room = self.live_budget - sum(self.shown.values())
        out = self._stream(stream)
        if len(text) <= room:
            out.write(text)
            self.shown[stream] += len(text)
            self.ends_line = text.endswith("\n")
        else:
            shown = head(text, room)  # end on a whole line when one is near
            out.write(shown)
            self.shown[stream] += len(shown)
            self.over = True
            gap = "" if (shown.endswith("\n") if shown else self.ends_line) else "\n"
            end = "the end is shown when the command ends; " if self.keep_end else ""
            out.write(f"{gap}… [live output paused at the display budget ({self.budget:,} characters); {end}all of"
                      " it goes to the log] …\n")
            self.ends_line = True
        out.flush()

    def finish_line(self) -> None:
        """End a last partial line, so a summary after the output starts on its own line."""
        if not self.ends_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.ends_line = True

    def finish(self, result: Result) -> None:
        """After the run: the end of each stream that was cut, within the budget's last quarter, and where the
        whole of it is."""
        if not self.over:
            self.finish_line()
            return
        unseen = {s: self.seen[s] - self.shown[s] for s in ("stdout", "stderr") if self.seen[s] > self.shown[s]}
        for (stream, count), room in zip(unseen.items(), split_budget(list(unseen.values()), self.tail_budget),
                                         strict=True):
            capture = result.stdout_capture if stream == "stdout" else result.stderr_capture
            end = tail(capture.text, min(room, count))
            what = "the rest below" if len(end) >= count else f"its last {len(end):,} characters below"
            where = capture.log_hint() if capture.log_path or capture.log_error else "not logged"
            out = self._stream(stream)
            out.write(f"… [{format_bytes(capture.bytes)} on {stream}; {what}; {where}] …\n")
            out.write(end)
            if end and not end.endswith("\n"):
                out.write("\n")
            out.flush()


class StatusLine:
    """A one-line "running" display, shown after ``delay`` seconds and updated in place (kernels only)."""

    def __init__(self, command: str, delay: float, enabled: bool, state: Any = None) -> None:
        self.command = command
        self.delay = delay
        self.enabled = enabled
        self.handle: Any = None
        #: Where the run is, when something other than "running" can be said (an object with a
        #: ``words`` attribute: a cluster job's ``queued (Resources)``, ``running on node7``).
        self.state = state

    def _bundle(self, elapsed: float, nbytes: int) -> dict[str, str]:
        words = (self.state.words if self.state is not None else None) or "running"
        text = f"⏳ {words} {elapsed:.0f} s · {format_bytes(nbytes)} output · {self.command}"
        return {"text/plain": text}

    def __call__(self, elapsed: float, nbytes: int) -> None:
        if not self.enabled or elapsed < self.delay:
            return
        from IPython.display import display

        bundle = self._bundle(elapsed, nbytes)
        if self.handle is None:
            self.handle = display(bundle, raw=True, display_id=True)
        else:
            self.handle.update(bundle, raw=True)

    def clear(self) -> None:
        if self.handle is not None:
            self.handle.update({"text/plain": ""}, raw=True)
            self.handle = None
