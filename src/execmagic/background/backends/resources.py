"""``--cpus``, ``--mem`` and ``--gpus``: the resource options every remote backend takes.

One flag serves every backend that declares it (the registry refuses two backends reading a flag
differently), so the options are made here, once: the same name, kind, flag and metavar, and the
same check of ``--cpus`` (whole CPUs, at least one).  What each amount means to a cluster (SLURM's
``--cpus-per-task``, Ray's ``entrypoint_num_cpus``) is the backend's: it gives the help, and the
parse of ``--mem`` and ``--gpus`` where its cluster reads them its own way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...process.errors import UsageProblem
from .base import Option

__all__ = ["cpus_option", "gpus_option", "mem_option", "whole_cpus"]


def whole_cpus(value: int) -> int:
    """``--cpus N``: a whole number of CPUs, at least one (0 is the setting's "the site's default")."""
    if value < 1:
        raise UsageProblem(f"--cpus needs a whole number of CPUs, at least 1, not {value}")
    return value


def cpus_option(setting_help: str, help: str = "CPUs for the job") -> Option:
    return Option("cpus", help, kind=int, default=0, flag="--cpus", metavar="N", setting_help=setting_help,
                  parse=whole_cpus)


def mem_option(setting_help: str, parse: Callable[[Any], Any] | None = None) -> Option:
    return Option("mem", "memory for the job (4G, 500M)", flag="--mem", metavar="SIZE", parse=parse,
                  setting_help=setting_help)


def gpus_option(help: str, setting_help: str, parse: Callable[[Any], Any] | None = None) -> Option:
    return Option("gpus", help, flag="--gpus", metavar="N", parse=parse, setting_help=setting_help)
