"""The engine's front door: turn a request (a script, an argv) into a :class:`Command`, run it, keep the session.

(Over 400 lines, on purpose: the :class:`Engine` is the one object callers hold, and what is left here is
the order of the steps, each method under 60 lines; the steps are modules of their own: planning
(:mod:`.plans`), the walls of a run (:mod:`.walls`), the sandbox's setting (:mod:`.sandboxing`) and a
backend's (:mod:`.placement`), what a run writes back (:mod:`.state_back`), the standby shell (:mod:`.warm`).)

Planning and running are separate so that ``--dry-run`` shows exactly what
would run -- the same expansion, the same argv -- without running it.  A caller hands
:meth:`Engine.plan` a :class:`~.requests.Request` (a value: the text, the options, the sandbox,
the backend) and runs the plan it gets with :meth:`Engine.run` or :meth:`Engine.start_background`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ..background.backends.base import Backend
from ..background.registry import ShellRegistry
from ..guard.policy import CommandRefused, Guard, Policy, check
from ..process.errors import PreExecError, UsageProblem
from ..process.foreground import CancelToken, OutputCallback, ProgressCallback, failed_to_start, run_command
from ..process.logdir import LogDir, default_root
from ..process.results import KillOutcome, Result, ShellInfo
from ..process.retention import DEFAULT_QUOTA, DEFAULT_RETENTION_DAYS, prune_log_roots
from ..process.sandbox_limits import Limits
from ..process.spec import RunOptions
from ..process.standby import Standby, StandbyGone, can_stand_by, runs_in_standby, standby_default, start_standby
from .contexts import SHELL_LANGUAGES
from .failure_line import failed_line_in
from .languages import name_shell_start_failure
from .placement import sandbox_elsewhere
from .plans import Plan, Planner
from .requests import Request
from .sandbox_modes import mode_named
from .sandboxing import SandboxChoice, SessionTmp, choose_sandbox
from .session import STATE_VAR, USER_BASH_ENV_VAR, ShellSession, handed_fds
from .state_back import session_after, stopped
from .walls import confined, standby_inside, start_inside, walls_said
from .warm import WarmShell

if TYPE_CHECKING:
    from ..process.sandbox import Sandbox  # the walls are imported when a sandbox is first set (see .sandboxing)

__all__ = ["Engine", "Plan", "Request"]

#: The choice of a mode that confines nothing (``off``): no sandbox, nothing to tell.
_UNCONFINED = SandboxChoice(None)

#: Standbys kept ready for each sandbox: one takes far longer to start than its run (see :mod:`.warm`), so
#: a run right after a run takes the second while the first is started again; three would hold more
#: idle sandboxes for runs that seldom come three in a row faster than one starts.
SANDBOX_STANDBYS = 2
#: Standbys kept ready for unconfined runs: one is made again in the moment after a run, so a run right after
#: it ("Run all") takes the second (see :mod:`.warm`); each idle one is a bash blocked on a pipe (3 MB resident,
#: 0.3 MB of it its own: the rest is shared), one watchdog registration, and no file until it runs.
STANDBYS = 2
#: Variables a standby may differ in from the run that takes it: set per run (the state file's path).
_PER_RUN = frozenset({STATE_VAR})

T = TypeVar("T")


def _cwd_or_none() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the process's folder was removed under it
        return None


def _standby_shaped(plan: Plan) -> bool:
    """A plain ``bash -c SCRIPT`` session run: what a standby shell can run (one of its sandbox, if any)."""
    argv = plan.command.argv
    return plan.state_path is not None and plan.error is None and len(argv) == 3 and argv[:2] == ("bash", "-c")


def _redacted(plan: Plan, result: Result) -> Result:
    """The result redacted, as it may be shown and saved: the plan's secrets hidden in its error and cwd too."""
    if plan.secrets is None:
        return result
    cwd, error = plan.hide(result.cwd), plan.hide(result.error or "") or None
    if cwd == result.cwd and error == result.error:  # nearly always: no new Result to make (thirty fields)
        return result
    return dataclasses.replace(result, cwd=cwd, error=error)


class _Planners(Generic[T]):
    """An engine's attribute that is its planner's: read and set there (the planner plans with it)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, engine: Engine, owner: type | None = None) -> T:
        return cast(T, getattr(engine.planner, self.name))

    def __set__(self, engine: Engine, value: T) -> None:
        setattr(engine.planner, self.name, value)


class Engine:
    """Runs commands for one owner (a kernel, a program, an agent) with one persistent shell session.

    Its :attr:`planner` makes the plans (:meth:`plan`); the engine runs them, here or on a backend.
    """

    def __init__(self, *, log_dir: str | None = None, options: RunOptions | None = None,
                 policy: Policy | None = None) -> None:
        self.options = options or RunOptions()
        self.session = ShellSession()
        self.sandbox_session = ShellSession(parent=self.session)
        self.token = uuid.uuid4().hex[:12]
        #: Makes plans from the session, the log folder and the policy it shares with this engine.
        self.planner = Planner(session=self.session, sandbox_session=self.sandbox_session, logs=LogDir(log_dir),
                               policy=policy or Policy(), token=self.token)
        #: The folder the engine started in: a sandbox's writable root when no allowed_dirs are set
        #: (``None``: that folder was already gone; the session's cwd serves then).
        self.start_dir = _cwd_or_none()
        self._sandboxes: dict[tuple[Any, ...], SandboxChoice] = {}
        self._hidden_root: tuple[str, str] | None = None  # the temp folder, and the default root found in it
        #: Gone owners' log folders are removed after this many days, and oldest first past the quota
        #: (bytes); only in the default log location (see :mod:`.retention`).
        self.log_retention_days = DEFAULT_RETENTION_DAYS
        self.log_quota = DEFAULT_QUOTA
        self._prunes = log_dir is None  # a folder the user chose is theirs to keep
        self._pruning: threading.Thread | None = None
        #: Numbers this engine's foreground runs on a backend (their job names).
        self._foreground = itertools.count(1)
        self.shells = ShellRegistry(log_dir=lambda: self.logs.ensure(), grace=self.options.grace)
        self.shells.on_kill = self._record_kill
        self.warm = WarmShell(functools.partial(self._make_standby, None), depth=STANDBYS)
        #: A standby of its own for each sandbox runs are confined in (one outside the walls never runs a
        #: confined command, nor the reverse; each keeps its own, so alternating runs each find theirs).
        self._warm_in: dict[Sandbox, WarmShell] = {}
        self._lock_warm = threading.Lock()
        self._standby = standby_default()
        self._standby_counter = itertools.count(1)
        #: What the sandboxed session may use: its ``/tmp``'s size, its processes (see :mod:`.sandbox_session`).
        self.sandbox_limits = Limits()
        self._session_walls = SessionTmp(lambda: self.sandbox_limits)

    #: The log folder of every run and shell (the planner's: a notebook's setting sets it anew).
    logs: _Planners[LogDir] = _Planners()
    #: The allowed folders and the audit log.
    policy: _Planners[Policy] = _Planners()
    #: Put the running interpreter's bin folder first on an inherited PATH (see :mod:`.interpreter`):
    #: on by default, as in the magics, so ``run("pytest -q")`` from a venv's Python runs that venv's
    #: pytest, not whichever one the inherited PATH finds first.
    prefer_kernel_env: _Planners[bool] = _Planners()
    #: Show and record commands with secrets redacted (they run with the real values).
    redact_display: _Planners[bool] = _Planners()
    #: The session prelude the planner wrote (a sealed memory file, or a file in the runtime folder).
    _prelude: _Planners[str | None] = _Planners()

    # -- planning ------------------------------------------------------------------------------
    def plan(self, request: Request) -> Plan:
        """The plan of ``request`` (see :mod:`.requests`), on its backend: a foreground run on a remote
        one becomes the backend's local command for the job (``srun`` for SLURM), which writes no
        session back; a sandbox goes with no remote backend (:func:`.placement.sandbox_elsewhere`)."""
        if request.sandbox is not None:
            sandbox_elsewhere(request.sandbox.spec.mode, request.on)
        plan = self.planner.plan(request)
        if request.on is None or request.background:
            return plan
        job = request.on.foreground(plan.command, name=f"{self.token}-{next(self._foreground)}")
        return plan if job is None else dataclasses.replace(plan, command=job.command, job=job)

    def plan_script(self, script: str, language: str = "bash", **options: Any) -> Plan:
        """Plan a script run (the options: :meth:`.Planner.plan_script`)."""
        return self.planner.plan_script(script, language, **options)

    def plan_argv(self, argv: Sequence[str], **options: Any) -> Plan:
        """Plan a direct run of ``argv``, no shell (the options: :meth:`.Planner.plan_argv`)."""
        return self.planner.plan_argv(argv, **options)

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
        ``"none"`` to check nothing.  ``cancel`` stops the run from another thread.  A run on a
        backend (:attr:`Plan.job`) ends its job with it, whatever stopped it.
        """
        run = functools.partial(self._run_here, plan, options=options, on_output=on_output,
                                on_progress=on_progress, guard=guard, cancel=cancel)
        if plan.job is None:
            return run()
        result = None
        try:
            result = run()
            return result
        finally:
            with contextlib.suppress(UsageProblem, PreExecError):  # the run's own outcome is what to show
                plan.job.finish(stopped=result is None or result.interrupted or result.timed_out)

    def _run_here(self, plan: Plan, *, options: RunOptions | None, on_output: OutputCallback | None,
                  on_progress: ProgressCallback | None, guard: Guard, cancel: CancelToken | None) -> Result:
        """:meth:`run` without a job around it: the plan's command runs here (for a run on a backend, the
        command that runs the job)."""
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
            result = session_after(plan, result, state, plan.session or self.session, self.policy)
            if self.standby and _standby_shaped(plan) and not plan.env_changes:
                self.warm_for(plan.sandbox).refill()  # for the next run, from the session as this run left it
        elif plan.failure_path is not None:  # a run without a session: what its prelude wrote if it failed
            line = failed_line_in(plan.failure_path, plan.shell_text or "", plan.sandbox is not None,
                                  None if stopped(result) or result.error else result.exit_code)
            result = dataclasses.replace(result, failed_line=line) if line else result
        if plan.sandbox is not None:
            result = dataclasses.replace(result, sandbox=plan.sandbox.describe(), notes=result.notes + walls_said(
                plan.sandbox, result))
        result = _redacted(plan, result)
        note = self.policy.audit_outcome(decision="run", run=run_id, command=plan.command.display,
                                         cwd=plan.shown_cwd, exit_code=result.exit_code, duration_ms=result.duration_ms,
                                         outcome=result.outcome()) if self.policy.audit_log else None
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
            command = confined(plan) if standby is None else plan.command
            walls = plan.sandbox.walls if plan.sandbox is not None else None
            return run_command(command, options, log_dir=self.logs, label=plan.label, marker=marker,
                               on_output=on_output, on_progress=on_progress, cancel=cancel,
                               register=self.shells.guard_foreground, standby=standby,
                               watch=walls.process_watch() if walls is not None else None)
        finally:
            expected()

    # -- the sandbox -----------------------------------------------------------------------
    def sandbox_for(self, mode: str, backend: Backend | None = None, *, insist: bool = False, network: bool = False,
                    readable: Sequence[str] = ()) -> SandboxChoice:
        """The sandbox of runs on ``backend`` (``None``: here): none for a job elsewhere, by the one rule of
        :func:`.placement.sandbox_elsewhere` (which raises :class:`.placement.SandboxElsewhere` for a named
        mode, or any with ``insist``), else :meth:`sandbox`."""
        elsewhere = sandbox_elsewhere(mode, backend, insist=insist)
        return elsewhere if elsewhere is not None else self.sandbox(mode, network=network, readable=readable)

    def sandbox(self, mode: str, *, network: bool = False, readable: Sequence[str] = ()) -> SandboxChoice:
        """The sandbox ``mode`` asks for (see :mod:`.sandboxing`), set once for these settings and kept: its writable
        roots are the allowed directories, else :attr:`start_dir`, as they are now.  ``readable``: more paths shown
        read-only where the sandbox hides (a tool's settings in the home folder).

        Raises :class:`~execmagic.process.sandbox.SandboxProblem` (a mode or root that cannot be honoured) and
        :class:`~execmagic.process.sandbox.SandboxUnavailable` (a named mode where bubblewrap cannot run: nothing may
        run unconfined then).
        """
        if not mode_named(mode).confines:  # nothing below decides anything for a run that is not confined
            return _UNCONFINED
        from ..process.sandbox import BWRAP_VAR
        # every engine's logs (the default root, even when this one logs elsewhere), ours, the audit log
        hidden = tuple(p for p in (self._default_root(), self.logs.root, self.logs.path, self.policy.audit_log) if p)
        start_dir = self.start_dir or self.session.current_cwd()
        # the bubblewrap named in the kernel's environment and the limits are part of the setting: others set it anew
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

    def _default_root(self) -> str:
        """:func:`~.logdir.default_root` (it checks each folder above the temp folder), again for another one only."""
        tmp = tempfile.gettempdir()
        if self._hidden_root is None or self._hidden_root[0] != tmp:
            self._hidden_root = (tmp, default_root())
        return self._hidden_root[1]

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
                warm = self._warm_in[sandbox] = WarmShell(functools.partial(self._make_standby, sandbox),
                                                             depth=SANDBOX_STANDBYS)
            return warm

    def _make_standby(self, sandbox: Sandbox | None) -> Standby | None:
        """Start the bash the next plain session run would get (in the warm shell's worker thread), inside
        ``sandbox`` when that run is to be confined."""
        try:
            name = f"standby-{next(self._standby_counter):04d}"
            cwd, env = self.planner.plain_bash_setting(name, sandbox)
            if USER_BASH_ENV_VAR in env or not can_stand_by(env):
                return None  # the user's BASH_ENV runs at start-up (only ahead of time here), or a function
                # exported in the environment would take over the standby's boot line
            confine = None if sandbox is None else functools.partial(standby_inside, sandbox, cwd)
            start = functools.partial(start_standby, cwd, env, f"{self.token}-{name}",
                                      expect=self.shells.expect_foreground, register=self.shells.guard_foreground,
                                      confine=confine, pass_fds=handed_fds(env))
            return start() if sandbox is None else start_inside(sandbox, start)
        except (OSError, PreExecError):
            return None

    def _audit_intent(self, plan: Plan, decision: str) -> str:
        """Record what is about to start, before it starts (no log: no record made); AuditUnavailable stops it."""
        run_id = f"{self.token}-{plan.label}"
        if self.policy.audit_log:  # (its cwd redacted for nothing: 20-40 µs of a short run, twice)
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

    def start_background(self, plan: Plan, *, name: str | None = None, timeout: float | None = None,
                         guard: Guard = "catastrophic", backend: Backend | None = None) -> ShellInfo:
        """Start a plan as a background shell (see :class:`~execmagic.background.registry.ShellRegistry`),
        on ``backend`` (default: the plan's, else local processes; a backend from
        :func:`execmagic.background.backends.registry.get` runs it elsewhere, a SLURM job, …).

        Plan it as one (``Request(background=True)``, or ``save_session=False``): a background shell starts
        from the session and never writes it back.  A plan that cannot start raises its :class:`PreExecError`;
        a refused one :class:`CommandRefused`.
        """
        self.check_guard(plan, guard)
        backend = backend if backend is not None else plan.backend
        if plan.sandbox is not None:
            sandbox_elsewhere(plan.sandbox.spec.mode, backend)
        error = plan.error or self._outside_roots(plan)
        if error is not None:
            raise PreExecError(plan.hide(error.issue), error.code, error.exit_code) from None
        run_id = self._audit_intent(plan, "background")
        on_end = None
        if not (backend or self.shells.backend).remote:  # a job elsewhere has no file here to write its line to
            plan = self.planner.noting_failure(plan)
            if plan.failure_path is not None:  # asked as the shell ends (see Shell.on_end)
                on_end = functools.partial(failed_line_in, plan.failure_path, plan.shell_text or "",
                                           plan.sandbox is not None)
        info = self.shells.start(confined(plan), marker_prefix=self.token, name=name, timeout=timeout,
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
        self.logs.remove_if_empty()

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
