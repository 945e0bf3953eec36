"""The engine: plans (templating, languages, the persistent session) and runs them.

It never imports IPython, traitlets or the display layer, so plain Python,
asyncio orchestrators and agents can use it as well as notebooks.  The names
below are re-exported for code written before the modules moved into layers.
"""

from ..process.errors import CommandFailed, ExecError, PreExecError, TemplateError, UsageProblem
from ..process.launch import parse_env_entry
from ..process.results import Result, StreamCapture
from ..process.spec import Command, RunOptions
from ..process.stop import StopReport, stop_tree
from . import _moved
from .engine import Engine, Plan
from .session import ShellSession

__all__ = [
    "Command", "CommandFailed", "Engine", "ExecError", "Plan", "PreExecError", "Result", "RunOptions",
    "ShellSession", "StopReport", "StreamCapture", "TemplateError", "UsageProblem", "parse_env_entry",
    "stop_tree",
]

_moved.install()
