"""JSON-line plugin tools: any executable becomes a tool through a manifest.

Protocol, one line each way::

    host → plugin stdin:   {"device": "pico0", "pin": 5}\\n      (then stdin is closed)
    plugin → stdout:       {"success": true, "output": "done", "error": null}\\n

The call has a timeout for the result line, reads stderr at the same time as
stdout (a plugin that fills stderr first cannot stall), stops the plugin's whole
process tree, and a non-zero exit overrides a success line.  Once the line has
come, the plugin has :data:`EXIT_GRACE` more seconds to exit; one that hangs past
them is stopped and its line still stands (the answer was given; a lingering
connection or a forgotten child is not the model's problem).  Empty or unparseable output is a
clear error with an excerpt of stderr.  The arguments go to the plugin exactly
as the model sent them: a manifest's defaults are advertised in the schema,
never filled in behind the model's back.

The manifest itself -- its schema, its checks, :func:`load_manifest` -- is :mod:`.manifest`;
its names are imported here too, since a plugin tool is a manifest made callable.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.engine import Engine
from ..process.pump import CancelToken
from ..process.results import Result
from .arguments import object_schema
from .manifest import (
    DEFAULT_PLUGIN_TIMEOUT,
    MANIFEST_SCHEMA,
    MAX_ITEMS_DEPTH,
    MAX_PLUGIN_TIMEOUT,
    NAME_PATTERN,
    PARAMETER_TYPES,
    ManifestError,
    PluginManifest,
    PluginParameter,
    load_manifest,
    parse_manifest,
)
from .tools import ToolSpec

__all__ = [
    "DEFAULT_PLUGIN_TIMEOUT", "EXIT_GRACE", "MANIFEST_SCHEMA", "MAX_ITEMS_DEPTH", "MAX_PLUGIN_TIMEOUT",
    "MAX_RESULT_LINE", "NAME_PATTERN", "PARAMETER_TYPES", "STDERR_EXCERPT", "ManifestError", "PluginManifest",
    "PluginParameter", "PluginTool", "load_manifest", "parse_manifest",
]

#: Seconds a plugin has to exit once its result line has come, on top of the timeout for the line:
#: time to close files and flush, not to keep working.  Past them it is stopped and its line stands.
EXIT_GRACE = 5.0
#: Characters of stderr quoted in an error: enough for a traceback's last lines, small in a model's context.
STDERR_EXCERPT = 512
#: Bytes a result line may have: room for a large answer (a file's contents, a table), and a bound
#: on what one call holds in memory.
MAX_RESULT_LINE = 16 * 1024 * 1024


# -- calling a plugin ----------------------------------------------------------------------------
class _FirstLine:
    """Collects the first line of live stdout, up to :data:`MAX_RESULT_LINE` bytes; the rest is ignored.

    Read from the live text rather than the result's stored text, which keeps only a head and
    a tail of a large output (a long result line would come back cut in the middle).
    """

    def __init__(self, limit: int = MAX_RESULT_LINE, on_line: Callable[[], None] | None = None) -> None:
        self.limit = limit
        self.on_line = on_line
        self.parts: list[str] = []
        self.size = 0
        self.done = False
        self.too_large = False

    def __call__(self, stream: str, text: str) -> None:
        if stream != "stdout" or self.done:
            return
        end = text.find("\n")
        piece = text if end < 0 else text[:end]
        self.size += len(piece.encode("utf-8", "surrogatepass"))
        if self.size > self.limit:
            self.too_large, self.done, self.parts = True, True, []
            return
        self.parts.append(piece)
        self.done = end >= 0
        if self.done and self.on_line is not None:
            self.on_line()

    @property
    def line(self) -> str:
        return "".join(self.parts).strip()


class _CallClock:
    """The two ends of a plugin call: ``timeout`` seconds for the result line, then ``grace`` more
    for the exit.  Either end stops the run through its :class:`CancelToken` (the run then stops the
    plugin's whole tree); :attr:`ended` says which end it was (``None``: the plugin ended first, or
    the caller's ``token`` stopped it -- the caller's to close, so the clock uses it and leaves it open)."""

    def __init__(self, timeout: float, grace: float, token: CancelToken | None = None) -> None:
        self.cancel = token or CancelToken()
        self._owns_token = token is None
        self.grace = grace
        self.ended: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._timer = self._start(timeout, "timeout")

    def _start(self, seconds: float, end: str) -> threading.Timer:
        timer = threading.Timer(seconds, self._end, (end,))
        timer.daemon = True
        timer.start()
        return timer

    def line_came(self) -> None:
        """The result line is in: the timeout for it no longer applies, the grace for the exit does."""
        with self._lock:
            if self.ended is None and not self._closed:
                self._timer.cancel()
                self._timer = self._start(self.grace, "grace")

    def _end(self, end: str) -> None:
        with self._lock:  # never after close: the token's descriptors may be another file's by then
            if self.ended is None and not self._closed:
                self.ended = end
                self.cancel.cancel()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._timer.cancel()
        if self._owns_token:
            self.cancel.close()


def _as_text(value: Any) -> str:
    """A result field as text: a string as it is, anything else as JSON (never a Python repr)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)  # NaN stays "NaN": this is text now, not JSON data
    except (TypeError, ValueError, RecursionError):
        return str(value)


class PluginTool:
    """A manifest made callable: its JSON Schema, and :meth:`call` speaking the one-line protocol."""

    def __init__(self, manifest: PluginManifest, engine: Engine | None = None, grace: float = 2.0,
                 exit_grace: float = EXIT_GRACE) -> None:
        from ..engine.default import default_engine

        self.manifest = manifest
        self.engine = engine or default_engine()
        self.grace = grace
        #: Seconds the plugin has to exit after its result line (:data:`EXIT_GRACE`).
        self.exit_grace = exit_grace

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the arguments, built from the manifest's parameters."""
        properties: dict[str, Any] = {}
        for p in self.manifest.parameters:
            prop: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.items is not None:
                prop["items"] = json.loads(json.dumps(p.items))  # plain dicts, whatever TOML returned
            if p.default is not None:
                prop["default"] = p.default
            properties[p.name] = prop
        return object_schema(properties, [p.name for p in self.manifest.parameters if p.required])

    def spec(self) -> ToolSpec:
        return ToolSpec(self.manifest.name, self.manifest.description, self.schema(), self.call, cancellable=True)

    def _fail(self, what: str, stderr: str = "") -> dict[str, Any]:
        excerpt = stderr.strip()[:STDERR_EXCERPT]
        return {"success": False, "output": "",
                "error": f"plugin '{self.manifest.name}' {what}" + (f"; stderr: {excerpt}" if excerpt else "")}

    def call(self, arguments: Mapping[str, Any], cancel: CancelToken | None = None) -> dict[str, Any]:
        """Send ``arguments`` as one JSON line, as given; return the plugin's ``{success, output, error}`` answer.

        ``cancel`` (from another thread) stops the plugin and its tree: the answer says ``interrupted``."""
        line = json.dumps(dict(arguments), allow_nan=False) + "\n"  # validated: no NaN can be here
        plan = self.engine.plan_argv([self.manifest.binary], input=line, isolated=True)
        clock = _CallClock(self.manifest.timeout, self.exit_grace, cancel)
        first = _FirstLine(on_line=clock.line_came)
        # The run's own timeout is only a backstop: the clock ends the call first, at either end.
        backstop = self.manifest.timeout + self.exit_grace + 1.0
        options = dataclasses.replace(self.engine.options, timeout=backstop, grace=self.grace)
        try:
            result = self.engine.run(plan, options=options, on_output=first, guard="none", cancel=clock.cancel)
        finally:
            clock.close()
        if result.interrupted and cancel is not None and cancel.cancelled and clock.ended is None:  # not the clock's
            return {**self._fail("was cancelled: it was stopped", result.stderr), "status": "interrupted"}
        return self._answer(result, first, clock.ended)

    def _answer(self, result: Result, first: _FirstLine, ended: str | None = None) -> dict[str, Any]:
        """The first problem wins, in this order: could not start, no line, a line that is not a result,
        then the exit code (a non-zero exit overrides a success line).

        ``ended`` is how the call's clock ended it: ``"timeout"`` (no line in time), ``"grace"``
        (the line came, the exit did not), ``None`` (the plugin ended by itself)."""
        if result.error:
            return self._fail(f"could not start: {result.error}")
        stderr = result.stderr_capture.text  # what memory kept (the head and tail), not the whole log read back
        if result.stdout_capture.binary:
            return self._fail("wrote binary output on stdout, not a result line", stderr)
        if first.too_large:
            return self._fail(f"sent a result too large: its line passed {MAX_RESULT_LINE // (1024 * 1024)} MiB",
                              stderr)
        line = first.line
        stopped = result.timed_out or (result.interrupted and ended is not None)
        if not line:
            if stopped:
                return self._fail(f"timed out after {self.manifest.timeout:g}s", stderr)
            return self._fail("wrote nothing on stdout (empty output)", stderr)
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as exc:
            shown = line if len(line) <= 200 else line[:200] + "…"
            return self._fail(f"output is not a result line: {exc} (got: {shown!r})", stderr)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("success"), bool):
            return self._fail(f"output has no boolean 'success' (got: {line[:200]!r})", stderr)
        if result.exit_code != 0 and not stopped:  # its own non-zero exit wins; a stop of ours is no verdict
            return self._fail(f"exited with {result.outcome()}", stderr)
        error = answer.get("error")
        return {"success": answer["success"], "output": _as_text(answer.get("output")),
                "error": None if error is None else _as_text(error)}
