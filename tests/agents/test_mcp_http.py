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
