"""Ray's word for a job's state, and its wrapper's record of how the command ended, as typed
:class:`~..status.JobStatus` values (as :mod:`..slurm.status` does for SLURM's).

How a job ended is the wrapper's record when it wrote one (the exact exit code, the signal, the
timeout), else Ray's fields: a job Ray stopped, a wrapper that never started, Ray's error type.
"""

from __future__ import annotations

import signal as signal_module

from ..status import JobStatus, Phase
from .client import JobInfo, RayPhase
from .framing import Outcome

__all__ = ["NOT_STARTED", "ended_status", "signal_number", "status_of"]

#: A job stopped while Ray still held it for resources: the command never ran, so no signal of the
#: command's says how it ended (``killed (before it started)``).
NOT_STARTED = JobStatus(Phase.KILLED, reason="before it started")


def status_of(info: JobInfo, node: str | None = None) -> JobStatus | None:
    """A job Ray has not ended: queued with the first line of Ray's message (why it waits), or running
    on ``node`` (the wrapper's word: Ray's record names no host); ``None`` for one Ray ended."""
    if info.phase is RayPhase.PENDING:
        return JobStatus(Phase.PENDING, reason=info.message.strip().split("\n")[0].rstrip("."))
    if info.phase is RayPhase.RUNNING:
        return JobStatus(Phase.RUNNING, node=node or "")
    return None


def ended_status(outcome: Outcome | None, info: JobInfo | None, *, started: bool,
                 wrapper_ran: bool) -> tuple[int, JobStatus]:
    """The return code and status of a job Ray ended, whose log is read: ``outcome`` is the wrapper's
    record (``None``: it wrote none), ``info`` Ray's; ``started``: the wrapper said on which node it
    runs; ``wrapper_ran``: it said hello at all (its pid)."""
    if outcome is not None:
        return _recorded(outcome)
    if info is None:
        return 1, JobStatus(Phase.FAILED, reason="Ray said nothing of the job")
    if info.phase is RayPhase.STOPPED:
        return -signal_module.SIGTERM, JobStatus(Phase.KILLED) if started else NOT_STARTED
    code = info.driver_exit_code
    if code is not None and code < 0:
        return code, JobStatus(Phase.EXITED)  # the wrapper itself died of that signal (not Ray's stop)
    if info.phase is RayPhase.SUCCEEDED:
        return code or 0, JobStatus(Phase.EXITED)
    if not wrapper_ran and code is not None:
        # the entrypoint ran, but the wrapper never said hello: no Python on the node, or it broke
        return code or 1, JobStatus(Phase.FAILED, reason=f"the job's wrapper did not start on the node"
                                    f" (exit {code}; see the job's log in Ray's dashboard)")
    message = info.message.strip().split("\n")[0]
    why = (info.error_type or "FAILED") + (f" ({message[:200]})" if message else "")
    return code or 1, JobStatus(Phase.FAILED, reason=why)


def _recorded(outcome: Outcome) -> tuple[int, JobStatus]:
    """The wrapper's record: ``stopped`` (a signal reached the wrapper: a stop, ours or Ray's),
    ``signal`` (the command died of one nobody of ours sent), ``timeout``, ``exit``."""
    number = signal_number(outcome.signal)
    if outcome.how == "timeout":
        return 124, JobStatus(Phase.TIMED_OUT)
    if outcome.how == "stopped" and number:
        return -number, JobStatus(Phase.KILLED)
    if outcome.how == "signal" and number:
        return -number, JobStatus(Phase.EXITED)
    return outcome.code, JobStatus(Phase.EXITED)


def signal_number(name: str | None) -> int:
    """The number of the signal named ``name`` (``SIGKILL``); 0 for none, or a name this system lacks."""
    named = getattr(signal_module, name, None) if name else None
    return named.value if isinstance(named, signal_module.Signals) else 0
