"""``%mcp serve`` in a real kernel: an outside agent (the official MCP client over streamable HTTP)
works in the notebook's own session while the notebook watches, and nothing else gets in."""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kernel_client import KERNEL_TOKEN_VAR, Kernel, loaded
from mcp_faults import TREE, TREE_PROCESSES, give_up, running_under, until
from processes import assert_none_left
from waiting import wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def kernel():
    yield from loaded(Kernel())


@pytest.fixture(autouse=True)
def nothing_left_by_the_kernel(kernel):
    yield
    kernel.execute("%kill --all")
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)


def serve(kernel, line="%mcp serve"):
    """Start the server in the kernel; (url, token) read from the client configuration file it named.
    The token itself never appears in the cell's output (a saved notebook travels)."""
    ex = kernel.execute(line)
    assert ex.status == "ok", ex.reply
    text = ex.stream_text()
    (config_line,) = [ln for ln in text.splitlines() if ln.startswith("client config, token included")]
    path = config_line.rsplit(": ", 1)[1]
    assert os.stat(path).st_mode & 0o777 == 0o600
    with open(path) as fh:
        (server,) = json.load(fh)["mcpServers"].values()
    assert server["headers"]["Authorization"].removeprefix("Bearer ") not in text
    assert server["type"] == "http" and server["url"].startswith("http://127.0.0.1:")
    return server["url"], server["headers"]["Authorization"].removeprefix("Bearer ")


def call(url, token, calls):
    """Run ``calls`` (name, arguments) through the MCP client; the JSON answers."""
    async def main():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            answers = []
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                answers.append(json.loads(result.content[0].text))
                assert result.is_error is (not answers[-1]["success"])
            return answers

    return anyio.run(main)


def post_without(url, token=None):
    """The HTTP status of an MCP initialize request with no token (or a wrong one)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def port_open(url) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_an_outside_agent_works_in_the_notebooks_session(kernel, tmp_path):
    """Unsandboxed (--sandbox off), the agent works in the notebook's own session: its cd and export carry over."""
    url, token = serve(kernel, "%mcp serve --sandbox off")
    answers = call(url, token, [
        ("Bash", {"command": f"cd {tmp_path} && export AGENT_MARK=from-the-agent"}),
        ("Bash", {"command": "echo agent-job; exec sleep 60", "run_in_background": True}),
        ("Bash", {"command": "rm -rf ~"}),
    ])
    assert answers[0]["success"] and answers[0]["cwd"] == str(tmp_path)
    shell_id = answers[1]["shell_id"]
    assert answers[2]["success"] is False and "refused" in answers[2]["error"]

    seen = kernel.execute('%exec echo "$(pwd) $AGENT_MARK"')  # the next cell: the agent's cd and export
    assert seen.status == "ok" and seen.stream_text() == f"{tmp_path} from-the-agent\n"

    listed = kernel.execute("%bg")
    (table,) = [m["content"]["data"]["text/plain"] for m in listed.of_type("display_data")]
    assert shell_id in table and "running" in table and "sleep 60" in table
    out = kernel.execute(f"%bgout {shell_id} --wait 10")
    assert out.stream_text() == "agent-job\n"
    killed = kernel.execute(f"%kill {shell_id}")
    assert killed.status == "ok"
    (after,) = call(url, token, [("BashOutput", {"bash_id": shell_id})])
    assert after["status"] == "killed"

    status = kernel.execute("%mcp")
    (data,) = [m["content"]["data"] for m in status.of_type("display_data")]
    assert data["text/plain"].startswith(f"MCP server: running at {url}")
    assert 'class="execmagic-mcp-calls"' in data["text/html"] and "rm -rf ~" in data["text/html"]
    assert token not in json.dumps(data)  # the status never shows the token

    assert post_without(url) == 401
    assert post_without(url, token="not-" + token) == 401
    stopped = kernel.execute("%mcp stop")
    assert stopped.status == "ok" and "stopped after 4 calls" in stopped.stream_text()
    assert not port_open(url)
    assert kernel.execute("%exec cd - >/dev/null").status == "ok"


def test_mistakes_are_one_line_and_unload_stops_the_server(kernel):
    url, _ = serve(kernel)
    again = kernel.execute("%mcp serve")
    assert again.status == "error" and again.reply["content"]["ename"] == "UsageError"
    assert "running already" in again.reply["content"]["evalue"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        taken = kernel.execute(f"%mcp stop\n%mcp serve --port {port}")
    assert taken.status == "error" and f"cannot listen on 127.0.0.1:{port}" in taken.reply["content"]["evalue"]
    assert kernel.execute("%mcp serve --port 70000").reply["content"]["evalue"].startswith("--port must be")
    url, _ = serve(kernel)
    assert kernel.execute("%mcp stop --port 3").reply["content"]["evalue"] == "--port goes with serve: %mcp serve --port 3"
    assert port_open(url)
    assert kernel.execute("%unload_ext execmagic").status == "ok"
    assert not port_open(url)
    assert kernel.execute("%load_ext execmagic\n%config ExecMagics.kill_grace = 0.5").status == "ok"
    assert kernel.execute("%mcp stop").stream_text() == "no MCP server is running\n"


def test_a_call_the_agent_cancels_is_stopped_and_shown_cancelled(kernel):
    """In the sandbox (the default), over HTTP: the client's cancel stops the call's command and all it
    started, the server goes on, and %mcp shows the call as cancelled."""
    url, token = serve(kernel)

    async def main():
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await give_up(session, "cancel", TREE, lambda: running_under(kernel.pid) >= TREE_PROCESSES)
            await until(lambda: not TREE_PROCESSES & running_under(kernel.pid), 10, "the cancelled call's tree to be gone")
            result = await session.call_tool("Bash", {"command": "echo still here"})
            assert json.loads(result.content[0].text)["output"] == "still here\n"

    anyio.run(main)
    wait_until(lambda: "2 calls" in kernel.execute("%mcp").of_type("display_data")[0]["content"]["data"]["text/plain"],
               10, "both calls in %mcp")
    (data,) = [m["content"]["data"] for m in kernel.execute("%mcp").of_type("display_data")]
    (row,) = [line for line in data["text/plain"].splitlines() if TREE in line]
    assert " ⊘ " in row and "cancelled by the client: its command was stopped" in row
    assert kernel.execute("%mcp stop").status == "ok"


def test_kernel_shutdown_mid_call_leaves_nothing(tmp_path):
    """The kernel ends while an agent's foreground command runs in the server's thread: it is stopped too."""
    import threading

    import psutil

    own = Kernel()
    try:
        assert own.execute("%load_ext execmagic\n%config ExecMagics.kill_grace = 0.5").status == "ok"
        url, token = serve(own)
        failures: list[BaseException] = []

        def agent():
            try:
                call(url, token, [("Bash", {"command": "sleep 64", "run_in_background": True}),
                                  ("Bash", {"command": "sleep 65"})])
            except BaseException as exc:  # the kernel goes away under it: expected
                failures.append(exc)

        thread = threading.Thread(target=agent, daemon=True)
        thread.start()
        children = psutil.Process(own.pid).children
        wait_until(lambda: any("sleep 65" in " ".join(p.cmdline()) for p in children(recursive=True)),
                   30, "the agent's call to start", interval=0.05)
    finally:
        own.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, own.token, wait=10)
    thread.join(30)
