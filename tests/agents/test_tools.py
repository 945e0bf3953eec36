"""Agent tools: dispatch, schemas, a model-style transcript, guardrails, and the asyncio API."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from execmagic.agents.tools import MAX_OUTPUT_CHARS, Toolbox
from execmagic.engine import Engine, RunOptions
from execmagic.guard.policy import Policy, looks_secret, redact, sanitize_env
from processes import TOKEN_VAR, commands_with
from waiting import wait_until


@pytest.fixture
def box(engine):
    return Toolbox(engine, grace=0.3)


def call(box, name, **arguments):
    answer = box.dispatch(name, arguments)
    assert json.loads(json.dumps(answer)) == answer  # every answer is plain JSON
    return answer


def test_schemas_in_both_formats(box):
    openai = box.schemas("openai")
    anthropic = box.schemas("anthropic")
    assert [s["function"]["name"] for s in openai] == ["Bash", "BashOutput", "KillShell", "ListShells"]
    assert [s["name"] for s in anthropic] == ["Bash", "BashOutput", "KillShell", "ListShells"]
    bash = anthropic[0]["input_schema"]
    assert bash["required"] == ["command"]
    assert bash["properties"]["timeout"] == {"type": "integer", "description": "Timeout in milliseconds (max 600000)",
                                             "default": 120000, "minimum": 1000, "maximum": 600000}
    assert openai[1]["function"]["parameters"]["required"] == ["bash_id"]
    assert anthropic[2]["input_schema"]["required"] == ["shell_id"]


def test_bash_runs_in_the_persistent_session(box, tmp_path):
    assert call(box, "Bash", command=f"cd {tmp_path} && export STEP=one")["success"]
    answer = call(box, "Bash", command='pwd; echo "$STEP"', description="show where we are")
    assert answer["output"] == f"{tmp_path}\none\n" and answer["exit_code"] == 0 and answer["cwd"] == str(tmp_path)


def test_bash_failure_timeout_and_clamp(box):
    failed = call(box, "Bash", command="echo out; echo err >&2; exit 3")
    assert failed["success"] is False and failed["exit_code"] == 3 and failed["output"] == "out\nerr\n"
    slow = call(box, "Bash", command="echo begun; sleep 30", timeout=50)
    assert slow["timed_out"] and slow["output"] == "begun\n" and slow["status"] == "timed out after 1 s"
    assert "timeout 50 ms is outside 1000–600000 ms; used 1000 ms" in slow["notes"]


def test_bash_output_is_cut_in_the_middle(box):
    answer = call(box, "Bash", command="seq 1 100000")
    out = answer["output"]
    assert len(out) <= MAX_OUTPUT_CHARS
    assert out.startswith("1\n2\n") and out.endswith("99999\n100000\n")
    assert "characters omitted from the middle; full output in " in out and answer["log_paths"]["stdout"] in out


def test_dispatch_never_raises(box):
    cases = [
        ("Nope", {}, "unknown tool 'Nope'"),
        ("Bash", {}, "missing required argument 'command'"),
        ("Bash", {"command": 5}, "must be string"),
        ("Bash", {"command": "true", "timeout": "soon"}, "must be integer"),
        ("Bash", {"command": "true", "timeout": True}, "must be integer"),
        ("Bash", {"command": "true", "bogus": 1}, "unknown argument 'bogus'"),
        ("BashOutput", {"bash_id": "bg99"}, "no background shell 'bg99'"),
        ("KillShell", {"shell_id": "bg99"}, "no background shell 'bg99'"),
        ("Bash", "{not json", "not valid JSON"),
        ("Bash", "[1, 2]", "must be a JSON object"),
    ]
    for name, arguments, message in cases:
        answer = box.dispatch(name, arguments)
        assert answer["success"] is False and message in answer["error"], (name, arguments, answer)
    assert box.dispatch("Bash", '{"command": "echo via json"}')["output"] == "via json\n"


def test_invalid_filter_regex(box):
    shell = call(box, "Bash", command="sleep 30", run_in_background=True)["shell_id"]
    answer = call(box, "BashOutput", bash_id=shell, filter="(")
    assert answer["success"] is False and "invalid filter regex" in answer["error"]


def test_llm_style_transcript(box):
    """A model starts a build in the background, polls it with a filter until done, kills a server."""
    transcript = []

    def turn(name, **arguments):
        answer = call(box, name, **arguments)
        transcript.append((name, arguments, answer))
        return answer

    build = turn("Bash", command="for i in 1 2 3 4 5 6; do echo \"compiling $i\"; echo \"warning: w$i\"; sleep 0.15; done; echo done",
                 description="build the project", run_in_background=True)
    server = turn("Bash", command="while true; do echo serving; sleep 0.1; done", run_in_background=True)
    assert build["success"] and build["shell_id"] == "bg1" and server["shell_id"] == "bg2"
    seen = []
    for _ in range(100):
        poll = turn("BashOutput", bash_id="bg1", filter="^(compiling|done)")
        seen.append(poll["output"])
        if poll["finished_and_read"]:
            break
        time.sleep(0.1)
    assert poll["status"] == "exited 0" and poll["exit_code"] == 0
    assert "".join(seen) == "".join(f"compiling {i}\n" for i in range(1, 7)) + "done\n"  # only new output each time
    assert sum(bool(s) for s in seen) >= 2  # it really was read in pieces
    assert all("warning" not in s for s in seen)
    killed = turn("KillShell", shell_id="bg2")
    assert killed["success"] and killed["status"] == "killed"
    again = turn("KillShell", shell_id="bg2")
    assert again["success"] and "already killed" in again["message"]
    listing = turn("ListShells")
    assert [(s["id"], s["status"]) for s in listing["shells"]] == [("bg1", "exited 0"), ("bg2", "killed")]
    json.dumps(transcript)  # the whole transcript is JSON


def test_dry_run_runs_nothing(engine, tmp_path):
    box = Toolbox(engine, dry_run=True)
    target = tmp_path / "made"
    answer = call(box, "Bash", command=f"touch {target}")
    confined = {"sandbox": box.sandbox.describe()} if box.sandbox.sandbox is not None else {}  # auto: said where
    assert answer == {"success": True, "dry_run": True, "output": f"[Dry Run] Would execute: touch {target}",
                      "cwd": answer["cwd"], "notes": list(box.sandbox.notes), **confined}
    assert not target.exists()
    assert call(box, "Bash", command="rm -rf /")["success"] is False  # a dry run still refuses


def test_agent_env_hides_secrets_and_output_is_redacted(box, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "a1B2" * 9)
    monkeypatch.setenv("MY_API_KEY", "plainvalue123")
    monkeypatch.setenv("INNOCENT_LOOKING", "sk-" + "Z9y8X7w6" * 4)
    monkeypatch.setenv("DATABASE_URL", "postgres://admin:hunter2@db:5432/app")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
    monkeypatch.setenv("EXECMAGIC_T_NORMAL", "just a value")
    env = call(box, "Bash", command="env")["output"]
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    assert {"GITHUB_TOKEN", "MY_API_KEY", "INNOCENT_LOOKING", "DATABASE_URL"}.isdisjoint(names)
    assert {"PATH", "SSH_AUTH_SOCK", "EXECMAGIC_T_NORMAL"} <= names
    for line in env.splitlines():  # nothing named or shaped like a secret, but for the allow-list
        name, _, value = line.partition("=")
        assert not looks_secret(name, value) or name == "SSH_AUTH_SOCK" or name.startswith("EXECMAGIC_")
    leaked = call(box, "Bash", command=f"echo {os.environ['GITHUB_TOKEN']}")["output"]
    assert leaked == "[REDACTED:GITHUB_TOKEN]\n"
    allowed = Toolbox(box.engine, env_allow=["MY_API_KEY"], redact_secrets=False)
    assert call(allowed, "Bash", command='echo "$MY_API_KEY"')["output"] == "plainvalue123\n"


def test_sanitize_and_redact_units():
    kept, held = sanitize_env({"PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "x", "NOTE": "AKIAABCDEFGHIJKLMNOP",
                               "LS_COLORS": "rs=0:di=01;34:ln=01;36", "SSH_AUTH_SOCK": "/s", "HOME": "/h"})
    assert set(kept) == {"PATH", "LS_COLORS", "SSH_AUTH_SOCK", "HOME"} and set(held) == {"AWS_SECRET_ACCESS_KEY", "NOTE"}
    assert redact("key=AKIAABCDEFGHIJKLMNOP and pw=hunter22", {"PW": "hunter22"}) == "key=[REDACTED] and pw=[REDACTED:PW]"


def test_allowed_roots_refuse_and_undo_escapes(tmp_path):
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3),
                    policy=Policy(allowed_roots=(str(root),), audit_log=str(tmp_path / "audit.jsonl")))
    try:
        engine.session.cwd = str(root / "sub")
        up = engine.run_script("cd ../.. && pwd")
        assert up.exit_code == 0 and up.new_cwd is None
        assert any(f"cd to {tmp_path} was undone" in n for n in up.notes)
        assert engine.run_script("pwd").stdout == f"{root / 'sub'}\n"
        via_link = engine.run_argv(["pwd"], cwd=str(root / "link"))
        assert via_link.error and "outside the allowed directories" in via_link.error and "EPERM" in via_link.error
        assert "outside the allowed" in engine.run_script("pwd", cwd="../..").error
        box = Toolbox(engine)
        assert "outside the allowed" in call(box, "Bash", command="cd /etc && pwd")["notes"][0]
        with pytest.raises(Exception, match="outside the allowed"):
            engine.start_background(engine.plan_script("sleep 1", cwd=str(outside), save_session=False))
        records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert {r["decision"] for r in records} >= {"run", "failed"}
        assert all({"time", "command", "cwd"} <= set(r) for r in records)
        with pytest.raises(Exception, match="refused"):
            engine.run_script("rm -rf /")
        refused = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
        assert refused["decision"] == "refused" and refused["rule"] == "rm-recursive-root"
    finally:
        engine.close()


def test_asyncio_api_inside_a_running_loop(engine):
    import execmagic

    async def main():
        results = await asyncio.gather(*(execmagic.arun(f"echo {i}", engine=engine) for i in range(3)))
        assert [r.stdout for r in results] == ["0\n", "1\n", "2\n"]
        spawned = await execmagic.aspawn(["printf", "%s", "a b"], engine=engine)
        assert spawned.stdout == "a b"
        info = await execmagic.astart("echo bg; sleep 30", engine=engine)
        out = await execmagic.aread(info.id, wait=5, engine=engine)
        assert out.stdout == "bg\n"
        assert (await execmagic.akill(info.id, engine=engine)).shell.status == "killed"
        assert [i.id for i in await execmagic.ashells(engine=engine)] == [info.id]
        task = asyncio.ensure_future(execmagic.arun("sleep 30 & sleep 31", engine=engine))
        sleeps = {"sleep 30", "sleep 31"}  # running: the cancel must stop a command, not a launch yet to come
        await asyncio.to_thread(wait_until, lambda: sleeps <= commands_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 10,
                                "the command's two sleeps")
        begin = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - begin

    assert asyncio.run(main()) < 3  # cancelling the task stopped the command (the fixture proves none is left)


def test_sync_api_module_functions(engine):
    import execmagic

    assert execmagic.run("echo $((1+2))", engine=engine).stdout == "3\n"
    assert execmagic.spawn("printf '%s|' 'one two' three", engine=engine).stdout == "one two|three|"
    with pytest.raises(execmagic.CommandFailed):
        execmagic.run("exit 4", check=True, engine=engine)


def test_bash_output_names_the_line_a_background_script_failed_at(box):
    """As a foreground Bash answer's status says it: the field, where it is known for sure."""
    started = call(box, "Bash", command="echo a\nfalse\necho b\nls /no/such/execmagic-path 2>/dev/null",
                   run_in_background=True)
    poll = wait_until(lambda: (lambda a: a if a["finished_and_read"] else None)(
        call(box, "BashOutput", bash_id=started["shell_id"])), 20, "the shell to end")
    assert (poll["exit_code"], poll["failed_line"]) == (2, 4)
    assert [s.get("failed_line") for s in call(box, "ListShells")["shells"]] == [4]
    ok = call(box, "Bash", command="false\ntrue", run_in_background=True)
    poll = wait_until(lambda: (lambda a: a if a["finished_and_read"] else None)(
        call(box, "BashOutput", bash_id=ok["shell_id"])), 20, "the shell to end")
    assert poll["exit_code"] == 0 and "failed_line" not in poll
