"""The one thread that feeds every SLURM job's output to the reader and asks SLURM how the jobs are.

Per tick (:data:`TICK`): each job copies what its files grew by into its pipes and reads its
exit-code file (:meth:`MonitoredJob.pump`); and at most once per :data:`QUEUE_EVERY` seconds, one
``squeue`` for all jobs of all backends of this process (a controller serves many users), whose
answer each job learns from (:meth:`MonitoredJob.update`).  The ``squeue`` runs on a thread of its
own, one at a time: a controller that hangs (up to the command timeout) never holds up the output.
A job's answers to the registry are what these threads last learned, so nothing under the
registry's lock ever runs a SLURM command.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Protocol

from . import slurm_cli
from .slurm_cli import JobState, SlurmError

__all__ = ["MONITOR", "QUEUE_EVERY", "TICK", "Monitor", "MonitoredJob"]

#: Seconds between two looks at the job files (the first-output latency a user sees, on top of SLURM's).
TICK = 0.2
#: At most one ``squeue`` per this many seconds, for all jobs together.
QUEUE_EVERY = 1.0


class MonitoredJob(Protocol):
    """What the monitor asks of a job (:class:`~.slurm.SlurmHandle`)."""

    job_id: str

    @property
    def command_timeout(self) -> float: ...

    @property
    def needs_queue(self) -> bool:
        """Whether the job still waits for SLURM to say how it is (it has not ended)."""
        ...

    def pump(self) -> bool:
        """Copy new output, read the exit file; True when the job needs nothing more."""
        ...

    def update(self, job: JobState | None, now: float) -> None:
        """What ``squeue --states=all`` said of the job (``None``: SLURM forgot it)."""
        ...

    def fail(self, why: str) -> None:
        """SLURM could not be asked: the job is as it was, and says why nobody knows more."""
        ...


class Monitor:
    """Feeds every job's output and asks SLURM about all of them (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: dict[int, MonitoredJob] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._asking: threading.Thread | None = None
        self._last_queue = 0.0
        #: Calls of ``squeue`` so far (a test proves they are shared and rate-limited).
        self.queue_calls = 0

    def add(self, job: MonitoredJob) -> None:
        with self._lock:
            self._jobs[id(job)] = job
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="execmagic-slurm", daemon=True)
                self._thread.start()
        self.wake()

    def forget(self, job: MonitoredJob) -> None:
        with self._lock:
            self._jobs.pop(id(job), None)

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                jobs = list(self._jobs.values())
                if not jobs:
                    self._thread = None
                    return
            for job in jobs:
                try:
                    if job.pump():
                        self.forget(job)
                except Exception as exc:  # one job's trouble must not stop the others'
                    job.fail(str(exc))
            self._ask_queue([j for j in jobs if j.needs_queue])
            self._wake.wait(TICK)
            self._wake.clear()

    def _ask_queue(self, jobs: Sequence[MonitoredJob]) -> None:
        """Start one ``squeue`` for ``jobs`` on its own thread, unless one still runs or ran lately."""
        now = time.monotonic()
        if not jobs or now - self._last_queue < QUEUE_EVERY or (self._asking is not None and self._asking.is_alive()):
            return
        self._last_queue = now
        self._asking = threading.Thread(target=self._query, args=(jobs, now), name="execmagic-squeue", daemon=True)
        self._asking.start()

    def _query(self, jobs: Sequence[MonitoredJob], now: float) -> None:
        timeout = min(j.command_timeout for j in jobs)
        try:
            self.queue_calls += 1
            listed = slurm_cli.queue(timeout=timeout, every_state=True)
        except SlurmError as exc:
            for job in jobs:
                job.fail(exc.issue)
            return
        for job in jobs:
            try:
                job.update(listed.get(job.job_id), now)
            except SlurmError as exc:  # asking about this one job failed (its exit code): next time
                job.fail(exc.issue)


#: Shared by every backend of this process: one ``squeue`` for all jobs.
MONITOR = Monitor()
