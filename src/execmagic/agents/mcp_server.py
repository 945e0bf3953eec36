"""The agent tools as a Model Context Protocol server: over stdio, or over HTTP inside a running kernel.

Built on the official ``mcp`` SDK's low-level :class:`mcp.server.lowlevel.Server`, which lists
tools exactly as given: the JSON Schemas come from :meth:`Toolbox.schemas` (``"mcp"``), the one
source every client format is made from, and are never re-derived from Python signatures.

A call runs :meth:`Toolbox.dispatch` in a daemon thread (a ``Bash`` call may take minutes; the
event loop goes on serving ``BashOutput`` polls and other clients meanwhile, and a call still
running never holds up the process's exit -- the watchdog stops what it started).  A call the
client cancels (``notifications/cancelled``, which the SDK's client also sends at its own timeout)
is stopped with everything its command started (:mod:`.mcp_calls`).  The answer is
one text content block holding :func:`~execmagic.agents.answers.answer_text` -- the same JSON a
model reads from the Anthropic and OpenAI answers -- plus the same dict as structured content;
``isError`` is set when ``success`` is false.

Two ways to serve:

- :func:`~.mcp_stdio.serve_stdio`: the ``execmagic-mcp`` command; any MCP client starts it as a subprocess.
- :class:`~.mcp_http.HttpServer`: streamable HTTP on 127.0.0.1 in a thread with its own event loop,
  every request needing a random bearer token; ``%mcp serve`` runs it in the kernel, over the
  kernel's own engine, so an outside agent works in the notebook's session.

This module is what both share: the protocol (:func:`build_server`), the SDK check, the
status ``%mcp`` shows and the sandbox lines; the calls and their log are :mod:`.mcp_calls`, each
transport its own module, so each can be read without the others.

Inside a kernel every MCP session costs the kernel memory for as long as it lives (some 35 kB
each), and a client that opens a session per request would otherwise keep thousands for the SDK's
half hour.  So a session idle for :data:`DEFAULT_IDLE_TIMEOUT` is closed, and at most
:data:`DEFAULT_MAX_SESSIONS` live at once: one more closes the session idle longest first.  A
session is only a conversation: the background shells an agent started belong to the engine --
the notebook's -- and closing the session leaves them running.

The SDK is an optional extra (``execmagic[mcp]``, i.e. ``pip install 'mcp>=2.3'``); this module imports it only when
a server is built, and says how to install it when it is missing (:class:`McpUnavailable`) or
older than the server needs (:class:`McpTooOld`: another package may pin it lower, and ``pip check``
is silent; an old SDK would fail with a ``TypeError`` deep in :func:`build_server`).
"""

from __future__ import annotations

import re
from typing import Any

from ..process.errors import UsageProblem
from ..process.records import record
from ..process.sandbox import SandboxProblem, SandboxUnavailable, UnsafeRoot
from .answers import answer_text
from .mcp_calls import MAX_CALLS_KEPT, MAX_CONCURRENT_CALLS, CallLog, CallRecord, CallRunner
from .tools import Toolbox

__all__ = [
    "INSTALL_HINT", "MAX_CALLS_KEPT", "MAX_CONCURRENT_CALLS", "MIN_SDK", "SERVER_NAME", "CallLog", "CallRecord",
    "McpStatus", "McpTooOld", "McpUnavailable", "build_server", "require_sdk", "sandbox_line", "sandbox_trouble",
    "sdk_version",
]

SERVER_NAME = "execmagic"
#: The oldest ``mcp`` SDK the server is written for (pyproject's ``mcp>=``): the low-level server's
#: handler keywords and the streamable-HTTP options came with 2.x, and an older one fails with a
#: ``TypeError`` deep in :func:`build_server`.
MIN_SDK = (2, 3)
_MIN_SDK_TEXT = ".".join(map(str, MIN_SDK))
INSTALL_HINT = f"pip install 'mcp>={_MIN_SDK_TEXT}' (what the optional extra execmagic[mcp] adds)"


class McpUnavailable(UsageProblem):
    """The ``mcp`` SDK is not installed: one line saying how to get it."""

    def __init__(self, missing: str, why: str | None = None) -> None:
        self.missing = missing
        super().__init__(why or f"the MCP server needs the 'mcp' package ({missing} is missing): {INSTALL_HINT}")


class McpTooOld(McpUnavailable):
    """The ``mcp`` SDK is older than :data:`MIN_SDK` (another package may have pinned it lower, and
    ``pip check`` says nothing of it): one line saying which is installed and what to install."""

    def __init__(self, installed: str) -> None:
        self.installed = installed
        self.needed = _MIN_SDK_TEXT
        super().__init__("mcp", f"the MCP server needs mcp>={_MIN_SDK_TEXT}, and mcp {installed} is installed"
                                f" (another package may have pinned it lower): {INSTALL_HINT}")


def sdk_version() -> str | None:
    """The installed ``mcp`` SDK's version, from the metadata of the first distribution on ``sys.path``
    (where ``import mcp`` finds the package too); ``None`` if it has no metadata (a vendored copy)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, ...]:
    """The leading release numbers of a version (``2.3.0rc1`` → ``(2, 3, 0)``): enough to compare with
    :data:`MIN_SDK` without a dependency on ``packaging``."""
    found = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(part) for part in found.group().split(".")) if found else ()


def require_sdk() -> None:
    """Fail with :class:`McpUnavailable` (not an ``ImportError`` or ``TypeError`` traceback) when the
    extra is missing, or with :class:`McpTooOld` when its SDK is older than :data:`MIN_SDK`."""
    for name in ("mcp", "uvicorn", "starlette"):
        try:
            __import__(name)
        except ImportError:
            raise McpUnavailable(name) from None
    installed = sdk_version()
    release = _release(installed) if installed is not None else ()
    if release and release < MIN_SDK:  # a version we cannot read: let it try
        raise McpTooOld(str(installed))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("execmagic")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "0"


def build_server(toolbox: Toolbox, log: CallLog | None = None, calls: CallRunner | None = None) -> Any:
    """An :class:`mcp.server.lowlevel.Server` offering ``toolbox``'s tools (built-in and plugins), its calls
    run by ``calls`` (a server that stops tells it first, so its cancelled calls say why)."""
    require_sdk()
    from mcp import types
    from mcp.server.lowlevel import Server

    calls = calls or CallRunner(toolbox, log if log is not None else CallLog())

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


@record
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
        return "; ".join((choice.sandbox.describe(), choice.sandbox.visibility, *choice.notes))
    if choice.notes:  # "auto" where the sandbox cannot work: the note says why
        return "; ".join(choice.notes)
    return "unsandboxed: the sandbox is off (the agent runs as you)"
