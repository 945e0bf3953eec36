"""The engine's front door: turn a request (a script, an argv) into a :class:`Command`, run it, keep the session.

Planning and running are separate so that ``--dry-run`` shows exactly what
would run -- the same expansion, the same argv -- without running it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import itertools
import os
import re
import shlex
import tempfile
import threading
import time
import uuid
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..process.capture import LogDir, os_error_reason
from ..process.errors import PreExecError
from .contexts import SHELL_LANGUAGES
from .interpreter import kernel_bin_first, kernel_tool_notes
from .languages import script_argv
from ..process.results import KillOutcome, Result, ShellInfo
from ..guard.policy import CommandRefused, Guard, Policy, check
from ..process.foreground import CancelToken, OutputCallback, ProgressCallback, failed_to_start, run_command
from .session import STATE_VAR, ShellSession, session_env, why_no_state, write_prelude
from ..background.registry import ShellRegistry
from ..process.launch import check_cwd
from ..process.spec import Command, RunOptions
from ..process.retention import DEFAULT_QUOTA, DEFAULT_RETENTION_DAYS, prune_log_folders
from ..guard.secrets import SECRET_NAME, Masked, redact, secret_env
from .template import expand_argv, expand_params, expand_value, references

__all__ = ["Engine", "Plan", "default_log_dir"]

# What bash/sh print last when the script's final command could not be started, by exit code.
_SHELL_START_FAILURES = {
    127: (re.compile(r"(?:^|\n)[^\n]*?([^\s:]+): (?:command )?not found\n?$"), "{} not found in PATH", "ENOENT"),
    126: (re.compile(r"(?:^|\n)[^\n]*?([^\s:]+): Permission denied\n?$"), "permission denied '{}'", "EACCES"),
}


def default_log_dir() -> str:
    """A fresh directory per engine under the system temp dir (kept after exit: logs are the record)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return os.path.join(tempfile.gettempdir(), f"execmagic-{os.getuid()}", f"{stamp}-{os.getpid()}")


@dataclasses.dataclass(frozen=True)
class Plan:
    """A run, fully expanded, not yet started.  ``error`` is set when it cannot start (e.g. missing cwd)."""

    command: Command
    label: str
    state_path: str | None = None
    script: bool = False
    error: PreExecError | None = None
    env_changes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: The shell text a shell-language plan runs (what the dangerous-command check reads); None otherwise.
    shell_text: str | None = None
    #: The environment as the session sees it (without the variables that make bash save its state).
    session_env: Mapping[str, str] | None = None
    #: What the result should say about how the plan was made (e.g. which pip runs).
    notes: tuple[str, ...] = ()
    #: A file the script was written to (an interpreter that takes a file, a big cell); removed after a run.
    script_file: str | None = None

    def describe(self) -> str:
        """What ``--dry-run`` shows: the command, and where and with what it would run."""
        lines = [self.command.display]
        if self.script:
            lines.append(f"# run by: {shlex.join(self.command.argv[:-1])} SCRIPT")
        lines.append(f"# cwd: {self.command.cwd}")
        for name, value in self.env_changes.items():
            lines.append(f"# env: {name}={'[REDACTED]' if secret_env({name: value}) else value}")
        if self.command.input is not None:
            lines.append(f"# stdin: {len(self.command.input)} bytes")
        if self.error is not None:
            lines.append(f"# would fail: {self.error}")
        return "\n".join(lines)


def _name_shell_start_failure(result: Result) -> Result:
    """Give a shell's "command not found" / "Permission denied" ending the seed's one-line error form."""
    known = _SHELL_START_FAILURES.get(result.exit_code)
    if known is None or result.error:
        return result
    pattern, issue, code = known
    match = pattern.search(result.stderr)
    if match is None:
        return result
    return dataclasses.replace(result, error=f"exec: {issue.format(match.group(1))} ({code})")


class _Prepared(NamedTuple):
    label: str
    cwd: str
    env: dict[str, str]
    params: Mapping[str, Any]
    input: bytes | None
    error: PreExecError | None
    changes: dict[str, str]
    #: The PATH before the kernel's bin folder was put first (``None``: not moved).
    moved_path: str | None = None


class Engine:
    """Runs commands for one owner (a kernel, a program, an agent) with one persistent shell session."""

    def __init__(self, *, log_dir: str | None = None, options: RunOptions | None = None,
                 policy: Policy | None = None) -> None:
        self.options = options or RunOptions()
        self.policy = policy or Policy()
        self.session = ShellSession()
        self.logs = LogDir(log_dir or default_log_dir())
        #: Gone owners' log folders are removed after this many days, and oldest first past the quota
        #: (bytes); only in the default log location (see :mod:`.retention`).
        self.log_retention_days = DEFAULT_RETENTION_DAYS
        self.log_quota = DEFAULT_QUOTA
        self._prunes = log_dir is None  # a folder the user chose is theirs to keep
        self._pruning: threading.Thread | None = None
        self.token = uuid.uuid4().hex[:12]
        #: Put the running interpreter's bin folder first on an inherited PATH (see :mod:`.interpreter`).
        self.prefer_kernel_env = False
        #: Show and record commands with secrets redacted (they run with the real values).
        self.redact_display = True
        self._counter = itertools.count(1)
        self.shells = ShellRegistry(log_dir=lambda: self.logs.path, grace=self.options.grace)
        self.shells.on_kill = self._record_kill

    # -- planning ---------------------------------------------------------------
    def _prepare(
        self,
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        clear_env: bool,
        params: Mapping[str, Any] | None,
        isolated: bool,
        input: str | bytes | None,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> "_Prepared":
        """What every plan needs: a label, the merged env, the run's cwd (checked), params and input.

        Values are checked before and after their ``${VAR}``/``{name}`` expansion (a NUL byte, a bad
        env name, input that is neither text nor bytes): a one-line :class:`UsageProblem` here beats a
        ``ValueError`` or ``TypeError`` from inside ``subprocess``.
        """
        from ..process import checks

        params = params or {}
        env = checks.environment(env)
        cwd = checks.optional_text(cwd, "cwd")
        input = checks.input_value(input)
        base_env = {} if clear_env else (dict(os.environ) if isolated else self.session.environment())
        if env_filter is not None:
            base_env = env_filter(base_env)
        moved_path = None
        if self.prefer_kernel_env and not clear_env and (isolated or "PATH" not in self.session.set):
            moved_path = kernel_bin_first(base_env)
        merged = dict(base_env)
        changes: dict[str, str] = {}
        for name, value in (env or {}).items():
            merged[name] = changes[name] = checks.text(expand_value(value, merged, params), f"env value of {name}")
        base_cwd = os.getcwd() if isolated else self.session.current_cwd()
        error = None
        run_cwd = base_cwd
        if cwd is not None:
            shown = checks.text(expand_value(cwd, merged, params), "cwd")
            run_cwd = os.path.normpath(os.path.join(base_cwd, os.path.expanduser(shown)))
            try:
                check_cwd(run_cwd, shown)
            except PreExecError as exc:
                error = exc
        data: bytes | None
        if isinstance(input, str):
            data = checks.encode_input(expand_value(input, merged, params))
        else:
            data = input  # bytes go to stdin unchanged: never templated, never shown as b'…'
        return _Prepared(f"{next(self._counter):04d}", run_cwd, merged, params, data, error, changes, moved_path)

    def plan_script(
        self,
        script: str,
        language: str = "bash",
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        clear_env: bool = False,
        params: Mapping[str, Any] | None = None,
        input: str | bytes | None = None,
        isolated: bool = False,
        save_session: bool = True,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> Plan:
        """Plan a script run.  ``{name}`` values are shell-quoted in bash/sh scripts (``{name!raw}`` opts out).

        ``save_session=False`` reads the session but never writes it back (background shells);
        ``env_filter`` trims the inherited environment (agent tools hold back secrets with it).
        """
        p = self._prepare(cwd=cwd, env=env, clear_env=clear_env, params=params, isolated=isolated, input=input,
                          env_filter=env_filter)
        text = expand_params(script, p.params, language=language)
        (shown,) = self._shown([text], [script], p, lambda params: [expand_params(script, params, language=language)])
        state_path = None
        run_env = p.env
        notes: tuple[str, ...] = ()
        error = p.error
        if language == "bash" and not isolated and save_session:
            try:
                logs = self.logs.ensure()
                run_env = session_env(p.env, os.path.join(logs, f"{p.label}.state"), write_prelude(logs))
                state_path = run_env[STATE_VAR]
            except OSError as exc:  # a full disk costs the session's memory of this run, not the run
                notes = (f"session state not saved: the log folder cannot be written ({os_error_reason(exc)})",)
        script_path = os.path.join(self.logs.path, f"{p.label}.script")
        try:
            argv = script_argv(language, text, p.env, script_path)
        except OSError as exc:
            error = error or PreExecError(f"cannot write the script to '{script_path}': {os_error_reason(exc)}",
                                          errno.errorcode.get(exc.errno or 0, "EIO"), exit_code=126)
            argv = (language, script_path)
        shown_argv = (*argv[:-1], shown) if shown != text and argv[-1] == text else argv
        command = Command(argv=argv, cwd=p.cwd, env=run_env, display=shown.strip("\n"), input=p.input,
                          shown_argv=shown_argv)
        if language in SHELL_LANGUAGES:
            notes += kernel_tool_notes(text, p.env.get("PATH", ""), p.moved_path)
        return Plan(command, p.label, state_path=state_path, script=True, error=error, env_changes=p.changes,
                    shell_text=text if language in SHELL_LANGUAGES else None, session_env=p.env, notes=notes,
                    script_file=script_path if script_path in argv or argv[-1].endswith(shlex.quote(script_path))
                    else None)

    def plan_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        clear_env: bool = False,
        params: Mapping[str, Any] | None = None,
        input: str | bytes | None = None,
        isolated: bool = False,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
    ) -> Plan:
        """Plan a direct run of ``argv`` (no shell): ``${VAR}`` and ``{name}`` expand per word, never split."""
        p = self._prepare(cwd=cwd, env=env, clear_env=clear_env, params=params, isolated=isolated, input=input,
                          env_filter=env_filter)
        words = tuple(expand_argv(argv, p.env, p.params))
        error = p.error
        if not words:
            error = error or PreExecError("empty command", "EINVAL", exit_code=127)
            words = ("",)
        shown = self._shown(list(words), argv, p, lambda params: expand_argv(argv, p.env, params))
        command = Command(argv=words, cwd=p.cwd, env=p.env, display=shlex.join(shown), input=p.input,
                          shown_argv=tuple(shown))
        return Plan(command, p.label, error=error, env_changes=p.changes,
                    notes=kernel_tool_notes(words[0], p.env.get("PATH", ""), p.moved_path))

    def _shown(self, words: list[str], sources: Sequence[str], p: _Prepared,
               expand: Callable[[Mapping[str, Any]], list[str]]) -> list[str]:
        """The command as shown and recorded (summary, provenance, audit log): values of secret-named
        templates masked, values of secret-named variables and credential-shaped text redacted.
        What runs is ``words``, untouched."""
        if not self.redact_display:
            return words
        secret = {name for source in sources for name, ref in references(source)
                  if SECRET_NAME.search(ref) and name in p.params}
        if secret:
            words = expand(ChainMap({name: Masked(name) for name in secret}, p.params))  # type: ignore[arg-type]
        held = secret_env(p.env)
        return [redact(word, held) for word in words]

    # -- running ------------------------------------------------------------------
    def run(
        self,
        plan: Plan,
        *,
        options: RunOptions | None = None,
        on_output: OutputCallback | None = None,
        on_progress: ProgressCallback | None = None,
        guard: Guard = "catastrophic",
        cancel: CancelToken | None = None,
    ) -> Result:
        """Run a plan; update the session from a bash run that ended by itself.

        ``guard`` refuses dangerous commands (:class:`CommandRefused`): ``"catastrophic"``
        (the default) for what destroys a system or data, ``"all"`` for risky ones too,
        ``"none"`` to check nothing.  ``cancel`` stops the run from another thread.
        """
        self.check_guard(plan, guard)
        error = plan.error or self._outside_roots(plan)
        if error is not None:
            result = failed_to_start(plan.command, error)
            note = self.policy.audit_outcome(decision="failed", command=plan.command.display, cwd=plan.command.cwd,
                                             error=str(error))
            return dataclasses.replace(result, notes=result.notes + (note,)) if note else result
        run_id = self._audit_intent(plan, "run")
        self.start_pruning()
        result = run_command(
            plan.command,
            options or self.options,
            log_dir=self.logs,
            label=plan.label,
            marker=f"{self.token}-{plan.label}",
            on_output=on_output,
            on_progress=on_progress,
            cancel=cancel,
            register=self.shells.guard_foreground,
        )
        if plan.script_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(plan.script_file)
        if plan.script and plan.command.argv[0] in SHELL_LANGUAGES:
            result = _name_shell_start_failure(result)
        if plan.state_path is not None:
            result = self._update_session(plan, result)
        note = self.policy.audit_outcome(decision="run", run=run_id, command=plan.command.display,
                                         cwd=plan.command.cwd, exit_code=result.exit_code,
                                         duration_ms=result.duration_ms, outcome=result.outcome())
        notes = plan.notes + result.notes + ((note,) if note else ())
        return dataclasses.replace(result, notes=notes) if notes != result.notes else result

    def _audit_intent(self, plan: Plan, decision: str) -> str:
        """Record what is about to start, before it starts; :class:`AuditUnavailable` stops it."""
        run_id = f"{self.token}-{plan.label}"
        self.policy.audit(phase="intent", decision=decision, run=run_id, command=plan.command.display,
                          cwd=plan.command.cwd)
        return run_id

    def check_guard(self, plan: Plan, guard: Guard) -> None:
        """Raise :class:`CommandRefused` (and audit it) when ``guard`` refuses what ``plan`` would run."""
        if plan.shell_text is not None:
            refusal = check(guard, text=plan.shell_text)
        else:
            refusal = check(guard, argv=plan.command.argv)
        if refusal is not None:
            # recorded if it can be; refused either way
            self.policy.audit_outcome(decision="refused", command=plan.command.display, cwd=plan.command.cwd,
                                      rule=refusal.rule, reason=refusal.reason)
            raise CommandRefused(refusal, hint="run it with guard='none' if you really mean it")

    def _outside_roots(self, plan: Plan) -> PreExecError | None:
        if self.policy.outside_roots(plan.command.cwd):
            return PreExecError(f"working directory '{plan.command.cwd}' is outside the allowed directories",
                                "EPERM", exit_code=1)
        return None

    def _update_session(self, plan: Plan, result: Result) -> Result:
        assert plan.state_path is not None
        try:
            with open(plan.state_path, "rb") as fh:
                state = fh.read()
            os.unlink(plan.state_path)
        except FileNotFoundError:
            state = None
        stopped = result.timed_out or result.interrupted or result.signal is not None
        if result.error:  # it never ran
            return result
        if stopped or not state:
            why = "the run was stopped" if stopped else why_no_state(plan.shell_text or "")
            return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
        delta = self.session.delta(state, plan.session_env or plan.command.env, plan.command.cwd)
        note = None
        if delta.cwd is not None and self.policy.outside_roots(delta.cwd):
            note = f"cd to {delta.cwd} was undone: it is outside the allowed directories"
            delta = dataclasses.replace(delta, cwd=None)
        self.session.apply(delta)
        if note is not None:
            return dataclasses.replace(result, notes=result.notes + (note,))
        if delta.cwd is not None:
            return dataclasses.replace(result, new_cwd=delta.cwd)
        return result

    def start_background(self, plan: Plan, *, name: str | None = None, timeout: float | None = None,
                         guard: Guard = "catastrophic") -> ShellInfo:
        """Start a plan as a background shell (see :class:`~execmagic.engine.shells.ShellRegistry`).

        Plan it with ``save_session=False``: a background shell starts from the session and
        never writes it back.  A plan that cannot start raises its :class:`PreExecError`;
        a refused one :class:`CommandRefused`.
        """
        self.check_guard(plan, guard)
        error = plan.error or self._outside_roots(plan)
        if error is not None:
            raise error
        run_id = self._audit_intent(plan, "background")
        info = self.shells.start(plan.command, marker_prefix=self.token, name=name, timeout=timeout)
        self.policy.audit_outcome(decision="background", run=run_id, command=plan.command.display,
                                  cwd=plan.command.cwd, shell_id=info.id, pid=info.pid)
        return info

    def _record_kill(self, shell_id: str, sig: int | str) -> Callable[[KillOutcome], None]:
        """Audit a kill, before and after.  Never refused: stopping something is always allowed."""
        self.policy.audit_outcome(decision="kill", phase_of="intent", shell_id=shell_id, signal=str(sig))

        def done(outcome: KillOutcome) -> None:
            self.policy.audit_outcome(decision="kill", shell_id=shell_id, message=outcome.message,
                                      signalled=outcome.signalled, killed=outcome.killed)
        return done

    def start_pruning(self) -> threading.Thread | None:
        """Prune other owners' log folders once, in the background (the first call wins; see :mod:`.retention`)."""
        if self._pruning is not None or not self._prunes:
            return None
        root, keep = os.path.dirname(self.logs.path), self.logs.path
        self._pruning = threading.Thread(
            target=prune_log_folders, args=(root,), name="execmagic-prune", daemon=True,
            kwargs={"keep": keep, "retention_days": self.log_retention_days, "quota": self.log_quota})
        self._pruning.start()
        return self._pruning

    def close(self, grace: float | None = None) -> None:
        """Stop every background shell and helper this engine started (``grace`` before SIGKILL)."""
        self.shells.close(grace)

    def run_script(self, script: str, language: str = "bash", *, options: RunOptions | None = None,
                   on_output: OutputCallback | None = None, on_progress: ProgressCallback | None = None,
                   guard: Guard = "catastrophic", cancel: CancelToken | None = None, **plan_args: Any) -> Result:
        """Plan and run a script in one call (see :meth:`plan_script` and :meth:`run` for the arguments)."""
        return self.run(self.plan_script(script, language, **plan_args), options=options,
                        on_output=on_output, on_progress=on_progress, guard=guard, cancel=cancel)

    def run_argv(self, argv: Sequence[str], *, options: RunOptions | None = None,
                 on_output: OutputCallback | None = None, on_progress: ProgressCallback | None = None,
                 guard: Guard = "catastrophic", cancel: CancelToken | None = None, **plan_args: Any) -> Result:
        """Plan and run an argv in one call (see :meth:`plan_argv` and :meth:`run` for the arguments)."""
        return self.run(self.plan_argv(argv, **plan_args), options=options,
                        on_output=on_output, on_progress=on_progress, guard=guard, cancel=cancel)
