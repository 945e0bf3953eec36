"""What the handle of every job elsewhere shares (SLURM's, Ray's): the job's state, its end, learned
once, a look that failed, and its streams, fed by the backend's poller.

A remote job's state is learned on the poller's thread (and, for SLURM, the ``squeue`` thread), while
the registry asks for it on its own: so the handle keeps the last state it learned (a typed
:class:`~.status.JobStatus`, which each backend decides from what its cluster says) and its return
code under one lock, and the first thread to learn how the job ended wins (:meth:`RemoteHandle._end`);
the reader wakes on :meth:`RemoteHandle.exit_fd`, no polling.  Every answer to the registry is that
cached state, in the words :meth:`~.status.JobStatus.words` gives it for every backend alike: nothing
under the registry's lock talks to the cluster.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any

from .filepump import JobEnd, Pipe
from .poller import Poller
from .status import JobStatus

__all__ = ["RemoteHandle"]


class RemoteHandle:
    """The shared part of a remote job's :class:`~.base.Handle` (see the module docstring)."""

    poll_interval = 1.0  # unused: exit_fd() always gives a descriptor
    guard: tuple[int, str] | None = None  # a job outlives its kernel by design
    enforces_timeout = True  # the job's wrapper applies the timeout, also when the kernel is gone

    def __init__(self, pipes: Mapping[str, Pipe], poller: Poller[Any], state: JobStatus) -> None:
        self._pipes = dict(pipes)
        self.streams: Mapping[str, int] = {name: pipe.read_fd for name, pipe in self._pipes.items()}
        self._poller = poller
        self._lock = threading.Lock()
        self._returncode: int | None = None
        self._state = state
        self._end_of_job = JobEnd()
        #: Set when the job ended (for the backend's own waits: a stop's grace, a cancel).
        self.ended = self._end_of_job.event
        self._detached = False

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def status(self) -> JobStatus:
        """The job's state as the backend last learned it (its end, once it ended)."""
        return self._state

    def describe(self) -> str | None:
        """``queued (Reason)``, ``running on NODE``, ``killed``, ``timed out``, ``failed: …``, ``lost: …``;
        ``None`` when the return code says it all (``exited 3``, ``killed by SIGKILL``)."""
        return self._state.words()

    def poll(self) -> int | None:
        return self._returncode

    def exit_fd(self) -> int | None:
        """A pipe whose write end is closed when the job ends (so the reader wakes, no polling)."""
        return self._end_of_job.fd()

    def leftovers(self) -> bool:
        """The job's wrapper stops what the command left running before the job ends (as a cgroup would)."""
        return False

    def detach(self) -> None:
        """Stop feeding the streams (the owner is closing); the job itself runs on."""
        for pipe in self._pipes.values():
            pipe.close()
        self._poller.forget(self)
        self._detached = True

    def _running(self) -> bool:
        """Before a stop: whether the job still runs as far as we know; a job stopped after its owner let
        it go is watched again, to learn when it ends."""
        if self._returncode is not None:
            return False
        if self._detached:
            self._detached = False
            self._poller.add(self)
        return True

    def fail(self, why: str) -> None:
        """Looking at the job failed (the cluster could not be asked, or the poller's pass raised): it is
        still whatever it was; its words say why nobody knows more, until the next look succeeds."""
        with self._lock:
            if self._returncode is None:
                self._state = dataclasses.replace(self._state, unknown=why)

    def _learn(self, state: JobStatus) -> None:
        """The job's state while it runs, from a look that succeeded (so no longer unknown); nothing once
        it ended: its end is what it stays."""
        with self._lock:
            if self._returncode is None:
                self._state = state

    def _end(self, returncode: int, state: JobStatus) -> None:
        """The job ended: the first to learn how wins (the job's own record and the cluster's word
        may be read on two threads)."""
        with self._lock:
            if self._returncode is not None:
                return
            self._returncode = returncode
            self._state = state
        self._end_of_job.set()

    def _finish(self, done: bool) -> bool:
        """End the streams if the job ended and everything is in them (``done``); True then: the poller
        need do nothing more for this job.  The return code is read once: the other thread may learn the
        end meanwhile, and a caller that cleans up first asks :attr:`returncode` before this."""
        if self._returncode is None or not done:
            return False
        for pipe in self._pipes.values():
            pipe.close()
        return True
