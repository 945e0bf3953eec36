"""One JSON Schema check for tool arguments and plugin manifests: the first problem, as data.

A model's arguments and a plugin author's manifest are both checked against a JSON Schema, and both
want one line naming the field that is wrong -- but worded for different readers (a model reads
``argument 'pin' must be integer, not string "5"``; an author reads ``parameters[0].type: is
missing``).  So the walk is done once, here, and yields a :class:`SchemaProblem` that carries the
path, the rule broken and the value; :mod:`.arguments` and :mod:`.manifest` each word it for their
reader, and neither parses the other's text.

Why not the ``jsonschema`` library: its errors are worded for programmers (``'pin' is a required
property``) and it reports every problem in its own order, so each message would still have to be
rebuilt from its fields; it knows nothing of what matters here beyond the schema (NaN and infinity,
which ``json.loads`` reads but JSON cannot carry; lone surrogates, which cannot be encoded); and it
would be a run-time dependency of the Toolbox, which works without the ``mcp`` extra.  The subset
the tools and manifests use is small: ``type`` (one or a list), ``enum``, ``pattern``,
``minLength``, ``minimum``, ``exclusiveMinimum``, ``maximum``, ``properties``, ``required``,
``additionalProperties: false`` and ``items``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..process.records import record

__all__ = ["JSON_TYPES", "SchemaProblem", "declared_kinds", "first_problem", "has_type"]

#: JSON Schema's types as Python types (a boolean is excluded from the numbers by :func:`has_type`).
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (Mapping,), "array": (list, tuple), "null": (type(None),),
}


@record
class SchemaProblem:
    """Where a value breaks a schema and how.

    ``path`` leads from the top to the value (property names and list indices); ``rule`` is the
    keyword broken -- ``type``, ``finite`` (NaN or infinity), ``text`` (a lone surrogate at
    ``detail``), ``enum``, ``pattern``, ``minLength``, ``minimum``, ``exclusiveMinimum``,
    ``maximum``, ``required`` (``detail``: the missing name, ``path``: its object), ``additionalProperties``
    (``detail``: the names the object may have), ``propertyName`` (a key that is not a string);
    ``schema`` is the schema at ``path``, ``value`` what was found there.
    """

    path: tuple[str | int, ...]
    rule: str
    schema: Mapping[str, Any]
    value: Any
    detail: Any = None


def declared_kinds(schema: Any) -> list[str]:
    """A schema's ``type`` as a list (``[]``: any type)."""
    declared = schema.get("type") if isinstance(schema, Mapping) else None
    return declared if isinstance(declared, list) else [declared] if isinstance(declared, str) else []


def has_type(value: Any, kind: str) -> bool:
    """``value`` is of JSON Schema's type ``kind``: a boolean is not a number; an unknown kind fits nothing."""
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, JSON_TYPES.get(kind, ()))


def _scalar_problem(schema: Mapping[str, Any], value: Any, path: tuple[str | int, ...],
                    bounds: bool) -> SchemaProblem | None:
    kinds = declared_kinds(schema)
    if kinds and not any(has_type(value, kind) for kind in kinds):
        return SchemaProblem(path, "type", schema, value)
    if isinstance(value, float) and not math.isfinite(value):  # json.loads reads NaN and 1e999
        return SchemaProblem(path, "finite", schema, value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return SchemaProblem(path, "text", schema, value, exc.start)
    if "enum" in schema and value not in schema["enum"]:
        return SchemaProblem(path, "enum", schema, value)
    if isinstance(value, str) and "pattern" in schema and not re.fullmatch(schema["pattern"], value):
        return SchemaProblem(path, "pattern", schema, value)
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        return SchemaProblem(path, "minLength", schema, value)
    if bounds and isinstance(value, (int, float)):
        if "minimum" in schema and not value >= schema["minimum"]:
            return SchemaProblem(path, "minimum", schema, value)
        if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
            return SchemaProblem(path, "exclusiveMinimum", schema, value)
        if "maximum" in schema and not value <= schema["maximum"]:
            return SchemaProblem(path, "maximum", schema, value)
    return None


def _object_problem(schema: Mapping[str, Any], value: Mapping[Any, Any], path: tuple[str | int, ...],
                    json_only: bool, bounds: bool) -> SchemaProblem | None:
    """Unknown names first, then missing ones, then each value in the order given.

    An unknown name is most often a misspelt one (``comand``, ``requried``): naming it says what to
    fix, where "``command`` is missing" would only say what followed from it."""
    properties = schema.get("properties", {})
    closed = schema.get("additionalProperties", True) is False
    for name, item in value.items():
        if not isinstance(name, str):
            return SchemaProblem(path, "propertyName", schema, name)
        if closed and name not in properties:
            return SchemaProblem((*path, name), "additionalProperties", schema, item, list(properties))
    for name in schema.get("required", []):
        if name not in value:
            return SchemaProblem(path, "required", schema, value, name)
    for name, item in value.items():
        sub = properties.get(name, {})
        if found := _walk(sub, item, (*path, name), json_only, bounds):
            return found
    return None


def _walk(schema: Mapping[str, Any], value: Any, path: tuple[str | int, ...], json_only: bool,
          bounds: bool) -> SchemaProblem | None:
    if not schema and not json_only:
        return None
    if found := _scalar_problem(schema, value, path, bounds):
        return found
    if isinstance(value, (list, tuple)):
        items = schema.get("items")
        for i, item in enumerate(value):
            if found := _walk(items if isinstance(items, Mapping) else {}, item, (*path, i), json_only, bounds):
                return found
    if isinstance(value, Mapping):
        if isinstance(schema.get("properties"), Mapping):
            return _object_problem(schema, value, path, json_only, bounds)
        for key, item in value.items():  # a free-form object: its values still have to be JSON
            if found := _walk({}, item, (*path, key), json_only, bounds):
                return found
    return None


def first_problem(schema: Mapping[str, Any], value: Any, *, json_only: bool = True,
                  bounds: bool = True) -> SchemaProblem | None:
    """The first place, depth first, where ``value`` breaks ``schema``; ``None`` if it fits.

    With ``json_only`` a part the schema leaves open (``{}``, a free-form object) must still be a
    JSON value: finite numbers, encodable text.  Without it an open part is not looked at (a
    manifest's ``default`` is checked against its parameter's type, with its own words).  Without
    ``bounds`` a number's ``minimum``/``exclusiveMinimum``/``maximum`` are advice, not rules: a tool
    clamps its own (a model asking a 2-hour timeout gets 10 minutes and a note saying so).  A value
    nested past Python's recursion limit raises :class:`RecursionError`; the caller words that.
    """
    return _walk(schema, value, (), json_only, bounds)
