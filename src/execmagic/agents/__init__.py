"""What agents use: tools in the shapes models know, JSON-line plugins, and the seed's ``execute``."""

from .execute import SubprocessPrimitive, SubprocessResult, execute
from .plugins import PluginTool, load_manifest
from .tools import Toolbox

__all__ = ["PluginTool", "SubprocessPrimitive", "SubprocessResult", "Toolbox", "execute", "load_manifest"]
