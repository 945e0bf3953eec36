"""The engine as a Python API: ``run``, ``spawn``, background ``start``/``read``/``kill``/``shells``,
and an asyncio form of each (``arun``, ``aspawn``, …) for code that already runs an event loop --
including a notebook cell, where ``asyncio.run`` fails but ``await execmagic.arun(...)`` works.

All of them use one process-wide :class:`Engine` (:func:`default_engine`), the same one the
magics use once the extension is loaded, so ``%exec cd data`` and ``execmagic.run("ls")`` share
one session and one set of background shells.  Create your own :class:`Engine` for separation.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from typing import Any

from .background.backends import registry
from .background.backends.base import Backend
from .engine.aio import in_thread
from .engine.default import close_default_engine, default_engine
from .engine.engine import Engine
from .engine.requests import Request
from .guard.policy import Guard
from .process import checks
from .process.errors import UsageProblem, shown_value
from .process.foreground import CancelToken, OutputCallback
from .process.results import KillOutcome, Result, ShellInfo, ShellOutput
from .process.spec import RunOptions

__all__ = [
    "akill", "aread", "arun", "ashells", "aspawn", "astart", "close_default_engine", "default_engine", "in_thread",
    "kill", "read", "run", "shells", "spawn", "start",
]


def _options(timeout: float | None, grace: float | None, engine: Engine) -> RunOptions:
    """The engine's options, with this call's timeout and grace where given (checked: no ``nan``/``inf``)."""
    options = engine.options
    checked_timeout, checked_grace = checks.timeout(timeout), checks.grace(grace)
    if checked_timeout is not None:
        options = dataclasses.replace(options, timeout=checked_timeout)
    if checked_grace is not None:
        options = dataclasses.replace(options, grace=checked_grace)
    return options


def run(command: str, *, language: str = "bash", timeout: float | None = None, grace: float | None = None,
        cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
        params: dict[str, Any] | None = None, input: str | bytes | None = None, isolated: bool = False,
        check: bool = False, guard: Guard = "catastrophic", on_output: OutputCallback | None = None,
        on: str | Backend = "local", engine: Engine | None = None, cancel: CancelToken | None = None) -> Result:
    """Run a shell command (or a script in ``language``) in the persistent session.

    Returns a :class:`Result`; ``check=True`` raises :class:`CommandFailed` unless it succeeded.
    ``on`` runs it elsewhere, as ``%exec --on`` does (a backend's name or one made with options, as for
    :func:`start`): ``"slurm"`` runs it through ``srun``, its output streamed here as it comes; a run on
    a cluster reads the session and writes nothing back to it.
    """
    engine = engine or default_engine()
    options = _options(timeout, grace, engine)
    plan = engine.plan(Request(text=checks.text(command, "command"), language=checks.text(language, "language"),
                               cwd=cwd, env=env, clear_env=clear_env, params=params, input=input, isolated=isolated,
                               on=_backend(on, engine)))
    result = engine.run(plan, options=options, on_output=on_output, guard=guard, cancel=cancel)
    return result.check() if check else result


def spawn(argv: Sequence[str] | str, *, timeout: float | None = None, grace: float | None = None,
          cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
          params: dict[str, Any] | None = None, input: str | bytes | None = None, isolated: bool = False,
          check: bool = False, guard: Guard = "catastrophic", on_output: OutputCallback | None = None,
          engine: Engine | None = None, cancel: CancelToken | None = None) -> Result:
    """Run one program with an argument vector, no shell (a string is split as a shell would, once)."""
    engine = engine or default_engine()
    options = _options(timeout, grace, engine)
    plan = engine.plan(Request(argv=_argv(argv), cwd=cwd, env=env, clear_env=clear_env, params=params, input=input,
                               isolated=isolated))
    result = engine.run(plan, options=options, on_output=on_output, guard=guard, cancel=cancel)
    return result.check() if check else result


def _argv(argv: Sequence[str] | str) -> list[str]:
    """A string split as a shell would (an unclosed quote is a usage problem), or each item checked."""
    if isinstance(argv, str):
        try:
            words = shlex.split(checks.text(argv, "argv"))
        except ValueError as exc:
            raise UsageProblem(f"cannot split argv {shown_value(argv)}: {exc}") from None
    else:
        words = checks.argv(argv)
    if not words:
        raise UsageProblem("argv is empty: name the program to run")
    return words


def start(command: str, *, language: str = "bash", name: str | None = None, timeout: float | None = None,
          cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
          params: dict[str, Any] | None = None, isolated: bool = False, guard: Guard = "catastrophic",
          on: str | Backend = "local", engine: Engine | None = None) -> ShellInfo:
    """Start a background shell (``timeout``: its maximum lifetime); returns its :class:`ShellInfo`.

    ``on`` names a backend (``"slurm"`` submits it as a SLURM batch job with the cluster's defaults
    and its logs under ``~/.execmagic/slurm``), or is one, made with options
    (``on=SlurmBackend(SlurmOptions(partition="gpu", cpus=8), logs_dir=…)``).  :func:`read` and
    :func:`kill` work the same wherever it runs.
    """
    engine = engine or default_engine()
    backend = _backend(on, engine)
    timeout = checks.timeout(timeout)
    name = checks.optional_text(name, "name")
    plan = engine.plan(Request(text=checks.text(command, "command"), language=checks.text(language, "language"),
                               cwd=cwd, env=env, clear_env=clear_env, params=params, isolated=isolated,
                               background=True, on=backend))
    return engine.start_background(plan, name=name, timeout=timeout, guard=guard)


def _backend(on: str | Backend | None, engine: Engine) -> Backend | None:
    """The backend object ``on`` is or names (with its defaults; the registry says which names exist);
    ``None`` runs here, as ``"local"`` does (it always has, for :func:`start`)."""
    return None if on is None else registry.backend_given(on, "on", grace=engine.options.grace)


def read(shell_id: str, *, reader: str = "api", filter: str | None = None, stream: str = "both",
         wait: float = 0.0, tail: int | None = None, whole_log: bool = False, max_bytes: int = 1_000_000,
         engine: Engine | None = None) -> ShellOutput:
    """What a background shell printed since this ``reader``'s last look, and its status.

    ``wait`` blocks up to that many seconds for news (with ``filter``: for a line it keeps); ``math.inf``
    waits until the shell ends.
    """
    engine = engine or default_engine()
    return engine.shells.read(checks.text(shell_id, "shell_id"), reader=checks.text(reader, "reader"),
                              pattern=checks.optional_text(filter, "filter"), stream=stream,
                              wait=checks.wait(wait), tail=None if tail is None else checks.count(tail, "tail"),
                              whole_log=whole_log, max_bytes=checks.count(max_bytes, "max_bytes", minimum=1))


def kill(shell_id: str, *, signal: str | int = "TERM", grace: float | None = None,
         engine: Engine | None = None) -> KillOutcome:
    """Stop a background shell and everything it started (``grace``: seconds between signal and SIGKILL)."""
    return (engine or default_engine()).shells.kill(checks.text(shell_id, "shell_id"), sig=signal,
                                                    grace=checks.grace(grace))


def shells(engine: Engine | None = None) -> list[ShellInfo]:
    """Every background shell, running or finished."""
    return (engine or default_engine()).shells.list()


# -- asyncio forms ----------------------------------------------------------------------------
async def arun(command: str, **kwargs: Any) -> Result:
    """:func:`run` for asyncio: awaitable; cancelling the task stops the command and all it started."""
    return await in_thread(lambda token: run(command, cancel=token, **kwargs), cancellable=True)


async def aspawn(argv: Sequence[str] | str, **kwargs: Any) -> Result:
    """:func:`spawn` for asyncio: awaitable; cancelling the task stops the command."""
    return await in_thread(lambda token: spawn(argv, cancel=token, **kwargs), cancellable=True)


async def astart(command: str, **kwargs: Any) -> ShellInfo:
    """:func:`start` for asyncio."""
    return await in_thread(lambda _token: start(command, **kwargs), cancellable=False)


async def aread(shell_id: str, **kwargs: Any) -> ShellOutput:
    """:func:`read` for asyncio (``wait`` blocks a worker thread, not the event loop)."""
    return await in_thread(lambda _token: read(shell_id, **kwargs), cancellable=False)


async def akill(shell_id: str, **kwargs: Any) -> KillOutcome:
    """:func:`kill` for asyncio."""
    return await in_thread(lambda _token: kill(shell_id, **kwargs), cancellable=False)


async def ashells(**kwargs: Any) -> list[ShellInfo]:
    """:func:`shells` for asyncio."""
    return await in_thread(lambda _token: shells(**kwargs), cancellable=False)
