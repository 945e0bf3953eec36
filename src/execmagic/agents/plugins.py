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

A manifest is TOML or JSON, checked against :data:`MANIFEST_SCHEMA`::

    [tool]
    name = "gpio_write"          # ^[a-zA-Z0-9_-]{1,64}$, as function-calling APIs require
    version = "1.0.0"
    description = "Set a GPIO pin"

    [exec]
    binary = "gpio_write.py"     # inside the manifest's folder, or an absolute path
    timeout = 10                 # seconds (the default)

    [[parameters]]
    name = "pin"
    type = "integer"             # string, integer, number, boolean, object or array (with items)
    description = "Pin number"
    required = true

Every problem with a manifest is one :class:`ManifestError` naming the file and
the field.  A relative binary must stay inside the manifest's folder once
symlinks are resolved: a manifest found in a plugin folder cannot quietly run
``../../bin/sh``; to run a program elsewhere, the manifest says so with an
absolute path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..engine.engine import Engine
from ..process.errors import UsageProblem
from ..process.pump import CancelToken
from ..process.results import Result
from .arguments import object_schema
from .schemas import NAME_PATTERN
from .tools import ToolSpec

__all__ = [
    "DEFAULT_PLUGIN_TIMEOUT", "EXIT_GRACE", "MANIFEST_SCHEMA", "MAX_ITEMS_DEPTH", "MAX_PLUGIN_TIMEOUT",
    "MAX_RESULT_LINE", "NAME_PATTERN", "PARAMETER_TYPES", "STDERR_EXCERPT", "ManifestError", "PluginManifest",
    "PluginParameter", "PluginTool", "load_manifest", "parse_manifest",
]

#: Seconds a plugin call may take when its manifest names no timeout: a tool call is a quick action
#: (set a pin, read a sensor); a longer one says so in its manifest.
DEFAULT_PLUGIN_TIMEOUT = 10.0
#: Seconds a plugin has to exit once its result line has come, on top of the timeout for the line:
#: time to close files and flush, not to keep working.  Past them it is stopped and its line stands.
EXIT_GRACE = 5.0
#: Seconds a manifest may give a call at most: an hour is longer than any tool call a model waits for,
#: and a bound keeps absurd values (``1e10``) from reaching the clock as errors at call time.
MAX_PLUGIN_TIMEOUT = 3600.0
#: How deep ``items`` may nest (an array of arrays of …): function-calling APIs limit nesting, and a
#: manifest nested hundreds deep would break every tool's catalogue, not only its own.
MAX_ITEMS_DEPTH = 5
#: Characters of stderr quoted in an error: enough for a traceback's last lines, small in a model's context.
STDERR_EXCERPT = 512
#: Bytes a result line may have: room for a large answer (a file's contents, a table), and a bound
#: on what one call holds in memory.
MAX_RESULT_LINE = 16 * 1024 * 1024
PARAMETER_TYPES = ("string", "integer", "number", "boolean", "object", "array")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # only where 3.11's tomllib is missing

_ITEMS_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["type"], "additionalProperties": False,
    "properties": {"type": {"type": "string", "enum": PARAMETER_TYPES}, "description": {"type": "string"},
                   "items": {"type": "object"}},
}
#: What a manifest may hold, as a JSON Schema (the subset :func:`_first_problem` checks).  Two rules
#: need code: an ``array`` parameter (or item) needs ``items``, and a default has the parameter's type.
MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["tool", "exec"], "additionalProperties": False,
    "properties": {
        "tool": {"type": "object", "required": ["name"], "additionalProperties": False, "properties": {
            "name": {"type": "string", "pattern": NAME_PATTERN},
            "version": {"type": "string"},
            "description": {"type": "string"},
        }},
        "exec": {"type": "object", "required": ["binary"], "additionalProperties": False, "properties": {
            "binary": {"type": "string", "minLength": 1},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_PLUGIN_TIMEOUT},
        }},
        "parameters": {"type": "array", "items": {
            "type": "object", "required": ["name", "type"], "additionalProperties": False, "properties": {
                "name": {"type": "string", "pattern": NAME_PATTERN},
                "type": {"type": "string", "enum": PARAMETER_TYPES},
                "description": {"type": "string"},
                "required": {"type": "boolean"},
                "default": {},
                "items": _ITEMS_SCHEMA,
            }}},
    },
}


class ManifestError(UsageProblem):
    """A plugin manifest that cannot become a tool: which file, which field (``None``: the file), and why."""

    def __init__(self, path: str, field: str | None, reason: str) -> None:
        self.path = path
        self.field = field
        self.reason = " ".join(reason.split())  # one line, whatever a parser's message held
        where = f"plugin manifest {path}" + (f": {field}" if field else "")
        super().__init__(f"{where}: {self.reason}")


@dataclasses.dataclass(frozen=True)
class PluginParameter:
    name: str
    type: str
    description: str = ""
    required: bool = False
    default: Any = None
    #: The JSON Schema of an ``array`` parameter's elements (``{"type": "string"}``).
    items: Mapping[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class PluginManifest:
    name: str
    version: str
    description: str
    binary: str
    parameters: tuple[PluginParameter, ...] = ()
    timeout: float = DEFAULT_PLUGIN_TIMEOUT


# -- checking a manifest -------------------------------------------------------------------------
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict, Mapping), "array": (list,),
}
_TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
               "object": "a table", "array": "a list"}


def _has_type(value: Any, kind: str) -> bool:
    """JSON Schema's types over TOML/JSON values: a boolean is not a number, NaN and infinity are not numbers."""
    if isinstance(value, bool) and kind != "boolean":
        return False
    if kind == "number" and isinstance(value, float) and not math.isfinite(value):
        return False
    return isinstance(value, _PYTHON_TYPES[kind])


def _described(value: Any) -> str:
    """A value as a manifest's author wrote it, short: ``the string 'no'``, ``the integer 5``, ``a list``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        text = repr(value) if len(value) <= 40 else repr(value[:40]) + "…"
        return f"the string {text}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


def _type_problem(value: Any, kind: str) -> str | None:
    return None if _has_type(value, kind) else f"must be {_TYPE_WORDS[kind]}, not {_described(value)}"


def _value_problem(schema: Mapping[str, Any], value: Any) -> str | None:
    """What is wrong with a scalar against its schema's ``type``, ``enum``, ``pattern``, bounds."""
    if "type" in schema and (problem := _type_problem(value, schema["type"])):
        return problem
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(schema['enum'])}, not {_described(value)}"
    if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
        return f"must match ^{schema['pattern']}$ (letters, digits, '_' or '-', at most 64), not {_described(value)}"
    if "minLength" in schema and len(value) < schema["minLength"]:
        return "must not be empty"
    if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
        return f"must be more than {schema['exclusiveMinimum']}, not {_described(value)}"
    if "maximum" in schema and not value <= schema["maximum"]:
        return f"must be at most {schema['maximum']:g}, not {_described(value)}"
    return None


def _first_problem(schema: Mapping[str, Any], value: Any, field: str) -> tuple[str, str] | None:
    """The first place where ``value`` breaks ``schema``, as ``(field, reason)``; ``None`` if it fits."""
    problem = _value_problem(schema, value)
    if problem:
        return field or "(top level)", problem
    prefix = f"{field}." if field else ""
    if "properties" in schema:
        for key in value:
            if key not in schema["properties"] and schema.get("additionalProperties", True) is False:
                known = ", ".join(schema["properties"])
                return f"{prefix}{key}", f"is not a field here (known: {known})"
        for key in schema.get("required", []):
            if key not in value:
                return f"{prefix}{key}", "is missing"
        for key, sub in schema["properties"].items():
            if key in value and (found := _first_problem(sub, value[key], f"{prefix}{key}")):
                return found
    if "items" in schema and isinstance(value, list):
        for i, item in enumerate(value):
            if found := _first_problem(schema["items"], item, f"{field}[{i}]"):
                return found
    return None


def _items_problem(declared: Mapping[str, Any], field: str, depth: int = 0) -> tuple[str, str] | None:
    """An array needs ``items`` (strict function-calling schemas refuse an array without them), and
    only an array may have them; nesting stops at :data:`MAX_ITEMS_DEPTH`."""
    items = declared.get("items")
    if declared.get("type") != "array":
        if items is not None:
            return f"{field}.items", f"is only for an array, and this is a {declared.get('type')}"
        return None
    if items is None:
        return (f"{field}.items",
                'is missing: an array parameter says what its elements are, e.g. items = { type = "string" }')
    if depth >= MAX_ITEMS_DEPTH:
        return f"{field}.items", f"nests arrays more than {MAX_ITEMS_DEPTH} deep"
    return _first_problem(_ITEMS_SCHEMA, items, f"{field}.items") or _items_problem(items, f"{field}.items",
                                                                                     depth + 1)


def _parameter_problem(raw: Mapping[str, Any], field: str, seen: dict[str, str]) -> tuple[str, str] | None:
    """What the schema cannot say about one parameter: items, its default's type, a repeated name."""
    if found := _items_problem(raw, field):
        return found
    if "default" in raw and (problem := _default_problem(raw, raw["default"])):
        return f"{field}.default", problem
    if raw["name"] in seen:
        return f"{field}.name", f"{raw['name']!r} is already the name of {seen[raw['name']]}"
    seen[raw["name"]] = field
    return None


def _default_problem(declared: Mapping[str, Any], value: Any) -> str | None:
    """A default is shown to the model in the schema: it must be JSON (no dates, no NaN) of the
    parameter's type, its elements of the items' type."""
    if problem := _type_problem(value, declared["type"]):
        return f"{problem} (the parameter's type is {declared['type']})"
    if isinstance(value, (list, Mapping)):
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            return "must hold only JSON values (strings, finite numbers, booleans, lists, tables; no dates)"
    if isinstance(value, list) and isinstance(declared.get("items"), Mapping):
        for i, item in enumerate(value):
            if problem := _default_problem(declared["items"], item):
                return f"[{i}] {problem}"
    return None


def _resolve_binary(binary: str, base_dir: str) -> tuple[str | None, str]:
    """The program to run, or ``(None, why not)``: a relative binary must stay in the manifest's folder."""
    if "\0" in binary:
        return None, "must not contain a NUL character"
    if os.path.isabs(binary):
        candidate = binary
    else:
        folder = os.path.realpath(base_dir)
        candidate = os.path.realpath(os.path.join(folder, binary))
        if os.path.commonpath([folder, candidate]) != folder:
            return None, (f"binary {binary!r} resolves to {candidate}, outside the manifest's folder {folder};"
                          " give an absolute path to run a program from elsewhere")
        if not os.path.exists(candidate):
            return None, (f"binary {binary!r} not found in {folder} (a relative binary is looked up next to the"
                          " manifest, not on PATH; give an absolute path for a program elsewhere)")
    if not os.path.exists(candidate):
        return None, f"binary {binary!r} not found"
    if not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
        return None, f"binary {binary!r} is not an executable file"
    return candidate, ""


def parse_manifest(data: Any, base_dir: str = ".", path: str | None = None) -> PluginManifest:
    """Check a manifest against :data:`MANIFEST_SCHEMA` and resolve its binary.

    Every problem raises one :class:`ManifestError` naming ``path`` (the manifest
    file; ``<manifest>`` when the data came from elsewhere) and the field.
    """
    where = path or "<manifest>"
    if not isinstance(data, Mapping):
        raise ManifestError(where, None,
                            f"must be a table of [tool], [exec] and [[parameters]], not {_described(data)}")
    found = _first_problem(MANIFEST_SCHEMA, data, "")
    seen: dict[str, str] = {}
    for i, raw in enumerate(data.get("parameters", []) if found is None else []):
        found = found or _parameter_problem(raw, f"parameters[{i}]", seen)
    if found:
        raise ManifestError(where, *found)
    tool, exec_table = data["tool"], data["exec"]
    binary, why = _resolve_binary(exec_table["binary"], base_dir)
    if binary is None:
        raise ManifestError(where, "exec.binary", why)
    params = tuple(
        PluginParameter(raw["name"], raw["type"], raw.get("description", ""), raw.get("required", False),
                        raw.get("default"), raw.get("items"))
        for raw in data.get("parameters", [])
    )
    return PluginManifest(tool["name"], tool.get("version", "0"), tool.get("description", ""), binary, params,
                          float(exec_table.get("timeout", DEFAULT_PLUGIN_TIMEOUT)))


def load_manifest(path: str | os.PathLike[str]) -> PluginManifest:
    """Read a ``.toml`` (else JSON) manifest file; any problem is one :class:`ManifestError` line."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh) if path.endswith(".toml") else json.load(fh)
    except FileNotFoundError:
        raise ManifestError(path, None, "does not exist") from None
    except IsADirectoryError:
        raise ManifestError(path, None, "is a directory, not a manifest file") from None
    except OSError as exc:
        raise ManifestError(path, None, f"cannot be read: {os.strerror(exc.errno) if exc.errno else exc}") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        kind = "TOML" if path.endswith(".toml") else "JSON"
        raise ManifestError(path, None, f"cannot be parsed as {kind}: {exc}") from None
    return parse_manifest(data, os.path.dirname(os.path.abspath(path)), path)


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
    plugin's whole tree); :attr:`ended` says which end it was (``None``: the plugin ended first)."""

    def __init__(self, timeout: float, grace: float) -> None:
        self.cancel = CancelToken()
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
        return ToolSpec(self.manifest.name, self.manifest.description, self.schema(), self.call)

    def _fail(self, what: str, stderr: str = "") -> dict[str, Any]:
        excerpt = stderr.strip()[:STDERR_EXCERPT]
        return {"success": False, "output": "",
                "error": f"plugin '{self.manifest.name}' {what}" + (f"; stderr: {excerpt}" if excerpt else "")}

    def call(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Send ``arguments`` as one JSON line, as given; return the plugin's ``{success, output, error}`` answer."""
        line = json.dumps(dict(arguments), allow_nan=False) + "\n"  # validated: no NaN can be here
        plan = self.engine.plan_argv([self.manifest.binary], input=line, isolated=True)
        clock = _CallClock(self.manifest.timeout, self.exit_grace)
        first = _FirstLine(on_line=clock.line_came)
        # The run's own timeout is only a backstop: the clock ends the call first, at either end.
        backstop = self.manifest.timeout + self.exit_grace + 1.0
        options = dataclasses.replace(self.engine.options, timeout=backstop, grace=self.grace)
        try:
            result = self.engine.run(plan, options=options, on_output=first, guard="none", cancel=clock.cancel)
        finally:
            clock.close()
        return self._answer(result, first, clock.ended)

    def _answer(self, result: Result, first: _FirstLine, ended: str | None = None) -> dict[str, Any]:
        """The first problem wins, in this order: could not start, no line, a line that is not a result,
        then the exit code (a non-zero exit overrides a success line).

        ``ended`` is how the call's clock ended it: ``"timeout"`` (no line in time), ``"grace"``
        (the line came, the exit did not), ``None`` (the plugin ended by itself)."""
        if result.error:
            return self._fail(f"could not start: {result.error}")
        if result.stdout_capture.binary:
            return self._fail("wrote binary output on stdout, not a result line", result.stderr)
        if first.too_large:
            return self._fail(f"sent a result too large: its line passed {MAX_RESULT_LINE // (1024 * 1024)} MiB",
                              result.stderr)
        line = first.line
        stopped = result.timed_out or (result.interrupted and ended is not None)
        if not line:
            if stopped:
                return self._fail(f"timed out after {self.manifest.timeout:g}s", result.stderr)
            return self._fail("wrote nothing on stdout (empty output)", result.stderr)
        try:
            answer = json.loads(line)
        except json.JSONDecodeError as exc:
            shown = line if len(line) <= 200 else line[:200] + "…"
            return self._fail(f"output is not a result line: {exc} (got: {shown!r})", result.stderr)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("success"), bool):
            return self._fail(f"output has no boolean 'success' (got: {line[:200]!r})", result.stderr)
        if result.exit_code != 0 and not stopped:  # its own non-zero exit wins; a stop of ours is no verdict
            return self._fail(f"exited with {result.outcome()}", result.stderr)
        error = answer.get("error")
        return {"success": answer["success"], "output": _as_text(answer.get("output")),
                "error": None if error is None else _as_text(error)}
