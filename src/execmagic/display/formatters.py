"""Register the pure renderers with an IPython shell's display formatters (and remove them again)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.results import KillOutcome, Result, ShellInfo, ShellOutput
from . import shells
from .render import Summary, render_html, render_json, render_text

# class → (text/plain, text/html, application/json)
_RENDERERS: dict[type, tuple[Callable[[Any], str], Callable[[Any], str], Callable[[Any], Any]]] = {
    Result: (render_text, render_html, render_json),
    Summary: (lambda s: render_text(s.result, panes=False), lambda s: render_html(s.result, panes=False),
              lambda s: render_json(s.result)),
    ShellInfo: (shells.started_text, shells.started_html, lambda i: i.to_json()),
    shells.ShellTable: (shells.table_text, shells.table_html, lambda t: t.to_json()),
    ShellOutput: (shells.output_status_text, shells.output_status_html, shells.output_status_json),
    KillOutcome: (shells.kill_text, shells.kill_html, lambda k: k.to_json()),
}


def _plain(render: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(render(obj))

    return printer


def register(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for cls, (plain, html, json) in _RENDERERS.items():
        formatters["text/plain"].for_type(cls, _plain(plain))
        formatters["text/html"].for_type(cls, html)
        formatters["application/json"].for_type(cls, json)


def unregister(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for mime in ("text/plain", "text/html", "application/json"):
        for cls in _RENDERERS:
            try:
                formatters[mime].pop(cls)
            except KeyError:
                pass
