"""The MCP server's tool calls: each run in a thread of its own, and the latest ones remembered.

Apart from the protocol (:mod:`.mcp_server`) because this is what both transports share and what
``%mcp`` shows: a call may take minutes, so it runs in a daemon thread while the event loop goes
on serving polls (at most :data:`MAX_CONCURRENT_CALLS` at once), and its :class:`CallRecord` --
with every secret of the session redacted, since the notebook shows it -- goes to a bounded
:class:`CallLog`.

A call whose client gives up on it (``notifications/cancelled``: a cancel, or the client's own
timeout) -- or whose session or server closes under it -- is never answered, so its command is
stopped, with everything that command started, through the run's :class:`CancelToken`; the
handler waits (at most :data:`CANCEL_WAIT`) until it is, so a slot frees only once its processes
are gone.  Background shells a call started are the engine's, not the call's: they run on.
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
from ..process.pump import CancelToken
from ..process.records import record
from .tools import Toolbox

__all__ = ["CANCEL_WAIT", "MAX_CALLS_KEPT", "MAX_CONCURRENT_CALLS", "CallLog", "CallRecord", "CallRunner"]

#: Calls remembered for ``%mcp`` (the latest ones; the count goes on).
MAX_CALLS_KEPT = 50
#: Tool calls running at once per server; more wait their turn (each may hold a process for minutes).
MAX_CONCURRENT_CALLS = 16
#: Seconds a cancelled call's handler waits for its command to be stopped (SIGINT, SIGTERM, each
#: given the toolbox's grace, then SIGKILL: some seconds); past it the handler lets go, and the
#: call's thread still finishes the stop.
CANCEL_WAIT = 15.0


@record
class CallRecord:
    """One tool call as ``%mcp`` lists it: when, which tool, a short form of its arguments, how it ended."""

    at: str
    tool: str
    summary: str
    success: bool
    outcome: str
    duration_ms: int
    #: The client gave up on the call (or its session closed): it was never answered.
    cancelled: bool = False

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


def _cancelled_outcome(why: str, answer: Mapping[str, Any]) -> str:
    if answer.get("status") == "interrupted":  # the Bash run the token stopped
        return f"{why}: its command was stopped"
    return f"{why} after it was done ({_outcome(answer)})"


class _Cancel:
    """One call's :class:`CancelToken`, closed by the call's thread once it is done: a cancel after
    that does nothing (the token's descriptors may be another file's by then)."""

    def __init__(self) -> None:
        self.token = CancelToken()
        self.why: str | None = None
        self._lock = threading.Lock()
        self._closed = False

    def cancel(self, why: str) -> None:
        with self._lock:
            if not self._closed:
                self.why = why
                self.token.cancel()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self.token.close()


class CallRunner:
    """Runs tool calls in daemon threads, stops those the client gives up on, and keeps the record of each."""

    def __init__(self, toolbox: Toolbox, log: CallLog, *, cancel_wait: float = CANCEL_WAIT,
                 max_calls: int = MAX_CONCURRENT_CALLS) -> None:
        self.toolbox = toolbox
        self.log = log
        self.cancel_wait = cancel_wait
        self.max_calls = max_calls
        #: Set by a server that is stopping: the calls it cancels are its own doing, not the client's.
        self.stopping = False
        self._slots: asyncio.Semaphore | None = None  # made in the server's own loop, at its first call

    def _why(self) -> str:
        """Why a call was cancelled: the SDK cancels a call for the client's ``notifications/cancelled``,
        for its session's end (the client went away) and for the server's."""
        return "cancelled: the server stopped" if self.stopping else "cancelled by the client"

    def _secrets(self) -> dict[str, str]:
        return sanitize_env(self.toolbox.engine.session.environment(), self.toolbox.env_allow)[1]

    def _record(self, name: str, arguments: Any, success: bool, outcome: str, started: float, at: str,
                cancelled: bool = False) -> None:
        summary = _summary(name, arguments)
        if self.toolbox.redact_secrets:  # the record is shown in the notebook: no secret may reach it
            held = self._secrets()
            summary, outcome = redact(summary, held), redact(outcome, held)
        self.log.add(CallRecord(at, name, summary, success, outcome, int((time.monotonic() - started) * 1000),
                                cancelled))

    def run(self, name: str, arguments: dict[str, Any], cancel: _Cancel | None = None) -> dict[str, Any]:
        started, at = time.monotonic(), now_iso("seconds")
        answer = self.toolbox.dispatch(name, arguments, cancel=cancel.token if cancel is not None else None)
        why = cancel.why if cancel is not None else None
        if why is not None:
            self._record(name, arguments, False, _cancelled_outcome(why, answer), started, at, cancelled=True)
        else:
            self._record(name, arguments, bool(answer.get("success")), _outcome(answer), started, at)
        return answer

    async def __call__(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_calls)
        started, at = time.monotonic(), now_iso("seconds")
        try:
            await self._slots.acquire()
        except asyncio.CancelledError:  # given up on while waiting its turn: it never ran
            self._record(name, arguments, False, f"{self._why()} before it started", started, at,
                         cancelled=True)
            raise
        try:
            return await self._in_thread(name, arguments)
        finally:
            self._slots.release()

    async def _in_thread(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        # Not engine.aio.in_thread: the SDK runs handlers under anyio, which cancels a cancelled task again at
        # each await (the wait for the stop is shielded here), and its loop may close under a running call.
        loop = asyncio.get_running_loop()
        done: asyncio.Future[dict[str, Any]] = loop.create_future()
        cancel = _Cancel()

        def settle(answer: dict[str, Any] | None, error: BaseException | None) -> None:
            if done.done():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(answer or {})

        def work() -> None:
            try:
                answer, error = self.run(name, arguments, cancel), None
            except BaseException as exc:  # dispatch never raises; this is a bug, reported to the client
                answer, error = None, exc
            finally:
                cancel.close()
            with contextlib.suppress(RuntimeError):  # the loop closed: the server stopped meanwhile
                loop.call_soon_threadsafe(settle, answer, error)

        threading.Thread(target=work, name=f"execmagic-mcp-{name[:40]}", daemon=True).start()
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:  # nobody will read the answer: stop the command, then let the cancel on
            cancel.cancel(self._why())
            await _stopped(done, self.cancel_wait)
            raise


async def _stopped(done: asyncio.Future[Any], seconds: float) -> None:
    """Wait up to ``seconds`` for a cancelled call's thread, shielded from the cancel being delivered
    (anyio cancels a cancelled scope's task again at each await)."""
    import anyio  # the SDK's own dependency: here only where a server runs

    # the call's own failure is not ours to raise here: it ended, which is all that is awaited
    with anyio.move_on_after(seconds, shield=True), contextlib.suppress(Exception):
        await asyncio.shield(done)
