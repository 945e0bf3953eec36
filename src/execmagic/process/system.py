"""What this operating system offers the engine, decided once, at load, and said once.

Everything else asks here instead of trying and catching on its own, so the paths taken where
something is missing are chosen in one place -- and can be forced on Linux too, so the tests
exercise them where they are rarely needed:

- **pidfd** (Linux ≥ 5.3): a descriptor that becomes readable when a process exits, so exits
  wake the selector instead of being polled for.  Without it (macOS, old kernels, or
  ``EXECMAGIC_NO_PIDFD=1``) exits are polled: every few milliseconds for a foreground run, every
  0.1 s for a background shell.
- **other processes' environments** (``/proc/PID/environ`` on Linux): how a process that left
  its session (``setsid``, a double fork) is still found by its marker.  macOS lets a process
  read only its own, unless privileged: there such an escape may be missed.
- **Windows** has no process groups, sessions or POSIX signals: not supported (use WSL).

The one line saying what is missing goes to the ``execmagic`` logger at load (``INFO``): a
notebook shows nothing, ``logging.basicConfig(level=logging.INFO)`` shows it.
"""

from __future__ import annotations

import logging
import os
import select
import sys

__all__ = ["ENVIRON_OF_OTHERS", "LIMITS", "NO_PIDFD_VAR", "PIDFD", "pidfd_open", "readable"]

#: Set to 1 to take the paths used where pidfd is missing (read once, when execmagic is imported).
NO_PIDFD_VAR = "EXECMAGIC_NO_PIDFD"

if sys.platform == "win32":  # pragma: no cover - nothing of the engine could work
    raise ImportError("execmagic needs POSIX process groups, sessions and signals: on Windows, use it inside WSL")


def _pidfd_works() -> bool:
    """``os.pidfd_open`` exists and the kernel has it (Python may have it on a kernel that does not)."""
    if not hasattr(os, "pidfd_open"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


_SWITCHED_OFF = os.environ.get(NO_PIDFD_VAR, "").strip() not in ("", "0")
#: Whether exits are waited for with a pidfd (else polled).
PIDFD: bool = not _SWITCHED_OFF and _pidfd_works()
#: Whether another process's environment can be read (the marker sweep finds escaped processes).
ENVIRON_OF_OTHERS: bool = sys.platform.startswith("linux")


def _limits() -> tuple[str, ...]:
    limits = []
    if not PIDFD:
        why = f"switched off by {NO_PIDFD_VAR}" if _SWITCHED_OFF else "this system has none"
        limits.append(f"no pidfd ({why}): process exits are polled for")
    if not ENVIRON_OF_OTHERS:
        limits.append("other processes' environments may be unreadable: a process that left its session "
                      "(setsid, a double fork) may escape the stop")
    return tuple(limits)


#: What this system lacks, one phrase each (empty on a recent Linux).
LIMITS: tuple[str, ...] = _limits()
if LIMITS:
    logging.getLogger("execmagic").info("execmagic on %s: %s", sys.platform, "; ".join(LIMITS))


def pidfd_open(pid: int) -> int | None:
    """A pidfd for ``pid``, or ``None`` when there is none (no pidfd here, or the process is already reaped)."""
    if not PIDFD:
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` becomes readable (a pipe has data or its end, a pidfd's process has ended) within ``timeout``
    seconds.  ``poll``, not ``select``: a process holding many files (a kernel) numbers its next descriptors past
    1023, which ``select`` refuses."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(max(timeout, 0) * 1000))
