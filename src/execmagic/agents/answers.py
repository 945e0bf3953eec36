"""Tool calls in, answers out, in each client's own shape -- so an agent loop needs no glue.

A model asks for tools in its API's shape and expects the answers in the matching one:

======================  ==========================================  ==============================================
client                  a call                                      its answer
======================  ==========================================  ==============================================
Anthropic Messages      ``{"type": "tool_use", "id", "name",        ``{"type": "tool_result", "tool_use_id",
                        "input": {…}}``                             "content": "<json>", "is_error": bool}``
OpenAI Chat             ``{"id", "type": "function", "function":    ``{"role": "tool", "tool_call_id",
Completions             {"name", "arguments": "<json>"}}``          "content": "<json>"}``
OpenAI Responses        ``{"type": "function_call", "call_id",      ``{"type": "function_call_output", "call_id",
                        "name", "arguments": "<json>"}``            "output": "<json>"}``
======================  ==========================================  ==============================================

The SDKs hand out their own objects (pydantic models); they are read through
``model_dump()`` when they have it, so plain dicts and SDK objects are the same
here.  The answer's content is the tool's answer as JSON text: the APIs refuse a
dict where they expect text, and JSON keeps every field (exit code, status, notes).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..process.errors import UsageProblem, shown_value

__all__ = ["CallWithoutId", "ToolCall", "UnknownCallShape", "answer_text", "as_plain", "calls_in", "read_call"]


class UnknownCallShape(UsageProblem):
    """Something handed to :meth:`Toolbox.answer` that is no known client's tool call."""

    def __init__(self, kind: str, keys: tuple[str, ...]) -> None:
        self.kind = kind
        self.keys = keys
        shown = ", ".join(keys[:8]) or "none"
        super().__init__(f"not a tool call: a {kind} with keys {shown}; expected an Anthropic tool_use block, an "
                         "OpenAI tool call (chat completions) or a function_call item (responses)")


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """One call read from any client: who asked (``call_id``), for what, and how to word the answer."""

    call_id: str
    #: As sent: normally a tool's name, but a model's mistake is answered, not raised.
    name: Any
    #: A mapping (Anthropic's ``input``) or the JSON text OpenAI sends; dispatch reads both.
    arguments: Any
    shape: Callable[[str, str, bool], dict[str, Any]]

    def answer(self, text: str, is_error: bool) -> dict[str, Any]:
        return self.shape(self.call_id, text, is_error)


def as_plain(value: Any) -> Any:
    """An SDK object as the plain dicts and lists it stands for (pydantic's ``model_dump``)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=False)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and not isinstance(value, Mapping):
        return to_dict()
    return value


def _anthropic_result(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}


def _chat_result(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _responses_result(call_id: str, text: str, is_error: bool) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


class CallWithoutId(UsageProblem):
    """A tool call with no id to answer to: the API would refuse the answer, so it is not guessed."""

    def __init__(self, key: str, value: Any) -> None:
        self.key = key
        self.value = value
        super().__init__(f"tool call has no usable {key!r} (got {shown_value(value)}):"
                         " its answer could not be matched to it")


def _call_id(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise CallWithoutId(key, value)
    return value


def read_call(call: Any) -> ToolCall:
    """Read one tool call of any known client; anything else is :class:`UnknownCallShape`.

    The name is passed on as sent (a name that is no tool, or no string, is answered as an error);
    the id must be there, since an answer the API cannot match is refused with the whole request.
    """
    data = as_plain(call)
    if not isinstance(data, Mapping):
        raise UnknownCallShape(type(call).__name__, ())
    kind = data.get("type")
    if kind == "tool_use":
        return ToolCall(_call_id(data, "id"), data.get("name"), data.get("input"), _anthropic_result)
    if kind == "function_call":
        return ToolCall(_call_id(data, "call_id"), data.get("name"), data.get("arguments"), _responses_result)
    function = as_plain(data.get("function"))
    if isinstance(function, Mapping) and kind in ("function", None):
        return ToolCall(_call_id(data, "id"), function.get("name"), function.get("arguments"), _chat_result)
    raise UnknownCallShape("mapping" if isinstance(call, Mapping) else type(call).__name__,
                           tuple(str(k) for k in data))


def _is_call(block: Any) -> bool:
    """Whether a block of a turn is a tool call (text, thinking and reasoning blocks are not)."""
    data = as_plain(block)
    if not isinstance(data, Mapping):
        return False
    return data.get("type") in ("tool_use", "function_call") or (
        data.get("type") in ("function", None) and isinstance(as_plain(data.get("function")), Mapping))


def calls_in(message: Any) -> list[ToolCall]:
    """Every tool call of one assistant turn, in order, whichever client's message it is.

    Accepts an Anthropic ``Message`` (its ``content`` blocks), an OpenAI chat ``ChatCompletion``
    (its first choice) or its ``message`` (``tool_calls``), an OpenAI ``Response`` (its ``output``
    items), or a plain list of calls.  Blocks that are not tool calls (text, thinking, reasoning)
    are skipped; a turn with no calls gives an empty list.
    """
    data = as_plain(message)
    if isinstance(data, list):
        return [read_call(item) for item in data if _is_call(item)]
    if not isinstance(data, Mapping):
        raise UnknownCallShape(type(message).__name__, ())
    if isinstance(data.get("choices"), list) and data["choices"]:
        choice = as_plain(data["choices"][0])
        data = as_plain(choice.get("message")) if isinstance(choice, Mapping) else None
        data = data if isinstance(data, Mapping) else {}
    if data.get("type") in ("tool_use", "function_call") or "function" in data:
        return [read_call(data)]
    items: list[Any] = []
    for key in ("tool_calls", "content", "output"):  # chat, Anthropic, Responses: whichever holds calls
        found = data.get(key)
        if isinstance(found, (list, tuple)):
            items.extend(item for item in found if _is_call(item))
    return [read_call(item) for item in items]


_SURROGATE = re.compile("[\ud800-\udfff]")


def answer_text(answer: Mapping[str, Any]) -> str:
    """A tool's answer as the text a model reads: JSON, non-ASCII kept as it is -- except lone
    surrogates, which no client can encode to send back: they stay as ``\\udXXX`` escapes (in JSON
    text they can only stand inside strings, where the escape means the same)."""
    text = json.dumps(answer, ensure_ascii=False, allow_nan=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
