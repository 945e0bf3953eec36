"""What a running command shows in its cell: bounded live output and a status line updated in place.

Jupyter drops output past ~1 MB/s ("IOPub data rate exceeded") and a browser
slows down long before a page holds megabytes of text, so each command gets a
display budget: past it the cell shows one marker, and at the end the tail of
each cut stream.  Every byte is in the log files all the same.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..process.results import Result, format_bytes
from .stderr_mark import StderrMarks

__all__ = ["LiveOutput", "StatusLine"]


class LiveOutput:
    """The ``on_output`` callback of one run: writes to the cell's stdout/stderr within a budget."""

    def __init__(self, budget: int) -> None:
        self.budget = max(budget, 0)
        self.tail_budget = max(self.budget // 4, 100)
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
        room = self.budget - sum(self.shown.values())
        out = self._stream(stream)
        if len(text) <= room:
            out.write(text)
            self.shown[stream] += len(text)
            self.ends_line = text.endswith("\n")
        else:
            cut = text.rfind("\n", 0, room) + 1 or room  # end on a whole line when one fits
            out.write(text[:cut])
            self.shown[stream] += cut
            self.over = True
            out.write(
                f"\n… [live output paused at {self.budget:,} characters (the display budget); the full output goes"
                " to the log; its tail is shown when the command ends] …\n"
            )
            self.ends_line = True
        out.flush()

    def finish_line(self) -> None:
        """End a last partial line, so a summary after the output starts on its own line."""
        if not self.ends_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.ends_line = True

    def finish(self, result: Result) -> None:
        """After the run: the tail of each stream that was cut, and where the full log is."""
        if not self.over:
            self.finish_line()
            return
        for stream in ("stdout", "stderr"):
            unseen = self.seen[stream] - self.shown[stream]
            if unseen <= 0:
                continue
            text = getattr(result, stream)
            tail = text[-min(self.tail_budget, unseen):]
            if len(tail) < len(text) and text[-len(tail) - 1] != "\n" and "\n" in tail[:-1]:
                tail = tail[tail.index("\n") + 1:]  # start on a whole line
            capture = result.stdout_capture if stream == "stdout" else result.stderr_capture
            out = self._stream(stream)
            where = (f"full log: {capture.log_path}" if capture.log_error is None
                     else f"log incomplete: {capture.log_error}")
            shown = f"{format_bytes(capture.bytes)} on {stream}; last {len(tail)} characters below; {where}"
            out.write(f"\n… [{shown}] …\n")
            out.write(tail)
            if not tail.endswith("\n"):
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
