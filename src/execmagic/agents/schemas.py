"""One tool definition, every client's format: Anthropic, OpenAI (plain and strict) and MCP.

A tool is described once, as a name, a description and a JSON Schema of its
arguments (:class:`~execmagic.agents.tools.ToolSpec`).  This module words that
one source for each client, as its row of :data:`~.clients.CLIENTS` says (which key holds the
schema, whether the definition nests, whether the client has a strict mode):

- ``anthropic``: ``{"name", "description", "input_schema"}``;
- ``openai``: ``{"type": "function", "function": {"name", "description", "parameters"}}``;
- ``openai`` with ``strict=True``: the same with ``"strict": true`` and a schema that strict mode
  accepts -- every property required, the optional ones nullable (the model sends ``null`` for
  what it does not use, and dispatch reads ``null`` as "not given"), ``additionalProperties:
  false`` on every object, and no keyword strict mode refuses (``default``, bounds, lengths,
  patterns: what they said moves into the description, so the model still reads it);
- ``mcp``: ``{"name", "description", "inputSchema"}``, as an MCP server lists its tools.

A schema that strict mode cannot express (an ``object`` argument with free-form keys) keeps its
plain form with ``"strict": false`` for that one tool: OpenAI decides strictness per function, so
one free-form plugin never breaks the request for the others.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from .clients import FORMATS, schema_format

__all__ = ["FORMATS", "MAX_STRICT_DEPTH", "NAME_PATTERN", "STRICT_DROPPED", "STRICT_KEPT", "strict_schema",
           "tool_definition"]

#: How deep a strict schema may nest (OpenAI documents five levels of objects).
MAX_STRICT_DEPTH = 10
#: What both function-calling APIs accept as a tool's name.
NAME_PATTERN = r"[a-zA-Z0-9_-]{1,64}"
#: Keywords OpenAI's strict mode refuses (or ignores), each with how its meaning is said in words.
STRICT_DROPPED: dict[str, str] = {
    "default": "default {}", "minimum": "at least {}", "maximum": "at most {}",
    "exclusiveMinimum": "more than {}", "exclusiveMaximum": "less than {}", "multipleOf": "a multiple of {}",
    "minLength": "at least {} characters", "maxLength": "at most {} characters", "pattern": "matching {}",
    "format": "format {}", "minItems": "at least {} items", "maxItems": "at most {} items",
    "uniqueItems": "unique items: {}", "minProperties": "at least {} keys", "maxProperties": "at most {} keys",
}


#: Keywords a strict schema keeps as they are (``properties``, ``required``, ``additionalProperties``
#: and ``items`` are rebuilt); any other keyword makes a property one strict mode cannot express.
STRICT_KEPT = frozenset({"type", "description", "enum", "const", "title"})


def _said(value: Any) -> str:
    """A keyword's value as the description states it: a string as it is, anything else in JSON spelling."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _strict_property(schema: Any, optional: bool, depth: int = 0) -> dict[str, Any] | None:
    """One property in strict form, or ``None`` when strict mode cannot express it: no ``type``,
    a keyword it does not know (``anyOf``, ``patternProperties``…), an array without ``items``,
    an object with free-form keys, nesting past :data:`MAX_STRICT_DEPTH`."""
    if not isinstance(schema, Mapping) or "type" not in schema or depth > MAX_STRICT_DEPTH:
        return None
    out: dict[str, Any] = {}
    words: list[str] = []
    for key, value in schema.items():
        if key in STRICT_DROPPED:
            words.append(STRICT_DROPPED[key].format(_said(value)))
        elif key in ("properties", "required", "additionalProperties"):
            continue  # rebuilt below for objects
        elif key == "items":
            items = _strict_property(value, optional=False, depth=depth + 1)
            if items is None:
                return None
            out["items"] = items
        elif key in STRICT_KEPT:
            out[key] = copy.deepcopy(value)
        else:
            return None
    kinds = out.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds and "items" not in out:
        return None
    if "object" in kinds:
        inner = strict_schema(schema, depth + 1)
        if inner is None:
            return None
        out.update({k: inner[k] for k in ("properties", "required", "additionalProperties")})
    if words:
        lead = out.get("description", "").rstrip()
        out["description"] = (lead + " " if lead else "") + "(" + "; ".join(words) + ")"
    if optional:
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Let ``null`` stand for "not given": add it to ``type`` (and to ``enum``, which strict mode checks too)."""
    kinds = schema.get("type")
    if isinstance(kinds, str):
        schema["type"] = [kinds, "null"]
    elif isinstance(kinds, list) and "null" not in kinds:
        schema["type"] = [*kinds, "null"]
    if "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema


def strict_schema(schema: Mapping[str, Any], depth: int = 0) -> dict[str, Any] | None:
    """An object schema in the form OpenAI's strict mode accepts; ``None`` if it has free-form keys.

    An object with no ``properties`` (any keys at all) cannot be strict: strict mode needs every
    key named.  The tool's own object with no arguments is fine (``properties: {}``).
    """
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or depth > MAX_STRICT_DEPTH:
        return None
    if schema.get("additionalProperties", True) is not False and (not properties or "additionalProperties" in schema):
        return None  # free-form keys (no properties, or extra keys of a schema): strict mode cannot say that
    required = set(schema.get("required", []))
    out_properties: dict[str, Any] = {}
    for name, prop in properties.items():
        strict = _strict_property(prop, optional=name not in required, depth=depth + 1)
        if strict is None:
            return None
        out_properties[name] = strict
    return {"type": "object", "properties": out_properties, "required": list(properties),
            "additionalProperties": False}


def tool_definition(name: str, description: str, parameters: Mapping[str, Any], style: str,
                    strict: bool = False) -> dict[str, Any]:
    """One tool in ``style`` (a name of :data:`FORMATS`); ``strict`` is a client's strict mode (OpenAI's).
    :class:`ValueError` for a style that is none, or ``strict`` where the client has no such mode."""
    form = schema_format(style, strict)
    definition: dict[str, Any] = {**form.fixed, "name": name, "description": description,
                                  form.schema_key: copy.deepcopy(dict(parameters))}
    if strict:
        converted = strict_schema(parameters)
        definition["strict"] = converted is not None
        if converted is not None:
            definition[form.schema_key] = converted
    return {"type": form.nested, form.nested: definition} if form.nested is not None else definition
