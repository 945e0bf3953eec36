"""The MCP server over stdio: the ``execmagic-mcp`` command, which any MCP client starts as a subprocess.

Apart from the HTTP server (:mod:`.mcp_http`) because it owns its whole process: it ends on the
client's EOF or a signal, and it ends the process with it, where the HTTP server lives in a thread
of a kernel that goes on with other work.
"""

from __future__ import annotations

import contextlib
import os

from .mcp_calls import CallLog
from .mcp_server import build_server
from .tools import Toolbox

__all__ = ["serve_stdio"]


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
