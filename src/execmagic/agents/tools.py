"""Agent tools: Bash, BashOutput, KillShell, ListShells (and plugin tools), in the shapes models know.

:class:`Toolbox` gives their definitions for every client from one source
(:meth:`Toolbox.schemas`: Anthropic, OpenAI plain and strict, MCP), answers a
client's tool calls in that client's own shape (:meth:`Toolbox.answer_all`), and
underneath, :meth:`Toolbox.dispatch` takes a tool name and arguments (a dict or a
JSON string) and always answers with a JSON-able dict -- bad input is an answer
with ``"success": false`` and an ``"error"``, never an exception, so a model can
read it and try again.

Guardrails are on: every dangerous-command rule (``guard="all"``), secrets held
back from the environment and redacted from output (across ``BashOutput`` reads
too: the end of a read that may be a secret's start waits for the next), output
cut in the middle to 30,000 characters (saying exactly how much and where the
full log is).

Over 400 lines on purpose: it is one class whose four handlers share its engine, secrets and
holdback; the parts that stand alone already live apart (:mod:`.arguments`, :mod:`.answers`,
:mod:`.schemas`, :mod:`.shaping`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..background.backends import registry
from ..background.backends.base import Backend
from ..engine.engine import Engine
from ..engine.placement import elsewhere_note, sandbox_elsewhere
from ..engine.requests import Request
from ..guard.policy import CommandRefused, Guard, redact, sanitize_env
from ..guard.secrets import secret_tail
from ..process import checks
from ..process.errors import ExecError, ShellLimitReached, UnknownShell, UsageProblem, shown_value
from ..process.pump import CancelToken
from ..process.records import record
from ..process.results import ShellOutput
from .answers import answer_text, calls_in, read_call
from .arguments import normalise, object_schema, validate
from .clients import schema_format
from .schemas import NAME_PATTERN, tool_definition
from .shaping import Holdback, Part, cut_middle, merge_streams, shape

__all__ = [
    "AGENT_READER", "DEFAULT_TIMEOUT_MS", "MAX_OUTPUT_CHARS", "MAX_TIMEOUT_MS", "MIN_OUTPUT_CHARS", "MIN_TIMEOUT_MS",
    "ToolSpec", "Toolbox", "cut_middle", "merge_streams", "normalise", "object_schema", "validate",
]

#: Characters of output a tool answer carries at most: a model's context is the budget, and a build log
#: can be megabytes.  The middle is cut: a run's head (what it did) and tail (how it ended) matter most.
MAX_OUTPUT_CHARS = 30_000
#: The smallest output budget an operator may set: a head, a tail and the note that names the log.
MIN_OUTPUT_CHARS = 1_000
DEFAULT_TIMEOUT_MS = 120_000
MIN_TIMEOUT_MS = 1_000
MAX_TIMEOUT_MS = 600_000
#: The cursor name the tools read background output with: a human's ``%bgout`` does not move it.
AGENT_READER = "agent"

#: A tool's handler: its arguments, and for a :attr:`ToolSpec.cancellable` tool a ``cancel`` keyword too.
Handler = Callable[..., dict[str, Any]]


@record
class ToolSpec:
    """One tool: its name, what it is for, a JSON Schema for its arguments, and what runs it."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    #: Whether ``handler`` takes ``cancel=`` (a :class:`CancelToken` that stops the command it runs, with
    #: everything that command started): a caller that gives up -- an MCP client's cancel -- stops it.
    cancellable: bool = False

    def definition(self, style: str, strict: bool = False) -> dict[str, Any]:
        """This tool in one client's format (see :mod:`execmagic.agents.schemas`)."""
        return tool_definition(self.name, self.description, self.parameters, style, strict)


class Toolbox:
    """The agent tools over one engine (by default the process-wide one, shared with the magics).

    ``guard`` chooses which dangerous commands are refused (``"all"`` by default; the
    operator -- not the model -- can relax it).  ``env_allow`` names variables to pass on
    even though they look secret.  ``dry_run`` answers what would run, running nothing.
    ``background_on`` is where ``run_in_background`` commands run: local processes by default, a
    backend's name (``"slurm"``, with its defaults) or a backend made with options
    (``SlurmBackend(SlurmOptions(partition="gpu"))``) -- the operator's choice, not a tool argument
    the model could set.  A job on another system is outside any sandbox here: the Bash tool's
    description says so, and so does every answer of such a job; with ``sandbox="auto"`` commands here
    stay confined, and a mode named together with such a backend is refused at once.

    ``sandbox`` confines every command in operating-system walls (bubblewrap): a mode of
    :mod:`execmagic.engine.sandbox_modes`, where each says what it does (the writable roots: the allowed
    directories, else the folder the engine started in).  The default, ``"auto"``, is ``workspace`` where
    the sandbox works and unsandboxed elsewhere, every answer saying why: an agent's commands meet walls,
    not only text checks.  ``network`` lets confined
    commands reach the network; ``readable`` shows more paths, read-only, where the sandbox hides them (the
    home folder is hidden but for the workspace, the kernel's Python and a few secret-free settings).
    Confined commands keep a session of their own, which starts from the engine's and never writes back
    to it, and a private ``/tmp`` kept from one call to the next, whose size and process limit are the
    engine's (``engine.sandbox_limits``, a :class:`~execmagic.process.sandbox_session.Limits`).  A mode
    named where it cannot work raises here.
    """

    def __init__(self, engine: Engine | None = None, *, guard: Guard = "all", env_allow: Iterable[str] = (),
                 redact_secrets: bool = True, dry_run: bool = False, grace: float = 2.0,
                 max_output: int = MAX_OUTPUT_CHARS, background_on: str | Backend | None = None,
                 sandbox: str = "auto", network: bool = False, readable: Iterable[str] = ()) -> None:
        from ..engine.default import default_engine

        self.engine = engine or default_engine()
        #: What the sandbox setting came to (set now: a named mode that cannot work fails here, at once).
        self.sandbox = self.engine.sandbox(sandbox, network=network, readable=tuple(readable))
        checked = checks.grace(grace, "grace")
        self.grace: float = 2.0 if checked is None else checked
        self.guard = guard
        self.env_allow = frozenset(env_allow)
        self.redact_secrets = redact_secrets
        self.dry_run = dry_run
        if isinstance(max_output, bool) or not isinstance(max_output, int) or max_output < MIN_OUTPUT_CHARS:
            raise ValueError(f"max_output must be an integer of at least {MIN_OUTPUT_CHARS:,} characters (room for"
                             f" a head, a tail and the note between them), not {max_output!r}")
        self.max_output = max_output
        #: Where background commands run (``None``: the engine's default, local processes).
        self.background_on: Backend | None = (None if background_on is None else
                                              registry.backend_given(background_on, "background_on", grace=self.grace))
        #: What every answer of a job on another system says of its walls (``()``: jobs run here).  A sandbox
        #: mode named together with such a backend is refused here, at once (:func:`.placement.sandbox_elsewhere`).
        self._elsewhere = _elsewhere_notes(sandbox, self.background_on)
        self._held = Holdback()
        self._reading = threading.Lock()
        self.tools: dict[str, ToolSpec] = {}
        for spec in self._builtin_specs():
            self.tools[spec.name] = spec

    # -- catalogue ------------------------------------------------------------------------
    def _walls(self) -> str:
        """What the Bash tool's description says of the sandbox, so the model knows its walls before it
        meets them (a write refused reads ``Read-only file system``); nothing when unconfined."""
        sandbox = self.sandbox.sandbox
        if sandbox is None:
            return ""
        spec = sandbox.spec
        where = (f"only {', '.join(spec.writable_roots)} and a private /tmp are writable"
                 if spec.mode == "workspace" else "only a private /tmp is writable")
        network = "the network is reachable" if spec.network else "there is no network"
        kept = " (/tmp is kept from one call to the next)" if sandbox.walls is not None else ""
        return (f" Commands run in a sandbox: {where}{kept}, the rest of the file system is read-only, {network},"
                f" and processes outside it are invisible; {sandbox.visibility}.")

    def _jobs_elsewhere(self) -> str:
        """What the Bash tool's description says of background jobs on another system (the operator's
        ``background_on``): outside the walls here, so the model knows before it sends one there."""
        if not self._elsewhere or self.background_on is None:  # jobs run here (the rule said nothing of them)
            return ""
        return (f" Commands with run_in_background run as jobs on {self.background_on.name} (the user's setting):"
                " on that system's machines, under its rules, outside any sandbox here.")

    def _builtin_specs(self) -> list[ToolSpec]:
        return [
            ToolSpec("Bash", (
                "Executes a bash command in a persistent shell session (cd and export carry over) and returns its "
                "output, exit code and duration. stdin is closed. Timeout defaults to 120000 ms (2 minutes), at "
                "most 600000 ms. Output over 30000 characters is cut in the middle; the full log path is given. "
                "Use run_in_background for long-running commands, then BashOutput to read them. Quote paths with "
                "spaces; chain dependent commands with &&. Dangerous commands (recursive deletes of / or ~, "
                "formatting disks, fork bombs, piping downloads into a shell, …) are refused." + self._walls()
                + self._jobs_elsewhere()),
                object_schema({
                    "command": {"type": "string", "description": "The command to execute"},
                    "description": {"type": "string",
                                    "description": "Clear, concise description of what this command does (5-10 words)"},
                    "timeout": {"type": "integer", "description": "Timeout in milliseconds (max 600000)",
                                "default": DEFAULT_TIMEOUT_MS, "minimum": MIN_TIMEOUT_MS, "maximum": MAX_TIMEOUT_MS},
                    "run_in_background": {"type": "boolean", "default": False,
                                          "description": "Run command in background, use BashOutput to read output"},
                }, required=["command"]), self._bash, cancellable=True),
            ToolSpec("BashOutput", (
                "Retrieves output from a running or completed background bash shell: only what is new since the "
                "last check, stdout and stderr, with the shell's status (running, exited N, killed, timed out) "
                "and exit code. An optional regex filter keeps matching lines (the others are skipped, not lost)."),
                object_schema({
                    "bash_id": {"type": "string",
                                "description": "The ID of the background shell to retrieve output from"},
                    "filter": {"type": "string", "description": "Optional regex to filter output lines"},
                }, required=["bash_id"]), self._bash_output),
            ToolSpec("KillShell", (
                "Kills a running background bash shell by its ID, with everything it started (TERM, then KILL). "
                "Killing a shell that already ended is fine."),
                object_schema({
                    "shell_id": {"type": "string", "description": "The ID of the background shell to kill"},
                }, required=["shell_id"]), self._kill_shell),
            ToolSpec("ListShells", "Lists the background shells: id, status, runtime, exit code, command.",
                     object_schema({}), self._list_shells),
        ]

    def add(self, spec: ToolSpec) -> None:
        """Offer one more tool (a plugin); a name the APIs refuse, or one that is taken, is refused."""
        if not isinstance(spec.name, str) or not re.fullmatch(NAME_PATTERN, spec.name):
            raise ValueError(f"tool name {spec.name!r} must match ^{NAME_PATTERN}$ (what both function-calling"
                             " APIs accept)")
        if spec.name in self.tools:
            raise ValueError(f"a tool named {spec.name!r} exists already")
        self.tools[spec.name] = spec

    def schemas(self, style: str = "openai", *, strict: bool = False) -> list[dict[str, Any]]:
        """Every tool's definition for one client, all from the same source.

        ``"anthropic"`` (``input_schema``), ``"openai"`` (``{"type": "function", …}``; with
        ``strict=True``, strict mode's form: every property required, optional ones nullable,
        ``additionalProperties: false``, no keyword it refuses), ``"openai-responses"`` (the Responses
        API's flat form, strict mode alike) or ``"mcp"`` (``inputSchema``).
        """
        schema_format(style, strict)  # a style that is none is refused even with no tool to word
        return [spec.definition(style, strict) for spec in self.tools.values()]

    # -- answers in the client's shape --------------------------------------------------------
    def answer(self, call: Any) -> dict[str, Any]:
        """Do one tool call of any client and return the answer in that client's shape.

        ``call`` is an Anthropic ``tool_use`` block, an OpenAI chat tool call or a Responses
        ``function_call`` item -- an SDK object or a plain dict.  The answer is the matching
        ``tool_result`` block (``is_error`` set when ``success`` is false), ``role: tool``
        message or ``function_call_output`` item, with the answer as JSON text.
        """
        found = read_call(call)
        answer = self.dispatch(found.name, found.arguments)
        return found.answer(answer_text(answer), not answer.get("success", False))

    def answer_all(self, message: Any) -> list[dict[str, Any]]:
        """Do every tool call of one assistant turn, in order; their answers, in the client's shape.

        Anthropic: ``messages.append({"role": "user", "content": box.answer_all(reply)})``.
        OpenAI chat: ``messages.extend(box.answer_all(reply))`` (a ``ChatCompletion`` or its message).
        OpenAI Responses: ``input += box.answer_all(response)``.
        """
        return [call.answer(answer_text(reply), not reply.get("success", False))
                for call in calls_in(message) for reply in (self.dispatch(call.name, call.arguments),)]

    # -- dispatch -------------------------------------------------------------------------
    def dispatch(self, name: str, arguments: Mapping[str, Any] | str | None = None, *,
                 cancel: CancelToken | None = None) -> dict[str, Any]:
        """Run tool ``name`` with ``arguments``; always a JSON-able dict, never an exception.

        ``cancel`` (from another thread) stops a foreground ``Bash`` command and all it started; the
        answer then says ``interrupted``.  A background shell the call started is not stopped by it.
        """
        try:
            spec = self.tools.get(name) if isinstance(name, str) else None
            if spec is None:
                return _error(f"unknown tool {shown_value(name)}; available: {', '.join(self.tools)}")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5,000-digit number, deep nesting
                    return _error(f"arguments are not valid JSON: {type(exc).__name__}: {str(exc)[:200]}")
            arguments = {} if arguments is None else arguments
            if not isinstance(arguments, Mapping):
                return _error(f"arguments must be a JSON object, not {type(arguments).__name__}")
            arguments = normalise(spec.parameters, arguments)
            problem = validate(spec.parameters, arguments)
            if problem:
                return _error(f"{name}: {problem}")
            answer = (spec.handler(dict(arguments), cancel=cancel) if spec.cancellable and cancel is not None
                      else spec.handler(dict(arguments)))
        except CommandRefused as exc:  # worded for a model: it cannot override the guard, the user can
            answer = _error(f"{exc.refusal.describe()}; this tool does not run it; ask the user to run it themselves")
        except UnknownShell as exc:  # worded for a model: how to start one with these tools
            answer = _error(f"{exc}{'' if exc.known else '; start one with Bash and run_in_background'}")
        except ShellLimitReached as exc:
            answer = _error(f"{exc} (KillShell one)")
        except ExecError as exc:
            answer = _error(str(exc))
        except Exception as exc:
            answer = _error(f"internal error: {type(exc).__name__}: {exc}")
        return self._finish(answer)

    def _finish(self, answer: Mapping[str, Any]) -> dict[str, Any]:
        """Every answer, whichever tool gave it (plugins too), as a model may read it: plain JSON (no
        NaN, no objects), its ``output`` and ``error`` redacted and within :attr:`max_output`."""
        plain = _json_safe(answer)
        if not isinstance(plain, dict):
            return _error(f"internal error: the tool answered with {type(answer).__name__}, not an object")
        secrets = self._secrets()
        for key in ("output", "error"):
            if isinstance(plain.get(key), str):
                plain[key] = shape([Part(plain[key])], self.max_output, lambda text: self._clean(text, secrets))
        return plain

    # -- the tools --------------------------------------------------------------------------
    def _env_filter(self, held: dict[str, str]) -> Callable[[dict[str, str]], dict[str, str]]:
        """An env filter that holds back secret-looking variables, remembering them in ``held``."""

        def keep_safe(env: dict[str, str]) -> dict[str, str]:
            kept, secret = sanitize_env(env, self.env_allow)
            held.update(secret)
            return kept

        return keep_safe

    def _clean(self, text: str, held: Mapping[str, str]) -> str:
        return redact(text, held) if self.redact_secrets else text

    def _bash(self, args: dict[str, Any], cancel: CancelToken | None = None) -> dict[str, Any]:
        command = checks.text(args["command"], "command")
        if not command.strip():
            raise UsageProblem("command is empty: give the shell command to run")
        notes: list[str] = []
        timeout_ms = args.get("timeout", DEFAULT_TIMEOUT_MS)
        clamped = min(max(timeout_ms, MIN_TIMEOUT_MS), MAX_TIMEOUT_MS)
        if clamped != timeout_ms:
            notes.append(f"timeout {timeout_ms} ms is outside {MIN_TIMEOUT_MS}–{MAX_TIMEOUT_MS} ms; used {clamped} ms")
        background = bool(args.get("run_in_background", False))
        held: dict[str, str] = {}
        elsewhere = background and bool(self._elsewhere)  # a job on another system: outside our walls, said
        notes += self._elsewhere if elsewhere else self.sandbox.notes
        plan = self.engine.plan(Request(text=command, background=background, env_filter=self._env_filter(held),
                                        sandbox=None if elsewhere else self.sandbox.sandbox,
                                        on=self.background_on if background else None))
        # every answer says which walls the command met (or would meet), not only a finished run's
        confined = {"sandbox": plan.sandbox.describe()} if plan.sandbox is not None else {}
        if self.dry_run:
            self.engine.check_guard(plan, self.guard)  # a dry run still says "refused"
            return {"success": True, "dry_run": True, "output": f"[Dry Run] Would execute: {plan.command.display}",
                    "cwd": plan.command.cwd, "notes": notes, **confined}
        if background:
            info = self.engine.start_background(plan, guard=self.guard)
            answer = {"success": True, "shell_id": info.id, "pid": info.pid, "status": info.status,
                      "output": f"started in the background as {info.id}; read it with BashOutput",
                      "log_paths": info.log_paths, "notes": notes, **confined}
            if info.job_id is not None:
                answer.update(backend=info.backend, job_id=info.job_id)
            return answer
        options = dataclasses.replace(self.engine.options, timeout=checks.timeout(clamped / 1000), grace=self.grace,
                                      log_over=self.max_output)
        result = self.engine.run(plan, options=options, guard=self.guard, cancel=cancel)
        parts = [Part(capture.text, log_path=capture.log_path,
                      whole_bytes=capture.bytes if capture.truncated and not capture.binary else None)
                 for capture in (result.stdout_capture, result.stderr_capture)]
        if result.error:
            parts.append(Part(result.error))
        answer = {
            "success": result.success, "exit_code": result.exit_code, "status": result.outcome(),
            "output": shape(parts, self.max_output, lambda text: self._clean(text, held)),
            "duration_ms": result.duration_ms, "timed_out": result.timed_out,
            "cwd": (plan.session or self.engine.session).current_cwd(), "notes": notes + list(result.notes),
        }
        if result.sandbox:
            answer["sandbox"] = result.sandbox
        if result.log_paths:
            answer["log_paths"] = result.log_paths
        return answer

    def _bash_output(self, args: dict[str, Any]) -> dict[str, Any]:
        secrets = self._secrets()
        with self._reading:  # a read and what it holds back, together (see Holdback)
            out = self.engine.shells.read(args["bash_id"], reader=AGENT_READER, pattern=args.get("filter"),
                                          max_bytes=self.max_output * 4)
            info = out.shell
            parts, held = self._carried(out, secrets)
        answer = {
            "success": True, "bash_id": info.id, "status": info.status, "running": info.running,
            "exit_code": info.exit_code, "runtime_s": info.runtime_s,
            "output": shape(parts, self.max_output, lambda text: self._clean(text, secrets)),
            "finished_and_read": out.at_end,
        }
        if info.failed_line:  # the line of its script that gave its exit status, where that is known for sure
            answer["failed_line"] = info.failed_line
        if args.get("filter") is not None:
            answer["lines_not_matching"] = sum(out.filtered_out.values())
        notes = []
        if out.filter_gave_up:
            notes.append(f"the filter took over a second on {', '.join(out.filter_gave_up)} and was given up"
                         " there: the lines after that point are returned unfiltered")
        if held:
            notes.append(f"the last {held:,} characters are held back until the next read (or the shell's end):"
                         " they may be the start of a secret, redacted only once it is whole")
        if notes:
            answer["notes"] = notes
        return answer

    def _carried(self, out: ShellOutput, secrets: Mapping[str, str]) -> tuple[list[Part], int]:
        """The read's streams with what the last read held back before them and a possible secret's
        start held back from their end (nothing held when output is not redacted); how much is held."""
        info = out.shell
        shell = (info.id, info.pid)  # a name is free again once its shell is gone: not the same stream
        parts = []
        for name, text, header in (("stdout", out.stdout, ""), ("stderr", out.stderr, "[stderr]\n")):
            skipped = out.skipped.get(name, 0)
            if self.redact_secrets:
                text, skipped = self._held.carry(shell, name, text, skipped, lambda text: secret_tail(text, secrets),
                                                 final=out.at_end)
            parts.append(Part(text, header=header, log_path=info.log_paths.get(name), skipped=skipped))
        return parts, self._held.holding(shell)

    def _secrets(self) -> dict[str, str]:
        """What an answer may hold: the secret-looking variables of the sessions -- the engine's, and the
        one confined runs keep apart from it (a sandboxed ``export API_KEY=…`` lands only there)."""
        found: dict[str, str] = {}
        for session in (self.engine.session, self.engine.sandbox_session):
            found.update(sanitize_env(session.environment(), self.env_allow)[1])
        return found

    def _kill_shell(self, args: dict[str, Any]) -> dict[str, Any]:
        outcome = self.engine.shells.kill(args["shell_id"], grace=self.grace)
        return {"success": True, "shell_id": outcome.shell.id, "status": outcome.shell.status,
                "message": outcome.message}

    def _list_shells(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"success": True, "shells": [
            {"id": i.id, "status": i.status, "runtime_s": i.runtime_s, "exit_code": i.exit_code,
             **({"failed_line": i.failed_line} if i.failed_line else {}), "command": i.command}
            for i in self.engine.shells.list()]}


def _json_safe(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data: non-finite numbers and other objects become their text."""
    if depth > 64:
        return str(value)[:1000]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else json.dumps(value)  # NaN, Infinity: as JSON would have said
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    return str(value)


def _elsewhere_notes(sandbox: str, backend: Backend | None) -> tuple[str, ...]:
    """The notes of a background job on ``backend`` when it runs on another system (``()`` when it runs
    here): :func:`.placement.sandbox_elsewhere`'s, said whatever the sandbox's mode, since the job is outside
    it either way.  Raises its :class:`~.placement.SandboxElsewhere` for a mode named with such a backend."""
    choice = sandbox_elsewhere(sandbox, backend)
    if choice is None or backend is None:
        return ()
    return choice.notes or (elsewhere_note(backend.name),)


def _error(message: str) -> dict[str, Any]:
    return {"success": False, "error": message}
