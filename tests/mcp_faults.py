"""What real clients and installs do to the MCP server.

Giving up on a tool call as an agent's host does, with the official client: the call's task
cancelled (the SDK then sends ``notifications/cancelled``) or the client's own read timeout (which
sends it too); the processes of the given-up command, found from outside.  And an older ``mcp``
SDK, as a neighbour package's pin leaves it: a real distribution in a folder put first on the path.
"""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import Callable

import anyio
import psutil
import pytest
from mcp import MCPError

__all__ = ["HOW", "TREE", "TREE_PROCESSES", "give_up", "old_sdk", "running_under", "until"]

#: The two ways a client gives up on a call.
HOW = ("cancel", "timeout")
#: A command with one child in the background and one in the foreground: both must be stopped.
TREE = "sleep 312 & sleep 313; wait"
TREE_PROCESSES = frozenset({"sleep 312", "sleep 313"})
#: Seconds the client waits for a call before its read timeout gives up on it.
CLIENT_TIMEOUT = 5.0


def running_under(pid: int) -> set[str]:
    """The command lines of ``pid``'s live (not zombie) descendants."""
    found = set()
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if child.status() != psutil.STATUS_ZOMBIE:
                    found.add(" ".join(child.cmdline()))
    return found


async def until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    """Poll ``predicate`` without blocking the client's loop; fail saying ``what`` after ``timeout`` s."""
    with anyio.move_on_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)
        return
    pytest.fail(f"waited {timeout} s for {what}")


async def give_up(session, how: str, command: str, started: Callable[[], bool], tool: str = "Bash",
                  arguments: dict | None = None) -> None:
    """Call ``tool`` (``Bash`` with ``command``, else with ``arguments``) and give up on it (``how``: one of
    :data:`HOW`) once ``started()``.

    ``cancel`` cancels the call's task as soon as its command runs; ``timeout`` lets the client's read
    timeout (:data:`CLIENT_TIMEOUT`) end it, and checks that the command was running by then.
    """
    seen = []
    arguments = {"command": command} if arguments is None else arguments

    async def watch() -> None:
        await until(started, 30, "the call's command to start")
        seen.append(True)

    async with anyio.create_task_group() as group:
        if how == "cancel":
            group.start_soon(session.call_tool, tool, arguments)
            await watch()
            group.cancel_scope.cancel()
        else:
            group.start_soon(watch)
            with pytest.raises(MCPError, match="timed out"):
                await session.call_tool(tool, arguments, read_timeout_seconds=CLIENT_TIMEOUT)
            assert seen, f"the command had not started within the client's timeout ({CLIENT_TIMEOUT} s)"


def old_sdk(folder: pathlib.Path, version: str = "1.30.0", package: bool = True) -> str:
    """Make ``folder`` hold an ``mcp`` distribution of ``version`` (its metadata, and with ``package`` a
    stub package that imports): first on a path, it is the SDK Python finds.  Returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    if package:
        (folder / "mcp").mkdir()
        (folder / "mcp" / "__init__.py").write_text("")
    dist = folder / f"mcp-{version}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: mcp\nVersion: {version}\n")
    return str(folder)
