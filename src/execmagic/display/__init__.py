"""Widget-free display: pure renderers for engine values, and their registration with IPython."""

from .render import Summary, mimebundle, render_html, render_json, render_text, status_line

__all__ = ["Summary", "mimebundle", "render_html", "render_json", "render_text", "status_line"]
