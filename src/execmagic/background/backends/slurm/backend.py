"""Background shells as SLURM batch jobs (see :mod:`..base`; the options are in :mod:`.options`, the
job's files in :mod:`.files`, its handle in :mod:`.handle`).

A job is submitted with ``sbatch`` through :file:`slurm_job.sh` (see :mod:`.script`), a small
wrapper shipped with execmagic that runs the command in a session of its own, stops its whole tree on a signal or at the
timeout, and leaves the exit code in a file next to the logs.  The cluster writes the job's stdout
and stderr into a folder on a shared filesystem (:attr:`SlurmBackend.logs_dir`); the kernel reads
them from there.  So the registry sees a job as it sees a local shell:

- the process-wide :class:`~.monitor.Monitor` thread copies what the job files grew by into a
  pipe per stream (:class:`~..filepump.FileStream`), which the registry's reader mirrors into the
  shell's own logs; it closes the pipes once the job ended and its files are copied;
- the same thread asks SLURM how the jobs are: one ``squeue --states=all`` for all of them, at most
  once a second, then the exit-code file, then ``scontrol show job`` for the exit code of a job
  that ended without one.  A handle's answers are that cached, typed state
  (:class:`~..status.JobStatus`), so nothing under the registry's lock ever runs a SLURM command;
- stopping is ``scancel --signal=SIG --full`` (the wrapper stops the tree, SIGKILL after its grace),
  a last ``scancel --signal=KILL --full`` if the job is still there after the grace, and a plain
  ``scancel`` for a job that has not started.

Jobs outlive the kernel by design (``guard`` is ``None``: the watchdog leaves them alone); a new
kernel finds them by their job name prefix and the marker in their comment, checks the record kept
next to their logs, and reattaches by job id, reading the files again from the start.  A foreground
run (``%exec --on slurm``) is :mod:`.srun`'s.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping

from ....process.clock import now_iso
from ....process.errors import UsageProblem, shown_value
from ....process.private import make_folder
from ....process.spec import Command
from ..base import JobRecord
from ..jobnames import job_name
from . import cli
from .cli import Failure, JobState, SlurmError
from .files import JobFiles
from .handle import SlurmHandle
from .monitor import MONITOR
from .options import SlurmOptions, checked_logs_dir, default_logs_dir
from .script import job_command, wrapper_path
from .srun import SrunRun

__all__ = ["SlurmBackend"]

#: What every job's ``--comment`` starts with, before the run's marker.
_COMMENT = "execmagic "

#: ``ClusterName`` of each cluster this process submitted to, by the ``SLURM_CONF`` that chose it.
_CLUSTERS: dict[str | None, str] = {}
_CLUSTERS_LOCK = threading.Lock()


class SlurmBackend:
    """Start background shells as SLURM batch jobs (see the module docstring): the registry's backend
    for ``--on slurm``, public as ``execmagic.SlurmBackend``; the settings section that configures it
    in a notebook has the same name (``c.SlurmBackend.partition``)."""

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
            known = cli.cluster_name(timeout=self.command_timeout, env=env)
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
        files = JobFiles.pattern(self.logs_dir, cluster, marker)
        argv = ["sbatch", "--parsable", "--export=ALL", f"--job-name={job_name(shell_id)}",
                f"--comment={_COMMENT}{marker}", f"--chdir={command.cwd}", f"--output={files}.slurm",
                f"--error={files}.slurm", *self.options.sbatch_args(),
                wrapper_path(), files, f"{timeout or 0:g}", f"{self.grace:g}", marker, "--", *job_argv]
        try:
            out = cli.run_slurm(argv, timeout=self.command_timeout, env=env, what="sbatch")
        except SlurmError as exc:
            if exc.failure is not Failure.TIMEOUT:
                raise
            job_id = self._submitted(marker, exc, job_name(shell_id))
        else:
            job_id = out.strip().split(";")[0]
            if not job_id.isdigit():
                raise SlurmError(f"sbatch did not answer with a job id (it said {out.strip()[:200]!r})",
                                 Failure.PROTOCOL, program="sbatch")
        record = JobRecord(job_id=job_id, shell_id=shell_id, command=command.display, cwd=command.cwd, marker=marker,
                           started_at=now_iso("seconds"), timeout=timeout)
        job_files = JobFiles(self.logs_dir, cluster, job_id, marker)
        job_files.write_record(record)
        handle = self._handle(job_files, record)
        self.monitor.add(handle)
        return handle

    def _submitted(self, marker: str, timed_out: SlurmError, job_name: str) -> str:
        """The id of the job an ``sbatch`` that timed out submitted after all, found by its marker, so
        it is adopted rather than submitted twice; ``timed_out`` again when SLURM has no such job."""
        try:
            listed = cli.queue(timeout=self.command_timeout, every_state=True)
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
        job = cli.queue(timeout=self.command_timeout, every_state=True).get(job_id)
        listed = _marker_of(job) if job is not None else ""
        files = JobFiles(self.logs_dir, self.cluster(), job_id, listed)
        record = files.read_record() if listed and marker in ("", listed) else None
        if record is None:
            raise UsageProblem(f"SLURM job {job_id} was not started by execmagic with logs in {self.logs_dir}")
        handle = self._handle(files, record)
        if job is not None and not job.ended:  # "running on NODE" at once, not "queued" until the first look
            handle.update(job, time.monotonic())
        self.monitor.add(handle)
        return handle

    def find_jobs(self) -> list[JobRecord]:
        """This user's jobs that SLURM still lists and execmagic started: their name prefix, the
        marker in their comment, and a record in the logs folder written for that cluster, job and
        marker."""
        found = []
        listed = cli.queue(timeout=self.command_timeout)
        cluster = self.cluster() if listed else ""
        for job in listed.values():
            marker = _marker_of(job)
            if not job.name.startswith(job_name("")) or not marker:
                continue
            record = JobFiles(self.logs_dir, cluster, job.job_id, marker).read_record()
            if record is not None:
                found.append(record)
        return found

    def foreground(self, command: Command, *, name: str) -> SrunRun:
        """``command`` as a foreground run through ``srun`` (see :mod:`.srun`)."""
        return SrunRun(command, name=name, env=self.job_env(command), options=self.options, grace=self.grace,
                       command_timeout=self.command_timeout)

    def _handle(self, files: JobFiles, record: JobRecord) -> SlurmHandle:
        return SlurmHandle(files, record, monitor=self.monitor, command_timeout=self.command_timeout)


def _marker_of(job: JobState) -> str:
    """The run's marker execmagic put in the job's comment; empty for a job it did not start."""
    return job.comment.removeprefix(_COMMENT) if job.comment.startswith(_COMMENT) else ""
