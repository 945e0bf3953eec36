"""Register the pure renderers with an IPython shell's display formatters (and remove them again)."""

from __future__ import annotations

from typing import Any

from ..engine.results import Result
from .render import Summary, render_html, render_json, render_text

_TYPES = (Result, Summary)


def _result_of(obj: Result | Summary) -> tuple[Result, bool]:
    return (obj.result, False) if isinstance(obj, Summary) else (obj, True)


def _plain(obj: Any, printer: Any, cycle: bool) -> None:
    printer.text(render_text(*_result_of(obj)))


def _html(obj: Any) -> str:
    return render_html(*_result_of(obj))


def _json(obj: Any) -> dict[str, Any]:
    return render_json(_result_of(obj)[0])


def register(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for cls in _TYPES:
        formatters["text/plain"].for_type(cls, _plain)
        formatters["text/html"].for_type(cls, _html)
        formatters["application/json"].for_type(cls, _json)


def unregister(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for mime in ("text/plain", "text/html", "application/json"):
        for cls in _TYPES:
            try:
                formatters[mime].pop(cls)
            except KeyError:
                pass
