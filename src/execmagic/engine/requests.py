"""A run asked for, as a value: what the magics, the Python API and the agent tools hand the engine.

A :class:`Request` holds everything a caller decided -- the text and its language (or an argv), the
options, where ``{name}`` values come from, the sandbox and the backend -- and nothing that runs.
So the path of a cell's text can be followed by reading: the magic builds a request from its line
(:meth:`~execmagic.magics.exec_magics.ExecMagics.request`), :meth:`.Engine.plan` turns it into a
:class:`~.plans.Plan` (expanded, not yet run; what ``--dry-run`` shows), and :meth:`.Engine.run` or
:meth:`.Engine.start_background` runs that.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..background.backends.base import Backend
from ..process.records import record

if TYPE_CHECKING:  # the walls are imported when a sandbox is first set (see .sandboxing)
    from ..process.sandbox import Sandbox

__all__ = ["EnvFilter", "Request"]

#: Trims the inherited environment before a run sees it (the agent tools hold back secrets with one).
EnvFilter = Callable[[dict[str, str]], dict[str, str]]


@record
class Request:
    """One run asked for: a script (``text`` in ``language``) or, with ``argv``, one program and its words.

    ``params`` fill ``{name}`` everywhere, ``variables`` only where a shell would expand ``$VAR``
    (see :func:`.template.fill`); both are mappings -- a notebook's namespace is read through a
    lookup object (:class:`~execmagic.magics.options.NotebookVariables`), never through a function.
    """

    #: The script: a cell, a command line.  Ignored when :attr:`argv` is set.
    text: str = ""
    #: What runs the text: ``bash`` (in the persistent session), ``sh``, ``python``, any interpreter.
    language: str = "bash"
    #: A program and its arguments, no shell in between (``%spawn``); ``None``: run :attr:`text`.
    argv: Sequence[str] | None = None
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    clear_env: bool = False
    #: For stdin: text is templated like the options, bytes go as they are; ``None``: stdin closed.
    input: str | bytes | None = None
    #: Start from the process's cwd and environment, not the session's (and write nothing back).
    isolated: bool = False
    #: A bash/sh script stops at its first failed command (``set -e``, and ``pipefail`` in bash).
    errexit: bool = False
    params: Mapping[str, Any] | None = None
    variables: Mapping[str, Any] | None = None
    #: A background shell: it reads the session and never writes it back.
    background: bool = False
    #: The walls the run goes inside (``None``: none); see :meth:`.Engine.sandbox_for`.
    sandbox: Sandbox | None = None
    #: Where it runs (``None``: here).  A remote backend's foreground run writes no session back.
    on: Backend | None = None
    #: What the caller says with the result, before the plan's own notes (its sandbox setting's).
    notes: tuple[str, ...] = ()
    env_filter: EnvFilter | None = dataclasses.field(default=None, repr=False)

    @property
    def remote(self) -> bool:
        """It runs on another system's machines, under that system's rules (a SLURM job, a Ray job)."""
        return self.on is not None and self.on.remote

    def options(self) -> dict[str, Any]:
        """The options every plan takes (:meth:`.Planner.plan_script` and :meth:`.Planner.plan_argv`)."""
        return {"cwd": self.cwd, "env": self.env, "clear_env": self.clear_env, "params": self.params,
                "variables": self.variables, "input": self.input, "isolated": self.isolated,
                "env_filter": self.env_filter, "sandbox": self.sandbox}
