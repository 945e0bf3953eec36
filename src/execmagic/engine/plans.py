"""Planning: a request (a script, an argv) turned into a :class:`Plan` -- fully expanded, not yet run.

Planning and running are separate so that ``--dry-run`` shows exactly what would run -- the
same expansion, the same argv -- without running it.  :class:`Planner` does it for
an :class:`~execmagic.engine.engine.Engine`, which holds one; kept apart because it is most of the
engine's reading: templates, environment, cwd, the session's prelude, what is shown.  (Over 400 lines, on
purpose: the :class:`Plan` value and the :class:`Planner` that makes it; a plan's environment, files and
what it shows are made together, from one preparation, :meth:`Planner._prepare`.)
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import os
import shlex
from collections import ChainMap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..background.backends.base import Backend, Foreground
from ..guard.policy import Policy
from ..guard.secret_names import secret_name
from ..guard.secrets import Masked, secret_env
from ..process.capture import os_error_reason
from ..process.environ import environ_copy
from ..process.errors import PreExecError, shown_value
from ..process.launch import check_cwd
from ..process.logdir import LogDir
from ..process.private import private_folder
from ..process.records import record
from ..process.spec import Command
from .contexts import SHELL_LANGUAGES
from .failure_line import names_lines
from .interpreter import kernel_bin_first, kernel_tool_notes
from .languages import handed_argv, script_argv
from .redaction import redacted
from .requests import Request
from .sandboxing import kernel_environment_note
from .session import STATE_VAR, ShellSession, handed_fds, prelude_path, session_env
from .template import Fill, Filled, expand_argv, expand_value, fill, references, resolve

if TYPE_CHECKING:  # the walls are imported when a sandbox is first set (see .sandboxing)
    from ..process.sandbox import Sandbox

__all__ = ["SANDBOX_STATE_FOLDER", "Plan", "Planner"]

#: The folder of the runtime folder that holds sandboxed runs' state files: bound writable into their sandbox
#: (nothing else of the runtime folder is), so that what a sandbox writes there can only be its own session.
SANDBOX_STATE_FOLDER = "sandboxed"


@record
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
    #: Secret values (name -> value) to hide wherever the run is shown or recorded; ``None``: show all.
    secrets: Mapping[str, str] | None = dataclasses.field(default=None, repr=False)
    #: The walls the run goes inside (``None``: none); the command above is what runs within them.
    sandbox: Sandbox | None = None
    #: The session the run reads and, for a session run, writes back (a sandboxed run's is its own).
    session: ShellSession | None = dataclasses.field(default=None, repr=False)
    #: Every ``{name}`` filled, with its value and where it came from (shown by ``--dry-run``).
    fills: tuple[Fill, ...] = dataclasses.field(default=(), repr=False)
    #: Where a bash run without a session (``--isolated``, a local background shell) writes which line of it
    #: failed, when it fails (see :func:`.session.session_env`); ``None``: nowhere (a session run's state says it).
    failure_path: str | None = None
    #: Where a background shell of this plan starts (``None``: the engine's default, local processes).
    backend: Backend | None = dataclasses.field(default=None, repr=False)
    #: A foreground run on a backend (``srun`` for SLURM): its :attr:`command` is the job's local command;
    #: this says the job's state to a status line and ends the job with the run (see :meth:`.Engine.run`).
    job: Foreground | None = dataclasses.field(default=None, repr=False)

    def hide(self, text: str) -> str:
        """``text`` as it may be shown or recorded: the plan's secrets and credential shapes redacted."""
        return text if self.secrets is None or not text else redacted(text, self.secrets)

    def shown_fill(self, fill: Fill) -> str:
        """``{ref} = value (from …)``, the value as short as an error quotes one; a secret's hidden."""
        texts = _texts(fill.value)
        secret = self.secrets is not None and (secret_name(fill.ref) or any(
            t and t in self.secrets.values() for t in texts))
        value = "[REDACTED]" if secret else self.hide(shown_value(fill.value))
        return f"{{{fill.ref}}} = {value} ({'notebook variable' if fill.from_variables else '--param'})"

    @property
    def shown_cwd(self) -> str:
        return self.hide(self.command.cwd)

    def describe(self) -> str:
        """What ``--dry-run`` shows: the command, and where and with what it would run."""
        lines = [self.command.display]
        if self.script:
            lines.append(f"# run by: {shlex.join(self.command.argv[:-1])} SCRIPT")
        lines.append(f"# cwd: {self.shown_cwd}")
        for name, value in self.env_changes.items():
            lines.append(f"# env: {name}={'[REDACTED]' if secret_name(name) else self.hide(value)}")
        if self.command.input is not None:
            lines.append(f"# stdin: {len(self.command.input)} bytes")
        lines += [f"# filled: {shown}" for shown in dict.fromkeys(map(self.shown_fill, self.fills))]
        lines += [f"# note: {note}" for note in self.notes]
        if self.sandbox is not None:
            lines.append(f"# {self.sandbox.describe()}")
        if self.error is not None:
            lines.append(f"# would fail: {self.hide(str(self.error))}")
        return "\n".join(lines)


class _Prepared(NamedTuple):
    label: str
    cwd: str
    env: dict[str, str]
    params: Mapping[str, Any]
    variables: Mapping[str, Any]
    input: bytes | None
    error: PreExecError | None
    changes: dict[str, str]
    #: The PATH before the kernel's bin folder was put first (``None``: not moved).
    moved_path: str | None = None
    #: What filled the templates of cwd, env values and input.
    filled: tuple[Filled, ...] = ()


class Planner:
    """Makes plans from an engine's session, log folder and settings (the engine holds one).

    It keeps what planning alone needs -- the run counter, the prelude it wrote, the notes it gave --
    and shares the session, the log folder and the policy with its engine, which may set them anew
    (a notebook's settings reach :attr:`logs` and :attr:`policy` that way).
    """

    def __init__(self, *, session: ShellSession, sandbox_session: ShellSession, logs: LogDir, policy: Policy,
                 token: str) -> None:
        self.session = session
        #: The session of sandboxed runs: it starts from :attr:`session` and never writes back to it.
        self.sandbox_session = sandbox_session
        self.logs = logs
        self.policy = policy
        #: Tells this engine's runs from another's (in state file names, markers).
        self.token = token
        #: Put the running interpreter's bin folder first on an inherited PATH (see :mod:`.interpreter`).
        self.prefer_kernel_env = True
        #: Show and record commands with secrets redacted (they run with the real values).
        self.redact_display = True
        self._counter = itertools.count(1)
        #: The session prelude this planner wrote (written afresh whenever it is gone or its folder moved).
        self._prelude: str | None = None
        #: The kernel-tool notes already given: each is said once per engine (a kernel's), not on every call.
        self._tool_notes_given: frozenset[str] = frozenset()

    def _tool_notes(self, text: str, p: _Prepared) -> tuple[str, ...]:
        """What :func:`.kernel_tool_notes` says of ``text``, less what this engine said before: a notebook
        that calls ``python3`` in every cell learns which one it is from the first."""
        notes = tuple(note for note in kernel_tool_notes(text, p.env.get("PATH", ""), p.moved_path)
                      if note not in self._tool_notes_given)
        self._tool_notes_given = self._tool_notes_given | set(notes)
        return notes

    def _session_files(self, label: str, sandboxed: bool = False, kind: str = "state") -> tuple[str, str]:
        """The state file's path for run ``label``, in the private runtime folder (``OSError``: it cannot be
        had), and what ``BASH_ENV`` names for the prelude: the process's sealed memory file (``/dev/fd/N``,
        handed to the run: nothing on disk), or, where there is none, a file this planner wrote itself there
        (a file that was already there is never sourced).

        ``sandboxed``: the state file goes in :data:`SANDBOX_STATE_FOLDER` of the runtime folder, the one
        place there a sandbox may write (it is bound writable into the sandbox whole, once, when the run or
        its standby starts: a file bound by itself would be a mount point the engine's ``unlink`` has to
        take apart, which costs every sandboxed run a little more).  ``kind``: the file's last suffix (``failed``:
        a run without a session, which writes only its failed line there)."""
        folder = self.logs.runtime()
        prelude = self._prelude
        if prelude is None or (not prelude.startswith("/dev/fd/") and (
                os.path.dirname(prelude) != folder or not os.path.isfile(prelude))):
            prelude = self._prelude = prelude_path(folder)
        if sandboxed:
            folder = private_folder(os.path.join(folder, SANDBOX_STATE_FOLDER))
        # the token: two engines may share a folder the user chose, and bash writes this file by name
        return os.path.join(folder, f"{label}.{self.token}.{kind}"), prelude

    def _prepare(
        self,
        *,
        cwd: str | None,
        env: Mapping[str, str] | None,
        clear_env: bool,
        params: Mapping[str, Any] | None,
        isolated: bool,
        input: str | bytes | None,
        variables: Mapping[str, Any] | None = None,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
        label: str | None = None,
        session: ShellSession | None = None,
    ) -> _Prepared:
        """What every plan needs: a label, the merged env, the run's cwd (checked), params and input.

        Values are checked before and after their ``${VAR}``/``{name}`` expansion (a NUL byte, a bad
        env name, input that is neither text nor bytes): a one-line :class:`UsageProblem` here beats a
        ``ValueError`` or ``TypeError`` from inside ``subprocess``.
        """
        from ..process import checks

        params = params or {}
        # not ``variables or {}``: a notebook's namespace counts every name it holds to say whether it is empty
        variables = {} if variables is None else variables
        report: list[Filled] = []
        env = checks.environment(env)
        cwd = checks.optional_text(cwd, "cwd")
        input = checks.input_value(input)
        session = session or self.session
        base_env = {} if clear_env else (environ_copy() if isolated else session.environment())
        if env_filter is not None:
            base_env = env_filter(base_env)
        moved_path = None
        if self.prefer_kernel_env and not clear_env and (isolated or not _sets_path(session)):
            moved_path = kernel_bin_first(base_env)
        merged = dict(base_env)
        changes: dict[str, str] = {}
        for name, value in (env or {}).items():
            merged[name] = changes[name] = checks.text(expand_value(value, merged, params, variables, report),
                                                       f"env value of {name}")
        base_cwd = os.getcwd() if isolated else session.current_cwd()
        error = None
        run_cwd = base_cwd
        if cwd is not None:
            shown = checks.text(expand_value(cwd, merged, params, variables, report), "cwd")
            run_cwd = os.path.normpath(os.path.join(base_cwd, os.path.expanduser(shown)))
            try:
                check_cwd(run_cwd, shown)
            except PreExecError as exc:
                error = exc
        data: bytes | None
        if isinstance(input, str):
            data = checks.encode_input(expand_value(input, merged, params, variables, report))
        else:
            data = input  # bytes go to stdin unchanged: never templated, never shown as b'…'
        label = label if label is not None else f"{next(self._counter):04d}"
        return _Prepared(label, run_cwd, merged, params, variables, data, error, changes, moved_path, tuple(report))

    def plan(self, request: Request) -> Plan:
        """The plan of ``request``: its script or its argv, with its options; the request's notes first.
        A background shell's, or a job's elsewhere, reads the session and never writes it back."""
        if request.argv is not None:
            plan = self.plan_argv(request.argv, **request.options())
        else:
            plan = self.plan_script(request.text, request.language, errexit=request.errexit,
                                    save_session=not (request.background or request.remote), **request.options())
        if not request.notes and request.on is plan.backend:  # nearly always: no new Plan to make
            return plan
        return dataclasses.replace(plan, notes=request.notes + plan.notes, backend=request.on)

    def plan_script(
        self,
        script: str,
        language: str = "bash",
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        clear_env: bool = False,
        params: Mapping[str, Any] | None = None,
        variables: Mapping[str, Any] | None = None,
        input: str | bytes | None = None,
        isolated: bool = False,
        save_session: bool = True,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
        errexit: bool = False,
        sandbox: Sandbox | None = None,
    ) -> Plan:
        """Plan a script run.  ``{name}`` values are shell-quoted in bash/sh scripts (``{name!raw}`` opts out).

        ``params`` fill ``{name}`` everywhere; ``variables`` (a notebook's) only where a shell would expand
        ``$VAR`` -- never in single quotes, quoted heredocs, or a Python/JavaScript/other interpreter's code.

        ``errexit``: a bash/sh script stops at its first failed command (``set -e``, and ``pipefail`` in
        bash); without it a script's status is its last command's, as in bash.

        ``save_session=False`` reads the session but never writes it back (background shells);
        ``env_filter`` trims the inherited environment (agent tools hold back secrets with it).
        ``sandbox``: the run goes inside these walls, with the session of sandboxed runs (see
        :mod:`.sandboxing`).
        """
        sandbox, session = self._confinement(sandbox)
        p = self._prepare(cwd=cwd, env=env, clear_env=clear_env, params=params, isolated=isolated, input=input,
                          variables=variables, env_filter=env_filter, session=session)
        filled = fill(script, p.params, language=language, variables=p.variables)
        text = filled.text
        (shown,), secrets = self._shown_and_secrets(
            [text], [script, cwd or "", *(env or {}).values()], p,
            lambda params, variables: [fill(script, params, language=language, variables=variables).text])
        notes, fills = _filled_notes((*p.filled, filled))
        error = p.error
        run_env, state_path, failure_path, unsaved = self._bash_files(
            p, text, sandbox is not None, session=language == "bash" and save_session and not isolated,
            failure=language == "bash" and save_session)
        notes += unsaved
        argv, boot, script_file, unwritten = self._script_argv(language, text, shown, p, errexit)
        error = error or unwritten
        last = argv[-1]  # the script, maybe after the errexit trap (see languages.ERREXIT_TRAP)
        shown_argv = (*argv[:-1], last[:len(last) - len(text)] + shown) if shown != text and last.endswith(text) \
            else argv
        command = Command(argv=argv, cwd=p.cwd, env=run_env, display=shown.strip("\n"), input=p.input,
                          shown_argv=shown_argv, pass_fds=handed_fds(run_env), script_boot=boot)
        if language in SHELL_LANGUAGES:
            notes += self._tool_notes(text, p)
            notes += kernel_environment_note(sandbox, text)
        return Plan(command, p.label, state_path=state_path, script=True, secrets=secrets, error=error,
                    env_changes=p.changes,
                    shell_text=text if language in SHELL_LANGUAGES else None, session_env=p.env, notes=notes,
                    script_file=script_file, sandbox=sandbox, session=session, fills=fills, failure_path=failure_path)

    def _bash_files(self, p: _Prepared, text: str, sandboxed: bool, *, session: bool, failure: bool
                    ) -> tuple[dict[str, str], str | None, str | None, tuple[str, ...]]:
        """The run's environment with what makes bash save the session (``session``) or, short of that, note
        which line of it failed (``failure``: an ``--isolated`` run; a remote one never writes here), the state
        file and the failure file it names, and why the session could not be saved when it could not."""
        if session:
            try:
                run_env = session_env(p.env, *self._session_files(p.label, sandboxed))
            except OSError as exc:  # a full disk costs the session's memory of this run, not the run
                return p.env, None, None, (
                    f"session state not saved: the log folder cannot be written ({os_error_reason(exc)})",)
            return run_env, run_env[STATE_VAR], None, ()
        if failure and names_lines(text):
            run_env, failure_path = self._failure_env(p.env, p.label, sandboxed)
            return run_env, None, failure_path, ()
        return p.env, None, None, ()

    def _script_argv(self, language: str, text: str, shown: str, p: _Prepared, errexit: bool
                     ) -> tuple[tuple[str, ...], str | None, str | None, PreExecError | None]:
        """How ``text`` is handed to ``language``: the argv, the script's boot (handed on the argv), the file it
        was written to when it is not (an interpreter that takes a file, a big cell), and the error when that
        file cannot be written (the plan then fails to start, saying why)."""
        argv, boot = handed_argv(language, text, shown, errexit)
        if boot is not None:
            return tuple(argv), boot, None, None
        where = [os.path.join(self.logs.path, f"{p.label}.script")]

        def script_path() -> str:  # the runtime folder is looked at only when a file is written there
            where[0] = os.path.join(self.logs.runtime(), f"{p.label}.script")
            return where[0]

        try:
            written, script_file = script_argv(language, text, p.env, script_path, errexit=errexit)
        except OSError as exc:
            error = PreExecError(f"cannot write the script to '{where[0]}': {os_error_reason(exc)}",
                                 errno.errorcode.get(exc.errno or 0, "EIO"), exit_code=126)
            return (language, where[0]), None, None, error
        return tuple(written), None, script_file, None

    def _failure_env(self, env: dict[str, str], label: str, sandboxed: bool) -> tuple[dict[str, str], str | None]:
        """``env`` with what makes a bash run without a session note which line of it failed, and the file it
        writes that to when it fails (:attr:`Plan.failure_path`); ``env`` as it is and ``None`` when the runtime
        folder cannot be had: the line is a help, the run does not depend on it."""
        try:
            state, prelude = self._session_files(label, sandboxed, "failed")
        except OSError:
            return env, None
        return session_env(env, state, prelude, failure_only=True), state

    def noting_failure(self, plan: Plan) -> Plan:
        """A bash script's plan without a session (a local background shell's), made to note which line of it
        fails as an ``--isolated`` run does; any other plan as it is."""
        command = plan.command
        if (plan.failure_path is not None or plan.state_path is not None or not plan.script
                or command.argv[0] != "bash" or not names_lines(plan.shell_text or "")):
            return plan
        env, path = self._failure_env(dict(command.env), plan.label, plan.sandbox is not None)
        command = dataclasses.replace(command, env=env, pass_fds=(*command.pass_fds, *handed_fds(env)))
        return dataclasses.replace(plan, command=command, failure_path=path)

    def plain_bash_setting(self, name: str, sandbox: Sandbox | None = None) -> tuple[str, dict[str, str]]:
        """The cwd and environment a plain session bash run (no options) would get now, its state saved to
        ``name.state`` in the log folder: what a standby shell is started with (``sandbox``: for a run in it,
        from the session of sandboxed runs).  ``OSError``: no log folder."""
        sandbox, session = self._confinement(sandbox)
        p = self._prepare(cwd=None, env=None, clear_env=False, params=None, isolated=False, input=None, label=name,
                          session=session)
        return p.cwd, session_env(p.env, *self._session_files(name, sandbox is not None))

    def plan_argv(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        clear_env: bool = False,
        params: Mapping[str, Any] | None = None,
        variables: Mapping[str, Any] | None = None,
        input: str | bytes | None = None,
        isolated: bool = False,
        env_filter: Callable[[dict[str, str]], dict[str, str]] | None = None,
        sandbox: Sandbox | None = None,
    ) -> Plan:
        """Plan a direct run of ``argv`` (no shell): ``${VAR}`` and ``{name}`` expand per word, never split
        (``sandbox``: as for :meth:`plan_script`)."""
        sandbox, session = self._confinement(sandbox)
        p = self._prepare(cwd=cwd, env=env, clear_env=clear_env, params=params, isolated=isolated, input=input,
                          variables=variables, env_filter=env_filter, session=session)
        report = list(p.filled)
        words = tuple(expand_argv(argv, p.env, p.params, p.variables, report))
        error = p.error
        if not words:
            error = error or PreExecError("empty command", "EINVAL", exit_code=127)
            words = ("",)
        shown, secrets = self._shown_and_secrets(list(words), [*map(str, argv), cwd or "", *(env or {}).values()], p,
                                     lambda params, variables: expand_argv(argv, p.env, params, variables))
        command = Command(argv=words, cwd=p.cwd, env=p.env, display=shlex.join(shown), input=p.input,
                          shown_argv=tuple(shown))
        notes, fills = _filled_notes(report)
        notes += self._tool_notes(words[0], p) + kernel_environment_note(sandbox, shlex.join(words[:4]))
        return Plan(command, p.label, error=error, env_changes=p.changes, secrets=secrets, notes=notes,
                    sandbox=sandbox, session=session, fills=fills)

    def _confinement(self, sandbox: Sandbox | None) -> tuple[Sandbox | None, ShellSession]:
        """The sandbox a plan runs in (``None`` for none, or one set ``off``) and the session it uses."""
        if sandbox is None or not sandbox.prefix:
            return None, self.session
        return sandbox, self.sandbox_session

    def _shown_and_secrets(self, words: list[str], sources: Sequence[str], p: _Prepared,
               expand: Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]]
               ) -> tuple[list[str], dict[str, str] | None]:
        """The command as shown and recorded (summary, provenance, audit log), and the secrets to hide
        wherever else the run shows (its cwd, its errors): values of secret-named templates and
        variables, and credential-shaped text.  What runs is ``words``, untouched."""
        if not self.redact_display:
            return words, None
        refs = {(name, ref) for source in sources for name, ref in references(source)
                if secret_name(ref) and (name in p.params or name in p.variables)}
        secrets = _secret_env(p.env)
        for name, ref in sorted(refs):
            for i, item in enumerate(_texts(resolve(ref, p.params if name in p.params else p.variables))):
                secrets[f"{ref}#{i}" if i else ref] = item
        if refs:
            def masked(values: Mapping[str, Any]) -> Mapping[str, Any]:
                return ChainMap({name: Masked(name) for name, _ in refs if name in values}, values)  # type: ignore[arg-type]

            words = expand(masked(p.params), masked(p.variables))
        return [redacted(word, secrets) for word in words], secrets


#: The last environment :func:`_secret_env` was asked about, and its answer.
_secrets_seen: tuple[dict[str, str], dict[str, str]] | None = None


def _secret_env(env: dict[str, str]) -> dict[str, str]:
    """:func:`.secret_env` of ``env`` (a copy: the caller adds to it), asked again only when ``env`` is not
    the last one asked about: a run's environment is nearly always the last run's, and each name's test
    is a regular expression's search."""
    global _secrets_seen
    seen = _secrets_seen
    if seen is None or seen[0] != env:
        seen = _secrets_seen = (dict(env), secret_env(env))
    return dict(seen[1])


def _filled_notes(report: Sequence[Filled]) -> tuple[tuple[str, ...], tuple[Fill, ...]]:
    """The notes of every filled text (each said once) and all that filled them."""
    notes = tuple(dict.fromkeys(note for filled in report for note in filled.notes))
    return notes, tuple(f for filled in report for f in filled.fills)


def _sets_path(session: ShellSession | None) -> bool:
    """Whether the session (or one it follows) set PATH itself."""
    while session is not None:
        if "PATH" in session.set:
            return True
        session = session.parent
    return False


def _texts(value: Any) -> list[str]:
    """The texts a secret value can show as (each item of a list, each value of a mapping)."""
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, Mapping):
        return [t for item in value.values() for t in _texts(item)]
    if isinstance(value, (bytes, bytearray)):
        return [bytes(value).decode("utf-8", "surrogateescape")]
    return [value] if isinstance(value, str) else [str(value)] if isinstance(value, (int, float)) else []
