"""Ray Jobs as execmagic runs them, through Ray's Jobs REST API: submit, find, reattach, stop, and a
foreground run's command (the registry's backend, :class:`~.backend.RayBackend`, is built on it).

A job is submitted with the command under :mod:`.wrapper` as its entrypoint; the wrapper frames
the command's stdout and stderr into Ray's one log (see :mod:`.framing`) and ends with a record of
how the command ended.  So the registry sees a Ray job as it sees a local shell:

- one process-wide poller thread (:data:`~.handle.MONITOR`, see :mod:`..poller`) asks Ray, for
  every job, how it is (at most once a second) and for its log (Ray's API has no offset: the whole
  log comes back, and only what lies past the job's offset is decoded, so each byte reaches the
  pipes once); it feeds a pipe per
  stream, which the registry's reader mirrors into the shell's own logs (cursors, filter, wait and
  follow work unchanged), and closes the pipes once the job ended and its log is read;
- a handle's answers are that cached state, so nothing under the registry's lock talks to Ray,
  except :meth:`~.handle.RayHandle.stop` (Ray's stop; the wrapper stops the whole tree);
- the statuses, typed (:mod:`.status`) and said as every backend says them: ``queued (Ray's
  reason)``, ``running on NODE``, the command's exact exit code, a signal, ``killed``, ``timed out``,
  ``failed: …`` (Ray's error type, when the wrapper never ran) and ``lost: …`` (Ray no longer knows
  the job: deleted, or the head restarted).

Jobs outlive the kernel by design (``guard`` is ``None``).  Every job's metadata says it is
execmagic's and whose (user and machine of the kernel), so a later kernel finds this user's jobs
again (:meth:`RayCluster.find_jobs`) and reattaches by id, reading the log again from the start.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Mapping
from typing import Any

from ....process.clock import now_iso
from ....process.errors import UsageProblem, shown_value
from ....process.spec import Command
from ..jobnames import job_id as job_id_word
from ..script_env import handed_off, without_pieces
from .client import RayClient, RayError, RayPhase
from .entry import follower_argv
from .framing import entrypoint, new_tag
from .handle import MONITOR, STATUS_EVERY, RayHandle
from .job import RayJob, owner
from .options import RayOptions
from .status import status_of

__all__ = ["JobWatch", "RayCluster"]


class JobWatch:
    """What Ray says of one job, for the status line of a foreground run (``queued (…)``,
    ``running``): one request a second on a thread of its own, so a slow dashboard never holds up
    the run's output."""

    def __init__(self, client: RayClient, job_id: str, interval: float = STATUS_EVERY) -> None:
        self._client = client
        self.job_id = job_id
        self._interval = interval
        self._stopped = threading.Event()
        #: The latest state in words; ``None`` until Ray has listed the job.
        self.words: str | None = None
        self._thread = threading.Thread(target=self._run, name="execmagic-ray-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                status = status_of(self._client.info(self.job_id))
            except RayError:
                continue  # the status line keeps what it said; the run's output goes on
            if status is not None:
                self.words = status.words()

    def stop(self) -> None:
        self._stopped.set()


class RayCluster:
    """Ray Jobs on one cluster, as execmagic starts them (see the module docstring).

    ``address``: the dashboard URL (default: ``RAY_ADDRESS``, else a head on this machine);
    ``headers``: HTTP headers for every request (default: ``RAY_JOB_HEADERS``); ``grace``: seconds
    the wrapper gives the command between the stop signal and SIGKILL (keep it under Ray's 3 s);
    ``request_timeout``: seconds any one request may take.
    """

    name = "ray"

    def __init__(self, options: RayOptions | None = None, *, address: str | None = None,
                 headers: Mapping[str, str] | None = None, grace: float = 2.0, request_timeout: float = 30.0) -> None:
        self.options = options or RayOptions()
        self.client = RayClient(address, headers=headers, timeout=request_timeout)
        self.grace = grace
        self.monitor = MONITOR

    def __repr__(self) -> str:
        return f"RayCluster({self.client.address!r})"

    def submit_body(self, command: Command, *, job: RayJob, timeout: float | None,
                    options: RayOptions | None = None) -> dict[str, Any]:
        """The submit request for ``command`` (uploading ``--working-dir`` first)."""
        options = options or self.options
        # a script that must stand on no argv (a secret's) goes in the job's environment (see script_env)
        argv, pieces = handed_off(command, to="Ray")
        runtime_env: dict[str, Any] = {}
        if options.env or pieces:
            runtime_env["env_vars"] = {**without_pieces(dict(options.env)), **pieces}
        if options.working_dir:
            runtime_env["working_dir"] = self.client.upload_folder(os.path.expanduser(options.working_dir))
        body: dict[str, Any] = {
            "entrypoint": entrypoint(argv, tag=job.tag, marker=job.node_marker, timeout=timeout,
                                     grace=self.grace, cwd=options.cwd, handed=bool(pieces)),
            "submission_id": job.job_id,
            "metadata": job.metadata(),
            **options.submit_fields(),
        }
        if runtime_env:
            body["runtime_env"] = runtime_env
        return body

    def new_job(self, command: Command, *, marker: str, shell_id: str, timeout: float | None,
                job_id: str | None = None) -> RayJob:
        """The record of a job about to be submitted (its id is ours: a retried submission cannot run
        twice); ``job_id``: that id, else ``execmagic-SHELL-RANDOM``."""
        user, host = owner()
        if job_id is None:
            job_id = f"{job_id_word(shell_id)}-{new_tag()[2:-1][:8]}"
        return RayJob(job_id=job_id, phase=RayPhase.PENDING, shell_id=shell_id,
                      command=command.display, marker=marker, tag=new_tag(), user=user, host=host,
                      started_at=now_iso("seconds"), timeout=timeout)

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job", job_id: str | None = None) -> RayHandle:
        """Submit ``command``; raises :class:`~.client.RayError` (a ``PreExecError``) in one line when
        Ray is not there or refuses.  ``log_paths`` are not needed: Ray keeps the job's log."""
        job = self.new_job(command, marker=marker, shell_id=shell_id, timeout=timeout, job_id=job_id)
        body = self.submit_body(command, job=job, timeout=timeout)
        try:
            self.client.submit(body)
        except RayError as exc:
            if exc.code != "ETIMEDOUT":
                raise
            # the request may have reached Ray: the id is ours, so look it up instead of submitting twice
            try:
                self.client.info(job.job_id)
            except RayError:
                raise exc from None
        handle = RayHandle(self, job)
        self.monitor.add(handle)
        return handle

    def reattach(self, job_id: str, *, marker: str = "") -> RayHandle:
        """The handle of a job started earlier (by this or an earlier kernel), reading its log from the start."""
        try:
            info = self.client.info(job_id)
        except RayError as exc:
            if exc.code == "ENOENT":
                raise UsageProblem(f"Ray at {self.client.address} has no job {shown_value(job_id)}") from None
            raise
        job = RayJob.from_info(info)
        if job is None:
            raise UsageProblem(f"Ray job {shown_value(job_id)} was not started by execmagic")
        handle = RayHandle(self, job)
        self.monitor.add(handle)
        return handle

    def find_jobs(self, *, everyone: bool = False) -> list[RayJob]:
        """The jobs execmagic started that Ray still knows, of this user on this machine (``everyone``:
        of any user and machine), oldest first; running and ended alike (``phase`` tells)."""
        user, host = owner()
        found = [job for info in self.client.jobs() if (job := RayJob.from_info(info)) is not None]
        mine = [job for job in found if everyone or (job.user == user and job.host == host)]
        return sorted(mine, key=lambda job: job.started_at)

    def foreground_job_id(self, name: str) -> str:
        """The Ray job id of the foreground run :meth:`foreground_command` named ``name`` (known before
        it is submitted: a status line can watch it, and a run stopped too hard can be stopped by it)."""
        return job_id_word(name)

    def watch_job(self, job_id: str) -> JobWatch:
        """Follow what Ray says of ``job_id`` (for a foreground run's status line); ``stop()`` it after."""
        return JobWatch(self.client, job_id)

    def stop_job(self, job_id: str) -> bool:
        """Ray's stop of ``job_id`` (after a foreground run that was killed before it could stop its
        job); False when it had ended, or Ray does not know it."""
        try:
            return self.client.stop(job_id)
        except RayError as exc:
            if exc.code == "ENOENT":
                return False
            raise

    def foreground_command(self, command: Command, *, name: str, timeout: float | None = None) -> Command:
        """``command`` as a local foreground run that runs it as a Ray job: a small process of ours
        (:mod:`.follow`) submits it, writes its stdout and stderr apart as they come, ends with its
        exit code (dies of its signal), and stops the job when it is itself signalled -- by the stop
        button, the foreground loop's timeout, or the watchdog of a kernel that died.  The settings
        travel in its environment, not its argv (``ps`` shows argv to every user).  ``name`` (unique
        per run) names the job: see :meth:`foreground_job_id`."""
        spec = {"address": self.client.address, "grace": self.grace, "timeout": timeout, "name": name,
                "job_id": self.foreground_job_id(name),
                "request_timeout": self.client.timeout, "options": dataclasses.asdict(self.options),
                "argv": list(command.argv), "script_boot": command.script_boot, "display": command.display}
        # The kernel's environment, not the run's: what the job gets of the run's is in the spec (the options),
        # and the session's variables (a PYTHONPATH naming the notebook's folder, a PYTHON* or LD_* of an
        # agent's) must not choose what this process of ours imports or loads.
        env = {**os.environ, "EXECMAGIC_RAY_FOLLOW": json.dumps(spec)}
        if self.client.headers:
            env["RAY_JOB_HEADERS"] = json.dumps(self.client.headers)
        # the follower's argv is its own (the script goes in the spec): nothing of it to hand by descriptor
        return dataclasses.replace(command, argv=follower_argv(), env=env, display=command.display, script_boot=None,
                                   pass_fds=())
