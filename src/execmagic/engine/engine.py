"""The engine's front door: turn a request (a script, an argv) into a :class:`Command`, run it, keep the session.

(Over 400 lines, on purpose: the :class:`Engine` is the one object callers hold; planning, the sandbox's
setting and the session's rules are modules of their own, and what is left here is their order.)

Planning and running are separate so that ``--dry-run`` shows exactly what
would run -- the same expansion, the same argv -- without running it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ..background.backends.base import Backend
from ..background.registry import ShellRegistry
from ..guard.policy import CommandRefused, Guard, Policy, check
from ..process.errors import PreExecError, UsageProblem
from ..process.foreground import CancelToken, OutputCallback, ProgressCallback, failed_to_start, run_command
from ..process.logdir import LogDir, default_root
from ..process.private import create_file
from ..process.results import KillOutcome, Result, ShellInfo
from ..process.retention import DEFAULT_QUOTA, DEFAULT_RETENTION_DAYS, prune_log_roots
from ..process.sandbox import BWRAP_VAR, Confined, Sandbox
from ..process.sandbox_session import Limits
from ..process.spec import Command, RunOptions
from ..process.standby import (
    Standby,
    StandbyGone,
    can_stand_by,
    runs_in_standby,
    standby_default,
    start_standby,
)
from .contexts import SHELL_LANGUAGES
from .failure_line import failed_line, failed_line_in
from .languages import name_shell_start_failure
from .plans import SANDBOX_STATE_FOLDER, Plan, Planner
from .sandboxing import SandboxChoice, SessionTmp, choose_sandbox
from .session import STATE_VAR, USER_BASH_ENV_VAR, ShellSession, handed_fds, take_state_file, why_no_state
from .warm import WarmShell

__all__ = ["Engine", "Plan"]

#: Bytes of a state file read back at most: an environment is far smaller (Linux caps what exec passes at a
#: few MB), and what a run can write into its own state file must not cost the kernel its memory.
_STATE_LIMIT = 16 << 20

#: Variables a standby may differ in from the run that takes it: set per run (the state file's path).
_PER_RUN = frozenset({STATE_VAR})


def _cwd_or_none() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the process's folder was removed under it
        return None


def _stopped(result: Result) -> bool:
    """Stopped before it ended by itself (a timeout, an interrupt, a signal): its state says nothing."""
    return result.timed_out or result.interrupted or result.signal is not None


def _standby_shaped(plan: Plan) -> bool:
    """A plain ``bash -c SCRIPT`` session run: what a standby shell can run (one of its sandbox, if any)."""
    argv = plan.command.argv
    return plan.state_path is not None and plan.error is None and len(argv) == 3 and argv[:2] == ("bash", "-c")


def _redacted(plan: Plan, result: Result) -> Result:
    """The result redacted, as it may be shown and saved: the plan's secrets hidden in its error and cwd too."""
    if plan.secrets is None:
        return result
    return dataclasses.replace(result, cwd=plan.hide(result.cwd), error=plan.hide(result.error or "") or None)


def _inside(sandbox: Sandbox, argv: list[str], cwd: str, env: dict[str, str], state: str | None,
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


def _standby_inside(sandbox: Sandbox, cwd: str, argv: list[str], env: dict[str, str]) -> Confined:
    """A standby's runner inside ``sandbox``, as a run is put there (:func:`_inside`)."""
    return _inside(sandbox, argv, cwd, env, env[STATE_VAR])


def _walls_said(sandbox: Sandbox, result: Result) -> tuple[str, ...]:
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


class Engine(Planner):
    """Runs commands for one owner (a kernel, a program, an agent) with one persistent shell session."""

    def __init__(self, *, log_dir: str | None = None, options: RunOptions | None = None,
                 policy: Policy | None = None) -> None:
        self.options = options or RunOptions()
        self.policy = policy or Policy()
        self.session = ShellSession()
        self.sandbox_session = ShellSession(parent=self.session)
        #: The folder the engine started in: a sandbox's writable root when no allowed_dirs are set
        #: (``None``: that folder was already gone; the session's cwd serves then).
        self.start_dir = _cwd_or_none()
        self._sandboxes: dict[tuple[Any, ...], SandboxChoice] = {}
        self.logs = LogDir(log_dir)
        #: Gone owners' log folders are removed after this many days, and oldest first past the quota
        #: (bytes); only in the default log location (see :mod:`.retention`).
        self.log_retention_days = DEFAULT_RETENTION_DAYS
        self.log_quota = DEFAULT_QUOTA
        self._prunes = log_dir is None  # a folder the user chose is theirs to keep
        self._pruning: threading.Thread | None = None
        self.token = uuid.uuid4().hex[:12]
        #: Put the running interpreter's bin folder first on an inherited PATH (see :mod:`.interpreter`):
        #: on by default, as in the magics, so ``run("pytest -q")`` from a venv's Python runs that venv's
        #: pytest, not whichever one the inherited PATH finds first.
        self.prefer_kernel_env = True
        #: Show and record commands with secrets redacted (they run with the real values).
        self.redact_display = True
        self._counter = itertools.count(1)
        self.shells = ShellRegistry(log_dir=lambda: self.logs.ensure(), grace=self.options.grace)
        self.shells.on_kill = self._record_kill
        self.warm = WarmShell(functools.partial(self._make_standby, None))
        #: A standby of its own for each sandbox runs are confined in (one outside the walls never runs a
        #: confined command, nor the reverse; each keeps its own, so alternating runs each find theirs).
        self._warm_in: dict[Sandbox, WarmShell] = {}
        self._lock_warm = threading.Lock()
        self._standby = standby_default()
        self._standby_counter = itertools.count(1)
        #: What the sandboxed session may use: its ``/tmp``'s size, its processes (see :mod:`.sandbox_session`).
        self.sandbox_limits = Limits()
        self._session_walls = SessionTmp(lambda: self.sandbox_limits)

    @property
    def standby(self) -> bool:
        """Keep the next bash started ahead (see :mod:`.warm`): a short command then skips bash's start-up.
        Off discards the one waiting."""
        return self._standby

    @standby.setter
    def standby(self, on: bool) -> None:
        self._standby = bool(on)
        if not on:
            for warm in self._warm_shells():
                warm.drop()

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
            result = _redacted(plan, failed_to_start(plan.command, error))
            note = self.policy.audit_outcome(decision="failed", command=plan.command.display, cwd=plan.shown_cwd,
                                             error=result.error)
            return dataclasses.replace(result, notes=result.notes + (note,)) if note else result
        run_id = self._audit_intent(plan, "run")
        self.start_pruning()
        run = functools.partial(self._run_process, plan, options or self.options, on_output=on_output,
                                on_progress=on_progress, cancel=cancel)
        standby = None
        try:
            standby = self._standby_for(plan)
            result = run(standby)
        except StandbyGone:  # killed from outside between being taken and its script: nothing of it ran
            assert standby is not None
            standby.discard()
            standby = None
            result = run(None)
        except BaseException:  # an interrupt before the run had the standby in hand (or after): never leak it
            if standby is not None:
                standby.discard()
            raise
        if plan.script_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(plan.script_file)
        if plan.script and plan.command.argv[0] in SHELL_LANGUAGES:
            result = name_shell_start_failure(result)
        if plan.state_path is not None:
            state = standby.env[STATE_VAR] if standby is not None else plan.state_path
            result = self._update_session(plan, result, state)
            if self.standby and _standby_shaped(plan) and not plan.env_changes:
                self.warm_for(plan.sandbox).refill()  # for the next run, from the session as this run left it
        elif plan.failure_path is not None:  # a run without a session: what its prelude wrote if it failed
            line = failed_line_in(plan.failure_path, plan.shell_text or "", plan.sandbox is not None,
                                  None if _stopped(result) or result.error else result.exit_code)
            result = dataclasses.replace(result, failed_line=line) if line else result
        if plan.sandbox is not None:
            result = dataclasses.replace(result, sandbox=plan.sandbox.describe(), notes=result.notes + _walls_said(
                plan.sandbox, result))
        result = _redacted(plan, result)
        note = self.policy.audit_outcome(decision="run", run=run_id, command=plan.command.display,
                                         cwd=plan.shown_cwd, exit_code=result.exit_code,
                                         duration_ms=result.duration_ms, outcome=result.outcome())
        told = self.logs.take_notes() + self.policy.take_notes()  # said once: a refused log folder, an open audit log
        notes = told + plan.notes + result.notes + ((note,) if note else ())
        return dataclasses.replace(result, notes=notes) if notes != result.notes else result

    def _run_process(self, plan: Plan, options: RunOptions, standby: Standby | None, *,
                     on_output: OutputCallback | None, on_progress: ProgressCallback | None,
                     cancel: CancelToken | None) -> Result:
        """Run the plan's command in ``standby`` (already registered with the watchdog) or a new process."""
        marker = standby.marker if standby is not None else f"{self.token}-{plan.label}"
        # a new process is guarded from its first instant, not from its report
        expected = (self.shells.expect_foreground(marker, plan.command.on_owner_death) if standby is None
                    else (lambda: None))
        try:
            # a standby is started inside the plan's sandbox already: it takes the script, as it is
            command = self._confined(plan) if standby is None else plan.command
            walls = plan.sandbox.walls if plan.sandbox is not None else None
            return run_command(command, options, log_dir=self.logs, label=plan.label, marker=marker,
                               on_output=on_output, on_progress=on_progress, cancel=cancel,
                               register=self.shells.guard_foreground, standby=standby,
                               watch=walls.process_watch() if walls is not None else None)
        finally:
            expected()

    # -- the sandbox -----------------------------------------------------------------------
    def sandbox(self, mode: str, *, network: bool = False, readable: Sequence[str] = ()) -> SandboxChoice:
        """The sandbox ``mode`` asks for (see :mod:`.sandboxing`), set once for these settings and kept:
        its writable roots are the allowed directories, else :attr:`start_dir`, as they are now.
        ``readable``: more paths shown read-only where the sandbox hides (a tool's settings in the home folder).

        Raises :class:`~execmagic.process.sandbox.SandboxProblem` (a mode or root that cannot be
        honoured) and :class:`~execmagic.process.sandbox.SandboxUnavailable` (a named mode where
        bubblewrap cannot run: nothing may run unconfined then).
        """
        # every engine's logs (the default root, even when this one logs elsewhere), ours, the audit log
        hidden = tuple(p for p in (default_root(), self.logs.root, self.logs.path, self.policy.audit_log) if p)
        start_dir = self.start_dir or self.session.current_cwd()
        # the bubblewrap named in the kernel's environment is part of the setting: naming another sets it anew
        # new limits make a new session /tmp: the next setting takes them
        key = (mode, bool(network), self.policy.allowed_roots, start_dir, hidden, os.environ.get(BWRAP_VAR),
               tuple(readable), self.sandbox_limits)
        choice = self._sandboxes.get(key)
        if choice is not None and choice.sandbox is not None and not self._session_walls.alive(choice.sandbox.walls):
            choice = None  # its holder is gone (killed from outside): a new one, rather than runs that fail
        if choice is None:
            choice = choose_sandbox(mode, network=network, roots=self.policy.allowed_roots, start_dir=start_dir,
                                    hidden=hidden, readable=tuple(readable), session=self._session_walls)
            self._sandboxes[key] = choice
        return choice

    def _confined(self, plan: Plan) -> Command:
        """The command that runs ``plan`` inside its sandbox: its own files bound back (the prelude and a
        big script read-only, the state file writable: made here, empty, as a bind needs it to exist)."""
        sandbox, command = plan.sandbox, plan.command
        if sandbox is None:
            return command
        confined = _inside(sandbox, list(command.argv), command.cwd, dict(command.env),
                           plan.state_path or plan.failure_path, plan.script_file)
        return dataclasses.replace(command, argv=confined.argv, env=confined.env, fd_args=confined.fd_args,
                                   fd_reader=confined.reader)

    def _standby_for(self, plan: Plan) -> Standby | None:
        """The standby shell, when ``plan`` is a plain session run whose script it may run and it fits; else
        ``None`` (a script it may not run leaves it waiting for the next run)."""
        if (not self.standby or not _standby_shaped(plan) or USER_BASH_ENV_VAR in plan.command.env
                or plan.command.on_owner_death):
            return None
        if not runs_in_standby(plan.command.argv[2]):
            return None
        return self.warm_for(plan.sandbox).take(plan.command, _PER_RUN)

    def _warm_shells(self) -> list[WarmShell]:
        with self._lock_warm:
            return [self.warm, *self._warm_in.values()]

    def warm_for(self, sandbox: Sandbox | None) -> WarmShell:
        """The standby keeper for runs in ``sandbox`` (``None``: unconfined runs, :attr:`warm`)."""
        if sandbox is None:
            return self.warm
        with self._lock_warm:
            warm = self._warm_in.get(sandbox)
            if warm is None:
                warm = self._warm_in[sandbox] = WarmShell(functools.partial(self._make_standby, sandbox))
            return warm

    def _make_standby(self, sandbox: Sandbox | None) -> Standby | None:
        """Start the bash the next plain session run would get (in the warm shell's worker thread), inside
        ``sandbox`` when that run is to be confined."""
        try:
            name = f"standby-{next(self._standby_counter):04d}"
            cwd, env = self.plain_bash_setting(name, sandbox)
            if USER_BASH_ENV_VAR in env or not can_stand_by(env):
                return None  # the user's BASH_ENV runs at start-up (only ahead of time here), or a function
                # exported in the environment would take over the standby's boot line
            confine = None if sandbox is None else functools.partial(_standby_inside, sandbox, cwd)
            return start_standby(cwd, env, f"{self.token}-{name}", expect=self.shells.expect_foreground,
                                 register=self.shells.guard_foreground, confine=confine, pass_fds=handed_fds(env))
        except (OSError, PreExecError):
            return None

    def _audit_intent(self, plan: Plan, decision: str) -> str:
        """Record what is about to start, before it starts; :class:`AuditUnavailable` stops it."""
        run_id = f"{self.token}-{plan.label}"
        self.policy.audit(phase="intent", decision=decision, run=run_id, command=plan.command.display,
                          cwd=plan.shown_cwd)
        return run_id

    def check_guard(self, plan: Plan, guard: Guard) -> None:
        """Raise :class:`CommandRefused` (and audit it) when ``guard`` refuses what ``plan`` would run."""
        if plan.shell_text is not None:
            refusal = check(guard, text=plan.shell_text, env=plan.session_env)
        else:
            refusal = check(guard, argv=plan.command.argv, env=plan.command.env)
        if refusal is not None:
            # recorded if it can be; refused either way
            refusal = dataclasses.replace(refusal, command=plan.hide(refusal.command))
            self.policy.audit_outcome(decision="refused", command=plan.command.display, cwd=plan.shown_cwd,
                                      rule=refusal.rule, reason=refusal.reason)
            raise CommandRefused(refusal, hint="run it with guard='none' if you really mean it")

    def _outside_roots(self, plan: Plan) -> PreExecError | None:
        if self.policy.outside_roots(plan.command.cwd):
            return PreExecError(f"working directory '{plan.command.cwd}' is outside the allowed directories",
                                "EPERM", exit_code=1)
        return None

    def _update_session(self, plan: Plan, result: Result, state_path: str) -> Result:
        """Apply what a session run changed, read from ``state_path`` (the plan's, or its standby's), to the
        plan's session (a sandboxed run's own)."""
        session = plan.session or self.session
        state = take_state_file(state_path, _STATE_LIMIT)
        stopped = _stopped(result)
        if result.error:  # it never ran
            return result
        if state is not None and len(state) > _STATE_LIMIT:  # no environment bash can export is this large
            why = "the shell's state was too large to be a session (something wrote into it)"
            return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
        failure, sep, rest = (state or b"").partition(b"\0")  # the prelude writes the failed line first
        state, failure = (rest, failure) if sep else (state, b"")
        line = failed_line(failure, plan.shell_text or "", result.exit_code) if not stopped and result.exit_code \
            else None
        if line is not None:
            result = dataclasses.replace(result, failed_line=line)
        if stopped or not state:
            why = "the run was stopped" if stopped else why_no_state(plan.shell_text or "")
            return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
        try:
            delta = session.delta(state, plan.session_env or plan.command.env, plan.command.cwd)
        except ValueError:  # something of the script's own wrote into the state file as the shell ended
            why = "the shell's state could not be read (something the script left running wrote into it)"
            return dataclasses.replace(result, notes=result.notes + (f"session state unchanged: {why}",))
        note = None
        if delta.cwd is not None and self.policy.outside_roots(delta.cwd):
            note = f"cd to {delta.cwd} was undone: it is outside the allowed directories"
            delta = dataclasses.replace(delta, cwd=None)
        session.apply(delta)
        if note is not None:
            return dataclasses.replace(result, notes=result.notes + (note,))
        if delta.cwd is not None:
            return dataclasses.replace(result, new_cwd=delta.cwd)
        return result

    def start_background(self, plan: Plan, *, name: str | None = None, timeout: float | None = None,
                         guard: Guard = "catastrophic", backend: Backend | None = None) -> ShellInfo:
        """Start a plan as a background shell (see :class:`~execmagic.background.registry.ShellRegistry`),
        on ``backend`` (default: local processes; a backend from
        :func:`execmagic.background.backends.registry.get` runs it elsewhere, a SLURM job, …).

        Plan it with ``save_session=False``: a background shell starts from the session and
        never writes it back.  A plan that cannot start raises its :class:`PreExecError`;
        a refused one :class:`CommandRefused`.
        """
        self.check_guard(plan, guard)
        if plan.sandbox is not None and backend is not None and backend.remote:
            raise UsageProblem(f"a sandbox cannot go with --on {backend.name}: the job runs elsewhere, under that "
                               "engine's own rules")
        error = plan.error or self._outside_roots(plan)
        if error is not None:
            raise PreExecError(plan.hide(error.issue), error.code, error.exit_code) from None
        run_id = self._audit_intent(plan, "background")
        on_end = None
        if not (backend or self.shells.backend).remote:  # a job elsewhere has no file here to write its line to
            plan = self.noting_failure(plan)
            if plan.failure_path is not None:  # asked as the shell ends (see Shell.on_end)
                on_end = functools.partial(failed_line_in, plan.failure_path, plan.shell_text or "",
                                           plan.sandbox is not None)
        info = self.shells.start(self._confined(plan), marker_prefix=self.token, name=name, timeout=timeout,
                                 backend=backend, on_end=on_end)
        self.policy.audit_outcome(decision="background", run=run_id, command=plan.command.display,
                                  cwd=plan.shown_cwd, shell_id=info.id, pid=info.pid)
        return info

    def reattach(self, backend: Backend) -> list[ShellInfo]:
        """Take over the jobs ``backend`` finds (an earlier kernel's too: a cluster's jobs outlive it;
        see :meth:`~execmagic.background.backends.base.Backend.find_jobs`) and return every shell on
        that backend; their output is read again from the start."""
        known = {info.job_id for info in self.shells.list() if info.backend == backend.name}
        for record in backend.find_jobs():
            if record.job_id in known:
                continue
            handle = backend.reattach(record.job_id, marker=record.marker)
            self.shells.adopt(handle, backend=backend.name, shell_id=record.shell_id, command=record.command,
                              cwd=record.cwd, marker=record.marker, timeout=record.timeout,
                              started_at=record.started_at)
        return [info for info in self.shells.list() if info.backend == backend.name]

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
        self._pruning = threading.Thread(
            target=prune_log_roots, name="execmagic-prune", daemon=True,
            kwargs={"keep": self.logs.path, "retention_days": self.log_retention_days, "quota": self.log_quota})
        self._pruning.start()
        return self._pruning

    def close(self, grace: float | None = None) -> None:
        """Stop every background shell and helper this engine started (``grace`` before SIGKILL)."""
        for warm in self._warm_shells():
            warm.close()
        self.shells.close(grace)
        self._session_walls.close()

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
