"""What a hostile (or merely confused) model, plugin or manifest found in the agent tools, kept as tests.

Each case was reproduced by an attacker before it was fixed: a filter regex that hung the kernel, a
lone surrogate that crashed the client on the next request, secrets leaking through the middle cut,
answers past their cap, notes that understated what was left out, plugin answers that were not
JSON, manifests that loaded and then broke every tool's schema.
"""

from __future__ import annotations

import json
import time

import jsonschema
import pytest

from execmagic.agents.answers import CallWithoutId, answer_text, calls_in
from execmagic.agents.plugins import ManifestError, PluginTool, parse_manifest
from execmagic.agents.schemas import strict_schema
from execmagic.agents.tools import MIN_OUTPUT_CHARS, Toolbox, ToolSpec
from execmagic.guard.secrets import redact
from waiting import wait_until

TOKEN = "Zq9xW2vB7nK4pL1mR8tY3sD6fG0hJ5cE"


@pytest.fixture
def box(engine):
    return Toolbox(engine, grace=0.3)


def background(box, command):
    started = box.dispatch("Bash", {"command": command, "run_in_background": True})
    shell = started["shell_id"]
    wait_until(lambda: box.engine.shells.read(shell, wait=10, reader="test-wait").at_end, 30, f"{shell} to end",
               interval=0)
    return shell


@pytest.mark.timeout(30)
def test_a_catastrophic_filter_regex_gives_up_instead_of_hanging(box):
    shell = background(box, "echo keep; printf 'a%.0s' {1..60}; echo '!'; echo keep too")
    answer = box.dispatch("BashOutput", {"bash_id": shell, "filter": r"keep|(a|aa)+$"})
    assert answer["success"] and "keep\n" in answer["output"] and "keep too\n" in answer["output"]
    assert "was given up there" in answer["notes"][0]


def test_a_lone_surrogate_never_reaches_the_client_raw(box, tmp_path):
    refused = box.dispatch("Bash", {"command": "echo \ud800"})
    assert refused == {"success": False, "error": "Bash: argument 'command' holds a lone surrogate ('\\ud800' at "
                                                  "position 5), which is not text"}
    text = answer_text({"success": True, "output": "a\ud800b\udfff"})
    text.encode("utf-8")  # what the SDK does before sending it back: no UnicodeEncodeError
    assert json.loads(text)["output"] == "a\ud800b\udfff"


def test_a_secret_straddling_the_cut_is_still_redacted(box):
    assert box.dispatch("Bash", {"command": f"export MY_API_TOKEN={TOKEN}"})["success"]
    try:
        for head in range(14_880, 14_990, 7):  # wherever the cut falls near the secret
            answer = box.dispatch("Bash", {"command": f"head -c {head} /dev/zero | tr '\\0' ' '; "
                                                      f"printf %s {TOKEN}; head -c 60000 /dev/zero | tr '\\0' ' '"})
            assert TOKEN[:8] not in answer["output"] and TOKEN[-8:] not in answer["output"], head
    finally:
        box.dispatch("Bash", {"command": "unset MY_API_TOKEN"})
    cut = redact(" " * 50_000 + "DB_PASSWORD=hunter2supersecret" + " " * 14_934, {})
    assert "hunter2" not in cut


def test_redaction_never_pushes_an_answer_past_its_cap(box):
    answer = box.dispatch("Bash", {"command": "yes 'TOKEN=x' | head -c 100000"})
    assert len(answer["output"]) <= 30_000 and "[REDACTED]" in answer["output"]


def test_a_lone_private_key_header_does_not_swallow_what_follows(box):
    answer = box.dispatch("Bash", {"command": "echo '-----BEGIN PRIVATE KEY-----'; seq 1 100000"})
    assert "characters omitted from the middle; full output in" in answer["output"]
    answer = box.dispatch("Bash", {"command": "echo 'see -----BEGIN RSA PRIVATE KEY----- in docs'; ls /nonexistent"})
    assert answer["output"].startswith("see [REDACTED] in docs\n") and "No such file" in answer["output"]


def test_over_a_megabyte_the_note_says_the_real_size(box):
    answer = box.dispatch("Bash", {"command": "seq 1 2000000"})
    assert "[the middle left out: 14.9 MB in all; full output in " in answer["output"]
    assert answer["output"].startswith("1\n2\n") and answer["output"].endswith("1999999\n2000000\n")


def test_bash_output_says_what_it_did_not_return(box):
    shell = background(box, "seq 1 100000 >&2")
    answer = box.dispatch("BashOutput", {"bash_id": shell})
    out = answer["output"]
    assert out.startswith("[stderr]\n[… ") and "of earlier output not returned here; full output in" in out
    assert out.endswith("99999\n100000\n") and len(out) <= 30_000


def test_the_stderr_header_survives_when_both_streams_are_long(box):
    shell = background(box, "seq 1 10000; seq 1 10000 | sed 's/^/E/' >&2")
    out = box.dispatch("BashOutput", {"bash_id": shell})["output"]
    assert len(out) <= 30_000 and "\n[stderr]\nE1\nE2\n" in out and out.endswith("E10000\n")
    assert out.startswith("1\n2\n") and "9999\n10000\n[stderr]" in out


def make_plugin(tmp_path, engine, body, parameters=(), name="hostile", timeout=5, exit_grace=5.0):
    script = tmp_path / f"{name}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return PluginTool(parse_manifest({"tool": {"name": name}, "exec": {"binary": str(script), "timeout": timeout},
                                      "parameters": list(parameters)}), engine, grace=0.2, exit_grace=exit_grace)


def test_plugin_answers_are_plain_json_capped_and_redacted(box, tmp_path):
    box.add(make_plugin(tmp_path, box.engine, """echo '{"success": false, "error": NaN}'\n""", name="nan").spec())
    assert json.loads(answer_text(box.dispatch("nan", {}))) == {"success": False, "output": "", "error": "NaN"}
    box.add(make_plugin(tmp_path, box.engine, f"""printf '{{"success": true, "output": {{"a": true}}, "error": "ghp_{"A1b2" * 9}"}}\\n'\n""",
                        name="obj").spec())
    answer = box.dispatch("obj", {})
    assert answer["output"] == '{"a": true}' and answer["error"] == "[REDACTED]"
    box.add(make_plugin(tmp_path, box.engine, """python3 -c 'import json; print(json.dumps({"success": True, "output": "x" * 5000000}))'\n""",
                        name="big").spec())
    assert len(box.dispatch("big", {})["output"]) <= 30_000


def test_plugin_arguments_are_checked_all_the_way_down(box, tmp_path):
    box.add(make_plugin(tmp_path, box.engine, 'read line; echo "{\\"success\\": true, \\"output\\": \\"ran\\"}"\n', [
        {"name": "tags", "type": "array", "items": {"type": "integer"}},
        {"name": "o", "type": "object"}], name="deep").spec())
    assert box.dispatch("deep", '{"tags": [1, NaN]}')["error"] == "deep: argument 'tags'[1] must be integer, not number NaN"
    assert box.dispatch("deep", '{"tags": [1, "x"]}')["error"] == "deep: argument 'tags'[1] must be integer, not string \"x\""
    assert box.dispatch("deep", '{"o": {"x": Infinity}}')["error"] == "deep: argument 'o'.x must be a finite number, not inf"
    assert box.dispatch("deep", '{"tags": [1, 2.0]}')["output"] == "ran"


def test_a_plugin_that_hangs_after_its_result_line_gives_its_answer(box, tmp_path):
    """The line came and the exit did not: after the exit grace the plugin's whole tree is stopped
    (a child it left behind too; the fixture proves nothing is left) and the line stands."""
    box.add(make_plugin(tmp_path, box.engine, """echo '{"success": true, "output": "done"}'; sleep 30 & exec sleep 30\n""",
                        name="hangs", timeout=10, exit_grace=0.3).spec())
    begin = time.monotonic()
    answer = box.dispatch("hangs", {})
    assert answer == {"success": True, "output": "done", "error": None}
    assert time.monotonic() - begin < 5  # the grace and the stop, not the 10 s timeout


def test_the_exit_grace_comes_on_top_of_the_timeout_for_the_line(box, tmp_path):
    """A line just before the timeout still leaves the whole grace for the exit, and a non-zero exit
    within the grace still overrides the line's success."""
    body = """sleep 0.6; echo '{"success": true, "output": "late"}'; sleep 0.6; exit 3\n"""
    box.add(make_plugin(tmp_path, box.engine, body, name="late", timeout=1, exit_grace=3).spec())
    answer = box.dispatch("late", {})
    assert answer["success"] is False and "exited with exit 3" in answer["error"]
    box.add(make_plugin(tmp_path, box.engine, body.replace("exit 3", "exit 0"), name="late_ok", timeout=1,
                        exit_grace=3).spec())
    assert box.dispatch("late_ok", {}) == {"success": True, "output": "late", "error": None}


def test_a_plugin_without_a_line_still_times_out(box, tmp_path):
    box.add(make_plugin(tmp_path, box.engine, "echo working >&2; exec sleep 30\n", name="mute", timeout=0.5).spec())
    begin = time.monotonic()
    answer = box.dispatch("mute", {})
    assert answer["success"] is False and answer["error"] == "plugin 'mute' timed out after 0.5s; stderr: working"
    assert time.monotonic() - begin < 4  # the timeout, not the timeout plus the exit grace


@pytest.mark.parametrize(("parameter", "field", "message"), [
    ({"name": "d", "type": "array", "items": {"type": "string"}, "default": [float("nan")]},
     "parameters[0].default", "must hold only JSON values"),
    ({"name": "d", "type": "array", "items": {"type": "integer"}, "default": ["x"]},
     "parameters[0].default", "[0] must be an integer"),
    ({"name": "s", "type": "string", "items": {"type": "array"}}, "parameters[0].items", "is only for an array"),
    ({"name": "a", "type": "array", "items": {"type": "string", "items": {"type": "bogus"}}},
     "parameters[0].items.items", "is only for an array"),
])
def test_manifests_that_would_break_a_client_do_not_load(tmp_path, parameter, field, message):
    with pytest.raises(ManifestError) as caught:
        make_plugin(tmp_path, None, "true\n", [parameter])
    assert caught.value.field == field and message in caught.value.reason


def test_deeply_nested_items_and_absurd_timeouts_do_not_load(tmp_path):
    items = {"type": "string"}
    for _ in range(8):
        items = {"type": "array", "items": items}
    with pytest.raises(ManifestError, match="nests arrays more than 5 deep"):
        make_plugin(tmp_path, None, "true\n", [{"name": "n", "type": "array", "items": items}])
    with pytest.raises(ManifestError, match=r"exec\.timeout: must be at most 3600"):
        make_plugin(tmp_path, None, "true\n", timeout=1e10)


def test_hand_made_schemas_strict_mode_cannot_say_stay_plain():
    for prop in ({"anyOf": [{"type": "string"}, {"type": "object"}]}, {"type": "array"}, {"enum": ["a"]},
                 {"type": "array", "items": [{"type": "string"}]}, {"type": "string", "examples": ["x"]}):
        assert strict_schema({"type": "object", "properties": {"p": prop}}) is None, prop
    assert strict_schema({"type": "object", "properties": {"p": {"type": "string"}},
                          "additionalProperties": {"type": "string"}}) is None
    described = strict_schema({"type": "object", "properties": {"p": {"type": "array", "items": {"type": "boolean"},
                                                                       "default": [True, False]}}})
    assert described["properties"]["p"]["description"] == "(default [true, false])"


def test_tool_names_and_output_budgets_are_checked_by_the_toolbox(box):
    with pytest.raises(ValueError, match=r"tool name 'café' must match"):
        box.add(ToolSpec("café", "", {"type": "object", "properties": {}}, lambda args: {"success": True}))
    with pytest.raises(ValueError, match=f"at least {MIN_OUTPUT_CHARS:,}"):
        Toolbox(box.engine, max_output=50)


def test_calls_without_ids_are_refused_and_odd_messages_read_whole(box):
    with pytest.raises(CallWithoutId, match="no usable 'id'"):
        box.answer({"type": "tool_use", "id": 5, "name": "ListShells", "input": {}})
    with pytest.raises(CallWithoutId, match="no usable 'call_id'"):
        box.answer({"type": "function_call", "id": "fc_x", "name": "ListShells", "arguments": "{}"})
    unknown = box.answer({"type": "tool_use", "id": "t", "name": 5, "input": {}})
    assert unknown["is_error"] and "unknown tool 5" in json.loads(unknown["content"])["error"]
    mixed = {"tool_calls": None, "content": [{"type": "text", "text": "hi"},
                                             {"type": "tool_use", "id": "t1", "name": "ListShells", "input": {}}]}
    assert [c.call_id for c in calls_in(mixed)] == ["t1"]
    assert [c.call_id for c in calls_in([{"type": "text", "text": "x"},
                                         {"type": "tool_use", "id": "t2", "name": "ListShells", "input": {}}])] == ["t2"]
    assert box.dispatch("Bash", {"command": "true", "foo": None})["error"].startswith("Bash: unknown argument 'foo'")


def test_every_schema_still_validates_with_hostile_but_legal_plugins(engine, tmp_path):
    box = Toolbox(engine)
    box.add(make_plugin(tmp_path, engine, "true\n", [
        {"name": "grid", "type": "array", "items": {"type": "array", "items": {"type": "object"}}},
        {"name": "flags", "type": "array", "items": {"type": "boolean"}, "default": [True, False]},
    ], name="odd").spec())
    for style in ("anthropic", "openai", "mcp"):
        for definition in box.schemas(style):
            schema = definition.get("input_schema") or definition.get("inputSchema") or definition["function"]["parameters"]
            jsonschema.Draft202012Validator.check_schema(schema)
    odd = {d["function"]["name"]: d["function"] for d in box.schemas("openai", strict=True)}["odd"]
    assert odd["strict"] is False  # objects with free-form keys inside: plain, for that tool only
