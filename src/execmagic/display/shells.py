"""Pure renderers for background-shell values: a started handle, a table, a read's status, a kill."""

from __future__ import annotations

import html
from typing import Any

from ..process.errors import shown_value
from ..process.records import record
from ..process.results import KillOutcome, ShellInfo, ShellOutput, format_bytes, format_duration
from .render import short_command

__all__ = [
    "ShellTable", "kill_html", "kill_text", "output_notes", "output_status_html", "output_status_json",
    "output_status_text", "started_html", "started_text", "table_html", "table_text",
]

_GREY = "#6e7781"


@record
class ShellTable:
    """Every background shell, as ``%bg`` with no argument shows them."""

    shells: tuple[ShellInfo, ...]

    def to_json(self) -> list[dict[str, Any]]:
        return [s.to_json() for s in self.shells]


def _runtime(info: ShellInfo) -> str:
    return format_duration(int(info.runtime_s * 1000))


def _colour(info: ShellInfo) -> str:
    if info.running:
        return "#0969da"
    return "#1a7f37" if info.status == "exited 0" else "#cf222e"


def _status(info: ShellInfo) -> str:
    """Its status, and the line of its script that gave an exit status when that is known: ``exited 1 at line 4``."""
    return f"{info.status} at line {info.failed_line}" if info.failed_line and not info.running else info.status


def _mono(body: str) -> str:
    return f'<div style="font-family:var(--jp-code-font-family,monospace);font-size:12px">{body}</div>'


def _where(info: ShellInfo) -> str:
    """``pid 4242`` for a local shell, ``slurm job 17`` for a cluster job."""
    return f"pid {info.pid}" if info.job_id is None else f"{info.backend} job {info.job_id}"


# -- started handle ---------------------------------------------------------------------
def started_text(info: ShellInfo) -> str:
    return (f"▶ {info.id} · {_where(info)} · {_status(info)} · {short_command(info.command)}\n"
            f"  logs: {info.log_paths['stdout']} {info.log_paths['stderr']}\n"
            f"  read it with %bgout {info.id}, stop it with %kill {info.id}")


def started_html(info: ShellInfo) -> str:
    logs = " ".join(f"<code>{html.escape(p)}</code>" for p in info.log_paths.values())
    return _mono(
        f'<b style="color:{_colour(info)}">▶ {html.escape(info.id)}</b> · {html.escape(_where(info))}'
        f' · {html.escape(_status(info))}'
        f' · <code>{html.escape(short_command(info.command))}</code>'
        f'<div style="color:{_GREY}">logs: {logs} · <code>%bgout {html.escape(info.id)}</code>'
        f' · <code>%kill {html.escape(info.id)}</code></div>'
    )


# -- table --------------------------------------------------------------------------------
_COLUMNS = ("id", "pid", "status", "started", "runtime", "exit", "stdout", "stderr", "command")


def _row(info: ShellInfo) -> tuple[str, ...]:
    where = str(info.pid) if info.job_id is None else f"{info.backend} {info.job_id}"
    return (info.id, where, _status(info), info.started_at[11:19], _runtime(info),
            "" if info.exit_code is None else str(info.exit_code), format_bytes(info.stdout_bytes),
            format_bytes(info.stderr_bytes), short_command(info.command, 60))


def table_text(table: ShellTable) -> str:
    if not table.shells:
        return "no background shells (start one with %bg CMDLINE)"
    rows = [_COLUMNS, *(_row(s) for s in table.shells)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)) + "  " + r[-1] for r in rows)


def table_html(table: ShellTable) -> str:
    if not table.shells:
        return _mono("no background shells (start one with <code>%bg CMDLINE</code>)")
    head = "".join(f'<th style="text-align:left">{c}</th>' for c in _COLUMNS)
    body = []
    for info in table.shells:
        cells = [html.escape(c) for c in _row(info)]
        cells[2] = f'<span style="color:{_colour(info)}">{cells[2]}</span>'
        cells[-1] = f"<code>{cells[-1]}</code>"
        body.append("<tr>" + "".join(f'<td style="text-align:left">{c}</td>' for c in cells) + "</tr>")
    return ('<table class="execmagic-shells" style="font-size:12px">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


# -- a read's status ----------------------------------------------------------------------
def output_notes(out: ShellOutput) -> list[str]:
    notes = []
    if out.shell.lost_bytes:
        notes.append(f"{format_bytes(out.shell.lost_bytes)} could not be written to the logs (disk full?)")
    for stream, count in out.filtered_out.items():
        if count:
            notes.append(f"{count} {stream} line{'s' if count != 1 else ''} did not match {shown_value(out.filter)}"
                         " (still in the log: --all or --tail N shows them)")
    for stream in out.filter_gave_up:
        notes.append(f"the filter {shown_value(out.filter)} took over a second on {stream} and was given up there: the"
                     " lines after that point are shown unfiltered")
    for stream, count in out.skipped.items():
        notes.append(f"{format_bytes(count)} of {stream} not shown (only the latest part); full log: "
                     f"{out.shell.log_paths[stream]}")
    return notes


def output_status_text(out: ShellOutput) -> str:
    info = out.shell
    line = (f"{'⏳' if info.running else '■'} {info.id} · {_status(info)} · {_runtime(info)} · "
            f"{format_bytes(info.stdout_bytes)} out · {format_bytes(info.stderr_bytes)} err")
    return "\n".join([line, *(f"  note: {n}" for n in output_notes(out))])


def output_status_html(out: ShellOutput) -> str:
    info = out.shell
    notes = "".join(f'<div style="color:{_GREY}">note: {html.escape(n)}</div>' for n in output_notes(out))
    return _mono(
        f'<b style="color:{_colour(info)}">{"⏳" if info.running else "■"} {html.escape(info.id)} · '
        f"{html.escape(_status(info))}</b> · {_runtime(info)} · {format_bytes(info.stdout_bytes)} out · "
        f"{format_bytes(info.stderr_bytes)} err{notes}"
    )


def output_status_json(out: ShellOutput) -> dict[str, Any]:
    """The status part only: the output itself was already written to the cell's streams."""
    return {"shell": out.shell.to_json(), "filtered_out": out.filtered_out, "skipped": out.skipped,
            "filter": out.filter, "at_end": out.at_end}


# -- kill -----------------------------------------------------------------------------------
def kill_text(outcome: KillOutcome) -> str:
    return f"■ {outcome.message}"


def kill_html(outcome: KillOutcome) -> str:
    return _mono(f'<span style="color:{_colour(outcome.shell)}">■</span> {html.escape(outcome.message)}')
