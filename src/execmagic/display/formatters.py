"""Register the pure renderers with an IPython shell's display formatters (and remove them again).

Three renderings per value: ``text/plain`` (terminals), ``text/html`` (JupyterLab, nbconvert) and
the provenance record as JSON under :data:`PROVENANCE_MIME`.  The record does not use plain
``application/json``: JupyterLab ranks its JSON tree viewer above HTML, so a bundle holding
``application/json`` would show every summary line as an expandable tree.  A vendor ``+json``
type is stored in the notebook as JSON all the same, and frontends that do not know it fall back
to the HTML.

A result is rendered with the shell's current :class:`~execmagic.display.render.View` (the display budget,
whether volatile fields are left out), asked for at each rendering: a setting changed with ``%config``
applies to the next value shown, and to a ``Result`` displayed by hand as to a command's summary.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.formatters import BaseFormatter
from traitlets import ObjectName, Unicode

from .mime import PROVENANCE_MIME

if TYPE_CHECKING:  # the renderers are imported by the first value shown
    from .render import View

__all__ = ["ProvenanceFormatter", "bundle_of", "register", "unregister"]

#: A renderer as registered: the value, and the shell's view at that moment (``None``: the default one).
Renderer = Callable[[Any, "Callable[[], View] | None"], Any]


def _render(module: str, name: str, *attrs: str, viewed: bool = False, **kwargs: Any) -> Renderer:
    """A renderer imported when the first value is shown (``%load_ext`` imports none of them); ``viewed``:
    it takes the shell's view."""

    found: list[Callable[..., Any]] = []  # the function, once imported (an import by name costs each call)

    def render(obj: Any, view: Callable[[], View] | None) -> Any:
        if not found:
            from importlib import import_module

            found.append(getattr(import_module(module, __package__), name))
        for attr in attrs:  # Summary renders its result
            obj = getattr(obj, attr)
        settings = {"view": view()} if viewed and view is not None else {}
        return found[0](obj, **kwargs, **settings)

    return render


def _method(name: str) -> Renderer:
    return lambda obj, view: getattr(obj, name)()


_RESULTS, _RENDER, _SHELLS = "execmagic.process.results", ".render", ".shells"
# (module, class) → (text/plain, text/html, provenance JSON); registered by name: IPython looks the
# class up when the first value of it is shown, so registering imports none of these modules
_RENDERERS: dict[tuple[str, str], tuple[Renderer, Renderer, Renderer]] = {
    (_RESULTS, "Result"): (_render(_RENDER, "render_text", viewed=True), _render(_RENDER, "render_html", viewed=True),
                           _render(_RENDER, "render_json", viewed=True)),
    ("execmagic.display.render", "Summary"): (
        _render(_RENDER, "render_text", "result", viewed=True, panes=False),
        _render(_RENDER, "render_html", "result", viewed=True, panes=False),
        _render(_RENDER, "render_json", "result", viewed=True)),
    (_RESULTS, "ShellInfo"): (_render(_SHELLS, "started_text"), _render(_SHELLS, "started_html"), _method("to_json")),
    ("execmagic.display.shells", "ShellTable"): (_render(_SHELLS, "table_text"), _render(_SHELLS, "table_html"),
                                                 _method("to_json")),
    (_RESULTS, "ShellOutput"): (_render(_SHELLS, "output_status_text"), _render(_SHELLS, "output_status_html"),
                                _render(_SHELLS, "output_status_json")),
    (_RESULTS, "KillOutcome"): (_render(_SHELLS, "kill_text"), _render(_SHELLS, "kill_html"), _method("to_json")),
    ("execmagic.agents.mcp_server", "McpStatus"): (_render(".mcp", "status_text"), _render(".mcp", "status_html"),
                                                   _method("to_json")),
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


#: What :func:`register` gave each formatter, per class: (module, class) -> {mime type: (printer, renderer)}.
_REGISTERED: dict[tuple[str, str], dict[str, tuple[Callable[..., Any], Renderer]]] = {}
#: The view :func:`register` was given (asked once per bundle by :func:`bundle_of`, not once per type).
_VIEW: list[Callable[[], View] | None] = [None]
_MIMES = ("text/plain", "text/html", PROVENANCE_MIME)


def _bound(renderer: Renderer, view: Callable[[], View] | None) -> Callable[[Any], Any]:
    return lambda obj: renderer(obj, view)


def register(shell: Any, view: Callable[[], View] | None = None, into: dict[str, Any] | None = None) -> None:
    """Register the renderers with ``shell``'s formatters; ``view`` gives the settings results are shown with.

    ``into``: the formatters being made for the shell, not yet its own (``magics/renderers.py`` sets them once ours
    are in: another thread showing a value meanwhile must not find them half registered)."""
    display = shell.display_formatter
    formatters = display.formatters if into is None else into
    if PROVENANCE_MIME not in formatters:
        provenance = ProvenanceFormatter(parent=display)
        # a terminal shows text only (its active types are just text/plain): no JSON work there
        # (their default is the formatters' types: those being made, where they are not the shell's yet)
        active = display.active_types if into is None or display.trait_has_value("active_types") else list(into)
        provenance.enabled = "text/html" in active
        formatters[PROVENANCE_MIME] = provenance
    _VIEW[0] = view
    for (module, name), renderers in _RENDERERS.items():
        printers: dict[str, tuple[Callable[..., Any], Renderer]] = {}
        for mime, renderer in zip(_MIMES, renderers, strict=True):
            render = _bound(renderer, view)
            printers[mime] = (_plain(render) if mime == "text/plain" else render, renderer)
        for mime, (printer, _) in printers.items():
            formatters[mime].for_type_by_name(module, name, printer)
        _REGISTERED[module, name] = printers


def bundle_of(shell: Any, value: Any) -> dict[str, Any] | None:
    """The bundle ``display(value)`` would publish, made by calling the renderers directly.

    IPython's dispatch asks each of its formatters in turn, where a summary shown after every
    command needs three: that dispatch would be a noticeable share of a short command's time.
    ``None`` when IPython's answer could differ: a value of another class, or a printer of the
    user's own registered for it (for any type).
    Formatters switched off (a terminal's take text only) are left out, as IPython leaves them out.
    """
    cls = type(value)
    printers = _REGISTERED.get((cls.__module__, cls.__qualname__))
    if printers is None:
        return None
    display = shell.display_formatter
    others = [formatter for mime, formatter in display.formatters.items() if mime not in printers]
    if any(_has_printer(formatter, cls) for formatter in
           (*others, display.ipython_display_formatter, display.mimebundle_formatter)):
        return None  # a printer of the user's own for another type, or one that displays the value itself
    data: dict[str, Any] = {}
    shown: list[View] = []
    view = _VIEW[0]
    for mime, (printer, render) in printers.items():
        formatter = display.formatters.get(mime)
        if formatter is None or not formatter.enabled:  # IPython keeps ``enabled`` in step with active_types
            continue
        try:
            if formatter.lookup_by_type(cls) is not printer:
                return None
        except KeyError:
            return None
        data[mime] = render(value, None if view is None else lambda: shown[0] if shown else _asked(view, shown))
    return data


def _asked(view: Callable[[], View], shown: list[View]) -> View:
    """``view()``, kept in ``shown`` for the bundle's other renderings."""
    shown.append(view())
    return shown[0]


def _has_printer(formatter: Any, cls: type) -> bool:
    """Whether ``formatter`` has a printer registered for ``cls`` itself (by class or by name)."""
    return cls in formatter.type_printers or (cls.__module__, cls.__qualname__) in formatter.deferred_printers


def unregister(shell: Any) -> None:
    formatters = shell.display_formatter.formatters
    for mime in ("text/plain", "text/html"):
        for module, name in _RENDERERS:
            with contextlib.suppress(KeyError):
                formatters[mime].pop(f"{module}.{name}")
    formatters.pop(PROVENANCE_MIME, None)
