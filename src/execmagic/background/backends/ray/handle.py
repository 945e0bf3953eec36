"""One Ray job as the registry sees it (a :class:`~..base.Handle`): its state and log learned by the
poller, decoded into the pipes the registry's reader drains (see :mod:`.cluster` for the whole design).

Ray's API has no offset: the whole log comes back, and only what lies past the job's offset is
decoded (:class:`~.framing.FrameReader`), so each byte reaches the pipes once.  Its state is typed
(:mod:`.status` turns Ray's word and the wrapper's record into a :class:`~..status.JobStatus`), and
its end, a look that failed and its words are :class:`~..remote.RemoteHandle`'s, as for SLURM.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal as signal_module
import time
from typing import Any, Protocol

from ....process.stop import StopReport
from ..base import STREAMS
from ..filepump import Pipe
from ..poller import Poller
from ..remote import RemoteHandle
from ..status import JobStatus, Phase
from .client import JobInfo, RayClient, RayError, RayPhase
from .framing import FrameReader, Outcome
from .job import RayJob
from .status import NOT_STARTED, ended_status, status_of

__all__ = ["MONITOR", "STATUS_EVERY", "RayHandle", "Submitter"]

#: Seconds between two looks at a job's log (the first-output latency a user sees, on top of Ray's).
TICK = 0.2
#: At most one status request per job per this many seconds...
STATUS_EVERY = 1.0
#: ...except for this long after a submission or a stop, when the user waits for the change (a first
#: line, a ``%kill``): then every tick.
HURRY = 30.0
#: Ray's own wait between its stop signal and SIGKILL (``RAY_JOB_STOP_WAIT_TIME_S``'s default).
_RAY_STOP_WAIT = 3.0

#: Shared by every backend of this process: one thread for all Ray jobs.
MONITOR: Poller[Any] = Poller("execmagic-ray", TICK)


class Submitter(Protocol):
    """What a handle needs of what submitted its job (:class:`~.cluster.RayCluster`)."""

    client: RayClient
    grace: float
    monitor: Poller[Any]


class RayHandle(RemoteHandle):
    """One Ray job as the registry sees it (see :class:`~..base.Handle`); its state is what the
    monitor last learned, so every method is quick, and only :meth:`stop` talks to Ray."""

    def __init__(self, backend: Submitter, job: RayJob) -> None:
        super().__init__({name: Pipe() for name in STREAMS}, backend.monitor, JobStatus(Phase.PENDING))
        self.backend = backend
        self.job = job
        self.job_id = job.job_id
        self.pid = 0  # the wrapper's pid on its node, once it said hello
        self.node: str | None = None
        self.frames = FrameReader(job.tag)
        self._info: JobInfo | None = None
        self._outcome: Outcome | None = None
        self._next_status = 0.0
        self._next_logs = 0.0
        self._hurry_until = time.monotonic() + HURRY

    # -- what the registry asks (its state and describe() are RemoteHandle's) ----------
    def remove_files(self) -> None:
        """Delete the ended job from Ray (its record and log): the registry's logs are the kernel's copy."""
        if self._returncode is None:
            return
        with contextlib.suppress(RayError):
            self.backend.client.delete(self.job_id)

    def stop(self, sig: int, grace: float) -> StopReport:
        """Ray's stop: it sends its stop signal (SIGTERM unless the cluster set
        ``RAY_JOB_STOP_SIGNAL``) to the wrapper, which stops the command's whole tree, SIGKILL after
        the grace it was submitted with; Ray SIGKILLs the wrapper 3 s later if it is still there.
        ``sig`` and ``grace`` cannot travel to a running job (Ray has no channel for them)."""
        if not self._running():
            return StopReport()
        signalled = (self.pid,)
        try:
            stopped = self.backend.client.stop(self.job_id)
        except RayError as exc:
            if exc.code == "ENOENT":
                self._lost()
                return StopReport()
            raise
        self._next_status = 0.0
        self._hurry_until = time.monotonic() + HURRY
        self.backend.monitor.wake()
        if not stopped and self.ended.wait(STATUS_EVERY * 3):
            return StopReport()  # it had ended meanwhile: the monitor learned how
        if self.node is None and self.ended.wait(STATUS_EVERY * 2.5):
            return StopReport(signalled=signalled)
        if self.node is None and self._info is not None and self._info.phase is RayPhase.PENDING:
            # Ray keeps a job that waits for resources PENDING after its stop, and stops it the moment it
            # would start (its stop is queued on the job's supervisor, which is not placed yet): the
            # command never runs, so the shell ends here, now
            self._end(-signal_module.SIGTERM, NOT_STARTED)
            return StopReport(signalled=signalled)
        if self.ended.wait(self.backend.grace + _RAY_STOP_WAIT + 2 * STATUS_EVERY + 1.0):
            escalated = self._outcome is not None and self._outcome.escalated
            return StopReport(signalled=signalled, killed=signalled if escalated else ())
        return StopReport(signalled=signalled, killed=signalled, survivors=signalled)

    # -- what the monitor does ------------------------------------------------------
    def pump(self, now: float) -> bool:
        """Learn the job's state, decode its new log lines into the pipes; close the pipes once it
        ended and everything is in.  True when this handle needs nothing more from the monitor."""
        client = self.backend.client
        if self._returncode is None and now >= self._next_status:
            self._next_status = now + (TICK if now < self._hurry_until else STATUS_EVERY)
            try:
                self._info = client.info(self.job_id)
            except RayError as exc:
                self._failed(exc)
            else:
                self._note_phase()
        info = self._info
        ended_in_ray = info is not None and info.phase.terminal
        if self._returncode is None and info is not None and info.phase is not RayPhase.PENDING \
                and (now >= self._next_logs or ended_in_ray) and self._flushed():
            began = time.monotonic()
            try:
                log = client.logs(self.job_id)
            except RayError as exc:
                self._failed(exc)
                log = None
            # a big log costs a while to fetch: look less often, never more than a fifth of the time
            self._next_logs = now + max(TICK, 5 * (time.monotonic() - began))
            if log is not None:
                self._take(log)
                if ended_in_ray:
                    self._end(*ended_status(self._outcome, info, started=self.node is not None,
                                            wrapper_ran=self.pid != 0))
        return self._finish(all([pipe.flush() for pipe in self._pipes.values()]))

    def _flushed(self) -> bool:
        return not any(pipe.pending for pipe in self._pipes.values())

    def _take(self, log: str) -> None:
        for frame in self.frames.feed(log):
            if frame.kind in STREAMS:
                self._pipes[frame.kind].push(frame.data)
            elif frame.hello is not None:
                self.node = str(frame.hello.get("host") or "") or None
                pid = frame.hello.get("pid")
                self.pid = pid if isinstance(pid, int) else self.pid
                self._note_phase()
            elif frame.outcome is not None:
                self._outcome = frame.outcome

    def _note_phase(self) -> None:
        """Learn what Ray last said, with the node the wrapper named; a job Ray ended keeps its last
        state until its log is read (its end is decided from both), no longer unknown."""
        info = self._info
        if self._returncode is not None or info is None:
            return
        self._learn(status_of(info, self.node) or dataclasses.replace(self._state, unknown=""))

    def _failed(self, exc: RayError) -> None:
        """A request about the job failed: Ray no longer knows it (it is lost), or Ray could not be
        asked (its state is unknown until the next answer)."""
        if exc.code == "ENOENT":
            self._lost()
        else:
            self.fail(exc.issue)

    def _lost(self) -> None:
        why = "Ray no longer knows the job (deleted, or the cluster was restarted)"
        self._end(1, JobStatus(Phase.LOST, reason=why))
