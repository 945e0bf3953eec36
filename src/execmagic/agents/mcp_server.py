"""The agent tools as a Model Context Protocol server: over stdio, or over HTTP inside a running kernel.

Built on the official ``mcp`` SDK's low-level :class:`mcp.server.lowlevel.Server`, which lists
tools exactly as given: the JSON Schemas come from :meth:`Toolbox.schemas` (``"mcp"``), the one
source every client format is made from, and are never re-derived from Python signatures.

A call runs :meth:`Toolbox.dispatch` in a daemon thread (a ``Bash`` call may take minutes; the
event loop goes on serving ``BashOutput`` polls and other clients meanwhile, and a call still
running never holds up the process's exit -- the watchdog stops what it started).  The answer is
one text content block holding :func:`~execmagic.agents.answers.answer_text` -- the same JSON a
model reads from the Anthropic and OpenAI answers -- plus the same dict as structured content;
``isError`` is set when ``success`` is false.

Two ways to serve:

- :func:`serve_stdio`: the ``execmagic-mcp`` command; any MCP client starts it as a subprocess.
- :class:`HttpServer`: streamable HTTP on 127.0.0.1 in a thread with its own event loop, every
  request needing a random bearer token; ``%mcp serve`` runs it in the kernel, over the kernel's
  own engine, so an outside agent works in the notebook's session.

Inside a kernel every MCP session costs the kernel memory for as long as it lives (some 35 kB
each), and a client that opens a session per request would otherwise keep thousands for the SDK's
half hour.  So a session idle for :data:`DEFAULT_IDLE_TIMEOUT` is closed, and at most
:data:`DEFAULT_MAX_SESSIONS` live at once: one more closes the session idle longest first.  A
session is only a conversation: the background shells an agent started belong to the engine --
the notebook's -- and closing the session leaves them running.

The SDK is an optional extra (``execmagic[mcp]``, i.e. ``pip install 'mcp>=2.3'``); this module imports it only when
a server is built, and says how to install it when it is missing (:class:`McpUnavailable`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import hmac
import json
import logging
import math
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..guard.secrets import redact, sanitize_env
from ..process import checks
from ..process.clock import now_iso
from ..process.errors import UsageProblem
from ..process.retention import running_since
from ..process.sandbox import SandboxProblem, SandboxUnavailable, UnsafeRoot
from .answers import answer_text
from .tools import Toolbox

__all__ = [
    "DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_SESSIONS", "INSTALL_HINT", "MAX_CALLS_KEPT", "MAX_CONCURRENT_CALLS",
    "SERVER_NAME", "CallLog", "CallRecord", "HttpServer", "McpStatus", "McpUnavailable", "build_server",
    "client_config", "remove_stale_client_configs", "sandbox_line", "sandbox_trouble",
    "serve_stdio",
]

SERVER_NAME = "execmagic"
INSTALL_HINT = "pip install 'mcp>=2.3' (what the optional extra execmagic[mcp] adds)"
#: Calls remembered for ``%mcp`` (the latest ones; the count goes on).
MAX_CALLS_KEPT = 50
#: Tool calls running at once per server; more wait their turn (each may hold a process for minutes).
MAX_CONCURRENT_CALLS = 16
#: Seconds a stopping HTTP server waits for open requests (an agent's event stream stays open for ever).
SHUTDOWN_GRACE = 1
#: Seconds ``HttpServer.start`` waits for the server to listen before it gives up.
STARTUP_TIMEOUT = 15.0
#: Seconds an HTTP session may go without a request before it is closed (the SDK's default is 30
#: minutes): an agent polling a job asks far more often, and a client that went away frees its memory.
DEFAULT_IDLE_TIMEOUT = 600.0
#: HTTP sessions alive at once (the SDK's default is 10,000): one client holds one, a handful of
#: agents a handful; past it the session idle longest is closed for the new one.
DEFAULT_MAX_SESSIONS = 100
#: The client configuration files :meth:`HttpServer.write_client_config` writes: kernel pid, port.
_CONFIG_FILE = re.compile(r"execmagic-mcp-(?P<pid>\d+)-(?P<port>\d+)\.json")


class McpUnavailable(UsageProblem):
    """The ``mcp`` SDK is not installed: one line saying how to get it."""

    def __init__(self, missing: str) -> None:
        self.missing = missing
        super().__init__(f"the MCP server needs the 'mcp' package ({missing} is missing): {INSTALL_HINT}")


def _import_sdk() -> None:
    """Fail with :class:`McpUnavailable` (not an ``ImportError`` traceback) when the extra is missing."""
    for name in ("mcp", "uvicorn", "starlette"):
        try:
            __import__(name)
        except ImportError:
            raise McpUnavailable(name) from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("execmagic")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "0"


# -- what was called ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CallRecord:
    """One tool call as ``%mcp`` lists it: when, which tool, a short form of its arguments, how it ended."""

    at: str
    tool: str
    summary: str
    success: bool
    outcome: str
    duration_ms: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: The argument a tool's call is best known by (the rest is shown as JSON, cut short).
_KEY_ARGUMENT = {"Bash": "command", "BashOutput": "bash_id", "KillShell": "shell_id"}
_SUMMARY_CHARS = 80


def _summary(tool: str, arguments: Any) -> str:
    if isinstance(arguments, Mapping):
        key = _KEY_ARGUMENT.get(tool)
        value = arguments.get(key) if key else None
        text = value if isinstance(value, str) else json.dumps(arguments, ensure_ascii=False, default=str)
        if tool == "Bash" and arguments.get("run_in_background"):
            text = "[background] " + text
    else:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _SUMMARY_CHARS else text[:_SUMMARY_CHARS - 1] + "…"


def _outcome(answer: Mapping[str, Any]) -> str:
    if not answer.get("success"):
        return str(answer.get("error") or answer.get("status") or "failed")[:200]
    for key in ("status", "message"):
        if isinstance(answer.get(key), str):
            return str(answer[key])[:200]
    return "ok"


class CallLog:
    """The latest calls (at most :data:`MAX_CALLS_KEPT`) and how many there were; safe from any thread."""

    def __init__(self, keep: int = MAX_CALLS_KEPT) -> None:
        self._calls: collections.deque[CallRecord] = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self.total = 0

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self._calls.append(record)
            self.total += 1

    def latest(self, count: int | None = None) -> tuple[CallRecord, ...]:
        with self._lock:
            calls = tuple(self._calls)
        return calls if count is None else calls[-count:]


# -- the server -------------------------------------------------------------------------------------
class _Calls:
    """Runs tool calls in daemon threads and keeps the record of each."""

    def __init__(self, toolbox: Toolbox, log: CallLog) -> None:
        self.toolbox = toolbox
        self.log = log
        self._slots: asyncio.Semaphore | None = None  # made in the server's own loop, at its first call

    def _secrets(self) -> dict[str, str]:
        return sanitize_env(self.toolbox.engine.session.environment(), self.toolbox.env_allow)[1]

    def run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        started, at = time.monotonic(), now_iso("seconds")
        answer = self.toolbox.dispatch(name, arguments)
        summary = _summary(name, arguments)
        outcome = _outcome(answer)
        if self.toolbox.redact_secrets:  # the record is shown in the notebook: no secret may reach it
            held = self._secrets()
            summary, outcome = redact(summary, held), redact(outcome, held)
        self.log.add(CallRecord(at, name, summary, bool(answer.get("success")), outcome,
                                int((time.monotonic() - started) * 1000)))
        return answer

    async def __call__(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CONCURRENT_CALLS)
        async with self._slots:
            return await self._in_thread(name, arguments)

    async def _in_thread(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()

        def settle(answer: dict[str, Any] | None, error: BaseException | None) -> None:
            if done.done():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(answer or {})

        def work() -> None:
            try:
                answer, error = self.run(name, arguments), None
            except BaseException as exc:  # dispatch never raises; this is a bug, reported to the client
                answer, error = None, exc
            with contextlib.suppress(RuntimeError):  # the loop closed: the server stopped meanwhile
                loop.call_soon_threadsafe(settle, answer, error)

        threading.Thread(target=work, name=f"execmagic-mcp-{name[:40]}", daemon=True).start()
        return await done


def build_server(toolbox: Toolbox, log: CallLog | None = None) -> Any:
    """An :class:`mcp.server.lowlevel.Server` offering ``toolbox``'s tools (built-in and plugins)."""
    _import_sdk()
    from mcp import types
    from mcp.server.lowlevel import Server

    calls = _Calls(toolbox, log if log is not None else CallLog())

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in toolbox.schemas("mcp")])

    async def call_tool(ctx: Any, params: Any) -> Any:
        answer = await calls(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer_text(answer))],
                                    structured_content=answer, is_error=not answer.get("success", False))

    names = ", ".join(toolbox.tools)
    return Server(
        SERVER_NAME, version=_version(),
        instructions=(f"Shell tools over one persistent session ({names}): cd and export carry over between "
                      "Bash calls; long jobs run with run_in_background and are read with BashOutput. Guardrails "
                      "refuse dangerous commands; they are not a sandbox."),
        on_list_tools=list_tools, on_call_tool=call_tool)


# -- over stdio ---------------------------------------------------------------------------------------
def serve_stdio(toolbox: Toolbox, log: CallLog | None = None, *, exit_grace: float = 1.0) -> None:
    """Serve over this process's stdin/stdout until stdin ends (the client exited or was killed).

    The caller stops the engine afterwards (``toolbox.engine.close()``).  SIGTERM, SIGHUP and SIGINT stop
    the engine's shells (``exit_grace`` before SIGKILL) and end the process at once with status
    128 + the signal: the SDK reads stdin in a worker thread that no cancellation can interrupt,
    so waiting for a clean unwind would wait for the client's next message.  The SDK moves fd 0
    and 1 aside while serving, so nothing a command or a library prints can corrupt the protocol.
    """
    import signal
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(toolbox, log)

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as received:
            async for signum in received:
                await anyio.to_thread.run_sync(toolbox.engine.close, exit_grace)
                with contextlib.suppress(Exception):
                    sys.stderr.flush()
                os._exit(128 + signum)

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    except BaseException as exc:
        if not _client_gone(exc):
            raise


def _client_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception of a group) says the client closed the pipe: a normal end."""
    group = getattr(exc, "exceptions", None)
    if group is not None:
        return bool(group) and all(_client_gone(e) for e in group)
    return isinstance(exc, (BrokenPipeError, ConnectionResetError))


# -- over HTTP, inside a process that goes on with other work ------------------------------------------
def client_config(url: str, token: str, name: str = SERVER_NAME) -> dict[str, Any]:
    """What an MCP client's configuration takes (``mcpServers``, as Claude Code's ``.mcp.json`` and others)."""
    return {"mcpServers": {name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}


@dataclasses.dataclass(frozen=True)
class McpStatus:
    """What ``%mcp`` shows: whether a server runs, where, since when, and its latest calls (never the token)."""

    running: bool
    url: str | None = None
    started_at: str | None = None
    guard: str = "all"
    calls_total: int = 0
    calls: tuple[CallRecord, ...] = ()
    problems: tuple[str, ...] = ()
    #: Where the agent's commands run: :func:`sandbox_line` (``None`` while no server runs).
    sandbox: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"running": self.running, "url": self.url, "started_at": self.started_at, "guard": self.guard,
                "calls_total": self.calls_total, "calls": [c.to_json() for c in self.calls],
                "problems": list(self.problems), "sandbox": self.sandbox}


def sandbox_trouble(mode: str, exc: SandboxProblem | SandboxUnavailable, *, auto: str, root_fix: str) -> str:
    """Why a server's sandbox cannot be set, in one line that names the cause and the fix.

    ``auto``: how this server's operator asks for ``auto`` instead; ``root_fix``: how they name a
    project folder instead of one that may not be writable (the home folder, ``/``).
    """
    if isinstance(exc, SandboxUnavailable):
        return f"--sandbox {mode}: no sandbox here: {exc.reason}; or {auto} (runs unsandboxed, every answer says why)"
    where = f" with {exc.path}" if exc.path else ""
    fix = f"; {root_fix}" if isinstance(exc, UnsafeRoot) else ""
    return f"--sandbox {mode}: cannot sandbox{where}: {exc.why}{fix}"


def sandbox_line(toolbox: Toolbox) -> str:
    """Where a server's agent runs, in one line for its operator: the sandbox and what it lets write,
    or ``unsandboxed: <why>`` -- so nobody takes a server for confined when it is not."""
    choice = toolbox.sandbox
    if choice.sandbox is not None:
        return "; ".join((choice.sandbox.describe(), *choice.notes))
    if choice.notes:  # "auto" where the sandbox cannot work: the note says why
        return "; ".join(choice.notes)
    return "unsandboxed: the sandbox is off (the agent runs as you)"


class _RequireToken:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()

    def _allowed(self, headers: list[tuple[bytes, bytes]]) -> bool:
        for key, value in headers:
            if key.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._allowed(scope.get("headers", [])):
            body = b'{"error": "unauthorized: send the Authorization: Bearer token %mcp serve printed"}'
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="execmagic"')]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class _RoomForOneMore:
    """ASGI middleware: a request that opens a session while ``cap`` are open first closes the session
    idle longest (no request in flight, the earliest idle deadline), the way its idle timeout would.

    The SDK's own limit answers 503 at the cap instead, which locks a returning client out until a
    session expires; the limit is still passed to the SDK, so when every session is busy the answer
    is its 503.  Openings under way count too (from here until their answer starts, when the SDK has
    admitted them or not): several clients opening at once each find room.  The SDK has no public
    way to close one session: this reads its session table, and should a later SDK rename it,
    nothing is closed here and the SDK's limit still holds.
    """

    def __init__(self, app: Any, manager: Any, cap: int) -> None:
        self.app = app
        self.manager = manager
        self.cap = cap
        self._opening = 0  # requests between make_room and their answer: each may become a session

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or any(
                key.lower() == b"mcp-session-id" for key, _ in scope.get("headers", [])):
            await self.app(scope, receive, send)
            return
        self._opening += 1
        pending = True
        self.make_room()

        async def answering(message: Any) -> None:
            nonlocal pending
            if pending and message["type"] == "http.response.start":  # admitted by now, or refused
                pending = False
                self._opening -= 1
            await send(message)

        try:
            await self.app(scope, receive, answering)
        finally:
            if pending:
                self._opening -= 1

    def make_room(self) -> None:
        """Close idle sessions, longest idle first, until the openings under way fit (synchronous:
        nothing else runs on the loop meanwhile)."""
        sessions: dict[str, Any] = getattr(self.manager, "_server_instances", {})
        owners: dict[str, Any] = getattr(self.manager, "_session_owners", {})
        while len(sessions) + self._opening > self.cap:
            idle = [(-math.inf if idle_scope.cancel_called else idle_scope.deadline, session_id)
                    for session_id, transport in sessions.items()
                    if (idle_scope := getattr(transport, "idle_scope", None)) is not None
                    and (idle_scope.cancel_called or math.isfinite(idle_scope.deadline))]  # inf: busy
            if not idle:
                return
            _, session_id = min(idle)
            transport = sessions.pop(session_id)  # its id answers 404 from now on
            owners.pop(session_id, None)
            transport.idle_scope.cancel()  # its serving task ends and terminates the transport


class _KeptWarnings(logging.Handler):
    """Keeps the server's warnings instead of printing them: a thread's output would land in whichever
    notebook cell runs at the time."""

    def __init__(self, keep: int = 10) -> None:
        super().__init__(logging.WARNING)
        self.lines: collections.deque[str] = collections.deque(maxlen=keep)

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.lines.append(f"{now_iso('seconds')} {record.name}: {record.getMessage()}"[:300])


_QUIET_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "mcp")


def remove_stale_client_configs(folder: str) -> tuple[str, ...]:
    """Remove the client configuration files in ``folder`` whose kernel is gone; the paths removed.

    A kernel that was killed (SIGKILL, the OOM killer) never ran :meth:`HttpServer.stop`, so its
    file -- a token for a port that is closed, or that another program may have taken since --
    stayed.  A file belongs to the pid in its name; it is stale when that pid no longer runs, or
    runs a process started after the file was written (the pid was reused).
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ()
    for entry in entries:
        match = _CONFIG_FILE.fullmatch(entry.name)
        if match is None or int(match["pid"]) == os.getpid():
            continue
        try:
            written = entry.stat(follow_symlinks=False).st_mtime
            if not running_since(int(match["pid"]), written):
                os.unlink(entry.path)
                removed.append(entry.path)
        except OSError:
            continue  # gone meanwhile, or not ours to remove
    return tuple(removed)


class HttpServer:
    """Streamable-HTTP MCP server on 127.0.0.1, in a thread with its own event loop, behind a bearer token.

    ``port=0`` picks a free port.  The token is new for each server (``secrets.token_urlsafe``);
    a request without it gets 401.  :meth:`stop` closes the port; calls still running go on to
    their own end (their processes belong to the engine, which the owner stops).  A session idle
    for ``idle_timeout`` seconds is closed (``None``: never), and at most ``max_sessions`` are open
    at once (see the module); the shells a session's agent started stay the engine's.
    """

    def __init__(self, toolbox: Toolbox, *, port: int = 0, host: str = "127.0.0.1", token: str | None = None,
                 quiet: bool = True, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.idle_timeout = checks.timeout(idle_timeout, "idle_timeout")
        self.max_sessions = checks.count(max_sessions, "max_sessions", minimum=1)
        _import_sdk()
        self.toolbox = toolbox
        self.host = host
        self.requested_port = port
        self.token = token or secrets.token_urlsafe(32)
        self.log = CallLog()
        self.started_at: str | None = None
        self._quiet = quiet
        self._problems = _KeptWarnings()
        self._saved_loggers: list[tuple[logging.Logger, bool]] = []
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._socket: socket.socket | None = None
        self._failure: BaseException | None = None
        self._sessions: _RoomForOneMore | None = None
        self.port: int | None = None
        #: Where :meth:`write_client_config` put the configuration (removed by :meth:`stop`).
        self.config_path: str | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def client_config(self) -> dict[str, Any]:
        return client_config(self.url, self.token)

    def write_client_config(self, folder: str) -> str:
        """Write :meth:`client_config` (it holds the token) to a file only its owner can read; its path.

        The token stays out of what a notebook shows and saves (a saved notebook travels: a
        colleague on the same machine could reach 127.0.0.1 with it while the kernel runs); the file
        is made with mode 0600 in a folder of mode 0700, as Jupyter keeps a kernel's connection file.
        """
        os.makedirs(folder, mode=0o700, exist_ok=True)
        remove_stale_client_configs(folder)
        path = os.path.join(folder, f"execmagic-mcp-{os.getpid()}-{self.port}.json")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # one left by an earlier server of a kernel that had this pid
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(self.client_config(), fh)
            fh.write("\n")
        self.config_path = path
        return path

    @property
    def open_sessions(self) -> int:
        """MCP sessions open now (0 before the server started)."""
        manager = self._sessions.manager if self._sessions is not None else None
        return len(getattr(manager, "_server_instances", {}))

    def status(self) -> McpStatus:
        return McpStatus(self.running, self.url if self.port else None, self.started_at, str(self.toolbox.guard),
                         self.log.total, self.log.latest(), tuple(self._problems.lines), sandbox_line(self.toolbox))

    def _quiet_loggers(self) -> None:
        if not self._quiet:
            return
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            self._saved_loggers.append((logger, logger.propagate))
            logger.addHandler(self._problems)
            logger.propagate = False

    def _restore_loggers(self) -> None:
        for logger, propagate in self._saved_loggers:
            logger.removeHandler(self._problems)
            logger.propagate = propagate
        self._saved_loggers.clear()

    def start(self) -> None:
        """Bind the port (``OSError`` if taken), start serving, and return once it listens."""
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.host, self.requested_port))
            sock.listen(64)
        except OSError:
            sock.close()
            raise
        sock.set_inheritable(False)  # the shells the agent starts must not hold the port open
        self._socket, self.port = sock, sock.getsockname()[1]
        mcp_server = build_server(self.toolbox, self.log)
        app = mcp_server.streamable_http_app(host=self.host, session_idle_timeout=self.idle_timeout,
                                             max_sessions=self.max_sessions)
        self._sessions = _RoomForOneMore(app, mcp_server.session_manager, self.max_sessions)
        app = _RequireToken(self._sessions, self.token)  # the token first: a stranger closes no session
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", ws="none",
                                timeout_graceful_shutdown=SHUTDOWN_GRACE)
        self._server = uvicorn.Server(config)
        self._quiet_loggers()
        self._thread = threading.Thread(target=self._serve, name="execmagic-mcp-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the MCP server did not start: {self._failure or 'timed out'}")
            self._thread.join(0.01)
        self.started_at = now_iso("seconds")

    def _serve(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as exc:  # kept for status and start(); a thread must not print
            self._failure = exc
            self._problems.lines.append(f"server stopped: {type(exc).__name__}: {exc}")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and close the port (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.close()
        if self.config_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.config_path)  # the token is worthless now; its file goes too
            self.config_path = None
        self._restore_loggers()

