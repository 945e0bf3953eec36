"""Pure renderers for ``%mcp``: whether the in-kernel MCP server runs, where, in which sandbox its agent works,
and its latest calls."""

from __future__ import annotations

import html

from ..agents.mcp_server import CallRecord, McpStatus
from .shells import _mono

__all__ = ["CALLS_SHOWN", "status_html", "status_text"]

#: Latest calls shown (the status keeps more; the count says how many there were in all).
CALLS_SHOWN = 20
_COLUMNS = ("time", "tool", "call", "ok", "outcome", "ms")
_GREEN, _RED, _GREY = "#1a7f37", "#cf222e", "#6e7781"


def _headline(status: McpStatus) -> str:
    if not status.running:
        return "MCP server: not running (start one with %mcp serve)"
    return (f"MCP server: running at {status.url} since {status.started_at} · guard {status.guard} · "
            f"{status.calls_total} call{'s' if status.calls_total != 1 else ''} · %mcp stop ends it")


def _mark(call: CallRecord) -> str:
    """The ``ok`` column: done, failed, or cancelled (the client gave up on it: it was never answered)."""
    return "⊘" if call.cancelled else "✔" if call.success else "✘"


def _row(call: CallRecord) -> tuple[str, ...]:
    return (call.at[11:19], call.tool, call.summary, _mark(call), call.outcome, str(call.duration_ms))


def _sandbox(status: McpStatus) -> str | None:
    """Where the agent's commands run, on a line of its own (the headline is long already)."""
    return f"agent: {status.sandbox}" if status.running and status.sandbox else None


def status_text(status: McpStatus) -> str:
    lines = [_headline(status)]
    sandbox = _sandbox(status)
    if sandbox:
        lines.append(f"  {sandbox}")
    lines += [f"  problem: {p}" for p in status.problems]
    calls = status.calls[-CALLS_SHOWN:]
    if calls:
        rows = [_COLUMNS, *(_row(c) for c in calls)]
        widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS))]
        lines += ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    elif status.running:
        lines.append("  no calls yet")
    return "\n".join(lines)


def status_html(status: McpStatus) -> str:
    head = f"<b>{html.escape(_headline(status))}</b>"
    sandbox = _sandbox(status)
    if sandbox:
        head += f"<div>{html.escape(sandbox)}</div>"
    problems = "".join(f'<div style="color:{_RED}">problem: {html.escape(p)}</div>' for p in status.problems)
    calls = status.calls[-CALLS_SHOWN:]
    if not calls:
        return _mono(head + problems + (f'<div style="color:{_GREY}">no calls yet</div>' if status.running else ""))
    header = "".join(f'<th style="text-align:left">{c}</th>' for c in _COLUMNS)
    body = []
    for call in calls:
        cells = [html.escape(c) for c in _row(call)]
        cells[2] = f"<code>{cells[2]}</code>"
        colour = _GREY if call.cancelled else _GREEN if call.success else _RED
        cells[3] = f'<span style="color:{colour}">{cells[3]}</span>'
        body.append("<tr>" + "".join(f'<td style="text-align:left">{c}</td>' for c in cells) + "</tr>")
    table = (f'<table class="execmagic-mcp-calls" style="font-size:12px"><thead><tr>{header}</tr></thead>'
             f"<tbody>{''.join(body)}</tbody></table>")
    return _mono(head + problems) + table
