"""Pure renderers: a :class:`Result` in → text/plain, text/html and a JSON provenance record out.

No IPython here; :mod:`execmagic.display.formatters` registers these with a shell.  Each rendering keeps
within the :class:`View`'s budget of output characters (the start and the end of each stream, and where
the rest is), whatever the result holds: a page that receives megabytes slows the browser and swells the
saved notebook, and the whole output is in the result and in its log.
"""

from __future__ import annotations

import html
from typing import Any

from ..agents.shaping import split_budget
from ..process.plural import counted
from ..process.records import record
from ..process.results import Result, StreamCapture, format_bytes, format_duration
from .cut import head_and_tail
from .mime import PROVENANCE_MIME

__all__ = [
    "DEFAULT_VIEW", "PROVENANCE_MIME", "VOLATILE_FIELDS", "Summary", "View", "render_html", "render_json",
    "render_text", "short_command", "status_line", "status_parts",
]

_COMMAND_WIDTH = 100
_OK, _FAIL = "✔", "✘"
#: What differs between two runs of the same commands with the same outcome (a log's path names the kernel's
#: folder, made afresh per kernel): left out of a stable view.
VOLATILE_FIELDS = ("started_at", "duration_ms", "log_paths")


@record
class View:
    """How results are shown: the settings of the page, not of the run."""

    #: Characters of output one rendering shows at most (the streams share it); 100,000 by default,
    #: a few hundred kilobytes in a saved notebook per command, well under Jupyter's rate limit.
    budget: int = 100_000
    #: Leave :data:`VOLATILE_FIELDS` out (the duration in the status line too), so that a notebook kept
    #: in git changes only where what ran, or how it ended, did.
    stable: bool = False


#: The view of a value shown with no settings at hand (a renderer called directly, a test).
DEFAULT_VIEW = View()


@record
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


def status_parts(result: Result, view: View = DEFAULT_VIEW) -> list[str]:
    """The pieces of the status line, in order: mark+outcome, duration (not in a stable view), command, cwd."""
    mark = _OK if result.success else _FAIL
    parts = [f"{mark} {result.outcome()}", short_command(result.command)]
    if not view.stable:
        parts.insert(1, format_duration(result.duration_ms))
    if result.new_cwd:
        parts.append(f"cwd → {result.new_cwd}")
    return parts


def status_line(result: Result, view: View = DEFAULT_VIEW) -> str:
    return " · ".join(status_parts(result, view))


@record
class _Pane:
    """One stream as a rendering shows it: a title and its text within its share of the budget."""

    title: str
    text: str


def _panes(result: Result, view: View) -> dict[str, _Pane]:
    """The non-empty streams, each cut to its share of the budget (a short one keeps all of itself)."""
    captures = {name: c for name, c in (("stdout", result.stdout_capture), ("stderr", result.stderr_capture)) if c.text}
    rooms = split_budget([len(c.text) for c in captures.values()], view.budget)
    return {name: _pane(name, capture, room) for (name, capture), room in zip(captures.items(), rooms, strict=True)}


def _pane(stream: str, capture: StreamCapture, room: int) -> _Pane:
    title = f"{stream} · {format_bytes(capture.bytes)}"
    if capture.binary:  # its text is one line that says so and where the bytes are
        return _Pane(f"{title} · binary", capture.text[:room])
    cut = head_and_tail(capture.text, room)
    if cut is None and not capture.truncated:
        return _Pane(title, capture.text)
    # the whole of it: the log, or (kept in memory whole, only not shown) the result's value
    where = capture.log_hint() if capture.truncated or capture.log_path else f"all of it in the Result's .{stream}"
    title += f" · only its start and end shown; {where}"
    if cut is None:  # cut in memory already, and the head and tail kept fit: its own note says the rest
        return _Pane(title, capture.text)
    front, back = cut
    note = f"… [{format_bytes(capture.bytes)} in all; the middle is not shown here (the display budget); {where}] …"
    return _Pane(title, front + ("" if front.endswith("\n") or not front else "\n") + note + "\n" + back)


def render_text(result: Result, panes: bool = True, view: View = DEFAULT_VIEW) -> str:
    """Terminal rendering: the status line, notes, and (``panes``) each non-empty stream within the budget."""
    lines = [status_line(result, view)]
    lines += [f"  {result.sandbox}"] if result.sandbox else []
    lines += [f"  note: {note}" for note in result.notes]
    if panes:
        for pane in _panes(result, view).values():
            lines.append(f"── {pane.title} ──")
            lines.append(pane.text.rstrip("\n"))
    return "\n".join(lines)


def render_html(result: Result, panes: bool = True, view: View = DEFAULT_VIEW) -> str:
    """Notebook rendering: a coloured status line; streams as collapsible panes within the budget (no widgets)."""
    colour = "#1a7f37" if result.success else "#cf222e"
    mark, outcome = (_OK if result.success else _FAIL), html.escape(result.outcome())
    rest = "" if view.stable else f" · {html.escape(format_duration(result.duration_ms))}"
    command = html.escape(short_command(result.command))
    cwd = f' · <span>cwd → <code>{html.escape(result.new_cwd)}</code></span>' if result.new_cwd else ""
    out = [
        '<div class="execmagic-result" style="font-family:var(--jp-code-font-family,monospace);font-size:12px">',
        f'<span style="color:{colour};font-weight:bold">{mark} {outcome}</span>{rest} · '
        f'<code title="{html.escape(_within(result.command, view.budget))}">{command}</code>{cwd}',
    ]
    if result.sandbox:
        out.append(f'<div style="color:#6e7781">{html.escape(result.sandbox)}</div>')
    for note in result.notes:
        out.append(f'<div style="color:#6e7781">note: {html.escape(note)}</div>')
    if panes:
        shown = _panes(result, view)
        for stream, pane in shown.items():
            opened = " open" if stream == "stdout" or "stdout" not in shown else ""
            out.append(
                f"<details{opened}><summary>{html.escape(pane.title)}</summary>"
                f'<pre style="max-height:24em;overflow:auto;margin:0">{html.escape(pane.text)}</pre></details>'
            )
    out.append("</div>")
    return "".join(out)


def _within(text: str, budget: int) -> str:
    """A command as a rendering may hold it: a cell of megabytes is in the notebook once already, as its source."""
    cut = head_and_tail(text, budget)
    if cut is None:
        return text
    return f"{cut[0]}\n… [{len(text) - len(cut[0]) - len(cut[1]):,} characters not shown] …\n{cut[1]}"


def render_json(result: Result, view: View = DEFAULT_VIEW) -> dict[str, Any]:
    """Machine rendering: the provenance record (what ran, where, how it ended; when and how long unless the
    view is stable), its command within the budget."""
    record = result.to_json()
    record["command"] = _within(record["command"], view.budget)
    record["argv"] = [_within(arg, view.budget) for arg in record["argv"]]
    if view.stable:
        for name in VOLATILE_FIELDS:
            del record[name]
    return record
