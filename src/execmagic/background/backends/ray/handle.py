"""One Ray job as the registry sees it (a :class:`~..base.Handle`): its state and log learned by the
poller, decoded into the pipes the registry's reader drains (see :mod:`.cluster` for the whole design).

Ray's API has no offset: the whole log comes back, and only what lies past the job's offset is
decoded (:class:`~.framing.FrameReader`), so each byte reaches the pipes once.  How the job ended is
the wrapper's record when it wrote one (the exact exit code, signal, timeout), else Ray's fields.
"""

from __future__ import annotations

import contextlib
import signal as signal_module
import time
from typing import Any, Protocol

from ....process.stop import StopReport
from ..base import STREAMS
from ..filepump import Pipe
from ..poller import Poller
from ..remote import RemoteHandle
from .client import JobInfo, RayClient, RayError, RayPhase
from .framing import FrameReader, Outcome
from .job import RayJob, phase_words

__all__ = ["MONITOR", "STATUS_EVERY", "RayHandle", "Submitter", "signal_number"]

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


class RayHandle(RemoteHandle[str | None]):
    """One Ray job as the registry sees it (see :class:`~..base.Handle`); its state is what the
    monitor last learned, so every method is quick, and only :meth:`stop` talks to Ray."""

    def __init__(self, backend: Submitter, job: RayJob) -> None:
        super().__init__({name: Pipe() for name in STREAMS}, backend.monitor, "pending")
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
        self._unknown: str | None = None

    # -- what the registry asks -----------------------------------------------------
    def describe(self) -> str | None:
        """``pending (reason)``, ``running on NODE``, ``timed out``, ``failed: …``, ``lost: …``;
        ``None`` when the return code says it all (``exited 3``, ``killed by SIGKILL``)."""
        if self._returncode is None and self._unknown:
            return f"{self._state} (status unknown: {self._unknown})"
        return self._state

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
            self._end(-signal_module.SIGTERM, "stopped before it started")
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
                self._unknown = None
            except RayError as exc:
                if exc.code == "ENOENT":
                    self._lost()
                else:
                    self._unknown = exc.issue
            self._note_phase()
        info = self._info
        ended_in_ray = info is not None and info.phase.terminal
        if self._returncode is None and info is not None and info.phase is not RayPhase.PENDING \
                and (now >= self._next_logs or ended_in_ray) and self._flushed():
            began = time.monotonic()
            try:
                log = client.logs(self.job_id)
            except RayError as exc:
                if exc.code == "ENOENT":
                    self._lost()
                else:
                    self._unknown = exc.issue
                log = None
            # a big log costs a while to fetch: look less often, never more than a fifth of the time
            self._next_logs = now + max(TICK, 5 * (time.monotonic() - began))
            if log is not None:
                self._take(log)
                if ended_in_ray:
                    self._end_from(info)
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
        info = self._info
        if self._returncode is not None or info is None:
            return
        self._learn(phase_words(info, self.node) or self._state)

    def _end_from(self, info: JobInfo | None) -> None:
        """The job ended in Ray; its log is read: the wrapper's record says how, else Ray's fields."""
        outcome = self._outcome
        if outcome is not None:
            number = signal_number(outcome.signal)
            if outcome.how == "timeout":
                self._end(124, "timed out")
            elif outcome.how in ("signal", "stopped") and number:
                self._end(-number, None)
            else:
                self._end(outcome.code, None)
        elif info is None:
            self._end(1, "failed: Ray said nothing of the job")
        elif info.phase is RayPhase.STOPPED:
            self._end(-signal_module.SIGTERM, None if self.node else "stopped before it started")
        elif info.driver_exit_code is not None and info.driver_exit_code < 0:
            self._end(info.driver_exit_code, None)  # the wrapper itself was killed by that signal
        elif info.phase is RayPhase.SUCCEEDED:
            self._end(info.driver_exit_code or 0, None)
        elif self.pid == 0 and info.driver_exit_code is not None:
            # the entrypoint ran, but the wrapper never said hello: no Python on the node, or it broke
            self._end(info.driver_exit_code or 1, f"failed: the job's wrapper did not start on the node"
                      f" (exit {info.driver_exit_code}; see the job's log in Ray's dashboard)")
        else:
            why = info.error_type or "FAILED"
            message = info.message.strip().split("\n")[0]
            self._end(info.driver_exit_code or 1, f"failed: {why}" + (f" ({message[:200]})" if message else ""))

    def _lost(self) -> None:
        self._end(1, "lost: Ray no longer knows the job (deleted, or the cluster was restarted)")

    def fail(self, why: str) -> None:
        """The monitor failed on this job: say so in the status, keep the last known state."""
        self._unknown = why


def signal_number(name: str | None) -> int:
    named = getattr(signal_module, name, None) if name else None
    return named.value if isinstance(named, signal_module.Signals) else 0
