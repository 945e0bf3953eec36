"""What every caller needs from wherever a background shell runs.

A background shell has a *backend*: local processes, or jobs on a cluster (SLURM, …).  Everything
above a backend (registry, reader, cursors, filter, wait, follow, list and display, the magics, the
Python API, the agent tools) works on the shell's log files, a POSIX-style return code and these
protocols, and never asks which backend wrote them.  So a new backend is one new package
implementing them, plus one line in :mod:`.registry` that names it:

- :class:`Backend` starts a command and hands back a :class:`Handle`; finds this user's jobs again
  after a restart (:meth:`Backend.find_jobs`, typed :class:`JobRecord` values) and reattaches to one;
  runs a command in the foreground when it can (:meth:`Backend.foreground`, a :class:`Foreground`);
- the :class:`Handle` gives the reader one non-blocking readable descriptor per stream, which the
  reader mirrors into the log files (a cluster backend hands it pipes fed from the job's files on
  the shared filesystem), says whether the job ended and how, and stops it;
- :class:`Option` declares one option a backend takes (a flag on the magic's line, a setting, or
  both), with its help and its check, so the magics build ``--on NAME`` and its flags from the
  registry instead of knowing any backend.

Which jobs a new owner finds again, the same rule for every backend: this user's jobs, started by
execmagic, told apart from everything else by the marker execmagic put in the job's metadata (a job
name prefix, a comment, a metadata field) *and* by the record the backend kept when it started the
job; a job whose record is missing or was written for another job is not adopted.  A reattached
job's output is read again from the start into the new owner's logs (so ``%bgout`` first shows
everything the job printed, once).

Protocols, not base classes: the registry needs a shape, not an ancestry, and the tests can hand it a
small fake.  What the backends whose jobs run elsewhere do alike is shared code beside these
(:mod:`.remote`, :mod:`.poller`, :mod:`.filepump`, :mod:`.resources`, :mod:`.jobnames`), for them
to build on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ...process.records import record

if TYPE_CHECKING:  # in annotations only: the magics read Option when the extension loads, and need neither
    from ...process.spec import Command
    from ...process.stop_report import StopReport

__all__ = ["STREAMS", "Backend", "Foreground", "Handle", "JobRecord", "Option"]

#: The streams every handle hands to the reader, and the log files each shell has.
STREAMS = ("stdout", "stderr")


class Handle(Protocol):
    """One started command, as the registry and the reader see it.

    Descriptors returned by :attr:`streams` and :meth:`exit_fd` belong to the reader from then
    on: it watches them with one selector and closes them, so a handle never closes them itself.
    """

    #: What :class:`~execmagic.process.results.ShellInfo` shows as the pid (the job's leader).
    pid: int
    #: What :meth:`Backend.reattach` takes to find this job again (a pid, a SLURM job id).
    job_id: str
    #: One non-blocking readable descriptor per name of :data:`STREAMS`; EOF means the stream ended.
    streams: Mapping[str, int]
    #: The watchdog's key for this job: the ``(session id, marker)`` it stops if the owner dies
    #: (not a guardrail of :mod:`execmagic.guard`); ``None`` for jobs that outlive their owner by
    #: design (a cluster job a new kernel can reattach to).
    guard: tuple[int, str] | None
    #: Seconds between status polls when :meth:`exit_fd` gives nothing (so a remote backend is
    #: not asked many times a second).
    poll_interval: float
    #: The backend applies the shell's timeout itself (a cluster job's wrapper, which also holds
    #: when the owner is gone); otherwise the reader stops the shell at its deadline.
    enforces_timeout: bool

    @property
    def returncode(self) -> int | None:
        """``None`` while running, else as :attr:`subprocess.Popen.returncode` (negative: killed by
        that signal), so statuses and exit codes read the same whatever ran the job."""
        ...

    def poll(self) -> int | None:
        """Find out whether the job ended (reaping it if needed) and return :attr:`returncode`."""
        ...

    def exit_fd(self) -> int | None:
        """A new descriptor that becomes readable when the job ends (a pidfd), so exits wake the
        reader without polling; ``None`` when there is none, and the reader polls instead."""
        ...

    def stop(self, sig: int, grace: float) -> StopReport:
        """Send ``sig`` to everything the job started, SIGKILL what is left after ``grace``
        (``sig`` SIGKILL: at once).  Never raises for what is already gone."""
        ...

    def leftovers(self) -> bool:
        """Whether anything of the job still runs (a finished leader may leave a daemon behind)."""
        ...

    def describe(self) -> str | None:
        """The backend's own word for the job's state when the return code cannot say it
        (``queued (Resources)``, ``running on node7``, ``failed: NODE_FAIL``); ``None`` otherwise.
        A backend keeps the state typed (:class:`~.status.JobStatus`) and answers its
        :meth:`~.status.JobStatus.words`, so every backend says the same state the same way."""
        ...

    def remove_files(self) -> None:
        """Delete the files the backend keeps for a finished job (a cluster job's output, exit code
        and record on the shared folder), when the owner deletes the shell's logs; nothing for others."""
        ...

    def detach(self) -> None:
        """The owner is closing and the job outlives it (``guard`` is ``None``): stop feeding the
        streams (end them), leave the job running.  Nothing to do for jobs that end with their owner."""
        ...


@record
class JobRecord:
    """A job a new owner can take over: what the backend kept when it started it (see
    :meth:`Backend.find_jobs`), so the job shows again as it showed in the owner that started it."""

    #: What :meth:`Backend.reattach` takes (a SLURM job id).
    job_id: str
    shell_id: str
    command: str
    cwd: str
    #: The marker the job's processes carry (the run's, from the owner that started it).
    marker: str
    started_at: str
    timeout: float | None = None


@record
class Option:
    """One option a backend takes: a flag on the magic's line (``--cpus``), a setting of the
    backend's settings section (``c.SlurmBackend.cpus``), or both.

    The magics add one flag per :attr:`flag` (shared by the backends declaring the same flag, which
    must agree on its :attr:`kind`), refuse it without ``--on`` one of those backends, and give its
    value -- the line's over the setting's -- to the backend's factory under :attr:`name`
    (see :func:`.registry.resolve`).
    """

    #: The key of the value handed to the factory, the setting's name and the flag's argparse dest.
    name: str
    #: One line; the magic's help puts ``with --on NAME:`` before it.
    help: str
    #: How the word on the line and the setting are read: ``str``, ``int`` or ``float``.
    kind: type[Any] = str
    #: The setting's default, also what it is when unset: empty or 0 means the site's default.
    default: str | int | float = ""
    #: ``--cpus``; ``None``: a setting only (a folder, a timeout: not something to choose per job).
    #: Never one the magics have already (``--env``, ``--cwd``, ``--timeout``, ``--name``…): those
    #: apply wherever a command runs, and reach the backend in the :class:`Command` it starts.
    flag: str | None = None
    metavar: str = "VALUE"
    #: Also a setting (``True``), or a flag only.
    setting: bool = True
    #: The setting's help where it says more than :attr:`help` (the unit, what empty means).
    setting_help: str | None = None
    #: Turns a given value into what the factory gets, or raises
    #: :class:`~execmagic.process.errors.UsageProblem` (one line, naming the flag); ``None``: as read.
    parse: Callable[[Any], Any] | None = None
    #: The line's value adds to the setting's instead of replacing it (more sbatch options); then
    #: :attr:`parse` must give something ``+`` joins (a tuple of words).
    adds_to_setting: bool = False


class Foreground(Protocol):
    """A foreground run on a backend (``%exec --on NAME``): a local command that runs the job,
    streams its stdout and stderr apart and ends with its exit code (``srun`` for SLURM), so the
    local foreground loop shows it live and its stop button stops it."""

    #: The local command that runs the job (the caller runs it as it runs any command).  Its
    #: :attr:`~execmagic.process.spec.Command.on_owner_death` is the job's own cancel, which the
    #: owner's watchdog runs if the owner dies mid-run (stopping the local command does not end a
    #: job elsewhere).
    command: Command

    @property
    def words(self) -> str | None:
        """The job's state for the status line (``queued (Resources)``, ``running on node7``);
        ``None`` until the backend said."""
        ...

    def watch(self) -> None:
        """Start following the job's state for :attr:`words` (only where a status line shows it)."""
        ...

    def finish(self, *, stopped: bool) -> None:
        """The local command ended: stop watching; ``stopped`` (interrupted, timed out, never ran
        to its end): make sure the job is gone too (the local command may have been stopped before
        it could end the job).  Raises :class:`~execmagic.process.errors.PreExecError` when the
        backend cannot be reached; the caller only reports it."""
        ...


class Backend(Protocol):
    """Where background shells run."""

    #: A short name for messages and ``--on`` (``"local"``, ``"slurm"``).
    name: str
    #: Jobs run elsewhere (another machine, under that system's rules): no sandbox of ours, no
    #: session written back by a foreground run, no local watchdog for the job's processes.
    remote: bool

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job") -> Handle:
        """Start ``command`` carrying ``marker``.  ``log_paths`` are the (already created) log files
        the reader writes; a backend whose jobs write elsewhere first may use them to place its own
        files next to them.  ``timeout`` is for a handle that :attr:`~Handle.enforces_timeout`;
        ``shell_id`` names the job where the backend shows names (a SLURM job name).
        Raises :class:`~execmagic.process.errors.PreExecError` when it cannot start."""
        ...

    def reattach(self, job_id: str, *, marker: str) -> Handle:
        """The handle of a job started earlier (by this or an earlier owner), from its id; raises
        :class:`~execmagic.process.errors.UsageProblem` when the backend cannot do that (or the job's
        record is not there, or was written for another job)."""
        ...

    def find_jobs(self) -> list[JobRecord]:
        """This user's jobs the backend still lists and execmagic started (by the rule in the module
        docstring), for a new owner to :meth:`reattach`; ``[]`` for a backend whose jobs end with
        their owner.  Raises :class:`~execmagic.process.errors.PreExecError` when it cannot ask."""
        ...

    def foreground(self, command: Command, *, name: str) -> Foreground | None:
        """``command`` as a foreground run on this backend (``name``: unique in this owner, for the
        job's name); ``None``: run it here as it is (local processes)."""
        ...
