"""What the registry needs from wherever a background shell runs (design §2, §3.4).

A background shell has a *backend*: local processes today, cluster jobs (SLURM) next.  Everything
above a backend (registry, reader, cursors, filter, wait, follow, list and display) works on the
shell's log files and on a POSIX-style return code, and never asks which backend wrote them.  So a
new backend is one new module implementing these two protocols, and nothing else changes:

- :class:`Backend` starts a command and hands back a :class:`Handle` (or finds one again by id);
- the :class:`Handle` gives the reader one non-blocking readable descriptor per stream, which the
  reader mirrors into the log files (a cluster backend hands it pipes fed from the job's files on
  the shared filesystem), says whether the job ended and how, and stops it.

Protocols, not base classes: a backend shares no code with the others, only a shape, and the
tests can hand the registry a small fake.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from ...process.spec import Command
from ...process.stop import StopReport

__all__ = ["STREAMS", "Backend", "Handle"]

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
    #: ``(session id, marker)`` the watchdog stops if the owner dies; ``None`` for jobs that
    #: outlive their owner by design (a cluster job a new kernel can reattach to).
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
        (``queued (Resources)``, ``running on node7``, ``failed: NODE_FAIL``); ``None`` otherwise."""
        ...

    def remove_files(self) -> None:
        """Delete the files the backend keeps for a finished job (a cluster job's output, exit code
        and record on the shared folder), when the owner deletes the shell's logs; nothing for others."""
        ...

    def detach(self) -> None:
        """The owner is closing and the job outlives it (``guard`` is ``None``): stop feeding the
        streams (end them), leave the job running.  Nothing to do for jobs that end with their owner."""
        ...


class Backend(Protocol):
    """Where background shells run."""

    #: A short name for messages and ``--on`` (``"local"``, ``"slurm"``).
    name: str

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
        :class:`~execmagic.process.errors.UsageProblem` when the backend cannot do that."""
        ...
