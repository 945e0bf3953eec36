"""Background shells as SLURM batch jobs (design §3.4 "On a cluster"; see :mod:`.base`).

A job is submitted with ``sbatch`` through :file:`slurm_job.sh`, a small wrapper shipped with
execmagic that runs the command in a session of its own, stops its whole tree on a signal or at the
timeout, and leaves the exit code in a file next to the logs.  The cluster writes the job's stdout
and stderr into a folder on a shared filesystem (:attr:`SlurmBackend.logs_dir`); the kernel reads
them from there.  So the registry sees a job as it sees a local shell:

- one process-wide :class:`_Monitor` thread copies what the job files grew by into a pipe per
  stream, which the registry's reader mirrors into the shell's own logs (cursors, filter, wait and
  follow work unchanged); it closes the pipes once the job ended and its files are copied;
- the same thread asks SLURM how the jobs are: one ``squeue`` for all of them, at most once a
  second, then the exit-code file, then ``scontrol show job`` for a job that left the queue
  without one.  A handle's answers are that cached state, so nothing under the registry's lock
  ever runs a SLURM command;
- stopping is ``scancel --signal=SIG --full`` (the wrapper stops the tree, SIGKILL after its grace),
  a last ``scancel --signal=KILL --full`` if the job is still there after the grace, and a plain
  ``scancel`` for a job that has not started.

Jobs outlive the kernel by design (``guard`` is ``None``: the watchdog leaves them alone); a new
kernel finds them by their job name prefix and reattaches by job id, reading the files again from
the start.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import signal as signal_module
import threading
import time
from collections.abc import Mapping, Sequence
from importlib import resources

from ...process.clock import now_iso
from ...process.errors import UsageProblem, shown_value
from ...process.private import make_folder, write_file
from ...process.pump import grow_pipe
from ...process.spec import Command
from ...process.stop import StopReport
from . import slurm_cli
from .base import STREAMS
from .slurm_cli import JobState, SlurmError

__all__ = [
    "JOB_PREFIX",
    "OWNED_SBATCH_OPTIONS",
    "JobMeta",
    "NamedJobWatch",
    "SlurmBackend",
    "SlurmHandle",
    "SlurmOptions",
    "check_extra",
    "checked_logs_dir",
    "default_logs_dir",
    "sbatch_words",
    "wrapper_path",
]

#: Every job's name starts with this, so a new kernel can find the jobs execmagic started.
JOB_PREFIX = "execmagic-"
#: Seconds between two looks at the job files (the first-output latency a user sees, on top of SLURM's).
_TICK = 0.2
#: At most one ``squeue`` per this many seconds, for all jobs together (a controller serves many users).
_QUEUE_EVERY = 1.0
#: Seconds a job may be gone from the queue before its exit-code file must be there (a shared
#: filesystem shows a file written on another node a little later).
_EXIT_FILE_WAIT = 5.0
_READ_SIZE = 1 << 16


def default_logs_dir() -> str:
    """``~/.execmagic/slurm``: under the home folder, which clusters share between login and compute
    nodes (the kernel's temp folder is local to its machine, where a job's node cannot write)."""
    return os.path.join(os.path.expanduser("~"), ".execmagic", "slurm")


def checked_logs_dir(path: str) -> str:
    """The logs folder as SLURM must be given it: ``~`` expanded and absolute (SLURM reads a relative
    path against the job's ``--chdir``, not the kernel's folder), with no ``%`` (SLURM expands it)."""
    absolute = os.path.abspath(os.path.expanduser(path))
    if "%" in absolute:
        raise UsageProblem(f"the SLURM logs folder may not contain '%' (SLURM expands it in file names): {absolute}")
    return absolute


def _write_private(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text``, 0600 (a new file beside it, then renamed over it)."""
    partial = write_file(f"{path}.{os.getpid()}.tmp", text.encode(), unique=True)
    os.replace(partial, path)


def wrapper_path() -> str:
    """The job wrapper shipped with the package (``sbatch`` copies it into the job: no shared path needed)."""
    return str(resources.files(__package__).joinpath("slurm_job.sh"))


@dataclasses.dataclass(frozen=True)
class SlurmOptions:
    """What a job asks SLURM for; ``None``/empty: the site's default."""

    partition: str | None = None
    cpus: int | None = None
    mem: str | None = None
    gpus: str | None = None
    time: str | None = None
    account: str | None = None
    #: More ``sbatch`` options, as separate words (``("--qos=debug", "--constraint=a100")``).
    extra: tuple[str, ...] = ()

    def sbatch_args(self) -> list[str]:
        args = []
        for flag, value in (("--partition", self.partition), ("--cpus-per-task", self.cpus), ("--mem", self.mem),
                            ("--gpus", self.gpus), ("--time", self.time), ("--account", self.account)):
            if value is not None and value != "":
                args.append(f"{flag}={value}")
        check_extra(self.extra)
        return [*args, *self.extra]


@dataclasses.dataclass(frozen=True)
class JobMeta:
    """What a new kernel needs to show a job again: written next to its logs at submission."""

    shell_id: str
    command: str
    cwd: str
    marker: str
    started_at: str
    timeout: float | None = None


class _Stream:
    """One job file being copied into the pipe the registry's reader drains."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.read_fd, self.write_fd = os.pipe()
        grow_pipe(self.write_fd)  # a megabyte a tick, not 64 KB: a chatty job's output keeps up
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.offset = 0
        self.pending = b""  # read from the file, not yet taken by the pipe

    @property
    def open(self) -> bool:
        return self.write_fd >= 0

    def copy(self) -> bool:
        """Move what the file grew by into the pipe (as much as it takes); True when all is in."""
        if not self.open:
            return True
        try:
            while True:
                if not self.pending:
                    try:
                        if os.stat(self.path).st_size <= self.offset:  # nothing new: no need to open it
                            return True
                        with open(self.path, "rb") as fh:
                            fh.seek(self.offset)
                            self.pending = fh.read(_READ_SIZE)
                    except FileNotFoundError:  # not created yet: the job has not started
                        return True
                    self.offset += len(self.pending)
                    if not self.pending:
                        return True
                written = os.write(self.write_fd, self.pending)
                self.pending = self.pending[written:]
        except BlockingIOError:  # the pipe is full: the reader takes it, the rest goes next tick
            return False
        except BrokenPipeError:  # the reader closed its end (its owner closed): nobody wants more
            self.close()
            return True

    def close(self) -> None:
        if self.open:
            with contextlib.suppress(OSError):
                os.close(self.write_fd)
            self.write_fd = -1


class SlurmHandle:
    """One SLURM job as the registry sees it (see :class:`~.base.Handle`); its state is what the
    monitor last learned, so every method is quick and none runs a SLURM command except :meth:`stop`."""

    poll_interval = 1.0  # unused: exit_fd() always gives a descriptor
    guard: tuple[int, str] | None = None  # a job outlives its kernel by design
    enforces_timeout = True  # the wrapper applies the timeout, also when the kernel is gone

    def __init__(self, backend: SlurmBackend, job_id: str, meta: JobMeta) -> None:
        self.backend = backend
        self.job_id = job_id
        self.pid = int(job_id) if job_id.isdigit() else 0
        self.meta = meta
        self._files = {name: _Stream(os.path.join(backend.logs_dir, f"{job_id}.{name}")) for name in STREAMS}
        self.streams: Mapping[str, int] = {name: s.read_fd for name, s in self._files.items()}
        self.exit_path = os.path.join(backend.logs_dir, f"{job_id}.exit")
        self._lock = threading.Lock()
        self._returncode: int | None = None
        self._words: str | None = "queued"
        self._gone_since: float | None = None
        self._exit_writers: list[int] = []
        self.ended = threading.Event()

    # -- what the registry asks -----------------------------------------------------
    @property
    def returncode(self) -> int | None:
        return self._returncode

    def poll(self) -> int | None:
        return self._returncode

    def describe(self) -> str | None:
        """``queued (Reason)``, ``running on NODE``, ``killed``, ``timed out``, ``failed: …``; ``None``
        when the return code says it all (``exited N``)."""
        return self._words

    def exit_fd(self) -> int | None:
        """A pipe whose write end the monitor closes when the job ends (so the reader wakes, no polling)."""
        read_fd, write_fd = os.pipe()
        with self._lock:
            if self._returncode is None:
                self._exit_writers.append(write_fd)
            else:
                os.close(write_fd)
        return read_fd

    def leftovers(self) -> bool:
        """The wrapper stops what the command left running before the job ends (as a cgroup would)."""
        return False

    def remove_files(self) -> None:
        """Delete this job's files in the logs folder (output, exit code, record, grace) once it ended:
        they are the cluster's copy, the registry's logs are the kernel's."""
        if self._returncode is None:
            return
        for suffix in (*STREAMS, "exit", "json", "grace"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.backend.logs_dir, f"{self.job_id}.{suffix}"))

    def detach(self) -> None:
        """Stop copying the job's files (its owner is closing); the job itself runs on."""
        for stream in self._files.values():
            stream.close()
        self.backend.monitor.forget(self)
        self._detached = True

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
            _write_private(os.path.join(self.backend.logs_dir, f"{self.job_id}.grace"), f"{grace:g}\n")
        if (self._words or "").startswith("queued"):
            # not started, as far as we know: SLURM's own cancel (``scancel --signal`` would retry for
            # a pending job until it runs); had it just started, SLURM's TERM reaches the wrapper,
            # which stops the tree as for any signal
            if not self._cancel(None):
                return StopReport()
            self.ended.wait(grace + _QUEUE_EVERY * 3)
            return StopReport(signalled=signalled)
        if not self._cancel(signal_module.Signals(sig).name.removeprefix("SIG")):
            return StopReport()
        if self.ended.wait(grace + 2.0):
            return StopReport(signalled=signalled, killed=signalled if self._escalated else ())
        with contextlib.suppress(SlurmError):
            slurm_cli.cancel(self.job_id, signal="KILL", timeout=timeout)
        with contextlib.suppress(SlurmError):
            slurm_cli.cancel(self.job_id, signal=None, timeout=timeout)
        self.backend.monitor.wake()
        survivors = () if self.ended.wait(_EXIT_FILE_WAIT + _QUEUE_EVERY * 2) else signalled
        return StopReport(signalled=signalled, killed=signalled, survivors=survivors)

    def _cancel(self, signal: str | None) -> bool:
        """``scancel``; False when SLURM refused because the job had ended meanwhile (the monitor
        then learns how); an unreachable controller is an error the user must see."""
        try:
            slurm_cli.cancel(self.job_id, signal=signal, timeout=self.backend.command_timeout)
        except SlurmError as exc:
            self.backend.monitor.wake()
            if exc.code not in ("ETIMEDOUT", "ENOENT") and self.ended.wait(_EXIT_FILE_WAIT + _QUEUE_EVERY * 2):
                return False
            raise
        self.backend.monitor.wake()
        return True

    # -- what the monitor does ------------------------------------------------------
    _escalated = False
    _detached = False

    def pump(self) -> bool:
        """Copy new output; read the exit-code file; close the pipes once everything is in.
        True when this handle needs nothing more from the monitor."""
        if self._returncode is None:
            self._read_exit_file()
        if (self._words or "").startswith("queued") and any(os.path.exists(f.path) for f in self._files.values()):
            self._words = "running"  # its files exist: it started (squeue will name the node)
        done = all([stream.copy() for stream in self._files.values()])
        if self._returncode is not None and done:
            for stream in self._files.values():
                stream.close()
            return True
        return False

    @property
    def needs_queue(self) -> bool:
        return self._returncode is None

    def update(self, job: JobState | None, now: float) -> None:
        """What ``squeue`` said (``None``: not listed any more)."""
        if self._returncode is not None:
            return
        if job is not None:
            self._gone_since = None
            if job.pending:
                self._words = f"queued ({job.reason})" if job.reason else "queued"
            else:
                self._words = f"running on {job.nodes}" if job.nodes else "running"
            return
        if self._gone_since is None:
            self._gone_since = now
        self._read_exit_file()
        if self._returncode is not None:
            return
        record = slurm_cli.job_record(self.job_id, timeout=self.backend.command_timeout)
        if record is not None and record.state in ("COMPLETED", "FAILED", "COMPLETING", "RUNNING") \
                and now - self._gone_since < _EXIT_FILE_WAIT:
            return  # the wrapper wrote its exit file; the shared filesystem shows it in a moment
        self._end_from_record(record)

    def _read_exit_file(self) -> None:
        try:
            with open(self.exit_path) as fh:
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
            self._end(-number, "killed")
        elif how == "timeout":
            self._end(124, "timed out")
        else:
            self._end(code, None)

    def _end_from_record(self, record: JobState | None) -> None:
        """A job gone from the queue without an exit file: it never ran its command to the end."""
        if record is None:
            self._end(1, "failed: the job left SLURM without an exit code")
        elif record.state == "CANCELLED":
            self._end(-signal_module.SIGTERM, "killed")
        elif record.state in ("TIMEOUT", "DEADLINE"):
            self._end(124, f"timed out ({record.state})")
        else:
            code, sig = record.exit_code or (1, 0)
            why = record.state + (f" ({record.reason})" if record.reason and record.reason != "None" else "")
            self._end(-sig if sig else (code or 1), f"failed: {why}")

    def _end(self, returncode: int, words: str | None) -> None:
        with self._lock:
            self._returncode = returncode
            self._words = words
            writers, self._exit_writers = self._exit_writers, []
        for fd in writers:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.ended.set()

    def fail(self, why: str) -> None:
        """SLURM could not be asked; the job is still whatever it was, say why we do not know more."""
        if self._returncode is None and self._words is not None and "(" not in self._words:
            self._words = f"{self._words} (status unknown: {why})"


class _Monitor:
    """The one thread that feeds every job's output to the reader and asks SLURM how the jobs are."""

    def __init__(self) -> None:
        self._handles: dict[int, SlurmHandle] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_queue = 0.0
        #: Calls of ``squeue`` so far (a test proves they are shared and rate-limited).
        self.queue_calls = 0

    def add(self, handle: SlurmHandle) -> None:
        with self._lock:
            self._handles[id(handle)] = handle
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="execmagic-slurm", daemon=True)
                self._thread.start()
        self.wake()

    def forget(self, handle: SlurmHandle) -> None:
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
                    if handle.pump():
                        self.forget(handle)
                except Exception as exc:  # one job's trouble must not stop the others'
                    handle.fail(str(exc))
            self._ask_queue([h for h in handles if h.needs_queue])
            self._wake.wait(_TICK)
            self._wake.clear()

    def _ask_queue(self, handles: Sequence[SlurmHandle]) -> None:
        now = time.monotonic()
        if not handles or now - self._last_queue < _QUEUE_EVERY:
            return
        self._last_queue = now
        timeout = min(h.backend.command_timeout for h in handles)
        try:
            self.queue_calls += 1
            jobs = slurm_cli.queue(timeout=timeout)
            for handle in handles:
                handle.update(jobs.get(handle.job_id), now)
        except SlurmError as exc:
            for handle in handles:
                handle.fail(exc.issue)


#: Shared by every backend of this process: one ``squeue`` for all jobs.
_MONITOR = _Monitor()


class SlurmBackend:
    """Start background shells as SLURM batch jobs (see the module docstring)."""

    name = "slurm"

    def __init__(self, options: SlurmOptions | None = None, *, logs_dir: str | None = None, grace: float = 2.0,
                 command_timeout: float = 30.0) -> None:
        self.options = options or SlurmOptions()
        self.logs_dir = checked_logs_dir(logs_dir or default_logs_dir())
        self.grace = grace
        #: Seconds any one SLURM command may take (an unreachable controller is retried by SLURM).
        self.command_timeout = command_timeout
        self.monitor = _MONITOR

    def _make_logs_folder(self) -> None:
        """The logs folder, made 0700 when missing (the job's output lands there, tokens and all; an
        existing folder is the user's, taken as it is)."""
        try:
            make_folder(self.logs_dir)
        except OSError as exc:
            raise UsageProblem(f"cannot make the SLURM logs folder {self.logs_dir}: {exc.strerror or exc}") from None

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job") -> SlurmHandle:
        """Submit ``command`` with ``sbatch``; raises :class:`SlurmError` (a ``PreExecError``) with
        SLURM's own message when it refuses (no ``sbatch``, unreachable controller, bad option)."""
        self._make_logs_folder()
        env = dict(command.env)
        if "SLURM_CONF" in os.environ:  # the job goes to the cluster this kernel knows, whatever its env says
            env.setdefault("SLURM_CONF", os.environ["SLURM_CONF"])
        argv = ["sbatch", "--parsable", "--export=ALL", f"--job-name={JOB_PREFIX}{shell_id}",
                f"--comment=execmagic {marker}", f"--chdir={command.cwd}",
                f"--output={os.path.join(self.logs_dir, '%j.stdout')}",
                f"--error={os.path.join(self.logs_dir, '%j.stderr')}", *self.options.sbatch_args(),
                wrapper_path(), self.logs_dir, f"{timeout or 0:g}", f"{self.grace:g}", marker, "--", *command.argv]
        out = slurm_cli.run_slurm(argv, timeout=self.command_timeout, env=env, what="sbatch")
        job_id = out.strip().split(";")[0]
        if not job_id.isdigit():
            raise SlurmError(f"sbatch did not answer with a job id (it said {out.strip()[:200]!r})", "EPROTO")
        meta = JobMeta(shell_id=shell_id, command=command.display, cwd=command.cwd, marker=marker,
                       started_at=now_iso("seconds"), timeout=timeout)
        with contextlib.suppress(OSError):
            _write_private(os.path.join(self.logs_dir, f"{job_id}.json"), json.dumps(dataclasses.asdict(meta)))
        handle = SlurmHandle(self, job_id, meta)
        self.monitor.add(handle)
        return handle

    def reattach(self, job_id: str, *, marker: str = "") -> SlurmHandle:
        """The handle of a job started earlier (by this or an earlier kernel), reading its files from the start."""
        if not job_id.isdigit():
            raise UsageProblem(f"not a SLURM job id: {shown_value(job_id)}")
        try:
            with open(os.path.join(self.logs_dir, f"{job_id}.json")) as fh:
                meta = JobMeta(**json.load(fh))
        except (OSError, ValueError, TypeError):
            raise UsageProblem(f"SLURM job {job_id} was not started by execmagic with logs in {self.logs_dir}"
                               ) from None
        handle = SlurmHandle(self, job_id, meta)
        self.monitor.add(handle)
        return handle

    def srun_command(self, command: Command, *, name: str) -> Command:
        """``command`` as a foreground run on the cluster: ``srun`` streams the job's stdout and
        stderr apart and ends with its exit code, so the local foreground loop shows it live.

        The wrapper (its text, so no shared path is needed) runs the command in a session of its own
        and stops its tree on the interrupt ``srun --quit-on-interrupt`` forwards.  ``name`` ends
        up in the job name, so a run that had to be stopped can be cancelled by name
        (:meth:`cancel_by_name`).  The job's environment is the command's (``--export=ALL``).
        """
        self._make_logs_folder()
        env = dict(command.env)
        if "SLURM_CONF" in os.environ:
            env.setdefault("SLURM_CONF", os.environ["SLURM_CONF"])
        with open(wrapper_path()) as fh:
            wrapper = fh.read()
        argv = (slurm_cli.find_program("srun"), "--quit-on-interrupt", "--export=ALL", f"--job-name={JOB_PREFIX}{name}",
                f"--chdir={command.cwd}", *self.options.sbatch_args(),
                "bash", "-c", wrapper, "slurm_job.sh", self.logs_dir, "0", f"{self.grace:g}", f"{JOB_PREFIX}{name}",
                "--", *command.argv)
        return dataclasses.replace(command, argv=argv, env=env)

    def watch_job(self, name: str) -> NamedJobWatch:
        """Follow the state of the job :meth:`srun_command` named ``name`` (for a status line)."""
        return NamedJobWatch(self, name)

    def cancel_by_name(self, name: str) -> None:
        """Cancel this user's job named by :meth:`srun_command` (after an interrupted or timed-out
        run: ``srun`` may have been stopped before it could end the job)."""
        slurm_cli.run_slurm(["scancel", "--me", f"--name={JOB_PREFIX}{name}"], timeout=self.command_timeout)

    def find_jobs(self) -> list[JobState]:
        """This user's jobs that SLURM still lists and execmagic started (by their name prefix)."""
        jobs = slurm_cli.queue(timeout=self.command_timeout)
        return [job for job in jobs.values() if job.name.startswith(JOB_PREFIX)
                and os.path.exists(os.path.join(self.logs_dir, f"{job.job_id}.json"))]


class NamedJobWatch:
    """What SLURM says of the foreground job named by :meth:`SlurmBackend.srun_command`, for a
    status line (``queued (Resources)``, ``running on node7``): one ``squeue`` a second, on a
    thread of its own, so a slow controller never holds up the output of the run."""

    def __init__(self, backend: SlurmBackend, name: str, interval: float = _QUEUE_EVERY) -> None:
        self._argv = ["squeue", "--me", "--noheader", f"--name={JOB_PREFIX}{name}", "--format=%T|%r|%N"]
        self._timeout = min(backend.command_timeout, 5.0)
        self._interval = interval
        self._stopped = threading.Event()
        #: The latest state in words; ``None`` until SLURM has listed the job.
        self.words: str | None = None
        self._thread = threading.Thread(target=self._run, name="execmagic-srun-state", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                lines = slurm_cli.run_slurm(self._argv, timeout=self._timeout).splitlines()
            except SlurmError:
                continue
            if lines and len(fields := lines[0].split("|")) == 3:
                state, reason, nodes = fields
                if state in slurm_cli.PENDING_STATES:
                    self.words = f"queued ({reason})" if reason and reason != "None" else "queued"
                else:
                    self.words = f"running on {nodes}" if nodes else "running"

    def stop(self) -> None:
        self._stopped.set()


#: sbatch options the backend sets itself (where the output goes, the job's name and folder, what it
#: runs and how sbatch answers): given again in ``--sbatch-args`` they would silently take its
#: output elsewhere, hide the job from a restarted kernel or make sbatch answer with something
#: other than a job id.
OWNED_SBATCH_OPTIONS = {
    "-o": "--output", "--output": "--output", "-e": "--error", "--error": "--error", "-J": "--job-name",
    "--job-name": "--job-name", "-D": "--chdir", "--chdir": "--chdir", "--parsable": "--parsable",
    "--wrap": "--wrap", "-a": "--array", "--array": "--array", "--test-only": "--test-only", "-h": "--help",
    "--help": "--help", "--usage": "--usage", "-V": "--version", "--version": "--version", "--export": "--export",
    "--comment": "--comment", "-W": "--wait", "--wait": "--wait", "-i": "--input", "--input": "--input",
}


def sbatch_words(text: str) -> tuple[str, ...]:
    """``--sbatch-args "--qos=debug --constraint='a100 80gb'"`` as words, split as a shell would;
    an option the backend sets itself is refused (see :data:`OWNED_SBATCH_OPTIONS`)."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageProblem(f"cannot split --sbatch-args {shown_value(text)}: {exc}") from None
    check_extra(words)
    return words


def check_extra(words: tuple[str, ...]) -> None:
    """Refuse extra sbatch words that would override what the backend sets (one line, naming it)."""
    for word in words:
        flag = word.split("=", 1)[0]
        if not flag.startswith("--") and len(flag) > 2 and flag.startswith("-"):
            flag = flag[:2]  # -ofile, -Jname: a short option with its value attached
        if flag in OWNED_SBATCH_OPTIONS:
            raise UsageProblem(f"--sbatch-args may not set {OWNED_SBATCH_OPTIONS[flag]}: execmagic sets it itself"
                               " (the job's logs, name, folder and id depend on it)")


