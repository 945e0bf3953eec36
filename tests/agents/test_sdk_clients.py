"""A scripted conversation through the real Anthropic and OpenAI SDK clients, with no glue.

Each client's HTTP transport is replaced by a local mock that plays the model: it checks every
request against the API's rules for tools (names, schemas, strict mode, every tool call answered in
the next message, content as text) and answers with the next step of a script that reacts to what
the tools said.  The loop under test is the README's: ``answer_all`` and nothing else.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re

import pytest

from execmagic.agents.schemas import NAME_PATTERN
from execmagic.agents.tools import Toolbox

from .test_client_shapes import check_json_schema, check_strict

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")


def http_of(sdk):
    """The HTTP library the SDK is built on (``httpx``, or its successor ``httpx2`` in newer releases)."""
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    return getattr(base, "httpx2", None) or base.httpx

JOB = "for i in 1 2 3; do echo step $i; echo noise; sleep 0.2; done; echo finished"


class ScriptedModel:
    """The model's side: a generator of tool-call steps that reads the answers it gets back.

    Steps: start a background job; poll it with a filter until it is done; two calls at once;
    start a long job and kill it; then a closing text.
    """

    def __init__(self):
        self.answers: list[list[dict]] = []  # what each turn's tool calls got back, in order
        self.turns = self._script()
        self.polls = 0

    def _script(self):
        started = yield [("Bash", {"command": JOB, "run_in_background": True, "description": "three steps"})]
        shell = started[0]["shell_id"]
        while True:
            self.polls += 1
            (polled,) = yield [("BashOutput", {"bash_id": shell, "filter": "step|finished"})]
            if not polled["running"] and polled["finished_and_read"]:
                break
        yield [("Bash", {"command": "echo left"}), ("Bash", {"command": "echo right"})]
        (long,) = yield [("Bash", {"command": "sleep 300", "run_in_background": True})]
        yield [("KillShell", {"shell_id": long["shell_id"]})]
        yield [("ListShells", {})]

    def next_step(self, answers):
        try:
            return self.turns.send(answers) if answers is not None else next(self.turns)
        except StopIteration:
            return None


def check_tools(tools, strict_key=None):
    names = []
    for tool in tools:
        name = tool["function"]["name"] if "function" in tool else tool["name"]
        assert re.fullmatch(NAME_PATTERN, name), name
        names.append(name)
        schema = tool["function"]["parameters"] if "function" in tool else tool["input_schema"]
        check_json_schema(schema)
        if strict_key and tool["function"].get("strict"):
            check_strict(schema)
    assert len(names) == len(set(names))


def anthropic_transport(model: ScriptedModel, http):
    ids = (f"toolu_{n:02d}" for n in itertools.count())

    def handle(request):
        body = json.loads(request.content)
        check_tools(body["tools"])
        messages = body["messages"]
        answers = None
        if len(messages) > 1:  # the API's rule: every tool_use of the last assistant turn answered, in order
            asked = [b["id"] for b in messages[-2]["content"] if b["type"] == "tool_use"]
            results = [b for b in messages[-1]["content"] if b["type"] == "tool_result"]
            assert [r["tool_use_id"] for r in results] == asked
            for r in results:
                assert isinstance(r["content"], str) and isinstance(r["is_error"], bool)
                assert json.loads(r["content"])["success"] is not r["is_error"]
            answers = [json.loads(r["content"]) for r in results]
            model.answers.append(answers)
        step = model.next_step(answers)
        if step is None:
            content, stop = [{"type": "text", "text": "All done."}], "end_turn"
        else:
            content = [{"type": "text", "text": "Working on it."}] + [
                {"type": "tool_use", "id": next(ids), "name": name, "input": args} for name, args in step]
            stop = "tool_use"
        return http.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    return http.MockTransport(handle)


def openai_transport(model: ScriptedModel, properties_of, http):
    ids = (f"call_{n:02d}" for n in itertools.count())

    def handle(request):
        body = json.loads(request.content)
        check_tools(body["tools"], strict_key="strict")
        messages = body["messages"]
        answers = None
        if len(messages) > 1:
            last_assistant = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
            asked = [c["id"] for c in messages[last_assistant]["tool_calls"]]
            results = messages[last_assistant + 1:]
            assert [m["role"] for m in results] == ["tool"] * len(asked)
            assert [m["tool_call_id"] for m in results] == asked
            assert all(isinstance(m["content"], str) for m in results)
            answers = [json.loads(m["content"]) for m in results]
            model.answers.append(answers)
        step = model.next_step(answers)
        if step is None:
            message, finish = {"role": "assistant", "content": "All done."}, "stop"
        else:
            calls = []
            for name, args in step:  # strict mode: every property is sent, null for those not used
                sent = {key: args.get(key) for key in properties_of[name]}
                calls.append({"id": next(ids), "type": "function",
                              "function": {"name": name, "arguments": json.dumps(sent)}})
            message, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
        return http.Response(200, json={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    return http.MockTransport(handle)


def responses_transport(model: ScriptedModel, properties_of, http):
    """The Responses API's side: flat function tools, each with its ``strict`` flag (the API requires one);
    every ``function_call`` item of the last output answered by a ``function_call_output`` in the next input."""
    ids = (f"fc_{n:02d}" for n in itertools.count())

    def handle(request):
        body = json.loads(request.content)
        for tool in body["tools"]:
            assert {"type", "name", "parameters", "strict"} <= set(tool) and tool["type"] == "function", tool
            assert re.fullmatch(NAME_PATTERN, tool["name"])
            check_json_schema(tool["parameters"])
            if tool["strict"]:
                check_strict(tool["parameters"])
        items = body["input"]
        answers = None
        if len(items) > 1:
            last_call = max(i for i, item in enumerate(items) if item.get("type") == "function_call")
            first_call = min(i for i, item in enumerate(items) if item.get("type") == "function_call"
                             and all(it.get("type") == "function_call" for it in items[i:last_call + 1]))
            asked = [item["call_id"] for item in items[first_call:last_call + 1]]
            results = items[last_call + 1:]
            assert [r["type"] for r in results] == ["function_call_output"] * len(asked)
            assert [r["call_id"] for r in results] == asked
            assert all(isinstance(r["output"], str) for r in results)
            answers = [json.loads(r["output"]) for r in results]
            model.answers.append(answers)
        step = model.next_step(answers)
        if step is None:
            output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "All done.", "annotations": []}]}]
        else:
            output = [{"type": "function_call", "id": f"item_{call_id}", "call_id": call_id, "name": name,
                       "arguments": json.dumps({key: args.get(key) for key in properties_of[name]}),
                       "status": "completed"} for (name, args), call_id in zip(step, ids, strict=False)]
        return http.Response(200, json={
            "id": "resp_1", "object": "response", "created_at": 0, "model": body["model"], "status": "completed",
            "output": output, "tools": body["tools"], "parallel_tool_calls": True, "tool_choice": "auto"})

    return http.MockTransport(handle)


def test_openai_responses_sdk_loop_with_answer_all_in_strict_mode(engine):
    box = Toolbox(engine, grace=0.3)
    model = ScriptedModel()
    tools = box.schemas("openai-responses", strict=True)
    http = http_of(openai)
    properties_of = {t["name"]: list(t["parameters"]["properties"]) for t in tools}
    client = openai.OpenAI(api_key="test", base_url="http://model.test/v1",
                           http_client=http.Client(transport=responses_transport(model, properties_of, http)))
    # -- the loop as Toolbox.answer_all's docstring shows it
    items: list = [{"role": "user", "content": "Run the job, watch it, then clean up."}]
    while True:
        response = client.responses.create(model="gpt-test", tools=tools, input=items)
        answers = box.answer_all(response)
        if not answers:
            break
        items += [item.model_dump(exclude_none=True) for item in response.output] + answers
    # --
    assert response.output_text == "All done."
    check_conversation(model, box)


def check_conversation(model: ScriptedModel, box: Toolbox):
    started, *polls = model.answers[: 1 + model.polls]
    assert started[0]["success"] and started[0]["status"] == "running"
    seen = "".join(p[0]["output"] for p in polls)
    assert seen == "step 1\nstep 2\nstep 3\nfinished\n"  # filtered, in order, nothing twice
    assert polls[-1][0]["exit_code"] == 0 and polls[-1][0]["status"] == "exited 0"
    parallel = model.answers[1 + model.polls]
    assert [a["output"] for a in parallel] == ["left\n", "right\n"]
    killed = model.answers[3 + model.polls][0]
    assert killed["success"] and killed["status"].startswith("killed")
    listed = model.answers[4 + model.polls][0]["shells"]
    assert [s["status"] for s in listed][-1].startswith("killed")
    assert all(not info.running for info in box.engine.shells.list())


@pytest.mark.timeout(60)
def test_anthropic_sdk_loop_with_answer_all(engine):
    box = Toolbox(engine, grace=0.3)
    model = ScriptedModel()
    http = http_of(anthropic)
    client = anthropic.Anthropic(api_key="test", base_url="http://model.test",
                                 http_client=http.Client(transport=anthropic_transport(model, http)))
    # -- the loop as the README shows it
    messages = [{"role": "user", "content": "Run the job, watch it, then clean up."}]
    while True:
        reply = client.messages.create(model="claude-test", max_tokens=1024, tools=box.schemas("anthropic"),
                                       messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        messages.append({"role": "user", "content": box.answer_all(reply)})
    # --
    assert reply.content[0].text == "All done."
    check_conversation(model, box)


@pytest.mark.timeout(60)
def test_openai_sdk_loop_with_answer_all_in_strict_mode(engine):
    box = Toolbox(engine, grace=0.3)
    model = ScriptedModel()
    tools = box.schemas("openai", strict=True)
    http = http_of(openai)
    properties_of = {t["function"]["name"]: list(t["function"]["parameters"]["properties"]) for t in tools}
    client = openai.OpenAI(api_key="test", base_url="http://model.test/v1",
                           http_client=http.Client(transport=openai_transport(model, properties_of, http)))
    # -- the loop as the README shows it
    messages = [{"role": "user", "content": "Run the job, watch it, then clean up."}]
    while True:
        reply = client.chat.completions.create(model="gpt-test", tools=tools, messages=messages)
        messages.append(reply.choices[0].message)
        if not reply.choices[0].message.tool_calls:
            break
        messages.extend(box.answer_all(reply))
    # --
    assert reply.choices[0].message.content == "All done."
    check_conversation(model, box)
