"""A job's state, typed: a :class:`Phase`, the backend's reason and the node, instead of words.

Backends decide from typed values (``status.phase is Phase.PENDING``), never from text they showed
before; the words a user sees (``queued (Resources)``, ``running on node7``, ``timed out``) are
rendered in one place, :meth:`JobStatus.words`, the same for every backend.
"""

from __future__ import annotations

import dataclasses
import enum

__all__ = ["JobStatus", "Phase"]


class Phase(enum.Enum):
    """Where a job is in its life."""

    #: Waiting for resources (the backend's :attr:`JobStatus.reason` says why).
    PENDING = "pending"
    RUNNING = "running"
    #: Its command ended by itself; the return code says how.
    EXITED = "exited"
    #: Stopped by a signal (ours, or the backend's cancel).
    KILLED = "killed"
    TIMED_OUT = "timed out"
    #: The backend ended it before its command could (a node failure, out of memory).
    FAILED = "failed"
    #: The backend no longer knows the job and nothing says how it ended.
    LOST = "lost"

    @property
    def active(self) -> bool:
        return self in (Phase.PENDING, Phase.RUNNING)


@dataclasses.dataclass(frozen=True)
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
        says (``exited 3``)."""
        phase = self.phase
        if phase is Phase.EXITED:
            return None
        if phase is Phase.PENDING:
            text = "queued"
        elif phase is Phase.RUNNING:
            text = f"running on {self.node}" if self.node else "running"
        elif phase is Phase.FAILED or phase is Phase.LOST:
            return f"{phase.value}: {self.reason or 'no reason given'}"
        else:
            text = phase.value
        if self.reason:
            return f"{text} ({self.reason})"
        if self.unknown and phase.active:
            return f"{text} (status unknown: {self.unknown})"
        return text
