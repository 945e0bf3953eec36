"""%mcp in a real InteractiveShell, and its pure renderers (the end-to-end run is in test_kernel_mcp.py)."""

from __future__ import annotations

import os

import pytest
from IPython.core.error import UsageError

from execmagic.agents.mcp_server import CallRecord, McpStatus, McpTooOld, require_sdk, sdk_version
from execmagic.display.mcp import status_html, status_text
from magic_calls import magic as call
from mcp_faults import old_sdk

pytestmark = pytest.mark.watchdog_outlives_test


def magic(ip, line):
    return call(ip, "mcp", line)


def test_status_when_nothing_runs_and_calm_stop(ip):
    shown = magic(ip, "")
    (data,) = [o.data for o in shown.outputs]
    assert data["text/plain"] == "MCP server: not running (start one with %mcp serve)"
    assert magic(ip, "stop").stdout == "no MCP server is running\n"


@pytest.mark.parametrize(("line", "message"), [
    ("status --port 8", "--port goes with serve: %mcp serve --port 8"),
    ("serve --port -1", "--port must be between 1 and 65535 (or 0: a free one), not -1"),
    ("start", "argument action: invalid choice: 'start'"),
    ("status --max-sessions 3", "--max-sessions goes with serve: %mcp serve --max-sessions 3"),
    ("stop --idle-timeout 5", "--idle-timeout goes with serve: %mcp serve --idle-timeout 5"),
    ("serve --max-sessions 0", "--max-sessions must be 1 or more, not 0"),
    ("serve --idle-timeout 0", "--idle-timeout must be a positive number of seconds"),
    ("serve --idle-timeout nan", "--idle-timeout must be a positive number of seconds"),
])
def test_mistakes_are_one_line(ip, line, message):
    with pytest.raises(UsageError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        magic(ip, line)


def test_serve_then_stop_in_this_shell(ip):
    served = magic(ip, "serve")
    path = served.stdout.split("kept out of this notebook): ", 1)[1].split("\n", 1)[0]
    with open(path) as fh:
        token = fh.read().split("Bearer ", 1)[1].split('"', 1)[0]
    assert len(token) >= 40 and token not in served.stdout and "Bearer" not in served.stdout
    with pytest.raises(UsageError, match="running already"):
        magic(ip, "serve")
    status = magic(ip, "")
    assert "no calls yet" in status.outputs[0].data["text/plain"]
    assert "stopped after 0 calls; the port is closed" in magic(ip, "stop").stdout
    assert not os.path.exists(path)  # the token's file goes with the server


def test_session_limits_from_the_options_or_the_settings(ip):
    magics = ip.magics_manager.registry["McpMagics"]
    magic(ip, "serve --idle-timeout 5 --max-sessions 3")
    try:
        assert (magics.server.idle_timeout, magics.server.max_sessions) == (5.0, 3)
    finally:
        magic(ip, "stop")
    ip.run_line_magic("config", "ExecMagics.mcp_max_sessions = 7")
    try:
        magic(ip, "serve")
        assert (magics.server.idle_timeout, magics.server.max_sessions) == (600.0, 7)
    finally:
        magic(ip, "stop")
        ip.run_line_magic("config", "ExecMagics.mcp_max_sessions = 100")


def test_renderers_escape_what_an_agent_sent():
    call = CallRecord("2026-01-01T10:00:00+00:00", "Bash", "<script>alert(1)</script>", False, "exit 1", 12)
    status = McpStatus(True, "http://127.0.0.1:1/mcp", "2026-01-01T09:00:00+00:00", "all", 1, (call,),
                       ("a <problem>",))
    html = status_html(status)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;problem&gt;" in html
    text = status_text(status)
    assert text.splitlines()[0] == ("MCP server: running at http://127.0.0.1:1/mcp since 2026-01-01T09:00:00+00:00"
                                    " · guard all · 1 call · %mcp stop ends it")
    assert "10:00:00  Bash  <script>alert(1)</script>  ✘   exit 1   12" in text


def test_without_the_sdk_serve_says_how_to_install_it(ip, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    with pytest.raises(UsageError) as caught:
        magic(ip, "serve")
    assert str(caught.value) == ("the MCP server needs the 'mcp' package (mcp is missing): "
                                 "pip install 'mcp>=2.3' (what the optional extra execmagic[mcp] adds)")
    assert magic(ip, "stop").stdout == "no MCP server is running\n"


def test_an_older_sdk_is_one_line_saying_what_to_install(ip, monkeypatch, tmp_path):
    """The SDK's version is read from its distribution, the first on the path: one older than the server
    needs (a neighbour package's pin) is named, with what to install, and nothing starts."""
    monkeypatch.syspath_prepend(old_sdk(tmp_path / "site", "1.30.0", package=False))
    assert sdk_version() == "1.30.0"
    with pytest.raises(McpTooOld) as too_old:
        require_sdk()
    assert (too_old.value.installed, too_old.value.needed) == ("1.30.0", "2.3")
    with pytest.raises(UsageError) as caught:
        magic(ip, "serve")
    assert str(caught.value) == ("the MCP server needs mcp>=2.3, and mcp 1.30.0 is installed (another package may"
                                 " have pinned it lower): pip install 'mcp>=2.3' (what the optional extra"
                                 " execmagic[mcp] adds); then restart the kernel")
    assert magic(ip, "stop").stdout == "no MCP server is running\n"


@pytest.mark.parametrize("version", ["2.3.0rc1", "2.10.0", "3.0", "not a version"])
def test_a_new_enough_or_unreadable_sdk_version_lets_it_try(monkeypatch, tmp_path, version):
    monkeypatch.syspath_prepend(old_sdk(tmp_path / "site", version, package=False))
    assert sdk_version() == version
    require_sdk()


def test_a_cancelled_call_is_marked_as_such():
    call = CallRecord("2026-01-01T10:00:00+00:00", "Bash", "sleep 30", False,
                      "cancelled by the client: its command was stopped", 1200, cancelled=True)
    status = McpStatus(True, "http://127.0.0.1:1/mcp", "2026-01-01T09:00:00+00:00", "all", 1, (call,))
    assert "10:00:00  Bash  sleep 30  ⊘   cancelled by the client: its command was stopped  1200" in status_text(status)
    assert '<span style="color:#6e7781">⊘</span>' in status_html(status)
