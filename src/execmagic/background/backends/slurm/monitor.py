"""The one thread that feeds every SLURM job's output to the reader and asks SLURM how the jobs are.

The thread is the remote backends' :class:`~..poller.Poller`: per tick (:data:`TICK`) each job copies
what its files grew by into its pipes and reads its exit-code file (:meth:`MonitoredJob.pump`).  What
SLURM adds: at most once per :data:`QUEUE_EVERY` seconds, one ``squeue`` for all jobs of all backends
of this process (a controller serves many users), whose answer each job learns from
(:meth:`MonitoredJob.update`).  The ``squeue`` runs on a thread of its own, one at a time: a
controller that hangs (up to the command timeout) never holds up the output.  A job's answers to the
registry are what these threads last learned, so nothing under the registry's lock ever runs a SLURM
command.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Protocol

from ..poller import PolledJob, Poller
from . import cli
from .cli import JobState, SlurmError

__all__ = ["MONITOR", "QUEUE_EVERY", "TICK", "Monitor", "MonitoredJob"]

#: Seconds between two looks at the job files (the first-output latency a user sees, on top of SLURM's).
TICK = 0.2
#: At most one ``squeue`` per this many seconds, for all jobs together.
QUEUE_EVERY = 1.0


class MonitoredJob(PolledJob, Protocol):
    """What the monitor asks of a job (:class:`~.handle.SlurmHandle`), besides what every poller asks."""

    job_id: str

    @property
    def command_timeout(self) -> float: ...

    @property
    def needs_queue(self) -> bool:
        """Whether the job still waits for SLURM to say how it is (it has not ended)."""
        ...

    def update(self, job: JobState | None, now: float) -> None:
        """What ``squeue --states=all`` said of the job (``None``: SLURM forgot it)."""
        ...


class Monitor(Poller[MonitoredJob]):
    """Feeds every job's output and asks SLURM about all of them (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("execmagic-slurm", TICK)
        self._asking: threading.Thread | None = None
        self._last_queue = 0.0

    def between(self, jobs: Sequence[MonitoredJob]) -> None:
        """Start one ``squeue`` for the jobs still running on its own thread, unless one still runs or
        ran lately."""
        jobs = [job for job in jobs if job.needs_queue]
        now = time.monotonic()
        if not jobs or now - self._last_queue < QUEUE_EVERY or (self._asking is not None and self._asking.is_alive()):
            return
        self._last_queue = now
        self._asking = threading.Thread(target=self._query, args=(jobs, now), name="execmagic-squeue", daemon=True)
        self._asking.start()

    def _query(self, jobs: Sequence[MonitoredJob], now: float) -> None:
        timeout = min(j.command_timeout for j in jobs)
        try:
            listed = cli.queue(timeout=timeout, every_state=True)
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
