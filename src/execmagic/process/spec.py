"""What to run and how to stop it (frozen values, built by the callers of :mod:`run`)."""

from __future__ import annotations

from collections.abc import Mapping

from .records import record

__all__ = ["Command", "RunOptions"]


@record
class Command:
    """One process to start: a fully expanded argv, its cwd and complete environment."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    display: str
    input: bytes | None = None
    #: The argv as shown and recorded, secrets redacted (``None``: the same as ``argv``).
    shown_argv: tuple[str, ...] | None = None
    #: What the watchdog runs if the owner dies while this runs, after stopping its processes: for a
    #: command that runs a job elsewhere (``srun``), the job's own cancel, which stopping the local
    #: process does not give (empty: nothing more).
    on_owner_death: tuple[str, ...] = ()
    #: More arguments for the program, NUL-separated, that it reads from a file descriptor named after
    #: ``--args`` (bubblewrap's option, put right after ``argv[0]``) instead of its argv: a sandboxed run's
    #: environment and private paths, which on the argv every user of the machine would read in ``ps``
    #: (``None``: none).
    fd_args: bytes | None = None
    #: Where the program that reads ``fd_args`` stands in ``argv`` (bwrap, after what enters a sandboxed
    #: session's namespaces).
    fd_reader: int = 0
    #: How the program reads its script from a descriptor instead of its argv, where every user of the machine
    #: reads it in ``ps`` (a secret of the run's; a big script's private path): a command line that takes the
    #: place of ``argv``'s last word, ``{fd}`` standing for the descriptor of a memory file that holds that
    #: word (see :func:`~.launch.handed_script`; ``None``: the argv as it is).
    script_boot: str | None = None
    #: Descriptors of the engine's the program is handed, at the same numbers (the session prelude, which
    #: bash reads as ``/dev/fd/N``: see :func:`execmagic.engine.session.prelude_fd`).
    pass_fds: tuple[int, ...] = ()


@record
class RunOptions:
    """How a foreground run is bounded.  Every default has its reason beside it."""

    #: Seconds before the run is stopped; ``None`` waits as long as it takes (a notebook user can interrupt).
    timeout: float | None = None
    #: Seconds each signal of the stop ladder gets before the next, harder one (long enough to flush and exit).
    grace: float = 2.0
    #: Seconds to keep reading after the command exited while something it started still holds the pipes.
    drain: float = 0.25
    #: Bytes of each stream kept in memory for the result (head + tail); every byte also goes to the log.
    keep_bytes: int = 1_000_000
    #: Seconds between live output callbacks: a few messages a second, never one per line.
    flush_interval: float = 0.2
    #: Seconds between progress callbacks.
    progress_interval: float = 1.0
    #: Keep a log file of every run; by default one is written only when the result cannot hold the
    #: whole output (it was cut in the middle, or is binary) -- a few days of small commands then
    #: leave no files behind.
    keep_logs: bool = False
    #: Bytes of output past which the log is written (default: ``keep_bytes``, what the result holds);
    #: an agent tool that shows 30,000 characters lowers it so that its cut points at a log.
    log_over: int | None = None
