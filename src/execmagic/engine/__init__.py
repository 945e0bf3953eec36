"""The engine: runs commands and reports how they ended.  Standard library and psutil only.

It never imports IPython, traitlets or the display layer, so plain Python,
asyncio orchestrators and agents can use it as well as notebooks.
"""

from .errors import CommandFailed, ExecError, PreExecError, TemplateError, UsageProblem
from .results import Result, StreamCapture
from .runner import Engine, Plan
from .session import ShellSession
from .spawn import parse_env_entry
from .spec import Command, RunOptions
from .stop import StopReport, stop_tree

__all__ = [
    "Command", "CommandFailed", "Engine", "ExecError", "Plan", "PreExecError", "Result", "RunOptions",
    "ShellSession", "StopReport", "StreamCapture", "TemplateError", "UsageProblem", "parse_env_entry",
    "stop_tree",
]
