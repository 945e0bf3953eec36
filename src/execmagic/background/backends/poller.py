"""The one thread per remote backend that feeds every job's output to the reader and learns how
the jobs are: what SLURM's and Ray's monitors share.

A remote job's handle cannot hand the reader a descriptor its process writes to: the job runs
elsewhere.  So a poller thread calls each job's :meth:`PolledJob.pump` every :attr:`Poller.tick`
seconds (copy what is new into the job's pipes, learn its state, say when nothing more is needed),
and the registry's reader mirrors the pipes into the shell's logs.  One job's trouble never stops
the others' (it becomes that job's :meth:`PolledJob.fail`), and the thread ends when no job is left,
so an idle kernel runs none.  A backend that also asks about all its jobs at once (one ``squeue``
for every SLURM job) does it in :meth:`Poller.between`, after each pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

__all__ = ["PolledJob", "Poller"]


class PolledJob(Protocol):
    """What the poller asks of a job's handle."""

    def pump(self, now: float) -> bool:
        """Copy new output, learn the job's state (``now``: :func:`time.monotonic`); True when the
        job needs nothing more from the poller (it ended and every byte is in its pipes)."""
        ...

    def fail(self, why: str) -> None:
        """Looking at the job failed: it is as it was, and says why nobody knows more."""
        ...


Job = TypeVar("Job", bound=PolledJob)


class Poller(Generic[Job]):
    """One thread that pumps every job added, ``tick`` seconds apart (see the module docstring)."""

    def __init__(self, name: str, tick: float) -> None:
        #: The thread's name (``execmagic-slurm``), for a reader of a thread dump.
        self.name = name
        #: Seconds between two passes: the first-output latency a user sees, on top of the cluster's.
        self.tick = tick
        self._jobs: dict[int, Job] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, job: Job) -> None:
        """Pump ``job`` from now on (starting the thread when none runs)."""
        with self._lock:
            self._jobs[id(job)] = job
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self.wake()

    def forget(self, job: Job) -> None:
        with self._lock:
            self._jobs.pop(id(job), None)

    def wake(self) -> None:
        """Start the next pass now (a stop or a submission: the user waits for the change)."""
        self._wake.set()

    def between(self, jobs: Sequence[Job]) -> None:
        """After each pass, with the jobs of that pass: nothing here (see the module docstring)."""

    def _run(self) -> None:
        while True:
            with self._lock:
                jobs = list(self._jobs.values())
                if not jobs:
                    self._thread = None
                    return
            for job in jobs:
                try:
                    if job.pump(time.monotonic()):
                        self.forget(job)
                except Exception as exc:  # one job's trouble must not stop the others'
                    job.fail(f"{type(exc).__name__}: {exc}")
            self.between(jobs)
            self._wake.wait(self.tick)
            self._wake.clear()
