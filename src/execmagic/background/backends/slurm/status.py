"""SLURM's words for a job's state, as typed :class:`~.status.JobStatus` values."""

from __future__ import annotations

import signal

from ..status import JobStatus, Phase
from .cli import JobState

__all__ = ["ended_status", "status_of"]


def status_of(job: JobState) -> JobStatus:
    """A job ``squeue`` lists as not ended: queued with SLURM's reason, or running on its nodes."""
    if job.pending:
        return JobStatus(Phase.PENDING, reason=job.reason)
    return JobStatus(Phase.RUNNING, node=job.nodes)


def ended_status(job: JobState) -> tuple[int, JobStatus]:
    """The return code and status of a job that ended without its wrapper's exit file (SLURM ended
    it before the command could: cancelled while queued, its time limit, a node failure)."""
    if job.state == "CANCELLED":
        return -signal.SIGTERM, JobStatus(Phase.KILLED)
    if job.state in ("TIMEOUT", "DEADLINE"):
        return 124, JobStatus(Phase.TIMED_OUT, reason=job.state)
    code, sig = job.exit_code or (1, 0)
    why = job.state + (f" ({job.reason})" if job.reason else "")
    return (-sig if sig else (code or 1)), JobStatus(Phase.FAILED, reason=why)
