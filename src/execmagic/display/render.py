"""Pure renderers: a :class:`Result` in → text/plain, text/html and a JSON provenance record out.

No IPython here; :mod:`execmagic.display.formatters` registers these with a shell.
"""

from __future__ import annotations

import dataclasses
import html
from typing import Any

from ..process.plural import counted
from ..process.results import Result, format_bytes, format_duration
from .mime import PROVENANCE_MIME

__all__ = [
    "PROVENANCE_MIME", "Summary", "render_html", "render_json", "render_text", "short_command", "status_line",
    "status_parts",
]

_COMMAND_WIDTH = 100
_OK, _FAIL = "✔", "✘"


@dataclasses.dataclass(frozen=True)
class Summary:
    """A result shown as its one status line only (its output was already streamed into the cell)."""

    result: Result

    def __repr__(self) -> str:
        return render_text(self.result, panes=False)


def short_command(command: str, width: int = _COMMAND_WIDTH) -> str:
    """First line of a command, cut to ``width``, with a hint of what was left out."""
    lines = command.strip().splitlines() or [""]
    first = lines[0]
    more = f" … (+{counted(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
    if len(first) > width:
        first = first[: width - 1] + "…"
    return first + more


def status_parts(result: Result) -> list[str]:
    """The pieces of the status line, in order: mark+outcome, duration, command, then cwd and notes."""
    mark = _OK if result.success else _FAIL
    parts = [f"{mark} {result.outcome()}", format_duration(result.duration_ms), short_command(result.command)]
    if result.new_cwd:
        parts.append(f"cwd → {result.new_cwd}")
    return parts


def status_line(result: Result) -> str:
    return " · ".join(status_parts(result))


def _pane_title(result: Result, stream: str) -> str:
    capture = result.stdout_capture if stream == "stdout" else result.stderr_capture
    title = f"{stream} · {format_bytes(capture.bytes)}"
    if capture.truncated:
        title += " · middle cut, full log: " + (capture.log_path or "?")
    return title


def render_text(result: Result, panes: bool = True) -> str:
    """Terminal rendering: the status line, notes, and (``panes``) each non-empty stream."""
    lines = [status_line(result)]
    lines += [f"  {result.sandbox}"] if result.sandbox else []
    lines += [f"  note: {note}" for note in result.notes]
    if panes:
        for stream in ("stdout", "stderr"):
            text = getattr(result, stream)
            if text:
                lines.append(f"── {_pane_title(result, stream)} ──")
                lines.append(text.rstrip("\n"))
    return "\n".join(lines)


def render_html(result: Result, panes: bool = True) -> str:
    """Notebook rendering: a coloured status line; streams as collapsible panes (no widgets)."""
    colour = "#1a7f37" if result.success else "#cf222e"
    mark, outcome = (_OK if result.success else _FAIL), html.escape(result.outcome())
    rest = " · ".join(html.escape(p) for p in status_parts(result)[1:2])
    command = html.escape(short_command(result.command))
    cwd = f' · <span>cwd → <code>{html.escape(result.new_cwd)}</code></span>' if result.new_cwd else ""
    out = [
        '<div class="execmagic-result" style="font-family:var(--jp-code-font-family,monospace);font-size:12px">',
        f'<span style="color:{colour};font-weight:bold">{mark} {outcome}</span> · {rest} · '
        f'<code title="{html.escape(result.command)}">{command}</code>{cwd}',
    ]
    if result.sandbox:
        out.append(f'<div style="color:#6e7781">{html.escape(result.sandbox)}</div>')
    for note in result.notes:
        out.append(f'<div style="color:#6e7781">note: {html.escape(note)}</div>')
    if panes:
        for stream in ("stdout", "stderr"):
            text = getattr(result, stream)
            if text:
                opened = " open" if stream == "stdout" or not result.stdout else ""
                out.append(
                    f"<details{opened}><summary>{html.escape(_pane_title(result, stream))}</summary>"
                    f'<pre style="max-height:24em;overflow:auto;margin:0">{html.escape(text)}</pre></details>'
                )
    out.append("</div>")
    return "".join(out)


def render_json(result: Result) -> dict[str, Any]:
    """Machine rendering: the provenance record (what ran, where, how it ended, when, how long)."""
    return result.to_json()
