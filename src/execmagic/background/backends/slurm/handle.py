"""One SLURM job as the registry sees it (a :class:`~..base.Handle`): its files copied into pipes,
its state as the monitor last learned it (see :mod:`.backend` for the whole design).

How the job ended is read from the wrapper's exit-code file first (its exact code, signal or
timeout), else from what SLURM says of a job that ended without one (cancelled while queued, its
time limit, a node failure, a job SLURM forgot).
"""

from __future__ import annotations

import contextlib
import signal as signal_module

from ....process.stop import StopReport
from ..base import STREAMS, JobRecord
from ..filepump import FileStream
from ..remote import RemoteHandle
from ..status import JobStatus, Phase
from . import cli
from .cli import Failure, JobState, SlurmError
from .files import JobFiles, write_private
from .monitor import QUEUE_EVERY, Monitor
from .status import ended_status, status_of

__all__ = ["EXIT_FILE_WAIT", "SlurmHandle"]

#: Seconds a job may be gone from the queue before its exit-code file must be there (a shared
#: filesystem shows a file written on another node a little later).
EXIT_FILE_WAIT = 5.0


class SlurmHandle(RemoteHandle):
    """One SLURM job as the registry sees it (see :class:`~..base.Handle`); its state is what the
    monitor last learned, so every method is quick and none runs a SLURM command except :meth:`stop`."""

    def __init__(self, files: JobFiles, meta: JobRecord, *, monitor: Monitor, command_timeout: float) -> None:
        self._streams = {name: FileStream(files.path(name)) for name in STREAMS}
        super().__init__(self._streams, monitor, JobStatus(Phase.PENDING))
        self.job_id = job_id = files.job_id
        #: Not a process id: no process of ours runs the job, so the pid a listing shows is the
        #: SLURM job id (0 for an id that is not a plain number).
        self.pid = int(job_id) if job_id.isdigit() else 0
        #: What the job was started as (shown again by a kernel that reattaches).
        self.meta = meta
        self.files = files
        #: Seconds any one SLURM command may take (the backend's).
        self.command_timeout = command_timeout
        self._gone_since: float | None = None
        self._escalated = False
        #: The signal our stop sent, SIGKILL once it escalated (``None``: we never stopped it).
        self._stopped_with: int | None = None
        #: The lock that says this owner still reads the job's files (see JobFiles.hold).
        self._reading = files.hold()
        self._copied = False  # the job ended and every byte of its files is in the pipes

    # -- what the registry asks (its state and describe() are RemoteHandle's) ----------
    def remove_files(self) -> None:
        """Delete this job's files in the logs folder (output, exit code, record, grace) once it ended:
        they are the cluster's copy, the registry's logs are the kernel's.  Not before this owner
        copied all of them, nor while another owner attached to the job still reads them."""
        if self._returncode is None:
            return
        with self._lock:
            copied = self._copied
        if copied:  # else the monitor removes them once it has copied them (see pump)
            self.files.remove()

    def detach(self) -> None:
        """Stop copying the job's files (its owner is closing); the job itself runs on."""
        super().detach()
        self.files.release(self._reading)
        self._reading = None

    def stop(self, sig: int, grace: float) -> StopReport:
        """Signal the job's tree through the wrapper; SIGKILL it through SLURM if it is still there
        after ``grace`` (and a moment for the wrapper to finish); cancel a job that has not started."""
        if not self._running():
            return StopReport()
        timeout = self.command_timeout
        signalled = (self.pid,)
        with contextlib.suppress(OSError):
            write_private(self.files.path("grace"), f"{grace:g}\n")
        if self._state.phase is Phase.PENDING:
            # not started, as far as we know: SLURM's own cancel (``scancel --signal`` would retry for
            # a pending job until it runs); had it just started, SLURM's TERM reaches the wrapper,
            # which stops the tree as for any signal
            if not self._cancel(None):
                return StopReport()
            self.ended.wait(grace + QUEUE_EVERY * 3)
            return StopReport(signalled=signalled)
        self._stopped_with = sig
        if not self._cancel(signal_module.Signals(sig).name.removeprefix("SIG")):
            return StopReport()
        if self.ended.wait(grace + 2.0):
            return StopReport(signalled=signalled, killed=signalled if self._escalated else ())
        self._stopped_with = signal_module.SIGKILL
        with contextlib.suppress(SlurmError):
            cli.cancel(self.job_id, signal="KILL", timeout=timeout)
        with contextlib.suppress(SlurmError):
            cli.cancel(self.job_id, signal=None, timeout=timeout)
        self._poller.wake()
        survivors = () if self.ended.wait(EXIT_FILE_WAIT + QUEUE_EVERY * 2) else signalled
        return StopReport(signalled=signalled, killed=signalled, survivors=survivors)

    def _cancel(self, signal: str | None) -> bool:
        """``scancel``; False when SLURM refused because the job had ended meanwhile (the monitor
        then learns how); an unreachable controller is an error the user must see."""
        try:
            cli.cancel(self.job_id, signal=signal, timeout=self.command_timeout)
        except SlurmError as exc:
            self._poller.wake()
            if exc.failure is Failure.REFUSED and self.ended.wait(EXIT_FILE_WAIT + QUEUE_EVERY * 2):
                return False
            raise
        self._poller.wake()
        return True

    # -- what the monitor does (see monitor.MonitoredJob) ------------------------------
    @property
    def needs_queue(self) -> bool:
        return self._returncode is None

    def pump(self, now: float) -> bool:
        """Copy new output; read the exit-code file; close the pipes once everything is in.
        True when this handle needs nothing more from the monitor."""
        if self._returncode is None:
            self._read_exit_file()
        if self._state.phase is Phase.PENDING and any(s.exists() for s in self._streams.values()):
            self._learn(JobStatus(Phase.RUNNING))  # its files exist: it started (squeue will name the node)
        done = all([stream.copy() for stream in self._streams.values()]) and self._returncode is not None
        if done:
            # everything is in the pipes: this owner reads the files no more (said before the pipes
            # end, so an owner that saw the end and cleans up finds them copied)
            self.files.release(self._reading)
            self._reading = None
            with self._lock:
                self._copied = True
            # the cluster's copy is read by nobody now (another owner attached holds the record's lock,
            # and removes them when it is done in turn): files of ended jobs do not pile up on the share
            self.files.remove()
        return self._finish(done)

    def update(self, job: JobState | None, now: float) -> None:
        """What ``squeue --states=all`` said (``None``: SLURM forgot the job)."""
        if self._returncode is not None:
            return
        if job is not None and not job.ended:
            self._gone_since = None
            self._learn(status_of(job))
            return
        if self._gone_since is None:
            self._gone_since = now
        self._read_exit_file()
        if self._returncode is not None:
            return
        if self._stopped_with is not None and (job is None or job.state in ("CANCELLED", "FAILED")):
            # our stop ended it before its wrapper could say how (SIGKILL, or a plain scancel)
            self._end(-self._stopped_with, JobStatus(Phase.KILLED))
        elif job is None:
            self._end(1, JobStatus(Phase.LOST, reason="SLURM forgot the job, and it left no exit code"))
        elif job.state in ("CANCELLED", "TIMEOUT", "DEADLINE"):
            self._end(*ended_status(job))  # SLURM ended it, maybe before the wrapper ran
        elif job.state not in ("COMPLETED", "FAILED") or now - self._gone_since >= EXIT_FILE_WAIT:
            # not the wrapper's own end (whose exit file the shared filesystem shows in a moment)
            self._end(*ended_status(cli.job_record(self.job_id, timeout=self.command_timeout)))

    def _read_exit_file(self) -> None:
        try:
            with open(self.files.path("exit")) as fh:
                words = fh.read().split()
        except FileNotFoundError:
            return
        if not words or not words[0].isdigit() or len(words[0]) > 3:
            return  # not what the wrapper writes (an exit status is 0-255): the queue decides instead
        code, how = int(words[0]), words[1] if len(words) > 1 else "exit"
        if how == "killed":
            self._escalated = "KILL" in words[3:]
            named = getattr(signal_module, "SIG" + words[2], None) if len(words) > 2 else signal_module.SIGTERM
            number = named.value if isinstance(named, signal_module.Signals) else signal_module.SIGTERM
            self._end(-number, JobStatus(Phase.KILLED))
        elif how == "timeout":
            self._end(124, JobStatus(Phase.TIMED_OUT))
        else:
            self._end(code, JobStatus(Phase.EXITED))
