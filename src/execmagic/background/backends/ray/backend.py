"""Background shells as Ray Jobs (see :mod:`..base`), through Ray's Jobs REST API.

(Over 400 lines, on purpose: the handle, the monitor that feeds it and the backend share one job record
and one framing; the REST client, the wrapper, the framing and the options are modules of their own.)

A job is submitted with the command under :mod:`.wrapper` as its entrypoint; the wrapper frames
the command's stdout and stderr into Ray's one log (see :mod:`.framing`) and ends with a record of
how the command ended.  So the registry sees a Ray job as it sees a local shell:

- one process-wide :class:`_Monitor` thread asks Ray, for every job, how it is (at most once a
  second) and for its log (Ray's API has no offset: the whole log comes back, and only what lies
  past the job's offset is decoded, so each byte reaches the pipes once); it feeds a pipe per
  stream, which the registry's reader mirrors into the shell's own logs (cursors, filter, wait and
  follow work unchanged), and closes the pipes once the job ended and its log is read;
- a handle's answers are that cached state, so nothing under the registry's lock talks to Ray,
  except :meth:`RayHandle.stop` (Ray's stop; the wrapper stops the whole tree);
- the statuses: ``pending (Ray's reason)``, ``running on NODE``, the command's exact exit code, a
  signal, ``timed out``, ``failed: …`` (Ray's error type, when the wrapper never ran) and
  ``lost: …`` (Ray no longer knows the job: deleted, or the head restarted).

Jobs outlive the kernel by design (``guard`` is ``None``).  Every job's metadata says it is
execmagic's and whose (user and machine of the kernel), so a later kernel finds this user's jobs
again (:meth:`RayBackend.find_jobs`) and reattaches by id, reading the log again from the start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import json
import os
import signal as signal_module
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

from ....process.clock import now_iso
from ....process.errors import UsageProblem, shown_value
from ....process.pump import grow_pipe
from ....process.spec import Command
from ....process.stop import StopReport
from ..base import STREAMS
from ..filepump import JobEnd
from ..script_env import handed_off, without_pieces
from .client import JobInfo, RayClient, RayError, RayPhase
from .framing import FrameReader, Outcome, entrypoint, new_tag
from .options import RayOptions

__all__ = ["JOB_PREFIX", "META_KEY", "JobWatch", "RayBackend", "RayHandle", "RayJob", "phase_words"]

#: Every submission id starts with this (``execmagic-NAME-RANDOM``): recognisable in Ray's dashboard.
JOB_PREFIX = "execmagic-"
#: The metadata key that marks a job as execmagic's; the others are ``execmagic_*``.
META_KEY = "execmagic"
#: Seconds between two looks at a job's log (the first-output latency a user sees, on top of Ray's).
_TICK = 0.2
#: At most one status request per job per this many seconds...
_STATUS_EVERY = 1.0
#: ...except for this long after a submission or a stop, when the user waits for the change (a first
#: line, a ``%kill``): then every tick.
_HURRY = 30.0
#: Ray's own wait between its stop signal and SIGKILL (``RAY_JOB_STOP_WAIT_TIME_S``'s default).
_RAY_STOP_WAIT = 3.0
#: Characters of the command kept in a job's metadata (for the listing of a later kernel).
_META_COMMAND = 2000


@dataclasses.dataclass(frozen=True)
class RayJob:
    """One job execmagic started, as :meth:`RayBackend.find_jobs` finds it again."""

    job_id: str
    phase: RayPhase
    shell_id: str
    command: str
    marker: str
    tag: str
    user: str
    host: str
    started_at: str
    timeout: float | None = None

    @classmethod
    def from_info(cls, info: JobInfo) -> RayJob | None:
        """The record of one of Ray's jobs, ``None`` when execmagic did not start it."""
        meta = info.metadata
        if meta.get(META_KEY) != "1" or not meta.get("execmagic_tag"):
            return None
        try:
            timeout = float(meta["execmagic_timeout"]) if meta.get("execmagic_timeout") else None
        except ValueError:
            timeout = None
        return cls(job_id=info.submission_id, phase=info.phase, shell_id=meta.get("execmagic_shell", ""),
                   command=meta.get("execmagic_command", ""), marker=meta.get("execmagic_marker", ""),
                   tag=meta["execmagic_tag"], user=meta.get("execmagic_user", ""),
                   host=meta.get("execmagic_host", ""), started_at=meta.get("execmagic_started", ""),
                   timeout=timeout)

    @property
    def node_marker(self) -> str:
        """The marker the job's processes carry on the node: the shell's, made unique to this job --
        a node is shared by many kernels, and a registry's markers (``PREFIX-bg1-1``) repeat across them."""
        return f"{self.marker}-{self.tag.strip(':')}"

    def metadata(self) -> dict[str, str]:
        return {META_KEY: "1", "execmagic_shell": self.shell_id, "execmagic_command": self.command[:_META_COMMAND],
                "execmagic_marker": self.marker, "execmagic_tag": self.tag, "execmagic_user": self.user,
                "execmagic_host": self.host, "execmagic_started": self.started_at,
                "execmagic_timeout": "" if self.timeout is None else f"{self.timeout:g}"}


def _owner() -> tuple[str, str]:
    """Whose jobs these are: this user on this machine (the rule a later kernel finds them by)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return user, socket.gethostname()


class _Pipe:
    """One stream's pipe to the registry's reader, with what it could not take yet."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        grow_pipe(self.write_fd)
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.pending = b""

    def push(self, data: bytes) -> None:
        if self.write_fd >= 0:  # a closed pipe (its owner let the job go) takes nothing more
            self.pending += data

    def flush(self) -> bool:
        """Move what is pending into the pipe; True when nothing is left pending."""
        try:
            while self.pending and self.write_fd >= 0:
                self.pending = self.pending[os.write(self.write_fd, self.pending):]
        except BlockingIOError:
            return False
        except BrokenPipeError:  # the reader closed its end: nobody wants more
            self.pending = b""
            self.close()
        return True

    def close(self) -> None:
        if self.write_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = -1
        self.pending = b""


class RayHandle:
    """One Ray job as the registry sees it (see :class:`~..base.Handle`); its state is what the
    monitor last learned, so every method is quick, and only :meth:`stop` talks to Ray."""

    poll_interval = 1.0  # unused: exit_fd() always gives a descriptor
    guard: tuple[int, str] | None = None  # a job outlives its kernel by design
    enforces_timeout = True  # the wrapper applies the timeout, also when the kernel is gone

    def __init__(self, backend: RayBackend, job: RayJob) -> None:
        self.backend = backend
        self.job = job
        self.job_id = job.job_id
        self.pid = 0  # the wrapper's pid on its node, once it said hello
        self.node: str | None = None
        self.frames = FrameReader(job.tag)
        self._pipes = {name: _Pipe() for name in STREAMS}
        self.streams: Mapping[str, int] = {name: p.read_fd for name, p in self._pipes.items()}
        self._lock = threading.Lock()
        self._returncode: int | None = None
        self._words: str | None = "pending"
        self._end_of_job = JobEnd()
        self.ended = self._end_of_job.event
        self._info: JobInfo | None = None
        self._outcome: Outcome | None = None
        self._next_status = 0.0
        self._next_logs = 0.0
        self._hurry_until = time.monotonic() + _HURRY
        self._detached = False
        self._unknown: str | None = None

    # -- what the registry asks -----------------------------------------------------
    @property
    def returncode(self) -> int | None:
        return self._returncode

    def poll(self) -> int | None:
        return self._returncode

    def describe(self) -> str | None:
        """``pending (reason)``, ``running on NODE``, ``timed out``, ``failed: …``, ``lost: …``;
        ``None`` when the return code says it all (``exited 3``, ``killed by SIGKILL``)."""
        if self._returncode is None and self._unknown:
            return f"{self._words} (status unknown: {self._unknown})"
        return self._words

    def exit_fd(self) -> int | None:
        """A pipe whose write end the monitor closes when the job ends (so the reader wakes, no polling)."""
        return self._end_of_job.fd()

    def leftovers(self) -> bool:
        """The wrapper stops what the command left running before the job ends."""
        return False

    def remove_files(self) -> None:
        """Delete the ended job from Ray (its record and log): the registry's logs are the kernel's copy."""
        if self._returncode is None:
            return
        with contextlib.suppress(RayError):
            self.backend.client.delete(self.job_id)

    def detach(self) -> None:
        """Stop feeding the streams (the owner is closing); the job itself runs on."""
        for pipe in self._pipes.values():
            pipe.close()
        self.backend.monitor.forget(self)
        self._detached = True

    def stop(self, sig: int, grace: float) -> StopReport:
        """Ray's stop: it sends its stop signal (SIGTERM unless the cluster set
        ``RAY_JOB_STOP_SIGNAL``) to the wrapper, which stops the command's whole tree, SIGKILL after
        the grace it was submitted with; Ray SIGKILLs the wrapper 3 s later if it is still there.
        ``sig`` and ``grace`` cannot travel to a running job (Ray has no channel for them)."""
        if self._returncode is not None:
            return StopReport()
        if self._detached:  # stopped after its owner let it go: learn again when it ends
            self._detached = False
            self.backend.monitor.add(self)
        signalled = (self.pid,)
        try:
            stopped = self.backend.client.stop(self.job_id)
        except RayError as exc:
            if exc.code == "ENOENT":
                self._lost()
                return StopReport()
            raise
        self._next_status = 0.0
        self._hurry_until = time.monotonic() + _HURRY
        self.backend.monitor.wake()
        if not stopped and self.ended.wait(_STATUS_EVERY * 3):
            return StopReport()  # it had ended meanwhile: the monitor learned how
        if self.node is None and self.ended.wait(_STATUS_EVERY * 2.5):
            return StopReport(signalled=signalled)
        if self.node is None and self._info is not None and self._info.phase is RayPhase.PENDING:
            # Ray keeps a job that waits for resources PENDING after its stop, and stops it the moment it
            # would start (its stop is queued on the job's supervisor, which is not placed yet): the
            # command never runs, so the shell ends here, now
            self._end(-signal_module.SIGTERM, "stopped before it started")
            return StopReport(signalled=signalled)
        if self.ended.wait(self.backend.grace + _RAY_STOP_WAIT + 2 * _STATUS_EVERY + 1.0):
            escalated = self._outcome is not None and self._outcome.escalated
            return StopReport(signalled=signalled, killed=signalled if escalated else ())
        return StopReport(signalled=signalled, killed=signalled, survivors=signalled)

    # -- what the monitor does ------------------------------------------------------
    def pump(self, now: float) -> bool:
        """Learn the job's state, decode its new log lines into the pipes; close the pipes once it
        ended and everything is in.  True when this handle needs nothing more from the monitor."""
        client = self.backend.client
        if self._returncode is None and now >= self._next_status:
            self._next_status = now + (_TICK if now < self._hurry_until else _STATUS_EVERY)
            try:
                self._info = client.info(self.job_id)
                self._unknown = None
            except RayError as exc:
                if exc.code == "ENOENT":
                    self._lost()
                else:
                    self._unknown = exc.issue
            self._note_phase()
        info = self._info
        ended_in_ray = info is not None and info.phase.terminal
        if self._returncode is None and info is not None and info.phase is not RayPhase.PENDING \
                and (now >= self._next_logs or ended_in_ray) and self._flushed():
            began = time.monotonic()
            try:
                log = client.logs(self.job_id)
            except RayError as exc:
                if exc.code == "ENOENT":
                    self._lost()
                else:
                    self._unknown = exc.issue
                log = None
            # a big log costs a while to fetch: look less often, never more than a fifth of the time
            self._next_logs = now + max(_TICK, 5 * (time.monotonic() - began))
            if log is not None:
                self._take(log)
                if ended_in_ray:
                    self._end_from(info)
        done = all([pipe.flush() for pipe in self._pipes.values()])
        if self._returncode is not None and done:
            for pipe in self._pipes.values():
                pipe.close()
            return True
        return False

    def _flushed(self) -> bool:
        return not any(pipe.pending for pipe in self._pipes.values())

    def _take(self, log: str) -> None:
        for frame in self.frames.feed(log):
            if frame.kind in STREAMS:
                self._pipes[frame.kind].push(frame.data)
            elif frame.hello is not None:
                self.node = str(frame.hello.get("host") or "") or None
                pid = frame.hello.get("pid")
                self.pid = pid if isinstance(pid, int) else self.pid
                self._note_phase()
            elif frame.outcome is not None:
                self._outcome = frame.outcome

    def _note_phase(self) -> None:
        info = self._info
        if self._returncode is not None or info is None:
            return
        self._words = phase_words(info, self.node) or self._words

    def _end_from(self, info: JobInfo | None) -> None:
        """The job ended in Ray; its log is read: the wrapper's record says how, else Ray's fields."""
        outcome = self._outcome
        if outcome is not None:
            number = _signal_number(outcome.signal)
            if outcome.how == "timeout":
                self._end(124, "timed out")
            elif outcome.how in ("signal", "stopped") and number:
                self._end(-number, None)
            else:
                self._end(outcome.code, None)
        elif info is None:
            self._end(1, "failed: Ray said nothing of the job")
        elif info.phase is RayPhase.STOPPED:
            self._end(-signal_module.SIGTERM, None if self.node else "stopped before it started")
        elif info.driver_exit_code is not None and info.driver_exit_code < 0:
            self._end(info.driver_exit_code, None)  # the wrapper itself was killed by that signal
        elif info.phase is RayPhase.SUCCEEDED:
            self._end(info.driver_exit_code or 0, None)
        elif self.pid == 0 and info.driver_exit_code is not None:
            # the entrypoint ran, but the wrapper never said hello: no Python on the node, or it broke
            self._end(info.driver_exit_code or 1, f"failed: the job's wrapper did not start on the node"
                      f" (exit {info.driver_exit_code}; see the job's log in Ray's dashboard)")
        else:
            why = info.error_type or "FAILED"
            message = info.message.strip().split("\n")[0]
            self._end(info.driver_exit_code or 1, f"failed: {why}" + (f" ({message[:200]})" if message else ""))

    def _lost(self) -> None:
        self._end(1, "lost: Ray no longer knows the job (deleted, or the cluster was restarted)")

    def _end(self, returncode: int, words: str | None) -> None:
        with self._lock:
            if self._returncode is not None:
                return
            self._returncode = returncode
            self._words = words
        self._end_of_job.set()

    def fail(self, why: str) -> None:
        """The monitor failed on this job: say so in the status, keep the last known state."""
        self._unknown = why


def phase_words(info: JobInfo, node: str | None = None) -> str | None:
    """``pending (Ray's reason)`` or ``running on NODE`` for a job not ended yet; ``None`` for one that ended."""
    if info.phase is RayPhase.PENDING:
        reason = info.message.strip().split("\n")[0].rstrip(".")
        return f"pending ({reason})" if reason else "pending"
    if info.phase is RayPhase.RUNNING:
        return f"running on {node}" if node else "running"
    return None


class JobWatch:
    """What Ray says of one job, for the status line of a foreground run (``pending (…)``,
    ``running``): one request a second on a thread of its own, so a slow dashboard never holds up
    the run's output."""

    def __init__(self, client: RayClient, job_id: str, interval: float = _STATUS_EVERY) -> None:
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
                self.words = phase_words(self._client.info(self.job_id)) or self.words
            except RayError:
                continue

    def stop(self) -> None:
        self._stopped.set()


def _signal_number(name: str | None) -> int:
    named = getattr(signal_module, name, None) if name else None
    return named.value if isinstance(named, signal_module.Signals) else 0


class _Monitor:
    """The one thread that asks Ray how every job is and feeds their output to the reader."""

    def __init__(self) -> None:
        self._handles: dict[int, RayHandle] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, handle: RayHandle) -> None:
        with self._lock:
            self._handles[id(handle)] = handle
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="execmagic-ray", daemon=True)
                self._thread.start()
        self.wake()

    def forget(self, handle: RayHandle) -> None:
        with self._lock:
            self._handles.pop(id(handle), None)

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                handles = list(self._handles.values())
                if not handles:
                    self._thread = None
                    return
            for handle in handles:
                try:
                    if handle.pump(time.monotonic()):
                        self.forget(handle)
                except Exception as exc:  # one job's trouble must not stop the others'
                    handle.fail(f"{type(exc).__name__}: {exc}")
            self._wake.wait(_TICK)
            self._wake.clear()


#: Shared by every backend of this process: one thread for all Ray jobs.
_MONITOR = _Monitor()


def _id_word(name: str) -> str:
    """``execmagic-NAME`` as a job id may be spelt (Ray takes any string; a URL path and a dashboard
    table read these best)."""
    return JOB_PREFIX + ("".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:64] or "job")


class RayBackend:
    """Start background shells as Ray Jobs (see the module docstring).

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
        self.monitor = _MONITOR

    def __repr__(self) -> str:
        return f"RayBackend({self.client.address!r})"

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
        user, host = _owner()
        if job_id is None:
            job_id = f"{_id_word(shell_id)}-{new_tag()[2:-1][:8]}"
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
        user, host = _owner()
        found = [job for info in self.client.jobs() if (job := RayJob.from_info(info)) is not None]
        mine = [job for job in found if everyone or (job.user == user and job.host == host)]
        return sorted(mine, key=lambda job: job.started_at)

    def foreground_job_id(self, name: str) -> str:
        """The Ray job id of the foreground run :meth:`foreground_command` named ``name`` (known before
        it is submitted: a status line can watch it, and a run stopped too hard can be stopped by it)."""
        return _id_word(name)

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
        from .follow import follower_argv  # (which imports this module)

        # the follower's argv is its own (the script goes in the spec): nothing of it to hand by descriptor
        return dataclasses.replace(command, argv=follower_argv(), env=env, display=command.display, script_boot=None,
                                   pass_fds=())

