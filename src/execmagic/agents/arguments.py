"""A model's arguments against a tool's JSON Schema: read as meant, then checked all the way down.

What a model sends is untrusted input that must reach a command, or a plugin's stdin, as valid JSON
of the declared types.  :func:`normalise` reads it as the schema means it (``null`` for an optional
property is "not given", as OpenAI's strict mode sends it; ``5000.0`` is the JSON Schema integer
5000) and fills nothing in.  :func:`validate` then finds the first problem at any depth -- a wrong
type inside an array, NaN or infinity (which ``json.loads`` reads but JSON cannot carry), a lone
surrogate (not text: it cannot be encoded), a value outside an enum -- with the check that plugin
manifests use too (:mod:`.schema_check`), and words it for the model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..process.errors import shown_value
from .schema_check import SchemaProblem, declared_kinds, first_problem

__all__ = ["json_kind", "normalise", "object_schema", "validate"]

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


def _as_meant(schema: Any, value: Any) -> Any:
    kinds = declared_kinds(schema)
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


def _label(path: tuple[str | int, ...]) -> str:
    """Where a value is, as a model reads it: ``argument 'o'``, ``argument 'o'.x``, ``argument 'xs'[0]``."""
    out = f"argument {path[0]!r}" if path else ""
    for step in path[1:]:
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out


def _worded(problem: SchemaProblem) -> str:
    """A :class:`SchemaProblem` as one sentence for a model (its fields, never another message's text)."""
    where, value, schema = _label(problem.path), problem.value, problem.schema
    if problem.rule == "required":
        return f"{where} is missing {problem.detail!r}" if where else f"missing required argument {problem.detail!r}"
    if problem.rule == "additionalProperties":
        parent = _label(problem.path[:-1])
        known = ", ".join(problem.detail) or "none"
        return f"unknown argument {parent + '.' if parent else ''}{shown_value(problem.path[-1])} (expected: {known})"
    if problem.rule == "propertyName":
        return f"argument names must be strings, not {_json_excerpt(value)}"
    if problem.rule == "type":
        return f"{where} must be {' or '.join(declared_kinds(schema))}, not {json_kind(value)} {_json_excerpt(value)}"
    if problem.rule == "finite":
        return f"{where} must be a finite number, not {value!r}"
    if problem.rule == "text":
        at = problem.detail
        return f"{where} holds a lone surrogate ({value[at]!r} at position {at}), which is not text"
    if problem.rule == "enum":
        return f"{where} must be one of {json.dumps(schema['enum'])}, not {_json_excerpt(value)}"
    return f"{where} does not fit the schema's {problem.rule} ({schema[problem.rule]!r}): {_json_excerpt(value)}"


def validate(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The first problem with ``arguments`` against an object schema, at any depth, as one sentence;
    ``None`` if they fit."""
    try:
        problem = first_problem(schema, arguments, bounds=False)  # a tool clamps its numbers, with a note
    except RecursionError:
        return "arguments nest too deeply"
    return None if problem is None else _worded(problem)
