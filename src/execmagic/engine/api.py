"""The engine as a Python API: ``run``, ``spawn``, background ``start``/``read``/``kill``/``shells``,
and an asyncio form of each (``arun``, ``aspawn``, …) for code that already runs an event loop --
including a notebook cell, where ``asyncio.run`` fails but ``await execmagic.arun(...)`` works.

All of them use one process-wide :class:`Engine` (:func:`default_engine`), the same one the
magics use once the extension is loaded, so ``%exec cd data`` and ``execmagic.run("ls")`` share
one session and one set of background shells.  Create your own :class:`Engine` for separation.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from . import checks
from .errors import UsageProblem
from .policy import Guard
from .results import KillOutcome, Result, ShellInfo, ShellOutput
from .run import CancelToken, OutputCallback
from .runner import Engine
from .spec import RunOptions

T = TypeVar("T")
_default: Engine | None = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The process-wide engine (created on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Engine()
        return _default


def close_default_engine(grace: float | None = None) -> None:
    """Stop the process-wide engine's background shells (``grace`` before SIGKILL) and forget it;
    the next use starts afresh."""
    global _default
    with _default_lock:
        engine, _default = _default, None
    if engine is not None:
        engine.close(grace)


def _options(timeout: float | None, grace: float | None, engine: Engine) -> RunOptions:
    """The engine's options, with this call's timeout and grace where given (checked: no ``nan``/``inf``)."""
    changes = {k: v for k, v in (("timeout", checks.timeout(timeout)), ("grace", checks.grace(grace)))
               if v is not None}
    return dataclasses.replace(engine.options, **changes)


def run(command: str, *, language: str = "bash", timeout: float | None = None, grace: float | None = None,
        cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
        params: dict[str, Any] | None = None, input: str | bytes | None = None, isolated: bool = False,
        check: bool = False, guard: Guard = "catastrophic", on_output: OutputCallback | None = None,
        engine: Engine | None = None, cancel: CancelToken | None = None) -> Result:
    """Run a shell command (or a script in ``language``) in the persistent session.

    Returns a :class:`Result`; ``check=True`` raises :class:`CommandFailed` unless it succeeded.
    """
    engine = engine or default_engine()
    options = _options(timeout, grace, engine)
    plan = engine.plan_script(checks.text(command, "command"), checks.text(language, "language"), cwd=cwd,
                              env=env, clear_env=clear_env, params=params, input=input, isolated=isolated)
    result = engine.run(plan, options=options, on_output=on_output, guard=guard,
                        cancel=cancel)
    return result.check() if check else result


def spawn(argv: Sequence[str] | str, *, timeout: float | None = None, grace: float | None = None,
          cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
          params: dict[str, Any] | None = None, input: str | bytes | None = None, isolated: bool = False,
          check: bool = False, guard: Guard = "catastrophic", on_output: OutputCallback | None = None,
          engine: Engine | None = None, cancel: CancelToken | None = None) -> Result:
    """Run one program with an argument vector, no shell (a string is split as a shell would, once)."""
    engine = engine or default_engine()
    options = _options(timeout, grace, engine)
    plan = engine.plan_argv(_argv(argv), cwd=cwd, env=env, clear_env=clear_env, params=params, input=input,
                            isolated=isolated)
    result = engine.run(plan, options=options, on_output=on_output, guard=guard,
                        cancel=cancel)
    return result.check() if check else result


def _argv(argv: Sequence[str] | str) -> list[str]:
    """A string split as a shell would (an unclosed quote is a usage problem), or each item checked."""
    if isinstance(argv, str):
        try:
            return shlex.split(checks.text(argv, "argv"))
        except ValueError as exc:
            raise UsageProblem(f"cannot split argv {argv!r}: {exc}") from None
    return checks.argv(argv)


def start(command: str, *, language: str = "bash", name: str | None = None, timeout: float | None = None,
          cwd: str | None = None, env: dict[str, str] | None = None, clear_env: bool = False,
          params: dict[str, Any] | None = None, isolated: bool = False, guard: Guard = "catastrophic",
          engine: Engine | None = None) -> ShellInfo:
    """Start a background shell (``timeout``: its maximum lifetime); returns its :class:`ShellInfo`."""
    engine = engine or default_engine()
    timeout = checks.timeout(timeout)
    name = checks.optional_text(name, "name")
    plan = engine.plan_script(checks.text(command, "command"), checks.text(language, "language"), cwd=cwd,
                              env=env, clear_env=clear_env, params=params, isolated=isolated, save_session=False)
    return engine.start_background(plan, name=name, timeout=timeout, guard=guard)


def read(shell_id: str, *, reader: str = "api", filter: str | None = None, stream: str = "both",
         wait: float = 0.0, tail: int | None = None, whole_log: bool = False, max_bytes: int = 1_000_000,
         engine: Engine | None = None) -> ShellOutput:
    """What a background shell printed since this ``reader``'s last look, and its status.

    ``wait`` blocks up to that many seconds for news; ``math.inf`` waits until the shell ends.
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
async def in_thread(call: Callable[[CancelToken | None], T], cancellable: bool) -> T:
    """Run a blocking call on its own thread; if the awaiting task is cancelled, stop the command
    (through a :class:`CancelToken`) and wait until it is stopped before letting the cancel through."""
    loop = asyncio.get_running_loop()
    token = CancelToken() if cancellable else None
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            value = call(token)
        except BaseException as exc:  # noqa: BLE001 -- handed to the awaiting task as it is
            loop.call_soon_threadsafe(_settle, future, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, future, value, None)

    threading.Thread(target=work, name="execmagic-async", daemon=True).start()
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if token is not None:
            token.cancel()
            with contextlib.suppress(BaseException):
                await future  # the command's processes are stopped before the cancel goes on
        raise
    finally:
        if token is not None and future.done():
            token.close()


def _settle(future: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(value)


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
