"""The client formats are rows of one table: a new client is one row, read by schemas, answers and calls alike.

A toy client (its own keys everywhere) is added as a row only; the Toolbox then lists its tools, reads its
calls from a turn and answers them in its shape, and names it among what a call may be.
"""

from __future__ import annotations

import json

import pytest

from execmagic.agents import clients
from execmagic.agents.answers import UnknownCallShape, calls_in, read_call
from execmagic.agents.clients import CLIENTS, FORMATS, CallShape, ClientFormat, Definition, schema_format
from execmagic.agents.tools import Toolbox

TOY = ClientFormat("toy", Definition("args_schema", nested="tool"), CallShape(
    "toy_call", "a toy call", "calls", "ref", name_key="tool", arguments_key="args",
    answer_fixed={"kind": "toy_answer"}, answer_id_key="ref", answer_text_key="body", answer_error_key="failed"))


@pytest.fixture
def box(engine, monkeypatch):
    monkeypatch.setattr(clients, "CLIENTS", (*CLIENTS, TOY))
    return Toolbox(engine, grace=0.3)


def test_a_new_client_is_one_row(box):
    listed = box.schemas("toy")
    assert [d["tool"]["name"] for d in listed] == list(box.tools)
    assert all(d["type"] == "tool" and set(d["tool"]) == {"name", "description", "args_schema"} for d in listed)
    assert listed[0]["tool"]["args_schema"] == box.tools["Bash"].parameters
    with pytest.raises(ValueError, match="strict=True is OpenAI's strict mode"):
        box.schemas("toy", strict=True)

    turn = {"calls": [{"type": "text", "text": "let me look"},
                      {"type": "toy_call", "ref": "r1", "tool": "ListShells", "args": {}},
                      {"type": "toy_call", "ref": "r2", "tool": "NoSuchTool", "args": {}}]}
    first, second = box.answer_all(turn)
    assert first["kind"] == "toy_answer" and first["ref"] == "r1" and first["failed"] is False
    assert json.loads(first["body"]) == {"success": True, "shells": []}
    assert second["ref"] == "r2" and second["failed"] is True and "unknown tool" in json.loads(second["body"])["error"]
    assert list(first) == ["kind", "ref", "body", "failed"]

    with pytest.raises(UnknownCallShape, match=r"\(responses\) or a toy call$"):
        read_call({"type": "toy_answer"})


def test_a_row_of_a_toy_shape_does_not_read_another_clients_calls(box):
    """The rows do not overlap: each call is read by its own row, whatever rows are added."""
    calls = [{"type": "tool_use", "id": "a1", "name": "ListShells", "input": {}},
             {"id": "c1", "type": "function", "function": {"name": "ListShells", "arguments": "{}"}},
             {"type": "function_call", "call_id": "f1", "name": "ListShells", "arguments": "{}"},
             {"type": "toy_call", "ref": "t1", "tool": "ListShells", "args": {}}]
    answers = [box.answer(call) for call in calls]
    assert [a.get("type") or a.get("role") or a.get("kind") for a in answers] == [
        "tool_result", "tool", "function_call_output", "toy_answer"]
    assert [c.call_id for c in calls_in(calls)] == ["a1", "c1", "f1", "t1"]


def test_the_table_gives_what_the_clients_take():
    assert FORMATS == ("anthropic", "openai", "openai-responses", "mcp")
    assert [c.name for c in CLIENTS] == ["anthropic", "openai", "openai-responses", "mcp"]
    for row in CLIENTS:
        assert row.definition is not None or row.call is not None, row.name
    for hostile in ("gemini", "responses", "", None, 3, "OPENAI"):
        with pytest.raises(ValueError, match="schema style must be one of 'anthropic', 'openai', 'openai-responses',"
                                             " 'mcp'"):
            schema_format(hostile)  # type: ignore[arg-type]
    assert schema_format("openai", strict=True).strict
