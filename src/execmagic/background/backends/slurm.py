"""Background shells as SLURM batch jobs (see :mod:`.base`; the options are in :mod:`.slurm_options`).

(Over 400 lines, on purpose: the job's files, its handle and the backend share one naming and locking
rule for the shared folder; the options, the status, the monitor and ``srun`` are modules of their own.)

A job is submitted with ``sbatch`` through :file:`slurm_job.sh`, a small wrapper shipped with
execmagic that runs the command in a session of its own, stops its whole tree on a signal or at the
timeout, and leaves the exit code in a file next to the logs.  The cluster writes the job's stdout
and stderr into a folder on a shared filesystem (:attr:`SlurmJobs.logs_dir`); the kernel reads
them from there.  So the registry sees a job as it sees a local shell:

- the process-wide :class:`~.slurm_monitor.Monitor` thread copies what the job files grew by into a
  pipe per stream (:class:`~.filepump.FileStream`), which the registry's reader mirrors into the
  shell's own logs; it closes the pipes once the job ended and its files are copied;
- the same thread asks SLURM how the jobs are: one ``squeue --states=all`` for all of them, at most
  once a second, then the exit-code file, then ``scontrol show job`` for the exit code of a job
  that ended without one.  A handle's answers are that cached, typed state
  (:class:`~.status.JobStatus`), so nothing under the registry's lock ever runs a SLURM command;
- stopping is ``scancel --signal=SIG --full`` (the wrapper stops the tree, SIGKILL after its grace),
  a last ``scancel --signal=KILL --full`` if the job is still there after the grace, and a plain
  ``scancel`` for a job that has not started.

Jobs outlive the kernel by design (``guard`` is ``None``: the watchdog leaves them alone); a new
kernel finds them by their job name prefix and the marker in their comment, checks the record kept
next to their logs, and reattaches by job id, reading the files again from the start.  A foreground
run (``%exec --on slurm``) is :mod:`.slurm_srun`'s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import re
import signal as signal_module
import threading
import time
from collections.abc import Mapping
from importlib import resources

from ...process.clock import now_iso
from ...process.errors import UsageProblem, shown_value
from ...process.private import make_folder, write_file
from ...process.spec import Command
from ...process.stop import StopReport
from . import slurm_cli
from .base import STREAMS, JobRecord
from .filepump import FileStream, JobEnd
from .slurm_cli import Failure, JobState, SlurmError
from .slurm_monitor import MONITOR, QUEUE_EVERY
from .slurm_options import (
    OWNED_SBATCH_OPTIONS,
    SlurmOptions,
    check_extra,
    checked_logs_dir,
    default_logs_dir,
    sbatch_words,
)
from .slurm_script import job_command
from .slurm_srun import SrunRun
from .slurm_status import ended_status, status_of
from .status import JobStatus, Phase

__all__ = [
    "JOB_PREFIX", "OWNED_SBATCH_OPTIONS", "SlurmBackend", "SlurmHandle", "SlurmJobs", "SlurmOptions", "check_extra",
    "checked_logs_dir", "default_logs_dir", "sbatch_words", "wrapper_path", "wrapper_text",
]

#: Every job's name starts with this, so a new kernel can find the jobs execmagic started.
JOB_PREFIX = "execmagic-"
#: What every job's ``--comment`` starts with, before the run's marker.
_COMMENT = "execmagic "
#: Seconds a job may be gone from the queue before its exit-code file must be there (a shared
#: filesystem shows a file written on another node a little later).
_EXIT_FILE_WAIT = 5.0


#: ``ClusterName`` of each cluster this process submitted to, by the ``SLURM_CONF`` that chose it.
_CLUSTERS: dict[str | None, str] = {}
_CLUSTERS_LOCK = threading.Lock()


def _file_word(text: str) -> str:
    """``text`` as part of a file name SLURM is given (no ``/``, no ``%`` it would expand)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _write_private(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text``, 0600 (a new file beside it, then renamed over it)."""
    partial = write_file(f"{path}.{os.getpid()}.tmp", text.encode(), unique=True)
    os.replace(partial, path)


def wrapper_path() -> str:
    """The job wrapper shipped with the package (``sbatch`` copies it into the job: no shared path needed)."""
    return str(resources.files(__package__).joinpath("slurm_job.sh"))


def wrapper_text() -> str:
    """The wrapper's text, for ``srun`` (which runs a command, not a script it copies)."""
    with open(wrapper_path()) as fh:
        return fh.read()


class _JobFiles:
    """The files one job has in the logs folder: its output, its exit code, its record, the grace.

    Named after the cluster, the job id *and* the run's marker (``CLUSTER-JOB-MARKER.stdout``): job
    ids are unique only within one cluster, and start again when a cluster's state is rebuilt,
    while many sites share one home folder between clusters.  So a job never reads, trusts or
    removes a file written for another one.
    """

    #: ``slurm``: what SLURM itself writes about the job (sbatch's ``--output``), kept apart from
    #: the command's output so that a cancel notice never shows as the command's stderr.
    SUFFIXES = (*STREAMS, "slurm", "exit", "json", "grace")

    def __init__(self, logs_dir: str, cluster: str, job_id: str, marker: str) -> None:
        self.logs_dir = logs_dir
        self.cluster = cluster
        self.job_id = job_id
        self.marker = marker
        self.stem = os.path.join(logs_dir, f"{_file_word(cluster)}-{job_id}-{_file_word(marker)}")

    @staticmethod
    def pattern(logs_dir: str, cluster: str, marker: str) -> str:
        """The files' path without suffix as ``sbatch`` and the wrapper take it, ``%j`` for the job id."""
        return os.path.join(logs_dir, f"{_file_word(cluster)}-%j-{_file_word(marker)}")

    def path(self, suffix: str) -> str:
        return f"{self.stem}.{suffix}"

    def write_record(self, record: JobRecord) -> None:
        fields = {**dataclasses.asdict(record), "cluster": self.cluster}
        with contextlib.suppress(OSError):
            _write_private(self.path("json"), json.dumps(fields))

    def read_record(self) -> JobRecord | None:
        """The record written at submission; ``None`` when missing, unreadable or another job's."""
        try:
            with open(self.path("json")) as fh:
                fields = json.load(fh)
            cluster = fields.pop("cluster")
            record = JobRecord(**fields)
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if (cluster, record.job_id, record.marker) != (self.cluster, self.job_id, self.marker):
            return None
        return record

    def hold(self) -> int | None:
        """Say that this owner reads the job's files: a shared lock on its record, held by the open
        descriptor returned (``None``: no record to lock), until :meth:`release`."""
        try:
            fd = os.open(self.path("json"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            return None
        return fd

    @staticmethod
    def release(fd: int | None) -> None:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def remove(self) -> bool:
        """Delete the job's files unless another owner still reads them (it holds the record's
        lock: a kernel attached to the same job); True when they are gone."""
        try:
            fd = os.open(self.path("json"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = None
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by another reader: it is not ours to take away
            self.release(fd)
            return False
        for suffix in self.SUFFIXES:
            with contextlib.suppress(OSError):
                os.unlink(self.path(suffix))
        self.release(fd)
        return True


class SlurmHandle:
    """One SLURM job as the registry sees it (see :class:`~.base.Handle`); its state is what the
    monitor last learned, so every method is quick and none runs a SLURM command except :meth:`stop`."""

    poll_interval = 1.0  # unused: exit_fd() always gives a descriptor
    guard: tuple[int, str] | None = None  # a job outlives its kernel by design
    enforces_timeout = True  # the wrapper applies the timeout, also when the kernel is gone

    def __init__(self, backend: SlurmJobs, files: _JobFiles, meta: JobRecord) -> None:
        self.backend = backend
        self.job_id = job_id = files.job_id
        #: Not a process id: no process of ours runs the job, so the pid a listing shows is the
        #: SLURM job id (0 for an id that is not a plain number).
        self.pid = int(job_id) if job_id.isdigit() else 0
        #: What the job was started as (shown again by a kernel that reattaches).
        self.meta = meta
        self.files = files
        self._streams = {name: FileStream(self.files.path(name)) for name in STREAMS}
        self.streams: Mapping[str, int] = {name: s.read_fd for name, s in self._streams.items()}
        self._lock = threading.Lock()
        self._returncode: int | None = None
        self._status = JobStatus(Phase.PENDING)
        self._gone_since: float | None = None
        self._end_of_job = JobEnd()
        self._escalated = False
        #: The signal our stop sent, SIGKILL once it escalated (``None``: we never stopped it).
        self._stopped_with: int | None = None
        self._detached = False
        self.ended = self._end_of_job.event
        #: The lock that says this owner still reads the job's files (see _JobFiles.hold).
        self._reading = files.hold()
        self._copied = False  # the job ended and every byte of its files is in the pipes

    # -- what the registry asks -----------------------------------------------------
    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def status(self) -> JobStatus:
        return self._status

    def poll(self) -> int | None:
        return self._returncode

    def describe(self) -> str | None:
        """``queued (Reason)``, ``running on NODE``, ``killed``, ``timed out``, ``failed: …``; ``None``
        when the return code says it all (``exited N``)."""
        return self._status.words()

    def exit_fd(self) -> int | None:
        """A pipe whose write end the monitor closes when the job ends (so the reader wakes, no polling)."""
        return self._end_of_job.fd()

    def leftovers(self) -> bool:
        """The wrapper stops what the command left running before the job ends (as a cgroup would)."""
        return False

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
        for stream in self._streams.values():
            stream.close()
        self.backend.monitor.forget(self)
        self._detached = True
        self.files.release(self._reading)
        self._reading = None

    def stop(self, sig: int, grace: float) -> StopReport:
        """Signal the job's tree through the wrapper; SIGKILL it through SLURM if it is still there
        after ``grace`` (and a moment for the wrapper to finish); cancel a job that has not started."""
        if self._returncode is not None:
            return StopReport()
        if self._detached:  # stopped after its owner let it go: learn again when it ends
            self._detached = False
            self.backend.monitor.add(self)
        timeout = self.backend.command_timeout
        signalled = (self.pid,)
        with contextlib.suppress(OSError):
            _write_private(self.files.path("grace"), f"{grace:g}\n")
        if self._status.phase is Phase.PENDING:
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
            slurm_cli.cancel(self.job_id, signal="KILL", timeout=timeout)
        with contextlib.suppress(SlurmError):
            slurm_cli.cancel(self.job_id, signal=None, timeout=timeout)
        self.backend.monitor.wake()
        survivors = () if self.ended.wait(_EXIT_FILE_WAIT + QUEUE_EVERY * 2) else signalled
        return StopReport(signalled=signalled, killed=signalled, survivors=survivors)

    def _cancel(self, signal: str | None) -> bool:
        """``scancel``; False when SLURM refused because the job had ended meanwhile (the monitor
        then learns how); an unreachable controller is an error the user must see."""
        try:
            slurm_cli.cancel(self.job_id, signal=signal, timeout=self.backend.command_timeout)
        except SlurmError as exc:
            self.backend.monitor.wake()
            if exc.failure is Failure.REFUSED and self.ended.wait(_EXIT_FILE_WAIT + QUEUE_EVERY * 2):
                return False
            raise
        self.backend.monitor.wake()
        return True

    # -- what the monitor does (see slurm_monitor.MonitoredJob) ------------------------
    @property
    def command_timeout(self) -> float:
        return self.backend.command_timeout

    @property
    def needs_queue(self) -> bool:
        return self._returncode is None

    def pump(self) -> bool:
        """Copy new output; read the exit-code file; close the pipes once everything is in.
        True when this handle needs nothing more from the monitor."""
        if self._returncode is None:
            self._read_exit_file()
        if self._status.phase is Phase.PENDING and any(s.exists() for s in self._streams.values()):
            with self._lock:  # its files exist: it started (squeue will name the node)
                if self._returncode is None:
                    self._status = JobStatus(Phase.RUNNING)
        done = all([stream.copy() for stream in self._streams.values()])
        if self._returncode is not None and done:
            # everything is in the pipes: this owner reads the files no more (said before the pipes
            # end, so an owner that saw the end and cleans up finds them copied)
            self.files.release(self._reading)
            self._reading = None
            with self._lock:
                self._copied = True
            # the cluster's copy is read by nobody now (another owner attached holds the record's lock,
            # and removes them when it is done in turn): files of ended jobs do not pile up on the share
            self.files.remove()
            for stream in self._streams.values():
                stream.close()
            return True
        return False

    def update(self, job: JobState | None, now: float) -> None:
        """What ``squeue --states=all`` said (``None``: SLURM forgot the job)."""
        if self._returncode is not None:
            return
        if job is not None and not job.ended:
            self._gone_since = None
            with self._lock:
                if self._returncode is None:
                    self._status = status_of(job)
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
        elif job.state not in ("COMPLETED", "FAILED") or now - self._gone_since >= _EXIT_FILE_WAIT:
            # not the wrapper's own end (whose exit file the shared filesystem shows in a moment)
            self._end(*ended_status(slurm_cli.job_record(self.job_id, timeout=self.backend.command_timeout)))

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

    def _end(self, returncode: int, status: JobStatus) -> None:
        """The job ended: the first to learn how wins (the exit file and the queue are read on two threads)."""
        with self._lock:
            if self._returncode is not None:
                return
            self._returncode = returncode
            self._status = status
        self._end_of_job.set()

    def fail(self, why: str) -> None:
        """SLURM could not be asked; the job is still whatever it was, say why we do not know more."""
        with self._lock:
            if self._returncode is None:
                self._status = dataclasses.replace(self._status, unknown=why)


class SlurmJobs:
    """Start background shells as SLURM batch jobs (see the module docstring).

    Also importable as :data:`SlurmBackend`, its public name; the settings section that configures
    ``--on slurm`` in a notebook is called ``SlurmBackend`` too (``c.SlurmBackend.partition``).
    """

    name = "slurm"
    remote = True

    def __init__(self, options: SlurmOptions | None = None, *, logs_dir: str | None = None, grace: float = 2.0,
                 command_timeout: float = 30.0) -> None:
        self.options = options or SlurmOptions()
        self.logs_dir = checked_logs_dir(logs_dir or default_logs_dir())
        self.grace = grace
        #: Seconds any one SLURM command may take (an unreachable controller is retried by SLURM).
        self.command_timeout = command_timeout
        self.monitor = MONITOR

    def make_logs_folder(self) -> None:
        """The logs folder, made 0700 when missing (the job's output lands there, tokens and all; an
        existing folder is the user's, taken as it is)."""
        try:
            make_folder(self.logs_dir)
        except OSError as exc:
            raise UsageProblem(f"cannot make the SLURM logs folder {self.logs_dir}: {exc.strerror or exc}") from None

    def cluster(self, env: Mapping[str, str] | None = None) -> str:
        """The name of the cluster ``env`` (the kernel's by default) sends jobs to; asked once."""
        conf = (env if env is not None else os.environ).get("SLURM_CONF")
        with _CLUSTERS_LOCK:
            known = _CLUSTERS.get(conf)
        if known is None:
            known = slurm_cli.cluster_name(timeout=self.command_timeout, env=env)
            with _CLUSTERS_LOCK:
                _CLUSTERS[conf] = known
        return known

    @staticmethod
    def job_env(command: Command) -> dict[str, str]:
        """The job's environment: the command's, sent to the cluster this kernel knows (its
        ``SLURM_CONF``), whatever the session's environment says."""
        env = dict(command.env)
        if "SLURM_CONF" in os.environ:
            env.setdefault("SLURM_CONF", os.environ["SLURM_CONF"])
        return env

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job") -> SlurmHandle:
        """Submit ``command`` with ``sbatch``; raises :class:`SlurmError` (a ``PreExecError``) with
        SLURM's own message when it refuses (no ``sbatch``, unreachable controller, bad option)."""
        job_argv, env = job_command(command, self.job_env(command))  # the script by the environment, if secret
        self.make_logs_folder()
        cluster = self.cluster(env)
        files = _JobFiles.pattern(self.logs_dir, cluster, marker)
        argv = ["sbatch", "--parsable", "--export=ALL", f"--job-name={JOB_PREFIX}{shell_id}",
                f"--comment={_COMMENT}{marker}", f"--chdir={command.cwd}", f"--output={files}.slurm",
                f"--error={files}.slurm", *self.options.sbatch_args(),
                wrapper_path(), files, f"{timeout or 0:g}", f"{self.grace:g}", marker, "--", *job_argv]
        try:
            out = slurm_cli.run_slurm(argv, timeout=self.command_timeout, env=env, what="sbatch")
        except SlurmError as exc:
            if exc.failure is not Failure.TIMEOUT:
                raise
            job_id = self._submitted(marker, exc, f"{JOB_PREFIX}{shell_id}")
        else:
            job_id = out.strip().split(";")[0]
            if not job_id.isdigit():
                raise SlurmError(f"sbatch did not answer with a job id (it said {out.strip()[:200]!r})",
                                 Failure.PROTOCOL, program="sbatch")
        record = JobRecord(job_id=job_id, shell_id=shell_id, command=command.display, cwd=command.cwd, marker=marker,
                           started_at=now_iso("seconds"), timeout=timeout)
        job_files = _JobFiles(self.logs_dir, cluster, job_id, marker)
        job_files.write_record(record)
        handle = SlurmHandle(self, job_files, record)
        self.monitor.add(handle)
        return handle

    def _submitted(self, marker: str, timed_out: SlurmError, job_name: str) -> str:
        """The id of the job an ``sbatch`` that timed out submitted after all, found by its marker, so
        it is adopted rather than submitted twice; ``timed_out`` again when SLURM has no such job."""
        try:
            listed = slurm_cli.queue(timeout=self.command_timeout, every_state=True)
        except SlurmError:
            raise SlurmError(f"{timed_out.issue}; it may have submitted the job all the same (squeue --me"
                             f" --name={job_name} shows it)", Failure.TIMEOUT, program="sbatch") from None
        for job in listed.values():
            if _marker_of(job) == marker:
                return job.job_id
        raise timed_out

    def reattach(self, job_id: str, *, marker: str = "") -> SlurmHandle:
        """The handle of a job started earlier (by this or an earlier kernel), reading its files from
        the start.  ``marker``: the run's, from :meth:`find_jobs`; empty: any.  SLURM must list the job
        with that marker in its comment (a job id alone may be another cluster's, or a rebuilt
        one's), and its record must have been written for this cluster, job and marker."""
        if not job_id.isdigit():
            raise UsageProblem(f"not a SLURM job id: {shown_value(job_id)}")
        job = slurm_cli.queue(timeout=self.command_timeout, every_state=True).get(job_id)
        listed = _marker_of(job) if job is not None else ""
        files = _JobFiles(self.logs_dir, self.cluster(), job_id, listed)
        record = files.read_record() if listed and marker in ("", listed) else None
        if record is None:
            raise UsageProblem(f"SLURM job {job_id} was not started by execmagic with logs in {self.logs_dir}")
        handle = SlurmHandle(self, files, record)
        if job is not None and not job.ended:  # "running on NODE" at once, not "queued" until the first look
            handle.update(job, time.monotonic())
        self.monitor.add(handle)
        return handle

    def find_jobs(self) -> list[JobRecord]:
        """This user's jobs that SLURM still lists and execmagic started: their name prefix, the
        marker in their comment, and a record in the logs folder written for that cluster, job and
        marker."""
        found = []
        listed = slurm_cli.queue(timeout=self.command_timeout)
        cluster = self.cluster() if listed else ""
        for job in listed.values():
            marker = _marker_of(job)
            if not job.name.startswith(JOB_PREFIX) or not marker:
                continue
            record = _JobFiles(self.logs_dir, cluster, job.job_id, marker).read_record()
            if record is not None:
                found.append(record)
        return found

    def foreground(self, command: Command, *, name: str) -> SrunRun:
        """``command`` as a foreground run through ``srun`` (see :mod:`.slurm_srun`)."""
        return SrunRun(self, command, name=name)


def _marker_of(job: JobState) -> str:
    """The run's marker execmagic put in the job's comment; empty for a job it did not start."""
    return job.comment.removeprefix(_COMMENT) if job.comment.startswith(_COMMENT) else ""


#: The backend's public name (``execmagic.SlurmBackend``), as the README documents it.
SlurmBackend = SlurmJobs
