"""The engine: plans (templating, languages, the persistent session) and runs them.

It never imports IPython, traitlets or the display layer, so plain Python,
asyncio orchestrators and agents can use it as well as notebooks.  The names
below are what a caller of the engine needs in one import (the errors, options and
results live in :mod:`execmagic.process`); each is imported on first use (importing
one engine module should not import them all).
"""

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports

__all__ = [
    "Command", "CommandFailed", "Engine", "ExecError", "Plan", "PreExecError", "Request", "Result", "RunOptions",
    "ShellSession", "StopReport", "StreamCapture", "TemplateError", "UsageProblem", "parse_env_entry",
    "stop_tree",
]

_WHERE = {
    **dict.fromkeys(("CommandFailed", "ExecError", "PreExecError", "TemplateError", "UsageProblem"),
                    "..process.errors"),
    "parse_env_entry": "..process.launch",
    **dict.fromkeys(("Result", "StreamCapture"), "..process.results"),
    **dict.fromkeys(("Command", "RunOptions"), "..process.spec"),
    **dict.fromkeys(("StopReport", "stop_tree"), "..process.stop"),
    **dict.fromkeys(("Engine", "Plan"), "engine"),
    "Request": "requests",
    "ShellSession": "session",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())

if TYPE_CHECKING:
    from ..process.errors import CommandFailed, ExecError, PreExecError, TemplateError, UsageProblem
    from ..process.launch import parse_env_entry
    from ..process.results import Result, StreamCapture
    from ..process.spec import Command, RunOptions
    from ..process.stop import StopReport, stop_tree
    from .engine import Engine, Plan
    from .requests import Request
    from .session import ShellSession
