"""``%mcp``: an MCP server inside the running kernel, so an outside agent works in this notebook's session.

The server (:class:`~execmagic.agents.mcp_http.HttpServer`) runs in a thread of the kernel with
its own event loop, over the kernel's own engine: the agent's ``cd`` and ``export`` are the
notebook's, and its background shells are the ones ``%bg`` lists, ``%bgout`` reads and ``%kill``
stops.  It listens on 127.0.0.1 only and every request needs a bearer token made for this server
alone.  It stops with ``%mcp stop``, ``%unload_ext execmagic`` and the kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.display import display

from ..engine.sandbox_modes import SANDBOX_MODES, describe_modes
from ..process import checks
from .exec_magics import ExecMagics, engine_errors
from .helpfmt import argument, fixed_width_help, kwds, magic_arguments
from .options import parse_line

if TYPE_CHECKING:  # the server and the tools are imported when a server is asked for, not at %load_ext
    from ..agents.mcp_http import HttpServer
    from ..agents.tools import Toolbox

__all__ = ["McpMagics"]


@magics_class
class McpMagics(Magics):
    """Serve the agent tools over MCP from this kernel; show and stop that server."""

    def __init__(self, shell: Any, exec_magics: ExecMagics) -> None:
        super().__init__(shell=shell)
        self.exec_magics = exec_magics
        self.server: HttpServer | None = None

    @no_var_expand
    @magic_arguments(name="mcp")
    @kwds(formatter_class=fixed_width_help)
    @argument("action", nargs="?", choices=("serve", "stop", "status"), default="status",
              help="serve: start the server; stop: end it; status (the default): where it listens, its latest calls")
    @argument("--port", type=int, metavar="N", help="with serve: listen on port N (default: a free port)")
    @argument("--idle-timeout", type=float, metavar="S",
              help="with serve: close a session idle for S seconds (default: ExecMagics.mcp_idle_timeout, 600)")
    @argument("--max-sessions", type=int, metavar="N",
              help="with serve: N sessions at most; one more closes the one idle longest"
                   " (default: ExecMagics.mcp_max_sessions, 100)")
    @argument("--sandbox", choices=SANDBOX_MODES, metavar="MODE",
              help="with serve: confine the agent's commands (bubblewrap): "
                   + describe_modes("the notebook's folder, or ExecMagics.allowed_dirs", default="auto"))
    @argument("--network", action="store_true", help="with serve --sandbox: let the agent's commands reach the network")
    @line_magic("mcp")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def mcp(self, line: str) -> None:
        """Let an outside agent (any MCP client) work in this notebook's session, while you watch.

        ``%mcp serve`` starts a Model Context Protocol server in this kernel (streamable HTTP)
        offering Bash, BashOutput, KillShell and ListShells beside the notebook: its background
        shells are listed by %bg, read with %bgout and stopped with %kill. It prints the URL and
        the path of a file holding the client configuration with the bearer token (mode 0600: the token stays out of the
        notebook, which may be shared). The server listens on 127.0.0.1 only, and every request
        needs that token (new for each server); without it the answer is 401. Dangerous
        commands are refused (guard "all"), secrets held back and redacted, as for Toolbox.

        By default (--sandbox auto) the agent's commands run in operating-system walls
        (bubblewrap), as with --sandbox workspace: only the notebook's folder (or
        ExecMagics.allowed_dirs) and a private /tmp are writable, the home folder's credentials
        are hidden, other processes are invisible, and there is no network unless --network. Its
        cd and export stay its own: they start from the notebook's session and never change it.
        Where bubblewrap cannot run, auto runs the agent unsandboxed, every answer saying why.
        With off the agent shares the notebook's session and runs as you (guardrails only); every
        mode is listed under --sandbox below. A named mode that cannot work here is an error:
        nothing starts.

        A session idle for 10 minutes is closed (--idle-timeout), and at most 100 are open at
        once (--max-sessions): one more closes the one idle longest, so clients that come and go
        cannot fill the kernel's memory. Closing a session leaves the agent's background shells
        running: they are the notebook's.

        ``%mcp`` shows the server's state, the sandbox its agent runs in and its latest calls;
        a call the client cancelled or gave up on at its timeout is stopped with all its command
        started (not the background shells it started) and shows as cancelled (⊘). ``%mcp stop``
        ends the server and the calls in flight (so do %unload_ext and the kernel's end). Needs the
        MCP SDK: pip install 'mcp>=2.3' (the extra execmagic[mcp]).

        Examples::

            %mcp serve
            %mcp serve --port 8765
            %mcp serve --idle-timeout 120 --max-sessions 10
            %mcp serve --sandbox off
            %mcp
            %mcp stop
        """
        args, _ = parse_line(line, self.mcp.parser)
        for option, value in (("--port", args.port), ("--idle-timeout", args.idle_timeout),
                              ("--max-sessions", args.max_sessions)):
            if value is not None and args.action != "serve":
                raise UsageError(f"{option} goes with serve: %mcp serve {option} {value:g}")
        for option, given in (("--sandbox", args.sandbox), ("--network", args.network)):
            if given and args.action != "serve":
                raise UsageError(f"{option} goes with serve: %mcp serve {option}{'' if given is True else f' {given}'}")
        if args.network and args.sandbox == "off":
            raise UsageError("--network goes with a sandbox (without one the agent has the network already):"
                             " %mcp serve --sandbox workspace --network")
        if args.action == "serve":
            self._serve(args.port, args.idle_timeout, args.max_sessions, args.sandbox or "auto", args.network)
        elif args.action == "stop":
            print(self.stop() or "no MCP server is running")
        else:
            from ..agents.mcp_server import McpStatus

            display(self.server.status() if self.server is not None else McpStatus(running=False))

    def _serve(self, port: int | None, idle_timeout: float | None, max_sessions: int | None, sandbox: str,
               network: bool) -> None:
        if self.server is not None and self.server.running:
            raise UsageError(f"an MCP server is running already at {self.server.url}; %mcp stop ends it")
        if port is not None and not 0 <= port <= 65535:
            raise UsageError(f"--port must be between 1 and 65535 (or 0: a free one), not {port}")
        from jupyter_core.paths import jupyter_runtime_dir

        from ..agents.mcp_http import HttpServer
        from ..agents.mcp_server import McpTooOld, McpUnavailable, require_sdk

        try:  # first: an SDK that is missing or too old is one line, before anything is set up
            require_sdk()
        except McpTooOld as exc:  # the old one is imported in this kernel by now: an install needs a restart
            raise UsageError(f"{exc}; then restart the kernel") from None
        except McpUnavailable as exc:
            raise UsageError(str(exc)) from None

        with engine_errors():  # checked before anything starts: a bad value is one line
            idle_timeout = checks.timeout(self.exec_magics.mcp_idle_timeout if idle_timeout is None else idle_timeout,
                                          "--idle-timeout")
            max_sessions = checks.count(self.exec_magics.mcp_max_sessions if max_sessions is None else max_sessions,
                                        "--max-sessions", minimum=1)
        toolbox = self._toolbox(sandbox, network)
        try:
            server = HttpServer(toolbox, port=port or 0, idle_timeout=idle_timeout, max_sessions=max_sessions)
            server.start()
        except McpUnavailable as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        try:
            path = server.write_client_config(jupyter_runtime_dir())
        except OSError as exc:
            server.stop()
            raise UsageError(f"cannot write the client configuration: {exc.strerror or exc}"
                             f" ({getattr(exc, 'filename', None) or jupyter_runtime_dir()})") from None
        self.server = server
        _announce(server, path, toolbox)

    def _toolbox(self, sandbox: str, network: bool) -> Toolbox:
        """The agent's tools over this notebook's engine, with its background settings as they are now; a
        sandbox that cannot work here is one line, and nothing starts."""
        from ..agents.mcp_server import sandbox_trouble
        from ..agents.tools import Toolbox
        from ..process.sandbox import SandboxProblem, SandboxUnavailable

        self.exec_magics.sync_background_settings()
        try:
            return Toolbox(self.exec_magics.engine, guard="all", grace=self.exec_magics.kill_grace, sandbox=sandbox,
                           network=network, readable=self.exec_magics.sandbox_readable)
        except (SandboxProblem, SandboxUnavailable) as exc:
            raise UsageError(sandbox_trouble(sandbox, exc, auto="%mcp serve --sandbox auto",
                                             root_fix="start the notebook in the project folder or set"
                                                      " ExecMagics.allowed_dirs")) from None

    def stop(self) -> str | None:
        """Stop the server if one runs; what happened, in one line (``None``: there was none)."""
        server, self.server = self.server, None
        if server is None:
            return None
        server.stop()
        calls = server.log.total
        return f"MCP server at {server.url} stopped after {calls} call{'s' if calls != 1 else ''}; the port is closed"


def _announce(server: HttpServer, path: str, toolbox: Toolbox) -> None:
    """The started server's lines: where it listens, where its client's config (and token) is, the agent's
    sandbox, and whose session the agent works in."""
    from ..agents.mcp_server import SERVER_NAME, sandbox_line

    session = ("The agent works in this notebook's session" if toolbox.sandbox.sandbox is None else
               "The agent works in a session of its own, started from this notebook's (its cd and export stay"
               " out of it)")
    print(f"MCP server listening at {server.url} (127.0.0.1 only; every request needs its bearer token, in the"
          f" file below under mcpServers.{SERVER_NAME}.headers.Authorization)\n"
          f"client config, token included (readable by you only, kept out of this notebook): {path}\n"
          f"agent: {sandbox_line(toolbox)}\n"
          f"{session}: %bg lists its shells, %mcp its calls; %mcp stop ends the server.")
