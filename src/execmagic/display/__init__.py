"""Widget-free display: pure renderers for engine values, and their registration with IPython."""

from .render import PROVENANCE_MIME, Summary, render_html, render_json, render_text, status_line

__all__ = ["PROVENANCE_MIME", "Summary", "render_html", "render_json", "render_text", "status_line"]
