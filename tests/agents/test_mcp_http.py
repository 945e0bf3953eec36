"""The in-kernel MCP server's front door, without a kernel: token, loopback, local Host/Origin, port closing."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import math
import os
import socket
import subprocess
import sys
import textwrap
import time
import types
import urllib.error
import urllib.request

import psutil
import pytest

from execmagic.agents.mcp_http import DEFAULT_MAX_SESSIONS, HttpServer, unauthorized
from execmagic.agents.tools import Toolbox
from execmagic.display.mcp import status_text
from execmagic.process.errors import UsageProblem
from mcp_faults import HOW, TREE, TREE_PROCESSES, give_up, running_under, until
from waiting import wait_until

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).encode()


@pytest.fixture
def server(engine):
    srv = HttpServer(Toolbox(engine, sandbox="off", grace=0.3))  # the front door; the sandbox has tests of its own
    srv.start()
    yield srv
    srv.stop()


def status_of(server, **headers):
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    try:
        with urllib.request.urlopen(urllib.request.Request(server.url, data=INITIALIZE, headers=sent), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_only_the_token_gets_in(server):
    assert status_of(server, Authorization=f"Bearer {server.token}") == 200
    assert status_of(server, Authorization=f"bearer {server.token}") == 200  # the scheme is case-insensitive
    assert status_of(server) == 401
    assert status_of(server, Authorization="Bearer ") == 401
    assert status_of(server, Authorization=f"Bearer {server.token[:-1]}") == 401
    assert status_of(server, Authorization=f"Basic {server.token}") == 401
    assert status_of(server, Authorization=server.token) == 401


def test_loopback_only_and_local_host_and_origin(server):
    token = {"Authorization": f"Bearer {server.token}"}
    assert server.url.startswith("http://127.0.0.1:")
    assert status_of(server, Host="evil.example", **token) == 421  # DNS rebinding
    assert status_of(server, Origin="http://evil.example", **token) == 403
    assert server.token not in json.dumps(server.status().to_json())
    assert len(server.token) >= 40 and HttpServer(server.toolbox).token != server.token


def test_stop_closes_the_port(engine):
    srv = HttpServer(Toolbox(engine))
    srv.start()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", srv.port)) == 0
    srv.stop()
    srv.stop()  # twice is fine
    assert not srv.running
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", srv.port)) != 0


def test_a_long_call_does_not_hold_up_the_others(server, tmp_path):
    """The agent's parallel calls (and a second client) are served while a foreground Bash call runs."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    gate, started = tmp_path / "gate", tmp_path / "started"
    order = []

    async def main():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"}) as http, \
                streamable_http_client(server.url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()

            async def long_call():
                # waits until the quick call has been answered (the test's gate), at most 30 s
                result = await session.call_tool("Bash", {"command": f"touch {started}; for i in $(seq 300); do [ -e {gate} ] && break; "
                                                                     "sleep 0.1; done; echo long done"})
                order.append(json.loads(result.content[0].text)["output"])

            async with anyio.create_task_group() as group:
                group.start_soon(long_call)
                while not started.exists():  # the long call is running
                    await anyio.sleep(0.02)
                listed = await session.call_tool("ListShells", {})
                order.append("quick answered")
                assert listed.is_error is False
                gate.touch()

    anyio.run(main)
    assert order == ["quick answered", "long done\n"]
    assert [c.tool for c in server.log.latest()] == ["ListShells", "Bash"]


# -- sessions: an idle timeout, a cap, and the shells stay the notebook's ----------------------------
def post(server, message, session=None):
    """One JSON-RPC message over raw HTTP (a connection each: http.client's keep-alive waits out a
    delayed ACK per request); the status, the session id, and the JSON of an answer if there is one."""
    headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "Connection": "close"}
    if session is not None:
        headers.update({"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"})
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        response = conn.getresponse()
        body = response.read().decode()
    finally:
        conn.close()
    data = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
    return response.status, response.getheader("mcp-session-id"), (data[-1] if data else None)


def open_session(server):
    status, session, _ = post(server, json.loads(INITIALIZE))
    assert status == 200 and session
    assert post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    return session


def alive(server, session):
    """Whether ``session`` still answers (a ping is a request: it also makes the session the latest used)."""
    return post(server, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)[0] == 200


def test_past_the_cap_the_session_idle_longest_is_closed(engine):
    srv = HttpServer(Toolbox(engine), max_sessions=2)
    srv.start()
    try:
        first, second = open_session(srv), open_session(srv)
        assert alive(srv, first)  # used again: now the second is the one idle longest
        third = open_session(srv)
        assert srv.open_sessions == 2
        assert alive(srv, first) and alive(srv, third) and not alive(srv, second)
    finally:
        srv.stop()


def test_an_idle_session_is_closed_and_the_shells_it_started_run_on(engine):
    srv = HttpServer(Toolbox(engine), idle_timeout=0.5)
    srv.start()
    try:
        session = open_session(srv)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "Bash", "arguments": {"command": "sleep 30", "run_in_background": True}}}
        _, _, answer = post(srv, call, session)
        shell_id = json.loads(answer["result"]["content"][0]["text"])["shell_id"]
        wait_until(lambda: srv.open_sessions == 0, 10, "the idle session to be closed", interval=0.05)
        assert not alive(srv, session)
        assert engine.shells.info(shell_id).running  # the notebook's shell, not the session's
    finally:
        srv.stop()
        engine.shells.kill_all()


def test_bad_session_settings_are_one_line(engine):
    with pytest.raises(UsageProblem, match=r"^max_sessions must be 1 or more, not 0$"):
        HttpServer(Toolbox(engine), max_sessions=0)
    with pytest.raises(UsageProblem, match=r"^idle_timeout must be a positive number of seconds"):
        HttpServer(Toolbox(engine), idle_timeout=math.nan)


@pytest.mark.timeout(180)
def test_fifteen_hundred_sessions_cost_the_serving_process_little(tmp_path):
    """1,500 clients that each open a session and go: the serving process (the kernel, with %mcp serve)
    keeps at most the cap of them, so its memory grows by a few megabytes, not by 50."""
    script = textwrap.dedent(f"""
        import json, sys
        from execmagic.agents.mcp_http import HttpServer
        from execmagic.agents.tools import Toolbox
        from execmagic.engine import Engine

        engine = Engine(log_dir={str(tmp_path / "logs")!r})
        server = HttpServer(Toolbox(engine))
        server.start()
        print(json.dumps({{"port": server.port, "token": server.token}}), flush=True)
        sys.stdin.read()
        print(server.open_sessions, flush=True)
        server.stop()
        engine.close()
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        served = types.SimpleNamespace(**json.loads(child.stdout.readline()))
        for _ in range(20):  # what the first requests import and build once is not what sessions cost
            post(served, json.loads(INITIALIZE))
        before = psutil.Process(child.pid).memory_info().rss
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(lambda _: post(served, json.loads(INITIALIZE))[0], range(1500)))
        grown = psutil.Process(child.pid).memory_info().rss - before
        child.stdin.close()
        # openings under way count until they are answered: four at once may leave a few below the cap
        assert DEFAULT_MAX_SESSIONS - 4 <= int(child.stdout.readline()) <= DEFAULT_MAX_SESSIONS
    finally:
        child.stdin.close()
        child.wait(30)
    assert statuses == [200] * 1500
    assert grown < 15 * 1024 * 1024, f"{grown / 2**20:.1f} MB"
    print(f"1,500 sessions: the serving process grew by {grown / 2**20:.1f} MB")


def test_the_next_server_removes_the_client_configs_of_gone_kernels(engine, tmp_path):
    """A kernel that was SIGKILLed left its token's file; the next server removes it, and only it."""
    folder = tmp_path / "runtime"
    folder.mkdir()
    reaped = subprocess.Popen(["true"])
    reaped.wait()
    stale = folder / f"execmagic-mcp-{reaped.pid}-1234.json"
    live = folder / f"execmagic-mcp-{os.getppid()}-1235.json"  # pytest's parent: started before the file
    with subprocess.Popen(["sleep", "30"]) as newer:
        reused = folder / f"execmagic-mcp-{newer.pid}-1236.json"  # a pid reused after the kernel wrote it
        other = folder / "notes.json"
        for path in (stale, live, reused, other):
            path.write_text("{}")
        os.utime(reused, (time.time() - 3600, time.time() - 3600))
        srv = HttpServer(Toolbox(engine))
        srv.start()
        try:
            mine = srv.write_client_config(str(folder))
            assert sorted(os.listdir(folder)) == sorted([live.name, other.name, os.path.basename(mine)])
        finally:
            srv.stop()
            newer.kill()


# -- a call the client gives up on ---------------------------------------------------------------------
async def _session(server, body):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"}) as http, \
            streamable_http_client(server.url, http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


def _answer(result):
    return json.loads(result.content[0].text)


@pytest.mark.parametrize("how", HOW)
def test_a_call_the_client_gives_up_on_is_stopped_and_shown_cancelled(server, how):
    """notifications/cancelled (a cancel, the client's timeout) stops the command with all it started; %mcp
    shows the call as cancelled; the background shell an earlier call started runs on."""
    import anyio

    async def body(session):
        started = _answer(await session.call_tool("Bash", {"command": "exec sleep 311", "run_in_background": True}))
        await give_up(session, how, TREE, lambda: running_under(os.getpid()) >= TREE_PROCESSES)
        await until(lambda: not TREE_PROCESSES & running_under(os.getpid()), 10, "the cancelled call's tree to be gone")
        await until(lambda: server.log.total == 2, 10, "the cancelled call's record")
        assert server.toolbox.engine.shells.info(started["shell_id"]).running
        assert _answer(await session.call_tool("Bash", {"command": "echo still here"}))["output"] == "still here\n"

    try:
        anyio.run(_session, server, body)
    finally:
        server.toolbox.engine.shells.kill_all()
    cancelled = server.log.latest()[1]
    assert (cancelled.tool, cancelled.summary, cancelled.cancelled, cancelled.success) == ("Bash", TREE, True, False)
    assert cancelled.outcome == "cancelled by the client: its command was stopped"
    row = [line for line in status_text(server.status()).splitlines() if TREE in line]
    assert len(row) == 1 and " ⊘ " in row[0] and "cancelled by the client" in row[0]


def test_a_call_in_flight_when_the_server_stops_is_stopped_too(engine):
    """Nobody is left to read its answer: its command goes with the server, and %mcp says why."""
    import anyio

    srv = HttpServer(Toolbox(engine, sandbox="off", grace=0.3))
    srv.start()
    failures = []

    async def body(session):
        async def call():
            try:
                await session.call_tool("Bash", {"command": TREE})
            except Exception as exc:  # the server went away under it: expected
                failures.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await until(lambda: running_under(os.getpid()) >= TREE_PROCESSES, 30, "the call's command to start")
            await anyio.to_thread.run_sync(srv.stop)
            await until(lambda: not TREE_PROCESSES & running_under(os.getpid()), 10, "the call's tree to be gone")
            group.cancel_scope.cancel()

    try:
        anyio.run(_session, srv, body)
    except Exception:  # the client's own teardown against a closed server
        pass
    finally:
        srv.stop()
    wait_until(lambda: srv.log.total == 1, 10, "the call's record")
    (call,) = srv.log.latest()
    assert call.cancelled and call.outcome == "cancelled: the server stopped: its command was stopped"


def test_a_request_without_the_token_is_told_where_the_token_is(server, tmp_path):
    def refusal():
        request = urllib.request.Request(server.url, data=INITIALIZE, headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        assert caught.value.code == 401
        return json.loads(caught.value.read())["error"]

    assert refusal() == unauthorized(None)
    assert "the client configuration file %mcp serve printed" in refusal()
    path = server.write_client_config(str(tmp_path / "runtime"))
    told = refusal()
    assert told == unauthorized(path) and path in told and "mcpServers.execmagic.headers.Authorization" in told
    with open(path) as fh:
        assert json.load(fh)["mcpServers"]["execmagic"]["headers"]["Authorization"] == f"Bearer {server.token}"
    assert server.token not in told


def test_another_session_cannot_cancel_a_call(server):
    """A cancel names a request id, and ids are per session: another client's notifications/cancelled for
    every id the first may have used stops nothing of the first's."""
    import anyio

    async def body(session):
        async with anyio.create_task_group() as group:
            group.start_soon(session.call_tool, "Bash", {"command": TREE})
            await until(lambda: running_under(os.getpid()) >= TREE_PROCESSES, 30, "the call's command to start")

            def stranger():
                other = open_session(server)
                for request_id in (*range(10), *map(str, range(10))):
                    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": request_id, "reason": "not yours"}}
                    assert post(server, cancel, other)[0] == 202
                assert alive(server, other)  # answered after its own cancels: they have all been handled

            await anyio.to_thread.run_sync(stranger)
            assert running_under(os.getpid()) >= TREE_PROCESSES
            group.cancel_scope.cancel()  # its own client's cancel does stop it
        await until(lambda: not TREE_PROCESSES & running_under(os.getpid()), 10, "the call's tree to be gone")

    anyio.run(_session, server, body)
    wait_until(lambda: server.log.total == 1, 10, "the call's record")
    assert [c.outcome for c in server.log.latest()] == ["cancelled by the client: its command was stopped"]
