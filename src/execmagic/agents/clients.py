"""The client formats, one row each: how a client lists a tool, sends a call, and takes its answer.

=================  ==========================================  ==============================================
client             a call                                      its answer
=================  ==========================================  ==============================================
``anthropic``      ``{"type": "tool_use", "id", "name",        ``{"type": "tool_result", "tool_use_id",
(Messages)         "input": {…}}``                             "content": "<json>", "is_error": bool}``
``openai``         ``{"id", "type": "function", "function":    ``{"role": "tool", "tool_call_id",
(Chat Completions) {"name", "arguments": "<json>"}}``          "content": "<json>"}``
``openai``         ``{"type": "function_call", "call_id",      ``{"type": "function_call_output", "call_id",
(Responses)        "name", "arguments": "<json>"}``            "output": "<json>"}``
``mcp``            (the MCP SDK reads calls: :mod:`.mcp_calls`)
=================  ==========================================  ==============================================

Their tool definitions: ``anthropic`` ``{"name", "description", "input_schema"}``; ``openai``
``{"type": "function", "function": {"name", "description", "parameters"}}`` (with a strict mode);
``openai-responses`` ``{"type": "function", "name", "description", "parameters", "strict"}`` (flat, its
``strict`` flag always there: Responses requires it, and takes a missing one as strict);
``mcp`` ``{"name", "description", "inputSchema"}``.

:mod:`.schemas` words a definition, :mod:`.answers` reads calls and words answers, and
:meth:`~.tools.Toolbox.schemas` checks a style, each from the rows of :data:`CLIENTS` and nothing
else -- so a new client format is one row here (its definition, its call, its answer), not a branch in
each of them.  A row is data, not code: what differs between clients is which keys hold what.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..process.plural import listed
from ..process.records import record

__all__ = ["CLIENTS", "FORMATS", "CallShape", "ClientFormat", "Definition", "call_shapes", "client_named",
           "expected_calls", "schema_format"]


@record
class Definition:
    """How a client lists a tool: ``{"name", "description", <schema_key>: schema}``, maybe nested."""

    #: The key the JSON Schema of the arguments goes under.
    schema_key: str
    #: The key the definition nests under, the outer object's ``"type"`` naming it (OpenAI chat's
    #: ``{"type": "function", "function": {…}}``); ``None``: flat.
    nested: str | None = None
    #: Whether the client has a strict mode (OpenAI's: a ``"strict"`` flag beside a schema it accepts).
    strict: bool = False
    #: Keys every definition carries as they are, before its own (Responses' ``"type"``, and its
    #: ``"strict"`` flag, false unless strict mode sets it).
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@record
class CallShape:
    """How a client sends a tool call, and the answer it takes back."""

    #: The call's ``"type"``.
    kind: str
    #: How a message names it, in a list of what was expected (``an Anthropic tool_use block``).
    words: str
    #: Where a turn holds its calls (``content``, ``tool_calls``, ``output``).
    turn_key: str
    #: The key of the call's id (what the answer is matched to).
    id_key: str
    #: The keys of the tool's name and arguments.
    name_key: str = "name"
    arguments_key: str = "arguments"
    #: The key the name and arguments nest under (chat's ``function``); the call's ``"type"`` may then
    #: be missing.  ``None``: they are the call's own keys.
    nested: str | None = None
    #: The answer: its fixed keys, then the id's key, the text's key and the key saying it is an error
    #: (``None``: the client has none; the answer's JSON says ``success`` either way).
    answer_fixed: Mapping[str, str] = dataclasses.field(default_factory=dict)
    answer_id_key: str = "call_id"
    answer_text_key: str = "content"
    answer_error_key: str | None = None

    def claims(self, data: Mapping[str, Any]) -> bool:
        """Whether ``data`` means to be one such call (read it, or say why it is none)."""
        return self.nested in data if self.nested is not None else data.get("type") == self.kind

    def matches(self, data: Mapping[str, Any], plain: Any) -> bool:
        """Whether ``data`` is one such call; ``plain`` turns an SDK object into dicts (the nested part
        may be one)."""
        if self.nested is None:
            return data.get("type") == self.kind
        return data.get("type") in (self.kind, None) and isinstance(plain(data.get(self.nested)), Mapping)

    def answer(self, call_id: str, text: str, is_error: bool) -> dict[str, Any]:
        """The answer to one call, in this client's shape."""
        out: dict[str, Any] = {**self.answer_fixed, self.answer_id_key: call_id, self.answer_text_key: text}
        if self.answer_error_key is not None:
            out[self.answer_error_key] = is_error
        return out


@record
class ClientFormat:
    """One client: its name as :meth:`~.tools.Toolbox.schemas` takes it, how it lists tools (``None``:
    it shares another row's definitions), how it calls them (``None``: calls arrive another way)."""

    name: str
    definition: Definition | None
    call: CallShape | None


#: Every client format.  The order is that of every message listing them.
CLIENTS: tuple[ClientFormat, ...] = (
    ClientFormat("anthropic", Definition("input_schema"), CallShape(
        "tool_use", "an Anthropic tool_use block", "content", "id", arguments_key="input",
        answer_fixed={"type": "tool_result"}, answer_id_key="tool_use_id", answer_error_key="is_error")),
    ClientFormat("openai", Definition("parameters", nested="function", strict=True), CallShape(
        "function", "an OpenAI tool call (chat completions)", "tool_calls", "id", nested="function",
        answer_fixed={"role": "tool"}, answer_id_key="tool_call_id")),
    ClientFormat("openai-responses", Definition("parameters", strict=True, fixed={"type": "function", "strict": False}),
                 CallShape(
        "function_call", "a function_call item (responses)", "output", "call_id",
        answer_fixed={"type": "function_call_output"}, answer_text_key="output")),
    ClientFormat("mcp", Definition("inputSchema"), None),
)
#: The styles :meth:`~.tools.Toolbox.schemas` takes: every row with definitions of its own.
FORMATS: tuple[str, ...] = tuple(c.name for c in CLIENTS if c.definition is not None)


def client_named(name: str) -> ClientFormat | None:
    """The row called ``name``, if any."""
    return next((c for c in CLIENTS if c.name == name), None)


def schema_format(style: str, strict: bool = False) -> Definition:
    """How ``style`` lists a tool; :class:`ValueError` for a style that is none, or ``strict`` where the
    client has no strict mode (a programmer's mistake, said before any definition is made)."""
    found = client_named(style) if isinstance(style, str) else None
    if found is None or found.definition is None:
        raise ValueError(f"schema style must be one of {', '.join(map(repr, FORMATS))}, not {style!r}")
    if strict and not found.definition.strict:
        raise ValueError(f"strict=True is OpenAI's strict mode; {style!r} has no such mode")
    return found.definition


def call_shapes() -> tuple[CallShape, ...]:
    """Every client's call shape, in :data:`CLIENTS`' order."""
    return tuple(c.call for c in CLIENTS if c.call is not None)


def expected_calls() -> str:
    """``an Anthropic tool_use block, … or a function_call item (responses)``: what a call may be."""
    return listed([shape.words for shape in call_shapes()])
