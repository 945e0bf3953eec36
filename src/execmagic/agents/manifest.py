"""A plugin's manifest: read, checked field by field, its binary resolved -- before anything runs.

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

Checking is apart from calling (:mod:`.plugins`): a manifest is read when a plugin folder is
loaded, by the MCP server and by the Toolbox alike, and its problems are an author's, worded for
an author, while a call's problems are answered to a model.  The schema is checked by the same
:mod:`.schema_check` walk as a model's arguments; what a schema cannot say (an array needs
``items``, a default has its parameter's type, names are unique) is code here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..process.errors import UsageProblem
from ..process.records import record
from .schema_check import SchemaProblem, declared_kinds, first_problem, has_type
from .schemas import NAME_PATTERN

__all__ = [
    "DEFAULT_PLUGIN_TIMEOUT", "MANIFEST_SCHEMA", "MAX_ITEMS_DEPTH", "MAX_PLUGIN_TIMEOUT", "NAME_PATTERN",
    "PARAMETER_TYPES", "ManifestError", "PluginManifest", "PluginParameter", "load_manifest", "parse_manifest",
]

#: Seconds a plugin call may take when its manifest names no timeout: a tool call is a quick action
#: (set a pin, read a sensor); a longer one says so in its manifest.
DEFAULT_PLUGIN_TIMEOUT = 10.0
#: Seconds a manifest may give a call at most: an hour is longer than any tool call a model waits for,
#: and a bound keeps absurd values (``1e10``) from reaching the clock as errors at call time.
MAX_PLUGIN_TIMEOUT = 3600.0
#: How deep ``items`` may nest (an array of arrays of …): function-calling APIs limit nesting, and a
#: manifest nested hundreds deep would break every tool's catalogue, not only its own.
MAX_ITEMS_DEPTH = 5
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
#: What a manifest may hold, as a JSON Schema (the subset :mod:`.schema_check` checks).  Two rules
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


@record
class PluginParameter:
    name: str
    type: str
    description: str = ""
    required: bool = False
    default: Any = None
    #: The JSON Schema of an ``array`` parameter's elements (``{"type": "string"}``).
    items: Mapping[str, Any] | None = None


@record
class PluginManifest:
    name: str
    version: str
    description: str
    binary: str
    parameters: tuple[PluginParameter, ...] = ()
    timeout: float = DEFAULT_PLUGIN_TIMEOUT


# -- checking a manifest -------------------------------------------------------------------------
_TYPE_WORDS = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
               "object": "a table", "array": "a list"}


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
    """JSON Schema's types over TOML/JSON values: a boolean is not a number, NaN and infinity are not numbers."""
    fits = has_type(value, kind) and not (isinstance(value, float) and not math.isfinite(value))
    return None if fits else f"must be {_TYPE_WORDS[kind]}, not {_described(value)}"


def _field(path: tuple[str | int, ...]) -> str:
    """Where in the manifest, as its author finds it: ``parameters[0].items.type``."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else f".{step}" if out else str(step)
    return out


def _worded(problem: SchemaProblem) -> tuple[str, str]:
    """A :class:`SchemaProblem` as ``(field, reason)`` for a manifest's author."""
    schema, value, rule = problem.schema, problem.value, problem.rule
    if rule == "required":
        return _field((*problem.path, problem.detail)), "is missing"
    field = _field(problem.path) or "(top level)"
    if rule == "additionalProperties":
        return field, f"is not a field here (known: {', '.join(problem.detail)})"
    if rule == "propertyName":
        return field, f"has a field named {_described(value)}; field names are strings"
    if rule in ("type", "finite"):
        kinds = declared_kinds(schema) or ["number"]
        return field, f"must be {' or '.join(_TYPE_WORDS.get(k, k) for k in kinds)}, not {_described(value)}"
    if rule == "text":
        at = problem.detail
        return field, f"holds a lone surrogate ({value[at]!r} at position {at}), which is not text"
    if rule == "enum":
        return field, f"must be one of {', '.join(schema['enum'])}, not {_described(value)}"
    if rule == "pattern":
        return field, (f"must match ^{schema['pattern']}$ (letters, digits, '_' or '-', at most 64),"
                       f" not {_described(value)}")
    if rule == "minLength":
        return field, "must not be empty"
    if rule == "minimum":
        return field, f"must be at least {schema['minimum']:g}, not {_described(value)}"
    if rule == "exclusiveMinimum":
        return field, f"must be more than {schema['exclusiveMinimum']}, not {_described(value)}"
    return field, f"must be at most {schema['maximum']:g}, not {_described(value)}"


def _first_problem(schema: Mapping[str, Any], value: Any, field: tuple[str | int, ...]) -> tuple[str, str] | None:
    """The first place where ``value`` (found at ``field``) breaks ``schema``, as ``(field, reason)``.

    A part the schema leaves open is not looked at: a default is checked against its parameter."""
    found = first_problem(schema, value, json_only=False)
    return None if found is None else _worded(dataclasses.replace(found, path=(*field, *found.path)))


def _items_problem(declared: Mapping[str, Any], path: tuple[str | int, ...], depth: int = 0) -> tuple[str, str] | None:
    """An array needs ``items`` (strict function-calling schemas refuse an array without them), and
    only an array may have them; nesting stops at :data:`MAX_ITEMS_DEPTH`."""
    items, field = declared.get("items"), _field(path)
    if declared.get("type") != "array":
        if items is not None:
            return f"{field}.items", f"is only for an array, and this is a {declared.get('type')}"
        return None
    if items is None:
        return (f"{field}.items",
                'is missing: an array parameter says what its elements are, e.g. items = { type = "string" }')
    if depth >= MAX_ITEMS_DEPTH:
        return f"{field}.items", f"nests arrays more than {MAX_ITEMS_DEPTH} deep"
    return _first_problem(_ITEMS_SCHEMA, items, (*path, "items")) or _items_problem(items, (*path, "items"), depth + 1)


def _parameter_problem(raw: Mapping[str, Any], index: int, seen: dict[str, str]) -> tuple[str, str] | None:
    """What the schema cannot say about one parameter: items, its default's type, a repeated name."""
    field = f"parameters[{index}]"
    if found := _items_problem(raw, ("parameters", index)):
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
    found = _first_problem(MANIFEST_SCHEMA, data, ())
    seen: dict[str, str] = {}
    for i, raw in enumerate(data.get("parameters", []) if found is None else []):
        found = found or _parameter_problem(raw, i, seen)
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
