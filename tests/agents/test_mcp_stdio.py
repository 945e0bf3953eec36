"""``execmagic-mcp`` driven by the official MCP client over stdio, as an agent's host runs it.

The client is the SDK's own ``ClientSession`` over ``stdio_client``, so the wire format, the
handshake and the result shapes are the real ones.  Every test proves, through the autouse
fixture, that no process of the server (shells, plugins, the watchdog) is left afterwards --
also when the client is killed with SIGKILL in the middle of a call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from mcp_faults import HOW, TREE, TREE_PROCESSES, give_up, old_sdk, running_under, until
from processes import TOKEN_VAR, assert_none_left
from waiting import wait_until

pytestmark = pytest.mark.timeout(90)

SERVER = os.path.join(os.path.dirname(sys.executable), "execmagic-mcp")
BUILTIN = ["Bash", "BashOutput", "KillShell", "ListShells"]


@pytest.fixture
def plugins(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    script = folder / "word_count.py"
    script.write_text(f"#!{sys.executable}\nimport json, sys\nargs = json.loads(sys.stdin.readline())\n"
                      "print(json.dumps({'success': True, 'output': f\"{len(args['text'].split())} words\"}))\n")
    script.chmod(0o755)
    (folder / "word_count.toml").write_text(textwrap.dedent("""\
        [tool]
        name = "word_count"
        version = "1.0.0"
        description = "Count the words of a text"
        [exec]
        binary = "word_count.py"
        [[parameters]]
        name = "text"
        type = "string"
        description = "The text to count"
        required = true
        """))
    return str(folder)


def params(*args: str, cwd: os.PathLike[str] | None = None) -> StdioServerParameters:
    # the SDK passes only a minimal environment on: the test's marker goes explicitly, and so does the
    # source under test when the suite runs with PYTHONPATH (else the installed copy would be served)
    env = {TOKEN_VAR: os.environ[TOKEN_VAR]}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(command=SERVER, args=list(args), env=env, cwd=cwd)


def server_of(parent: int) -> int:
    """The pid of the server a client (``parent``) started: found from outside, as a client would know it --
    the agent's ``$PPID`` is a pid of the sandbox's own namespace, and no process outside it."""
    (server,) = [p.pid for p in psutil.Process(parent).children() if SERVER in p.cmdline()]
    return server


def answer(result):
    """The JSON answer of a CallToolResult (its one text block), checked against its other forms."""
    (block,) = result.content
    assert block.type == "text"
    data = json.loads(block.text)
    assert result.structured_content == data
    assert result.is_error is (not data["success"])
    return data


def run(session_body, *args: str, cwd: os.PathLike[str] | None = None):
    async def main():
        async with stdio_client(params(*args, cwd=cwd)) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session_body(session)

    return anyio.run(main)


def test_the_mcp_client_lists_runs_polls_kills_and_is_refused(plugins):
    async def body(session):
        listed = await session.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert list(tools) == [*BUILTIN, "word_count"]
        assert tools["Bash"].input_schema["required"] == ["command"]
        assert tools["word_count"].input_schema["properties"]["text"]["type"] == "string"

        ran = answer(await session.call_tool("Bash", {"command": "cd / && export GREETING=hi && echo started"}))
        assert ran["output"] == "started\n" and ran["exit_code"] == 0
        again = answer(await session.call_tool("Bash", {"command": 'echo "$GREETING from $(pwd)"'}))
        assert again["output"] == "hi from /\n"  # one persistent session

        started = answer(await session.call_tool("Bash", {
            "command": "for i in 1 2 3; do echo step $i; echo noise $i; done; echo ready >&2; exec sleep 60",
            "run_in_background": True}))
        shell_id = started["shell_id"]
        seen = ""
        while "ready" not in seen:  # only the new output each time; BashOutput's filter drops the noise
            polled = answer(await session.call_tool("BashOutput", {"bash_id": shell_id, "filter": "step|ready"}))
            assert polled["status"] == "running" and "noise" not in polled["output"]
            seen += polled["output"]
            if "ready" not in seen:
                await anyio.sleep(0.05)
        assert seen.replace("[stderr]\n", "") == "step 1\nstep 2\nstep 3\nready\n"
        listed_shells = answer(await session.call_tool("ListShells", {}))
        assert [(s["id"], s["status"]) for s in listed_shells["shells"]] == [(shell_id, "running")]

        killed = answer(await session.call_tool("KillShell", {"shell_id": shell_id}))
        assert killed["status"] == "killed"
        after = answer(await session.call_tool("BashOutput", {"bash_id": shell_id}))
        assert after["status"] == "killed" and after["running"] is False

        refused = await session.call_tool("Bash", {"command": "rm -rf /"})
        assert refused.is_error is True
        assert "refused" in answer(refused)["error"] and "rm-recursive-root" in answer(refused)["error"]

        mistaken = answer(await session.call_tool("BashOutput", {"bash_id": "bg99"}))
        assert mistaken["success"] is False and "bg99" in mistaken["error"]
        unknown = answer(await session.call_tool("NoSuchTool", {}))
        assert "unknown tool" in unknown["error"]

        counted = answer(await session.call_tool("word_count", {"text": "the quick brown fox"}))
        assert counted["output"] == "4 words"
        still = answer(await session.call_tool("Bash", {"command": "sleep 60", "run_in_background": True}))
        return still["pid"]

    left_running = run(body, "--plugins", plugins)
    assert not psutil.pid_exists(left_running) or psutil.Process(left_running).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("how", HOW)
def test_a_call_the_client_gives_up_on_is_stopped_with_its_tree(how, tmp_path):
    """notifications/cancelled (a cancel, or the client's timeout) stops the command and all it started,
    in the sandbox (the default); the background shell an earlier call started runs on, and so does the session."""
    async def body(session):
        started = answer(await session.call_tool("Bash", {"command": "exec sleep 311", "run_in_background": True}))
        server = server_of(os.getpid())
        await give_up(session, how, TREE, lambda: running_under(server) >= TREE_PROCESSES)
        await until(lambda: not TREE_PROCESSES & running_under(server), 10, "the cancelled call's tree to be gone")
        shells = answer(await session.call_tool("ListShells", {}))["shells"]
        assert [(s["id"], s["status"]) for s in shells] == [(started["shell_id"], "running")]
        assert "sleep 311" in running_under(server)
        assert answer(await session.call_tool("Bash", {"command": "echo still here"}))["output"] == "still here\n"

    run(body, cwd=tmp_path)


def test_a_plugin_call_the_client_cancels_is_stopped_with_its_tree(tmp_path):
    """A plugin is a command too: the client's cancel stops it and all it started, long before its timeout."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "slow.sh").write_text("#!/bin/sh\nread line\nsleep 314 & sleep 315\nwait\n")
    (folder / "slow.sh").chmod(0o755)
    (folder / "slow.toml").write_text('[tool]\nname = "slow"\nversion = "1"\ndescription = "Takes its time"\n'
                                      '[exec]\nbinary = "slow.sh"\ntimeout = 120\n')
    slow = {"sleep 314", "sleep 315"}

    async def body(session):
        server = server_of(os.getpid())
        await give_up(session, "cancel", "", lambda: running_under(server) >= slow, tool="slow", arguments={})
        await until(lambda: not slow & running_under(server), 10, "the cancelled plugin's tree to be gone")
        assert answer(await session.call_tool("Bash", {"command": "echo still here"}))["output"] == "still here\n"

    run(body, "--plugins", str(folder), cwd=tmp_path)


CLIENT = """
import anyio, os, sys
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], env={sys.argv[2]: os.environ[sys.argv[2]]})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("Bash", {"command": "sleep 61", "run_in_background": True})
        print("ready", flush=True)
        await session.call_tool("Bash", {"command": "sleep 62"})  # still running when the client dies

anyio.run(main)
"""


def test_nothing_is_left_when_the_client_is_killed(tmp_path):
    client = subprocess.Popen([sys.executable, "-c", CLIENT, SERVER, TOKEN_VAR], cwd=tmp_path,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout is not None and client.stdout.readline() == "ready\n"
        server = server_of(client.pid)
        children = psutil.Process(server).children
        wait_until(lambda: any("sleep 62" in " ".join(p.cmdline()) for p in children(recursive=True)),
                   10, "the foreground call to start")
    finally:
        client.kill()  # SIGKILL: the client runs no cleanup; the server sees its stdin end
        client.wait()
        client.stdout.close()
    assert_none_left(TOKEN_VAR, os.environ[TOKEN_VAR], wait=15)  # background, foreground, watchdog, server


def running(pid):
    """Alive and not a zombie; gone between two looks is gone (the server may exit at any moment)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_stops_the_server_and_its_shells(sig):
    async def body(session):
        answer(await session.call_tool("Bash", {"command": "sleep 63", "run_in_background": True}))
        server = server_of(os.getpid())
        os.kill(server, sig)  # while the server waits for the client's next message
        with anyio.fail_after(15):
            while running(server):
                await anyio.sleep(0.02)

    run(body)


def test_allowed_directories_and_the_audit_log(tmp_path):
    audit = tmp_path / "audit.jsonl"
    inside = tmp_path / "work"
    inside.mkdir()

    async def body(session):
        where = answer(await session.call_tool("Bash", {"command": "pwd"}))
        assert where["output"] == f"{inside}\n"  # it starts inside the allowed directory
        escaped = answer(await session.call_tool("Bash", {"command": "cd / && pwd"}))
        assert any("outside the allowed directories" in n for n in escaped["notes"])
        assert answer(await session.call_tool("Bash", {"command": "pwd"}))["output"] == f"{inside}\n"

    run(body, "--allow-dir", str(inside), "--audit-log", str(audit))
    decisions = [json.loads(line)["decision"] for line in audit.read_text().splitlines()]
    assert decisions.count("run") >= 3


def test_secrets_are_redacted_unless_asked_not_to(tmp_path):
    secret = "ghp_" + "Ab3x" * 9
    (tmp_path / "leak.txt").write_text(secret + "\n")

    def body_for(expected):
        async def body(session):
            shown = answer(await session.call_tool("Bash", {"command": f"cat {tmp_path}/leak.txt"}))
            assert (secret in shown["output"]) is expected

        return body

    run(body_for(False), cwd=tmp_path)  # the server's folder: a sandboxed agent sees it (not the rest of /tmp)
    run(body_for(True), "--no-redact", cwd=tmp_path)


def start_problem(*args: str, code: str | None = None) -> str:
    """The server's stderr when it refuses to start (exit status 2)."""
    argv = [sys.executable, "-c", code] if code else [SERVER, *args]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert done.stdout == ""
    return done.stderr


def test_a_bad_manifest_is_one_line_at_start(tmp_path, plugins):
    bad = os.path.join(plugins, "bad.json")
    with open(bad, "w") as fh:
        json.dump({"tool": {"name": "café", "version": "1", "description": "x"}, "exec": {"binary": "x"}}, fh)
    err = start_problem("--plugins", plugins)
    assert err.count("\n") == 1 and err.startswith("execmagic-mcp: ") and "bad.json" in err and "name" in err
    os.unlink(bad)
    with open(os.path.join(plugins, "clash.json"), "w") as fh:
        json.dump({"tool": {"name": "Bash", "version": "1", "description": "x"},
                   "exec": {"binary": "word_count.py"}}, fh)
    err = start_problem("--plugins", plugins)
    assert err.count("\n") == 1 and "'Bash' exists already" in err
    err = start_problem("--plugins", str(tmp_path / "nowhere"))
    assert err == f"execmagic-mcp: --plugins {tmp_path / 'nowhere'}: not a directory\n"


def test_without_the_sdk_it_says_how_to_install_it():
    err = start_problem(code="import sys; sys.modules['mcp'] = None\n"
                             "from execmagic.mcp import main; sys.exit(main([]))")
    assert err == "execmagic-mcp: the MCP SDK is not installed: pip install 'mcp>=2.3' (what the optional extra execmagic[mcp] adds)\n"


def test_an_older_sdk_is_one_line_saying_what_to_install(tmp_path):
    """A neighbour package pinned mcp lower (pip check is silent): the server says so, and starts nothing."""
    path = os.pathsep.join(filter(None, [old_sdk(tmp_path / "site"), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([SERVER], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": path})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("execmagic-mcp: the MCP server needs mcp>=2.3, and mcp 1.30.0 is installed (another"
                           " package may have pinned it lower): pip install 'mcp>=2.3' (what the optional extra"
                           " execmagic[mcp] adds)\n")


def test_the_sdk_the_server_needs_is_the_one_the_package_asks_for():
    import re

    from execmagic.agents.mcp_server import MIN_SDK

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "pyproject.toml"), encoding="utf-8") as fh:
        asked = set(re.findall(r'"mcp>=([\d.]+)"', fh.read()))
    assert asked == {".".join(map(str, MIN_SDK))}


def test_python_dash_m_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "execmagic.mcp", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "usage: execmagic-mcp" in done.stdout and "--allow-dir" in done.stdout


def test_a_killed_server_leaves_its_shells_to_the_watchdog():
    async def body(session):
        answer(await session.call_tool("Bash", {"command": "sleep 68", "run_in_background": True}))
        server = server_of(os.getpid())
        os.kill(server, signal.SIGKILL)  # no cleanup at all: the watchdog sees its lifeline end
        with anyio.fail_after(15):
            while running(server):
                await anyio.sleep(0.02)

    run(body)
