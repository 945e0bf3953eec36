"""``execute(config, params)``: a one-call run for orchestrators (``SubprocessPrimitive``) over the engine.

A config dict (``command``, ``args``, ``env``, ``cwd``, ``timeout`` in seconds,
``capture_output``, ``input_data``) and runtime ``params``; ``${VAR:-default}``
then ``{param}`` expansion in command, args, cwd and input_data; never raises for
a run that failed -- a command that is not found gives ``return_code`` -1 and
"not found" in ``stderr``, a timeout "timed out", a refused permission
"Permission denied".
"""

from __future__ import annotations

import dataclasses
import errno
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..engine.engine import Engine
from ..guard.policy import Guard
from ..process.errors import ExecError
from ..process.records import record

__all__ = ["COMPLETE_ENV_SIZE", "DEFAULT_TIMEOUT", "SubprocessPrimitive", "SubprocessResult", "execute"]

#: Default timeout, in seconds: five minutes covers a build or a test run, and still ends a hang.
DEFAULT_TIMEOUT = 300
#: An ``env`` of at least this many variables is taken as complete (already resolved by an
#: orchestrator) and used as it is; a smaller one is merged over ``os.environ``:
#: a few overrides should not drop ``PATH`` and ``HOME``, while a full environment is meant as written.
COMPLETE_ENV_SIZE = 50


@record
class SubprocessResult:
    """One run's record: did it work, what it printed, its code and how long it took."""

    success: bool
    stdout: str
    stderr: str
    return_code: int
    duration_ms: int


def _failure(message: str, duration_ms: int = 0, return_code: int = -1) -> SubprocessResult:
    return SubprocessResult(False, "", message, return_code, duration_ms)


def _os_reason(code: str | None) -> str:
    """The OS's words for an errno name (``"ENOENT"`` → ``"No such file or directory"``); EIO's if unknown.

    A start failure ends with them, so a reader needs no errno table:
    ``exec: ls not found in PATH (ENOENT): No such file or directory``.
    """
    number = getattr(errno, code, None) if code else None
    return os.strerror(number if isinstance(number, int) else errno.EIO)


def execute(config: Mapping[str, Any], params: Mapping[str, Any] | None = None, *,
            engine: Engine | None = None, guard: Guard = "catastrophic") -> SubprocessResult:
    """Run ``config`` with ``params``; every failure is a :class:`SubprocessResult`, never an exception."""
    from ..engine.default import default_engine

    engine = engine or default_engine()
    params = dict(params or {})
    command = config.get("command")
    if not isinstance(command, str) or not command:
        return _failure("exec: config needs a 'command' string (EINVAL)")
    args = config.get("args") or []
    if not isinstance(args, (list, tuple)) or not all(isinstance(a, (str, int, float)) for a in args):
        return _failure("exec: 'args' must be a list of strings (EINVAL)")
    raw_env = {str(k): str(v) for k, v in (config.get("env") or {}).items()}
    complete = len(raw_env) >= COMPLETE_ENV_SIZE
    try:
        cwd = config.get("cwd")
        input_data = config.get("input_data")
        timeout = float(config.get("timeout", DEFAULT_TIMEOUT))
        capture = bool(config.get("capture_output", True))
        plan = engine.plan_argv(
            [command, *map(str, args)], cwd=str(cwd) if cwd else None, env=raw_env, params=params,
            input=str(input_data) if input_data is not None else None, isolated=True,
            env_filter=(lambda _inherited: {}) if complete else None,
        )
        options = dataclasses.replace(engine.options, timeout=timeout)
        result = engine.run(plan, options=options, on_output=None if capture else _to_parent, guard=guard)
    except (ExecError, ValueError, TypeError) as exc:
        return _failure(f"exec: {exc}")
    if result.error:
        return _failure(f"{result.error}: {_os_reason(result.error_code)}", result.duration_ms)
    # the kept head and tail (1 MB at most, the middle noted), not the whole output read back from the log
    stdout, stderr = (result.stdout_capture.text, result.stderr_capture.text) if capture else ("", "")
    if result.timed_out:
        separator = "\n" if stderr and not stderr.endswith("\n") else ""
        stderr += f"{separator}exec: timed out after {timeout:g}s (TIMEOUT)"
    return SubprocessResult(result.success, stdout, stderr, result.exit_code, result.duration_ms)


def _to_parent(stream: str, text: str) -> None:
    """``capture_output=False``: the output goes to this process's own stdout/stderr."""
    (sys.stdout if stream == "stdout" else sys.stderr).write(text)


class SubprocessPrimitive:
    """The same call as a class with an async method, the shape orchestrators await:
    ``await SubprocessPrimitive().execute(config, params)``."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine

    async def execute(self, config: Mapping[str, Any], params: Mapping[str, Any] | None = None) -> SubprocessResult:
        from ..engine.aio import in_thread

        return await in_thread(lambda _token: execute(config, params, engine=self.engine), cancellable=False)
