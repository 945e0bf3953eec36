"""The in-kernel MCP server's front door, without a kernel: token, loopback, local Host/Origin, port closing."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest

from execmagic.agents.mcp_server import HttpServer
from execmagic.agents.tools import Toolbox

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}).encode()


@pytest.fixture
def server(engine):
    srv = HttpServer(Toolbox(engine))
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
