"""Tool calls in, answers out, in each client's own shape -- so an agent loop needs no glue.

A model asks for tools in its API's shape and expects the answers in the matching one: which keys
hold a call's id, name and arguments, where a turn keeps its calls, and how an answer is worded are
the rows of :data:`~.clients.CLIENTS` (Anthropic Messages, OpenAI Chat Completions and Responses);
this module reads any of them with the same code.

The SDKs hand out their own objects (pydantic models); they are read through
``model_dump()`` when they have it, so plain dicts and SDK objects are the same
here.  The answer's content is the tool's answer as JSON text: the APIs refuse a
dict where they expect text, and JSON keeps every field (exit code, status, notes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..process.errors import UsageProblem, shown_value
from ..process.records import record
from .clients import CallShape, call_shapes, expected_calls

__all__ = ["CallWithoutId", "ToolCall", "UnknownCallShape", "answer_text", "as_plain", "calls_in", "read_call"]


class UnknownCallShape(UsageProblem):
    """Something handed to :meth:`Toolbox.answer` that is no known client's tool call."""

    def __init__(self, kind: str, keys: tuple[str, ...]) -> None:
        self.kind = kind
        self.keys = keys
        shown = ", ".join(keys[:8]) or "none"
        super().__init__(f"not a tool call: a {kind} with keys {shown}; expected {expected_calls()}")


@record
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


def _read(shape: CallShape, data: Mapping[str, Any]) -> ToolCall:
    """One call of ``shape``'s client, its name and arguments where that client keeps them."""
    source = as_plain(data.get(shape.nested)) if shape.nested is not None else data
    return ToolCall(_call_id(data, shape.id_key), source.get(shape.name_key), source.get(shape.arguments_key),
                    shape.answer)


def read_call(call: Any) -> ToolCall:
    """Read one tool call of any known client; anything else is :class:`UnknownCallShape`.

    The name is passed on as sent (a name that is no tool, or no string, is answered as an error);
    the id must be there, since an answer the API cannot match is refused with the whole request.
    """
    data = as_plain(call)
    if not isinstance(data, Mapping):
        raise UnknownCallShape(type(call).__name__, ())
    for shape in call_shapes():
        if shape.matches(data, as_plain):
            return _read(shape, data)
    raise UnknownCallShape("mapping" if isinstance(call, Mapping) else type(call).__name__,
                           tuple(str(k) for k in data))


def _is_call(block: Any) -> bool:
    """Whether a block of a turn is a tool call (text, thinking and reasoning blocks are not)."""
    data = as_plain(block)
    return isinstance(data, Mapping) and any(shape.matches(data, as_plain) for shape in call_shapes())


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
    if isinstance(data.get("choices"), list) and data["choices"]:  # a completion: its first choice's message
        choice = as_plain(data["choices"][0])
        data = as_plain(choice.get("message")) if isinstance(choice, Mapping) else None
        data = data if isinstance(data, Mapping) else {}
    if any(shape.claims(data) for shape in call_shapes()):
        return [read_call(data)]
    items: list[Any] = []
    for key in dict.fromkeys(shape.turn_key for shape in call_shapes()):  # whichever holds the turn's calls
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
