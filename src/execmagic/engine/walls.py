"""A run put inside its sandbox: its own files bound back, and what the walls say of a run that failed.

The walls are set by :mod:`.sandboxing` (what they enclose) and :mod:`..process.sandbox` (bubblewrap);
what is per run -- the state file a sandboxed session run writes, its prelude, a big script -- is
bound in here, as the run (or the standby that will take it) starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..process.private import create_file
from ..process.results import Result
from ..process.spec import Command
from ..process.standby import Standby
from .plans import SANDBOX_STATE_FOLDER, Plan
from .session import STATE_VAR

if TYPE_CHECKING:  # the walls are imported when a sandbox is first set (see .sandboxing)
    from ..process.sandbox import Confined, Sandbox

__all__ = ["confined", "inside", "standby_inside", "start_inside", "walls_said"]


def confined(plan: Plan) -> Command:
    """The command that runs ``plan`` inside its sandbox: its own files bound back (the prelude and a
    big script read-only, the state file writable: made here, empty, as a bind needs it to exist)."""
    sandbox, command = plan.sandbox, plan.command
    if sandbox is None:
        return command
    walled = inside(sandbox, list(command.argv), command.cwd, dict(command.env),
                    plan.state_path or plan.failure_path, plan.script_file)
    return dataclasses.replace(command, argv=walled.argv, env=walled.env, fd_args=walled.fd_args,
                               fd_reader=walled.reader)


def inside(sandbox: Sandbox, argv: list[str], cwd: str, env: dict[str, str], state: str | None,
           script: str | None = None) -> Confined:
    """How ``argv`` starts with ``env`` inside ``sandbox``, with the run's own files bound back: the folder of
    sandboxed state files writable (``state`` is in it: see :meth:`.Planner._session_files`), its prelude and a
    big script read-only."""
    writable = []
    if state is not None and os.path.basename(os.path.dirname(state)) == SANDBOX_STATE_FOLDER:
        writable.append(os.path.dirname(state))
        # sandboxed runs can write in that folder: what one planted at this run's name (a fifo its shell
        # would block on, a link) is replaced by a fresh empty file of ours, which bash's `>` then fills
        with contextlib.suppress(OSError):
            os.unlink(state)
        with contextlib.suppress(OSError):
            os.close(create_file(state))
    prelude = env.get("BASH_ENV") if state is not None else None
    # a prelude handed as a descriptor (/dev/fd/N) passes through bwrap as it is: only a file is bound
    readable = [p for p in (prelude, script) if p and not p.startswith("/dev/fd/")]
    return sandbox.confine(argv, cwd, env, readable=readable, writable=writable)


def standby_inside(sandbox: Sandbox, cwd: str, argv: list[str], env: dict[str, str]) -> Confined:
    """A standby's runner inside ``sandbox``, as a run is put there (:func:`inside`)."""
    return inside(sandbox, argv, cwd, env, env[STATE_VAR])


def start_inside(sandbox: Sandbox, start: Callable[[], Standby | None]) -> Standby | None:
    """Start a standby inside ``sandbox`` (``start``, in the standby's worker thread) and hold its namespaces
    until the next one starts (see :mod:`..process.sandbox_keep`): those of the standbys that have ended since
    -- the last run's, answered a moment ago -- are let go first, here, where tearing them down delays no run."""
    walls = sandbox.walls
    if walls is not None:
        walls.kept.let_go()
    standby = start()
    if walls is not None and standby is not None:
        walls.kept.keep(standby.runner.pid)
    return standby


def walls_said(sandbox: Sandbox, result: Result) -> tuple[str, ...]:
    """Why a sandboxed run that failed may have: its session's ``/tmp`` is full, or its memory or process
    limit was reached (one line each, or nothing)."""
    walls = sandbox.walls
    if walls is None or result.exit_code == 0:
        return ()
    said = []
    memory, processes = walls.limits_reached()
    processes = processes and result.stopped_at is None  # the outcome says it
    if memory:
        said.append(f"the sandbox's memory limit ({walls.limits.memory:,} bytes for the session, its /tmp included) "
                    "was reached: the kernel killed a process of it")
    if processes:
        said.append(f"the sandbox's process limit ({walls.limits.processes:,} for the session) was reached: forks "
                    "failed (a command that forks without end runs into it)")
    if walls.tmp_full():
        said.append(f"the sandbox's /tmp is full ({walls.limits.tmp_bytes:,} bytes, kept for the session): remove "
                    "files there, or raise the limit")
    return tuple(said)
