"""The MCP server over streamable HTTP, in a thread of a process that goes on with other work (a kernel).

Apart from the protocol (:mod:`.mcp_server`) and the stdio command (:mod:`.mcp_stdio`) because
everything here exists only for a server that shares its process and listens on a port: a random
bearer token every request must carry (:class:`_RequireToken`), a cap on live sessions and an idle
timeout (each session costs the kernel memory), the client configuration files written for agents
and removed once their kernel is gone, and the SDK's loggers kept quiet so they do not print into
the notebook.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
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
from typing import Any

from ..process import checks
from ..process.clock import now_iso
from ..process.retention import running_since
from .mcp_calls import CallLog, CallRunner
from .mcp_server import SERVER_NAME, McpStatus, build_server, require_sdk, sandbox_line
from .tools import Toolbox

__all__ = [
    "DEFAULT_IDLE_TIMEOUT", "DEFAULT_MAX_SESSIONS", "SHUTDOWN_GRACE", "STARTUP_TIMEOUT", "HttpServer", "client_config",
    "remove_stale_client_configs", "unauthorized",
]

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


def client_config(url: str, token: str, name: str = SERVER_NAME) -> dict[str, Any]:
    """What an MCP client's configuration takes (``mcpServers``, as Claude Code's ``.mcp.json`` and others)."""
    return {"mcpServers": {name: {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}}}


def unauthorized(config_path: str | None) -> str:
    """What a request without the token is told: where the token is (a client configured by hand
    often has the URL right and the header missing).  The file is readable by its owner only."""
    where = f"the file {config_path}" if config_path else "the client configuration file %mcp serve printed"
    return (f"unauthorized: send the header 'Authorization: Bearer <token>'; the token is in {where}, under"
            f" mcpServers.{SERVER_NAME}.headers.Authorization (or use that file as the client's MCP configuration)")


class _RequireToken:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode()
        #: The client configuration file holding the token, once written: the 401 names it.
        self.config_path: str | None = None

    def _allowed(self, headers: list[tuple[bytes, bytes]]) -> bool:
        for key, value in headers:
            if key.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._allowed(scope.get("headers", [])):
            body = json.dumps({"error": unauthorized(self.config_path)}).encode()
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
    a request without it gets 401 that says where the token is.  :meth:`stop` closes the port and
    stops the calls still running (nobody is left to read their answers; their record says so); the
    background shells they started are the engine's, which the owner stops.  A session idle
    for ``idle_timeout`` seconds is closed (``None``: never), and at most ``max_sessions`` are open
    at once (see the module); the shells a session's agent started stay the engine's.
    """

    def __init__(self, toolbox: Toolbox, *, port: int = 0, host: str = "127.0.0.1", token: str | None = None,
                 quiet: bool = True, idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
                 max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.idle_timeout = checks.timeout(idle_timeout, "idle_timeout")
        self.max_sessions = checks.count(max_sessions, "max_sessions", minimum=1)
        require_sdk()
        self.toolbox = toolbox
        self.host = host
        self.requested_port = port
        self.token = token or secrets.token_urlsafe(32)
        self.log = CallLog()
        self.calls = CallRunner(toolbox, self.log)
        self.started_at: str | None = None
        self._quiet = quiet
        self._problems = _KeptWarnings()
        self._saved_loggers: list[tuple[logging.Logger, bool]] = []
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self._socket: socket.socket | None = None
        self._failure: BaseException | None = None
        self._sessions: _RoomForOneMore | None = None
        self._door: _RequireToken | None = None
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
        if self._door is not None:
            self._door.config_path = path
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
        mcp_server = build_server(self.toolbox, self.log, self.calls)
        app = mcp_server.streamable_http_app(host=self.host, session_idle_timeout=self.idle_timeout,
                                             max_sessions=self.max_sessions)
        self._sessions = _RoomForOneMore(app, mcp_server.session_manager, self.max_sessions)
        app = self._door = _RequireToken(self._sessions, self.token)  # the token first: a stranger closes no session
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
        self.calls.stopping = True  # the calls cancelled from here on are the server's doing
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
            if self._door is not None:
                self._door.config_path = None
        self._restore_loggers()
