"""Widget-free display: pure renderers for engine values, and their registration with IPython.

The renderers are imported on first use (registering them with a shell imports none).
"""

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports
from .mime import PROVENANCE_MIME

__all__ = ["PROVENANCE_MIME", "Summary", "render_html", "render_json", "render_text", "status_line"]

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(("Summary", "render_html", "render_json", "render_text", "status_line"), "render"),
    globals())

if TYPE_CHECKING:
    from .render import Summary, render_html, render_json, render_text, status_line
