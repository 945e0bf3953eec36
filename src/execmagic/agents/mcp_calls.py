"""The MCP server's tool calls: each run in a thread of its own, and the latest ones remembered.

Apart from the protocol (:mod:`.mcp_server`) because this is what both transports share and what
``%mcp`` shows: a call may take minutes, so it runs in a daemon thread while the event loop goes
on serving polls (at most :data:`MAX_CONCURRENT_CALLS` at once), and its :class:`CallRecord` --
with every secret of the session redacted, since the notebook shows it -- goes to a bounded
:class:`CallLog`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from ..guard.secrets import redact, sanitize_env
from ..process.clock import now_iso
from .tools import Toolbox

__all__ = ["MAX_CALLS_KEPT", "MAX_CONCURRENT_CALLS", "CallLog", "CallRecord", "CallRunner"]

#: Calls remembered for ``%mcp`` (the latest ones; the count goes on).
MAX_CALLS_KEPT = 50
#: Tool calls running at once per server; more wait their turn (each may hold a process for minutes).
MAX_CONCURRENT_CALLS = 16


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


class CallRunner:
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
