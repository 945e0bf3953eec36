"""A model's arguments against a tool's JSON Schema: read as meant, then checked all the way down.

What a model sends is untrusted input that must reach a command, or a plugin's stdin, as valid JSON
of the declared types.  :func:`normalise` reads it as the schema means it (``null`` for an optional
property is "not given", as OpenAI's strict mode sends it; ``5000.0`` is the JSON Schema integer
5000) and fills nothing in.  :func:`validate` then finds the first problem at any depth -- a wrong
type inside an array, NaN or infinity (which ``json.loads`` reads but JSON cannot carry), a lone
surrogate (not text: it cannot be encoded), a value outside an enum -- and words it for the model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..process.errors import shown_value

__all__ = ["json_kind", "normalise", "object_schema", "validate"]

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (Mapping,), "array": (list, tuple), "null": (type(None),),
}


def object_schema(properties: dict[str, dict[str, Any]], required: Iterable[str] = ()) -> dict[str, Any]:
    """A tool's arguments: these properties, no others (both APIs' strict forms want that said)."""
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def json_kind(value: Any) -> str:
    """A Python value named as JSON names it (``null``, ``number``…), for messages a model reads."""
    for kind, types in (("null", (type(None),)), ("boolean", (bool,)), ("integer", (int,)), ("number", (float,)),
                        ("string", (str,)), ("array", (list, tuple)), ("object", (Mapping,))):
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _kinds(schema: Any) -> list[str]:
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    return declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else []


def _as_meant(schema: Any, value: Any) -> Any:
    kinds = _kinds(schema)
    if ("integer" in kinds and "number" not in kinds and isinstance(value, float) and math.isfinite(value)
            and value.is_integer()):
        return int(value)
    if isinstance(value, list) and isinstance(schema, Mapping) and isinstance(schema.get("items"), Mapping):
        return [_as_meant(schema["items"], item) for item in value]
    if isinstance(value, Mapping) and isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping):
        return normalise(schema, value)
    return value


def normalise(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` read as ``schema`` means them: a declared optional property sent as ``null`` is
    left out, integral floats where an integer is declared become integers.  No default is filled in;
    an undeclared property stays (and :func:`validate` refuses it)."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None and name in properties and name not in required:
            continue
        out[name] = _as_meant(properties.get(name), value)
    return out


def _json_excerpt(value: Any) -> str:
    """A value as the model sent it, as JSON cut to 200 characters (a model's mistake may be huge)."""
    try:
        return json.dumps(value, default=repr)[:200]
    except (ValueError, RecursionError):
        return repr(value)[:200]


def _type_problem(schema: Mapping[str, Any], value: Any, where: str) -> str | None:
    kinds = _kinds(schema)
    if kinds and not any(isinstance(value, _JSON_TYPES.get(k, ())) and not (
            k in ("integer", "number") and isinstance(value, bool)) for k in kinds):
        return f"{where} must be {' or '.join(kinds)}, not {json_kind(value)} {_json_excerpt(value)}"
    if isinstance(value, float) and not math.isfinite(value):  # json.loads reads NaN and 1e999
        return f"{where} must be a finite number, not {value!r}"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{where} holds a lone surrogate ({value[exc.start]!r} at position {exc.start}), which is not text"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {json.dumps(schema['enum'])}, not {_json_excerpt(value)}"
    return None


def _problem(schema: Mapping[str, Any], value: Any, where: str) -> str | None:
    """The first problem with ``value`` against ``schema`` at any depth; ``None`` if it fits."""
    if problem := _type_problem(schema, value, where):
        return problem
    items = schema.get("items")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if problem := _problem(items if isinstance(items, Mapping) else {}, item, f"{where}[{i}]"):
                return problem
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            return _object_problem(schema, value, where)
        for key, item in value.items():  # a free-form object: its values still have to be JSON
            if problem := _problem({}, item, f"{where}.{key}"):
                return problem
    return None


def _object_problem(schema: Mapping[str, Any], value: Mapping[str, Any], where: str) -> str | None:
    properties = schema.get("properties", {})
    prefix = f"{where}." if where else ""
    for name in schema.get("required", []):
        if name not in value:
            return f"missing required argument {prefix}{name!r}" if not where else f"{where} is missing {name!r}"
    for name, item in value.items():
        if not isinstance(name, str):
            return f"argument names must be strings, not {_json_excerpt(name)}"
        if name not in properties:
            if schema.get("additionalProperties", True) is False:
                known = ", ".join(properties) or "none"
                return f"unknown argument {prefix}{shown_value(name)} (expected: {known})"
            if problem := _problem({}, item, f"{prefix}{name}"):
                return problem
            continue
        label = f"argument {name!r}" if not where else f"{prefix}{name}"
        if problem := _problem(properties[name], item, label):
            return problem
    return None


def validate(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The first problem with ``arguments`` against an object schema, at any depth, as one sentence;
    ``None`` if they fit."""
    try:
        return _object_problem(schema, arguments, "")
    except RecursionError:
        return "arguments nest too deeply"
