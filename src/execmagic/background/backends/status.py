"""A job's state, typed: a :class:`Phase`, the backend's reason and the node, instead of words.

Every remote backend keeps its jobs' states as these values (the shared handle,
:class:`~.remote.RemoteHandle`, holds one per job) and decides from them (``status.phase is
Phase.PENDING``), never from text it showed before; each backend turns what its cluster says into
them in its own ``status.py`` (SLURM's ``squeue`` states, Ray's job states and its wrapper's record).
The words a user sees (``queued (Resources)``, ``running on node7``, ``timed out``) are rendered in
one place, :meth:`JobStatus.words`, the same for every backend.
"""

from __future__ import annotations

import enum

from ...process.records import record

__all__ = ["JobStatus", "Phase"]


class Phase(enum.Enum):
    """Where a job is in its life."""

    #: Waiting for resources (the backend's :attr:`JobStatus.reason` says why).
    PENDING = "pending"
    RUNNING = "running"
    #: Its command ended by itself: an exit, or a signal neither we nor the backend sent (the kernel's
    #: OOM killer, its own ``kill``); the return code says how (``exited 3``, ``killed by SIGKILL``).
    EXITED = "exited"
    #: Stopped by a signal (ours, or the backend's cancel or stop); ``reason`` may say when.
    KILLED = "killed"
    TIMED_OUT = "timed out"
    #: The backend ended it before its command could (a node failure, out of memory).
    FAILED = "failed"
    #: The backend no longer knows the job and nothing says how it ended.
    LOST = "lost"

    @property
    def active(self) -> bool:
        return self in (Phase.PENDING, Phase.RUNNING)


@record
class JobStatus:
    """One job's state as its backend last learned it."""

    phase: Phase
    #: The backend's reason (SLURM's ``Resources``, a failure's state); empty: none given.
    reason: str = ""
    #: Where it runs or ran; empty: not known (yet).
    node: str = ""
    #: Why the latest look at the backend failed: the phase is the one learned before it.
    unknown: str = ""

    def words(self) -> str | None:
        """The status as a user reads it; ``None`` for :attr:`Phase.EXITED`, which the return code
        says (``exited 3``).  A job still queued or running whose latest look failed says so after
        what was learned before (``running on node7 (status unknown: …)``)."""
        phase = self.phase
        if phase is Phase.EXITED:
            return None
        if phase is Phase.FAILED or phase is Phase.LOST:
            return f"{phase.value}: {self.reason or 'no reason given'}"
        if phase is Phase.PENDING:
            text = "queued"
        elif phase is Phase.RUNNING:
            text = f"running on {self.node}" if self.node else "running"
        else:
            text = phase.value
        notes = [self.reason] if self.reason else []
        if self.unknown and phase.active:
            notes.append(f"status unknown: {self.unknown}")
        return f"{text} ({'; '.join(notes)})" if notes else text
