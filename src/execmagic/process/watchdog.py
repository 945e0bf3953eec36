"""The helper process that stops background shells if their owner dies without cleaning up.

A kernel killed with SIGKILL runs no ``atexit`` handler, so its background
shells would run on for ever.  The owner starts this small process in its own
session with a pipe on its stdin and reports each shell it starts
(``+ SID MARKER``) and each that ends (``- SID``).  A run's marker is told *before* it is
launched (``* MARKER``; ``~ MARKER`` if it never started), so an owner killed between the launch
and its ``+`` report still has that run swept, by marker.  When the pipe reaches EOF --
the owner is gone, however it died -- the watchdog stops every shell still
registered (group, session and environment marker; TERM, grace, KILL) and exits.
``q`` means the owner already stopped everything: exit without sweeping.
``! MARKER ARGV`` (ARGV a JSON array) names a command to run after sweeping MARKER: a run that
started a job elsewhere (through ``srun``) has that job cancelled too, which stopping the local
process does not do.

The reports may instead go to a *record*: a file the owner appends to and hands over as an
open descriptor (``RECORD_FD``), read only after EOF on the pipe.  Every foreground run is
reported twice; a line in a pipe wakes this process each time (a cost on every short run,
on a machine already busy with it), a line appended to a file wakes nobody.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

__all__ = ["WATCHDOG_VAR", "main", "start_watchdog", "watch"]

#: Set in the watchdog's own environment, so that it can be told apart from the shells it guards.
WATCHDOG_VAR = "EXECMAGIC_WATCHDOG"


def start_watchdog(grace: float, record: int | None = None) -> subprocess.Popen[bytes]:
    """Start the watchdog for the current process; the returned ``Popen``'s stdin is the lifeline.

    ``record``: an open descriptor of the file the reports are appended to (read after EOF);
    ``None``: the reports come through the lifeline.
    """
    extra = [str(record)] if record is not None else []
    return subprocess.Popen(
        [sys.executable, "-m", "execmagic.process.watchdog", str(grace), *extra],
        pass_fds=(record,) if record is not None else (),
        env={**os.environ, WATCHDOG_VAR: str(os.getpid())},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        # "-m" puts the working folder first on the module path: the kernel's (a notebook's folder, which a
        # sandboxed command may write) would let an `execmagic.py` planted there run as the watchdog
        cwd="/",
    )


def watch(lines: Iterable[bytes], grace: float,
          cleanups: MutableMapping[str, list[str]] | None = None) -> dict[str, int | None]:
    """Follow the owner's reports until EOF; what is still registered, marker → session id (``None``:
    expected, never reported started); ``{}`` after ``q``.  ``cleanups`` collects the ``!`` reports,
    marker → argv."""
    registered: dict[str, int | None] = {}
    for raw in lines:
        parts = raw.decode(errors="replace").split()
        if not parts:
            continue
        if parts[0] == "q":
            return {}
        if parts[0] == "!" and len(parts) >= 3 and cleanups is not None:
            argv = _argv(raw.decode(errors="replace").split(maxsplit=2)[2])
            if argv:
                cleanups[parts[1]] = argv
            continue
        if parts[0] == "+" and len(parts) == 3:
            registered[parts[2]] = int(parts[1])
        elif parts[0] == "-" and len(parts) == 2:
            for marker in [m for m, sid in registered.items() if sid == int(parts[1])]:
                del registered[marker]
        elif parts[0] == "*" and len(parts) == 2:
            registered.setdefault(parts[1], None)
        elif parts[0] == "~" and len(parts) == 2 and registered.get(parts[1], 0) is None:
            del registered[parts[1]]
    return registered


def _argv(text: str) -> list[str]:
    """A ``!`` report's JSON array of strings; empty when it is not one."""
    try:
        argv = json.loads(text)
    except ValueError:
        return []
    return argv if isinstance(argv, list) and all(isinstance(word, str) for word in argv) else []


def _clean_up(argv: list[str]) -> None:
    """Run one ``!`` command (bounded: a cancel that cannot reach its cluster must not keep us)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=30, check=False)


def _read_record(fd: int) -> list[bytes]:
    """The lines of the record file, from its start (the owner appended them; it is gone now)."""
    chunks = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 16, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks).splitlines()


def main(argv: list[str]) -> int:
    grace = float(argv[1]) if len(argv) > 1 else 2.0
    record = int(argv[2]) if len(argv) > 2 else None
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # a terminal's signals are not for us; EOF on the lifeline is
    told_to_quit = False

    def lifeline() -> Iterable[bytes]:
        nonlocal told_to_quit
        for raw in sys.stdin.buffer:
            told_to_quit = told_to_quit or raw.strip() == b"q"
            yield raw

    cleanups: dict[str, list[str]] = {}
    left = watch(lifeline(), grace, cleanups)
    if record is not None and not told_to_quit:
        left.update(watch(_read_record(record), grace, cleanups))
    if left:
        import threading

        from .stop import stop_tree

        # in parallel, so several stubborn shells cost one grace period, not one each
        workers = [
            threading.Thread(target=stop_tree, args=(sid,),
                             kwargs={"marker": marker, "ladder": (signal.SIGTERM,), "grace": min(grace, 1.0)})
            for marker, sid in left.items()
        ]
        _all_of(workers)
        # then each swept run's own clean-up (its job elsewhere, which the local stop does not end)
        _all_of([threading.Thread(target=_clean_up, args=(cleanups[marker],)) for marker in left if marker in cleanups])
    os._exit(0)


def _all_of(workers: list[Any]) -> None:
    """Start the threads, then wait for all of them."""
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
