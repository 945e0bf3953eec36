"""A hostile agent behind ``execmagic-mcp --sandbox`` and ``%mcp serve --sandbox``, driven by the official
MCP client: what it may not touch stays untouched, and inside its workspace it works as usual.

The workspace, the fake home and the other folder lie under /var/tmp, not the shared /tmp: the
sandbox replaces /tmp by a private empty one, so anything there would be invisible inside and prove
nothing.  The server starts with its cwd in the workspace and HOME at the fake home, as an MCP client
starts it in a project.  Tests that need bwrap skip where it cannot make its namespaces.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import anyio
import psutil
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from execmagic.agents.mcp_server import McpStatus, sandbox_line
from execmagic.agents.tools import Toolbox
from execmagic.display.mcp import status_html, status_text
from execmagic.process import sandbox as sb
from processes import TOKEN_VAR

pytestmark = pytest.mark.timeout(90)

SERVER = os.path.join(os.path.dirname(sys.executable), "execmagic-mcp")
KEY = "PRIVATE KEY of the fake home"
#: The server's environment as where bubblewrap is not installed (the kernel's own setting that names it).
WITHOUT_BWRAP = {sb.BWRAP_VAR: ""}



@pytest.fixture
def place():
    """A workspace holding a git repository, a fake home with an SSH key, another folder: under /var/tmp."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("no writable /var/tmp (a folder outside the shared temp folder)")
    top = os.path.realpath(tempfile.mkdtemp(prefix="execmagic-mcp-sandbox-", dir="/var/tmp"))
    paths = {name: os.path.join(top, name) for name in ("ws", "home", "other")}
    for folder in paths.values():
        os.mkdir(folder)
    os.makedirs(os.path.join(paths["home"], ".ssh"))
    with open(os.path.join(paths["home"], ".ssh", "id_rsa"), "w") as fh:
        fh.write(KEY + "\n")
    subprocess.run(["git", "init", "-q", os.path.join(paths["ws"], "repo")], check=True, timeout=30,
                   env={**os.environ, "HOME": paths["home"]})
    try:
        yield paths
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture
def host_port():
    """A TCP server on the host's 127.0.0.1 that greets whoever connects; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    done = threading.Event()

    def serve():
        while not done.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                conn, _ = listener.accept()
                with conn:
                    conn.sendall(b"hello from the host\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(5)
        listener.close()


def answer(result):
    (block,) = result.content
    data = json.loads(block.text)
    assert result.is_error is (not data["success"])
    return data


def serve(place, body, *args: str, command: str = SERVER, env: dict[str, str] | None = None):
    """Start the server in the workspace with the fake HOME; run ``body(session, server_pid)``."""
    params = StdioServerParameters(command=command, args=list(args), cwd=place["ws"],
                                   env={TOKEN_VAR: os.environ[TOKEN_VAR], "HOME": place["home"], **(env or {})})

    async def main():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            (server,) = [p.pid for p in psutil.Process().children() if command in p.cmdline()]
            return await body(session, server)

    return anyio.run(main)


def reach(port: int) -> str:
    """A command that prints the host server's greeting, giving up after 5 seconds (bounded either way)."""
    return f"timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port} && head -n 1 <&3'"


def marked_sleeps(seconds: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.cmdline() == ["sleep", str(seconds)] and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


@pytest.mark.parametrize("asked", [("--sandbox", "workspace"), ()], ids=["workspace", "the-default"])
def test_a_hostile_agent_stays_in_its_workspace(bwrap_works, place, host_port, asked):
    ws, home, other = place["ws"], place["home"], place["other"]
    etc = f"/etc/execmagic-mcp-sandbox-{os.getpid()}"

    async def body(session, server):
        async def bash(command, **more):
            return answer(await session.call_tool("Bash", {"command": command, **more}))

        for target in (f"{home}/pwned", "$HOME/pwned", etc, f"{other}/pwned", "repo/.git/hooks/pre-commit"):
            wrote = await bash(f"echo pwned > {target}")
            assert wrote["success"] is False, (target, wrote)
            assert wrote["sandbox"].startswith(f"sandbox workspace: writable {ws}, a private /tmp")
        key = await bash("cat ~/.ssh/id_rsa")
        assert key["success"] is False and KEY not in key["output"]
        for probe in (f"kill -0 {server}", f"ls /proc/{server}"):
            seen = await bash(probe)
            assert seen["success"] is False, (probe, seen)
        started = time.monotonic()
        net = await bash(reach(host_port))
        assert net["success"] is False and "hello" not in net["output"] and time.monotonic() - started < 30

        made = await bash("mkdir sub && cd sub && echo one > f.txt && export AGENT_MARK=mine")
        assert made["success"] and made["cwd"] == f"{ws}/sub"
        edited = await bash('echo two >> f.txt && cat f.txt && echo "$AGENT_MARK $(pwd)"')
        assert edited["output"] == f"one\ntwo\nmine {ws}/sub\n"
        with open(f"{ws}/sub/f.txt") as fh:
            assert fh.read() == "one\ntwo\n"
        assert (await bash("rm f.txt"))["success"] and not os.path.exists(f"{ws}/sub/f.txt")

        shell = (await bash("echo up; sleep 307 & wait", run_in_background=True))["shell_id"]
        seen = ""
        with anyio.fail_after(20):
            while "up" not in seen:
                seen += answer(await session.call_tool("BashOutput", {"bash_id": shell}))["output"]
                await anyio.sleep(0.05)
            while not marked_sleeps(307):
                await anyio.sleep(0.05)
        assert answer(await session.call_tool("KillShell", {"shell_id": shell}))["status"] == "killed"
        with anyio.fail_after(10):
            while marked_sleeps(307):
                await anyio.sleep(0.05)
        assert psutil.pid_exists(server)

    try:
        serve(place, body, *asked)
    finally:
        leaked = os.path.exists(etc)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(etc)
    assert not leaked
    for path in (f"{home}/pwned", f"{other}/pwned", f"{ws}/repo/.git/hooks/pre-commit"):
        assert not os.path.exists(path), path


def test_with_network_the_agent_reaches_the_host(bwrap_works, place, host_port):
    async def body(session, _server):
        return answer(await session.call_tool("Bash", {"command": reach(host_port)}))

    reached = serve(place, body, "--sandbox", "workspace", "--network")
    assert reached["output"] == "hello from the host\n" and "; network on" in reached["sandbox"]


def start_problem(place, *args: str, cwd: str, env: dict[str, str] | None = None) -> str:
    """The server's stderr when it refuses to start: exit status 2, one line, no traceback."""
    done = subprocess.run([SERVER, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={**os.environ, "HOME": place["home"], **(env or {})})
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("execmagic-mcp: --")
    return done.stderr


def test_a_sandbox_that_cannot_work_stops_the_start_in_one_line(bwrap_works, place):
    home = start_problem(place, "--sandbox", "workspace", cwd=place["home"])
    assert "it is the home folder" in home and "--allow-dir DIR" in home
    missing = start_problem(place, "--sandbox", "workspace", cwd=place["ws"], env=WITHOUT_BWRAP)
    assert f"no sandbox here: {sb.BWRAP_VAR} is set empty" in missing and "--sandbox auto" in missing
    alone = start_problem(place, "--sandbox", "off", "--network", cwd=place["ws"])
    assert "--network goes with a sandbox" in alone


def test_readable_shows_a_path_of_the_hidden_home(bwrap_works, place):
    """The home folder is hidden whole; ``--readable`` shows a path of it, read-only, and the key stays hidden."""
    home = place["home"]
    os.makedirs(f"{home}/.config/tool")
    with open(f"{home}/.config/tool/settings", "w") as fh:
        fh.write("shown\n")

    async def body(session, _server):
        return answer(await session.call_tool("Bash", {"command": "cat ~/.config/tool/settings ~/.ssh/id_rsa; ls -A ~"}))

    own = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}  # this checkout's code
    seen = serve(place, body, "--sandbox", "workspace", "--readable", "~/.config/tool", env=own)
    lines = seen["output"].splitlines()  # (stdout and stderr as they came)
    assert lines[0] == "shown" and ".config" in lines and KEY not in seen["output"], seen
    assert len(lines) == 3 and "No such file or directory" in seen["output"], seen


def test_auto_without_bwrap_runs_and_says_why(place):
    async def body(session, _server):
        return answer(await session.call_tool("Bash", {"command": "echo ran"}))

    ran = serve(place, body, "--sandbox", "auto", env=WITHOUT_BWRAP)
    assert ran["output"] == "ran\n" and "sandbox" not in ran
    assert any(n.startswith(f"ran unsandboxed: {sb.BWRAP_VAR} is set empty") for n in ran["notes"])


def test_the_status_says_where_the_agent_runs(engine):
    off = sandbox_line(Toolbox(engine, sandbox="off"))
    assert off.startswith("unsandboxed: ")
    default = sandbox_line(Toolbox(engine))  # an agent's default is auto: confined where bubblewrap works
    assert default.startswith("sandbox ") or default.startswith("unsandboxed: ")
    shown = status_text(McpStatus(True, "http://127.0.0.1:1/mcp", "2026-01-01T09:00:00+00:00", sandbox=off))
    assert shown.splitlines()[1] == f"  agent: {off}"
    line = "sandbox workspace: writable /w, a private /tmp; .git read-only; network off"
    assert f"agent: {line}" in status_html(McpStatus(True, "http://127.0.0.1:1/mcp", sandbox=line))
    assert "agent" not in status_text(McpStatus(False))


@pytest.mark.kernel
def test_mcp_serve_sandbox_confines_the_agent_and_keeps_the_notebooks_session(bwrap_works, place):
    """In a kernel started in the workspace, with the default ``%mcp serve`` (auto): the agent cannot write
    outside it, and its export stays in its own session -- the notebook's (unsandboxed) session never gets it."""
    from kernel_client import KERNEL_TOKEN_VAR, LOAD, Kernel
    from processes import assert_none_left
    from test_kernel_mcp import call
    from test_kernel_mcp import serve as kernel_serve

    ws, other = place["ws"], place["other"]
    kernel = Kernel(extra_env={"HOME": place["home"]})
    try:
        assert kernel.execute(f"import os\nos.chdir({ws!r})").status == "ok"
        assert kernel.execute(LOAD).status == "ok"
        url, token = kernel_serve(kernel, "%mcp serve")
        wrote, exported, there = call(url, token, [
            ("Bash", {"command": f"echo pwned > {other}/pwned"}),
            ("Bash", {"command": "export AGENT_MARK=from-the-agent && echo ok > inside.txt"}),
            ("Bash", {"command": 'echo "[$AGENT_MARK]"'}),
        ])
        assert wrote["success"] is False and not os.path.exists(f"{other}/pwned")
        assert exported["success"] and os.path.exists(f"{ws}/inside.txt")
        assert there["output"] == "[from-the-agent]\n"  # the agent's own session keeps it
        seen = kernel.execute('%exec echo "[${AGENT_MARK:-}]"')
        assert seen.status == "ok" and seen.stream_text() == "[]\n"
        status = kernel.execute("%mcp")
        (data,) = [m["content"]["data"] for m in status.of_type("display_data")]
        assert f"agent: sandbox workspace: writable {ws}, a private /tmp" in data["text/plain"]
        assert "; hidden: the home folder" in data["text/plain"]  # what is hidden and shown, in the same line
        assert kernel.execute("%mcp stop").status == "ok"
    finally:
        kernel.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=10)


def test_mcp_serve_sandbox_mistakes_are_one_line(notebook_shell):
    from IPython.core.error import UsageError

    for line, said in (("stop --sandbox workspace", "--sandbox goes with serve: %mcp serve --sandbox workspace"),
                       ("serve --sandbox off --network", "--network goes with a sandbox")):
        with pytest.raises(UsageError) as caught:
            notebook_shell.run_line_magic("mcp", line)
        assert str(caught.value).startswith(said)
