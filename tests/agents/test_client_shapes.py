"""Every client's format from one source: schemas that each API accepts, answers in each client's shape,
what strict mode sends (nulls, integral floats) read as meant, and output shaped honestly at every size."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from execmagic.agents.answers import UnknownCallShape, calls_in
from execmagic.agents.plugins import PluginTool, parse_manifest
from execmagic.agents.schemas import NAME_PATTERN, STRICT_DROPPED, strict_schema
from execmagic.agents.tools import Toolbox, cut_middle, merge_streams
from execmagic.guard.secrets import redact
from waiting import wait_until

# -- what each API requires of a tool definition ----------------------------------------------------


def check_json_schema(schema):
    """Valid under the 2020-12 metaschema, and an object schema at the top (both APIs require it)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and isinstance(schema["properties"], dict)


def check_strict(schema, where="parameters"):
    """OpenAI strict mode: every object closed and fully required, no keyword it refuses, arrays with items."""
    if isinstance(schema, dict):
        for keyword in STRICT_DROPPED:
            assert keyword not in schema, (where, keyword)
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "object" in kinds:
            assert schema["additionalProperties"] is False, where
            assert sorted(schema["required"]) == sorted(schema["properties"]), where
        if "array" in kinds:
            assert "items" in schema, where
        for key, value in schema.items():
            if key in ("properties",):
                for name, sub in value.items():
                    check_strict(sub, f"{where}.{name}")
            elif key == "items":
                check_strict(value, f"{where}.items")


def check_definitions(box):
    names = [spec.name for spec in box.tools.values()]
    for name in names:
        assert re.fullmatch(NAME_PATTERN, name), name
    anthropic = box.schemas("anthropic")
    assert [d["name"] for d in anthropic] == names
    for d in anthropic:
        assert set(d) == {"name", "description", "input_schema"}
        check_json_schema(d["input_schema"])
    mcp = box.schemas("mcp")
    assert [d["name"] for d in mcp] == names
    for d in mcp:
        assert set(d) == {"name", "description", "inputSchema"}
        check_json_schema(d["inputSchema"])
    for d in box.schemas("openai"):
        assert d["type"] == "function" and set(d["function"]) == {"name", "description", "parameters"}
        check_json_schema(d["function"]["parameters"])
    strict = box.schemas("openai", strict=True)
    for d in strict:
        check_json_schema(d["function"]["parameters"])
        if d["function"]["strict"]:
            check_strict(d["function"]["parameters"])
    return {d["function"]["name"]: d["function"] for d in strict}


@pytest.fixture
def box(engine):
    return Toolbox(engine, grace=0.3)


def make_plugin(tmp_path, name, parameters, engine=None):
    script = tmp_path / f"{name}.sh"
    script.write_text('#!/bin/sh\nread line\nprintf \'{"success": true, "output": "%s"}\\n\' "$(echo "$line" | tr -d \'"\')"\n')
    script.chmod(0o755)
    return PluginTool(parse_manifest({"tool": {"name": name, "description": f"the {name} tool"},
                                      "exec": {"binary": str(script), "timeout": 5}, "parameters": parameters}), engine)


def test_builtin_schemas_meet_every_format(box):
    strict = check_definitions(box)
    assert all(f["strict"] for f in strict.values())
    bash = strict["Bash"]["parameters"]["properties"]
    assert bash["timeout"]["type"] == ["integer", "null"] and "default" not in bash["timeout"]
    assert "(default 120000; at least 1000; at most 600000)" in bash["timeout"]["description"]
    assert bash["command"]["type"] == "string"  # required: not nullable
    assert strict["ListShells"]["parameters"] == {"type": "object", "properties": {}, "required": [],
                                                  "additionalProperties": False}


def test_plugin_schemas_meet_every_format(engine, tmp_path):
    box = Toolbox(engine)
    box.add(make_plugin(tmp_path, "tagger", [
        {"name": "tags", "type": "array", "items": {"type": "string"}, "required": True},
        {"name": "grid", "type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        {"name": "mode", "type": "string", "default": "fast"},
    ], engine).spec())
    box.add(make_plugin(tmp_path, "free_form", [{"name": "options", "type": "object"}], engine).spec())
    strict = check_definitions(box)
    tagger = strict["tagger"]
    assert tagger["strict"] is True
    assert tagger["parameters"]["properties"]["grid"] == {
        "type": ["array", "null"], "description": "", "items": {"type": "array", "items": {"type": "integer"}}}
    assert tagger["parameters"]["properties"]["mode"]["description"] == "(default fast)"
    # an object with free-form keys cannot be strict: that one tool says so, the others stay strict
    assert strict["free_form"]["strict"] is False and strict["Bash"]["strict"] is True
    assert strict["free_form"]["parameters"]["properties"]["options"] == {"type": "object", "description": ""}


def test_strict_schema_keeps_enums_nullable_and_refuses_free_objects():
    schema = {"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]},
                                               "size": {"type": "integer", "minimum": 1}}, "required": ["size"]}
    strict = strict_schema(schema)
    assert strict["properties"]["mode"] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert strict["properties"]["size"] == {"type": "integer", "description": "(at least 1)"}
    assert strict_schema({"type": "object"}) is None
    assert strict_schema({"type": "object", "properties": {"o": {"type": "object", "properties": {}}}}) is None


def test_schema_styles_are_checked(box):
    with pytest.raises(ValueError, match="one of 'anthropic', 'openai', 'openai-responses', 'mcp'"):
        box.schemas("gemini")
    with pytest.raises(ValueError, match="strict=True is OpenAI's strict mode"):
        box.schemas("anthropic", strict=True)


def test_plugin_names_follow_the_apis_rule(tmp_path):
    for name in ("café", "x" * 65, "a.b", "tool name"):
        with pytest.raises(Exception, match=r"tool.name: must match \^\[a-zA-Z0-9_-\]\{1,64\}\$"):
            make_plugin(tmp_path, name, [])
    assert make_plugin(tmp_path, "x" * 64, []).manifest.name == "x" * 64


# -- what strict mode sends -------------------------------------------------------------------------


def test_nulls_for_optional_arguments_and_integral_floats(box):
    answer = box.dispatch("Bash", {"command": "echo hi", "description": None, "timeout": 5000.0,
                                   "run_in_background": None})
    assert answer["success"] and answer["output"] == "hi\n" and answer["notes"] == []
    assert box.dispatch("BashOutput", {"bash_id": "bg404", "filter": None})["error"].startswith("no background shell")
    half = box.dispatch("Bash", {"command": "true", "timeout": 5000.5})
    assert half == {"success": False, "error": "Bash: argument 'timeout' must be integer, not number 5000.5"}
    missing = box.dispatch("Bash", {"command": None})
    assert missing == {"success": False, "error": "Bash: argument 'command' must be string, not null null"}


def test_plugin_gets_strict_modes_nulls_as_not_given(engine, tmp_path):
    box = Toolbox(engine)
    box.add(make_plugin(tmp_path, "echoer", [{"name": "pin", "type": "integer", "required": True},
                                             {"name": "mode", "type": "string", "default": "out"}], engine).spec())
    answer = box.dispatch("echoer", {"pin": 5.0, "mode": None})
    assert answer["success"] and answer["output"] == "{pin: 5}"  # an int, no null, no default filled in


@pytest.mark.parametrize("command", ["", "   ", "\n\t"])
def test_empty_command_is_an_error_answer(box, command):
    answer = box.dispatch("Bash", {"command": command})
    assert answer == {"success": False, "error": "command is empty: give the shell command to run"}


# -- answers in each client's shape ------------------------------------------------------------------


def test_answer_in_each_clients_shape(box):
    anthropic = box.answer({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo a"}})
    assert set(anthropic) == {"type", "tool_use_id", "content", "is_error"}
    assert anthropic["type"] == "tool_result" and anthropic["tool_use_id"] == "toolu_1"
    assert anthropic["is_error"] is False and json.loads(anthropic["content"])["output"] == "a\n"
    failed = box.answer({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "exit 3"}})
    assert failed["is_error"] is True and json.loads(failed["content"])["exit_code"] == 3
    chat = box.answer({"id": "call_1", "type": "function",
                       "function": {"name": "Bash", "arguments": '{"command": "echo b"}'}})
    assert chat == {"role": "tool", "tool_call_id": "call_1", "content": chat["content"]}
    assert json.loads(chat["content"])["output"] == "b\n"
    responses = box.answer({"type": "function_call", "call_id": "fc_1", "name": "ListShells", "arguments": "{}"})
    assert responses["type"] == "function_call_output" and responses["call_id"] == "fc_1"
    assert json.loads(responses["output"]) == {"success": True, "shells": []}
    unknown = box.answer({"type": "tool_use", "id": "toolu_3", "name": "Nope", "input": {}})
    assert unknown["is_error"] and "unknown tool 'Nope'" in json.loads(unknown["content"])["error"]


def test_answer_all_reads_every_call_of_a_turn_in_order(box):
    message = {"role": "assistant", "content": [
        {"type": "text", "text": "Two at once."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo one"}},
        {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "echo two"}},
    ]}
    answers = box.answer_all(message)
    assert [a["tool_use_id"] for a in answers] == ["t1", "t2"]
    assert [json.loads(a["content"])["output"] for a in answers] == ["one\n", "two\n"]
    completion = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "echo x"}'}}]}}]}
    assert [a["tool_call_id"] for a in box.answer_all(completion)] == ["c1"]
    assert box.answer_all({"role": "assistant", "content": [{"type": "text", "text": "done"}]}) == []
    assert box.answer_all({"role": "assistant", "content": "done", "tool_calls": None}) == []


def test_something_that_is_no_tool_call_is_one_clear_error(box):
    with pytest.raises(UnknownCallShape, match="not a tool call: a mapping with keys name, args"):
        box.answer({"name": "Bash", "args": {}})
    with pytest.raises(UnknownCallShape, match="not a tool call: a int"):
        calls_in(5)


# -- output shaping ----------------------------------------------------------------------------------


def test_stderr_header_is_on_its_own_line(box):
    started = box.dispatch("Bash", {"command": "printf x; echo e >&2", "run_in_background": True})
    # until the shell has ended and both streams are in
    wait_until(lambda: box.engine.shells.read(started["shell_id"], wait=5, reader="test-wait").at_end, 30,
               "the shell to end", interval=0)
    answer = box.dispatch("BashOutput", {"bash_id": started["shell_id"]})
    assert answer["output"] == "x\n[stderr]\ne\n"
    assert merge_streams("a\n", "b") == "a\nb" and merge_streams("", "b", "[stderr]\n") == "[stderr]\nb"


@pytest.mark.parametrize("size", [30_001, 30_100, 31_000, 99_999, 100_000, 1_000_000, 12_345_678])
def test_omitted_count_is_exact(size):
    text = "".join(chr(0x41 + i % 26) for i in range(size))
    cut = cut_middle(text, 30_000, "; full output in /x/log")
    assert len(cut) == 30_000
    stated = int(re.search(r"\[([\d,]+) characters omitted", cut)[1].replace(",", ""))
    note = re.search(r"\n… \[.*?\] …\n", cut)[0]
    assert stated == size - (len(cut) - len(note))
    head, tail = cut.split(note)
    assert text.startswith(head) and text.endswith(tail) and len(head) + stated + len(tail) == size


@pytest.mark.parametrize("size", [999_999, 1_000_000, 1_000_001, 1_200_000, 1_499_999, 1_500_000, 1_500_001,
                                  3_000_000])
def test_the_one_megabyte_cap_holds_at_every_size(engine, size):
    from execmagic.agents.execute import execute

    result = execute({"command": "sh", "args": ["-c", f"yes | head -c {size}"]}, engine=engine)
    if size <= 1_000_000:
        assert len(result.stdout) == size and "omitted" not in result.stdout
    else:
        assert len(result.stdout) < 1_000_200 and "omitted from the middle" in result.stdout


@pytest.mark.timeout(60)
@pytest.mark.parametrize("piece", ["eyJ", "eyJaaaaaaaaaaaa.", "ghp_", "sk-", "xoxb-", "glpat-", "hf_", "a://b:c",
                                   "-----BEGIN PRIVATE KEY-----", "PASSWORD", "xTOKENx=", "="])
def test_redaction_is_linear_on_hostile_lines(piece):
    """A quadratic pattern takes minutes on 400,000 characters; linear redaction well under a second.
    The timeout turns a regression into a failure without timing the normal case."""
    line = piece * (400_000 // len(piece))
    assert redact(line, {"X": "abcdefgh"})
