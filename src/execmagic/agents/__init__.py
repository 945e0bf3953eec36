"""What agents use: tools in the shapes models know, JSON-line plugins, and a one-call ``execute``.

Each name is imported on first use: the plugins do not need the tools, nor the tools the plugins.
"""

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports

__all__ = ["PluginTool", "SubprocessPrimitive", "SubprocessResult", "Toolbox", "execute", "load_manifest"]

_WHERE = {
    **dict.fromkeys(("SubprocessPrimitive", "SubprocessResult", "execute"), "execute"),
    **dict.fromkeys(("PluginTool", "load_manifest"), "plugins"),
    "Toolbox": "tools",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())

if TYPE_CHECKING:
    from .execute import SubprocessPrimitive, SubprocessResult, execute
    from .plugins import PluginTool, load_manifest
    from .tools import Toolbox
