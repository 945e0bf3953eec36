"""Register the pure renderers with an IPython shell's display formatters (and remove them again).

Three renderings per value: ``text/plain`` (terminals), ``text/html`` (JupyterLab, nbconvert) and
the provenance record as JSON under :data:`PROVENANCE_MIME`.  The record does not use plain
``application/json``: JupyterLab ranks its JSON tree viewer above HTML, so a bundle holding
``application/json`` would show every summary line as an expandable tree.  A vendor ``+json``
type is stored in the notebook as JSON all the same, and frontends that do not know it fall back
to the HTML.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from IPython.core.formatters import BaseFormatter
from traitlets import ObjectName, Unicode

from ..agents.mcp_server import McpStatus
from ..process.results import KillOutcome, Result, ShellInfo, ShellOutput
from . import mcp, shells
from .render import PROVENANCE_MIME, Summary, render_html, render_json, render_text

__all__ = ["ProvenanceFormatter", "register", "unregister"]

# class → (text/plain, text/html, provenance JSON)
_RENDERERS: dict[type, tuple[Callable[[Any], str], Callable[[Any], str], Callable[[Any], Any]]] = {
    Result: (render_text, render_html, render_json),
    Summary: (lambda s: render_text(s.result, panes=False), lambda s: render_html(s.result, panes=False),
              lambda s: render_json(s.result)),
    ShellInfo: (shells.started_text, shells.started_html, lambda i: i.to_json()),
    shells.ShellTable: (shells.table_text, shells.table_html, lambda t: t.to_json()),
    ShellOutput: (shells.output_status_text, shells.output_status_html, shells.output_status_json),
    KillOutcome: (shells.kill_text, shells.kill_html, lambda k: k.to_json()),
    McpStatus: (mcp.status_text, mcp.status_html, lambda s: s.to_json()),
}


class ProvenanceFormatter(BaseFormatter):
    """Formats execmagic values as their JSON provenance record."""

    format_type = Unicode(PROVENANCE_MIME)
    print_method = ObjectName("_repr_execmagic_json_")
    _return_type = (dict, list)


def _plain(render: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(render(obj))

    return printer


def register(shell: Any) -> None:
    display = shell.display_formatter
    if PROVENANCE_MIME not in display.formatters:
        provenance = ProvenanceFormatter(parent=display)
        # a terminal shows text only (its active types are just text/plain): no JSON work there
        provenance.enabled = "text/html" in display.active_types
        display.formatters[PROVENANCE_MIME] = provenance
    formatters = display.formatters
    for cls, (plain, html, json) in _RENDERERS.items():
        formatters["text/plain"].for_type(cls, _plain(plain))
        formatters["text/html"].for_type(cls, html)
        formatters[PROVENANCE_MIME].for_type(cls, json)


def unregister(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for mime in ("text/plain", "text/html"):
        for cls in _RENDERERS:
            with contextlib.suppress(KeyError):
                formatters[mime].pop(cls)
    formatters.pop(PROVENANCE_MIME, None)
