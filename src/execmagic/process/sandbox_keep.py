"""Keeping a sandboxed standby's namespaces past its run, so that tearing them down is off the run's path.

A sandboxed run ends with bubblewrap's pid 1 exiting, and with it the last process in the sandbox's mount,
network, IPC, UTS and cgroup namespaces.  The kernel then tears them down: a mount namespace's some forty
mounts are unmounted in the exiting process (with a wait for an RCU grace period, whose interrupts reach
every CPU) and a network namespace's cleanup runs in the kernel's workers.  That work lands in the moment the
engine reads the run's end and reports it, on a machine of two cores competing with it for the CPU
(traced: the engine's wake-up waited behind it).  A namespace lives as long as anything refers to it, an
open ``/proc/PID/ns/*`` file too: the engine opens those of a sandboxed standby as it is started
(:meth:`KeptNamespaces.keep`) and closes them when the next one is started, or when the session closes
(:meth:`KeptNamespaces.let_go`), a moment after the run was answered -- the teardown then happens there,
in the standby's worker thread.

Holding a namespace reference is no way in or out: it is a descriptor of this process (outside the walls
already, and close-on-exec); nothing of the sandbox can reach it, and no process is kept (the sandbox's
processes end as before: its pid namespace is not held).  Where the sandbox's pid 1 cannot be found
(``/proc/PID/task/PID/children`` is a kernel option) nothing is kept, and the teardown happens at the end of
the run, as without this.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref

from .sandbox_end import only_child
from .system import readable

__all__ = ["KEPT", "KeptNamespaces"]

#: The namespaces bwrap makes whose teardown costs: not ``pid`` (its end is what ends the sandbox's
#: processes: held, it would change nothing of that, and costs nothing to free) nor ``user`` (freed by the
#: kernel's workers already).
KEPT = ("mnt", "net", "ipc", "uts", "cgroup")

_every: weakref.WeakSet[KeptNamespaces] = weakref.WeakSet()
#: What is held for one standby: a pidfd of its runner (readable once it has ended), the namespaces' descriptors.
_Kept = tuple[int, list[int]]


class KeptNamespaces:
    """The namespaces of a session's sandboxed standbys, held from their start until after their end."""

    def __init__(self) -> None:
        self._kept: list[_Kept] = []
        self._lock = threading.Lock()
        _every.add(self)

    def keep(self, runner: int) -> None:
        """Hold the namespaces of the sandbox whose monitor is ``runner`` (a standby up and waiting)."""
        init = only_child(runner)  # bwrap's pid 1
        if init is None:
            return
        try:
            pidfd = os.pidfd_open(runner)
        except OSError:
            return
        fds = []
        for name in KEPT:
            with contextlib.suppress(OSError):
                fds.append(os.open(f"/proc/{init}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC))
        with self._lock:
            self._kept.append((pidfd, fds))

    def let_go(self, *, every: bool = False) -> int:
        """Close what is held for sandboxes whose standby has ended (``every``: all); returns how many are
        still held.  The kernel tears the namespaces down here, in the caller's thread."""
        going: list[_Kept] = []
        staying: list[_Kept] = []
        with self._lock:
            for kept in self._kept:
                (going if every or readable(kept[0], 0) else staying).append(kept)
            self._kept = staying
        for pidfd, fds in going:
            for fd in (*fds, pidfd):
                with contextlib.suppress(OSError):
                    os.close(fd)
        return len(staying)

    def _forget(self) -> None:
        """In a forked child: close the parent's descriptors (runs at the fork: takes no lock)."""
        kept, self._kept = self._kept, []
        self._lock = threading.Lock()
        for pidfd, fds in kept:
            for fd in (*fds, pidfd):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _after_fork_in_child() -> None:
    for keeper in list(_every):
        keeper._forget()


os.register_at_fork(after_in_child=_after_fork_in_child)
