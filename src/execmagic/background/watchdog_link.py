"""Telling the watchdog process which sessions to stop if this process dies (ARCHITECTURE.md, "The watchdog").

A kernel killed with SIGKILL (or by the OOM killer) runs no cleanup, so a small watchdog process
holds a pipe from us and, on EOF, stops every session it was told about.  This module is our end
of that pipe: ``+ SID MARKER`` when a background shell or a foreground run starts, ``- SID`` when
it ends, ``q`` when we closed everything ourselves -- or, when a session we reported is still
running at close (a foreground run in another thread: an agent's call when its server stops),
plain EOF, so that the watchdog stops it as if we had died.  The watchdog starts with the first session
and is started again (told every live session) if it ever died.

The ``+``/``-`` reports are appended to a *record* (an in-memory file, Linux ``memfd``, handed to
the watchdog as an open descriptor) that the watchdog reads only once the pipe reached EOF: a
report then costs one ``write`` that wakes nobody, where a line in the pipe woke the watchdog
twice per foreground run.  Where no record can be made, the reports go through the pipe.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence

__all__ = ["WatchdogLink"]

#: Bytes of record past which it is rewritten with only the sessions still registered.
_RECORD_COMPACT = 1 << 18


def _new_record() -> int | None:
    """An anonymous file for the reports (``memfd`` where there is one), or ``None``."""
    try:
        return os.memfd_create("execmagic-watchdog")
    except (AttributeError, OSError):
        pass
    try:
        fd, path = tempfile.mkstemp(prefix="execmagic-watchdog-")
        os.unlink(path)
        return fd
    except OSError:
        return None


class WatchdogLink:
    """Our end of the watchdog's pipe.

    ``grace`` is read when a watchdog starts (the owner's setting may change in between); ``live``
    lists the ``(sid, marker)`` of every running session, told to a restarted watchdog;
    ``closed`` says the owner closed, after which nothing more is reported.
    """

    def __init__(self, *, enabled: bool, grace: Callable[[], float],
                 live: Callable[[], Iterable[tuple[int, str]]], closed: Callable[[], bool]) -> None:
        self._enabled = enabled
        self._grace = grace
        self._live = live
        self._closed = closed
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # the reader thread and callers both report
        self._record: int | None = None  # the current watchdog's record (None: reports go through the pipe)
        self._record_size = 0
        self._registered: dict[int, str] = {}  # every session reported and not ended
        self._expected: set[str] = set()  # markers told before their launch, not yet reported started
        self._cleanups: dict[str, str] = {}  # marker -> the JSON argv run after sweeping it (see expect)

    @property
    def pid(self) -> int | None:
        """The watchdog's pid (None until the first session, or after it died)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def started(self, guard: tuple[int, str] | None) -> None:
        """Report a started session; ``None`` (a job meant to outlive us) is not reported."""
        if guard is not None:
            self._tell(f"+ {guard[0]} {guard[1]}\n")

    def ended(self, guard: tuple[int, str] | None) -> None:
        """Report that a session ended, so a later death of ours does not sweep a reused sid."""
        if guard is not None:
            self._tell(f"- {guard[0]}\n")

    def guard(self, sid: int, marker: str) -> Callable[[], None]:
        """Report a foreground run; the returned call reports its end."""
        self.started((sid, marker))
        return lambda: self.ended((sid, marker))

    def _tell(self, line: str) -> None:
        """Write one report, starting a watchdog first when needed (never just to tell it an end)."""
        if not self._enabled or self._closed():
            return
        with self._lock:
            parts = line.split()
            if parts[0] == "+":
                self._registered[int(parts[1])] = parts[2]
                self._expected.discard(parts[2])  # the watchdog drops it too when it reads this line
            else:
                self._cleanups.pop(self._registered.pop(int(parts[1]), ""), None)
            if self._proc is None or self._proc.poll() is not None:
                if line.startswith("-"):
                    return  # nothing to tell a watchdog that is not there
                self._start_locked(skip=int(parts[1]))
            self._report(line)

    def expect(self, marker: str, cleanup: Sequence[str] = ()) -> Callable[[], None]:
        """Tell the watchdog of a run's marker *before* it is launched, so that an owner killed
        between the launch and the ``+`` report still has it swept (by marker); the returned call,
        made once the launch is over, withdraws a marker that never got its ``+`` (it did not start).
        ``cleanup``: a command the watchdog runs after sweeping the run (a job's cancel), until
        the run ends."""
        if not self._enabled or self._closed():
            return lambda: None
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start_locked()
            self._expected.add(marker)
            self._report(f"* {marker}\n")
            if cleanup:
                self._cleanups[marker] = json.dumps(list(cleanup))
                self._report(f"! {marker} {self._cleanups[marker]}\n")

        def done() -> None:
            with self._lock:
                self._cleanups.pop(marker, None)
                if marker in self._expected:
                    self._expected.discard(marker)
                    if self._proc is not None:
                        self._report(f"~ {marker}\n")

        return done

    def _start_locked(self, skip: int | None = None) -> None:
        """Start a watchdog and tell it every session still registered (all but ``skip``, about to be)."""
        from ..process.watchdog import start_watchdog  # the first session pays for the import

        known = {**self._registered, **dict(self._live())}  # a restarted watchdog is told it all
        self._close_record()
        self._registered = known
        self._record = _new_record()
        self._proc = start_watchdog(self._grace(), self._record)
        for sid, marker in known.items():
            if sid != skip:
                self._report(f"+ {sid} {marker}\n")
        for marker in self._expected:
            self._report(f"* {marker}\n")
        for marker, argv in self._cleanups.items():
            self._report(f"! {marker} {argv}\n")

    def _report(self, line: str) -> None:
        """A ``+``/``-`` report: into the record, or through the pipe when there is none."""
        if self._record is None:
            self._write(line)
            return
        try:
            if self._record_size > _RECORD_COMPACT:  # keep it small: only what is still registered
                os.ftruncate(self._record, 0)
                os.lseek(self._record, 0, os.SEEK_SET)
                self._record_size = 0
                line = self._everything()
            data = line.encode()
            while data:
                written = os.write(self._record, data)
                data = data[written:]
                self._record_size += written
        except OSError:  # cannot happen to a memfd short of memory; the pipe still works
            self._close_record()
            self._write(self._everything())

    def _everything(self) -> str:
        """Every report still standing, as lines: what a compacted record or a new pipe must hold."""
        return ("".join(f"+ {sid} {marker}\n" for sid, marker in self._registered.items())
                + "".join(f"* {marker}\n" for marker in self._expected)
                + "".join(f"! {marker} {argv}\n" for marker, argv in self._cleanups.items()))

    def _close_record(self) -> None:
        if self._record is not None:
            with contextlib.suppress(OSError):
                os.close(self._record)
        self._record = None
        self._record_size = 0

    def _write(self, line: str) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            self._proc = None  # it died; the next report starts a new one

    def close(self) -> None:
        """Tell the watchdog everything is stopped (exit without sweeping) and wait for it.

        If a reported session is still running -- a foreground run that another thread is still
        waiting on -- the watchdog is not told ``q`` but given EOF: it stops that session (TERM,
        grace, KILL) before exiting, since nobody else will once we are gone.
        """
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                self._close_record()
                return
            sweep = bool(self._registered)
            try:
                assert proc.stdin is not None
                if not sweep:
                    proc.stdin.write(b"q\n")
                proc.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
            try:
                proc.wait(timeout=5 + (self._grace() if sweep else 0))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self._close_record()
