"""``--on ray``: what a Ray job asks for, the options and settings that say it, and the backend's
:class:`~..registry.BackendSpec` (imported when the magics load: no HTTP code, nor the backend's own
modules, here).

``--cpus``, ``--gpus`` and ``--mem`` are the flags SLURM's jobs take too, read the same way on the
line (whole CPUs; ``--mem 4G``) and mapped to the entrypoint's resources (``entrypoint_num_cpus``,
``entrypoint_num_gpus``, ``entrypoint_memory``).  ``--working-dir DIR`` is a folder *here* that Ray
uploads and unpacks on the node as the job's working directory; ``--cwd`` (every magic has it) is the
folder the command starts in and means a folder *on the node*.  The settings section is
``c.RayBackend.*``: ``address``, the dashboard's URL (``RAY_ADDRESS`` when empty).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ....process.errors import UsageProblem, shown_value
from ..base import Backend, Option
from ..registry import BackendSpec
from ..resources import cpus_option, gpus_option, mem_option

__all__ = ["SPEC"]


def _gpus(text: str) -> float:
    try:
        gpus = float(text)
    except ValueError:
        gpus = -1.0
    if not gpus >= 0 or gpus == float("inf"):
        raise UsageProblem(f"--gpus {shown_value(text)}: Ray takes a number of GPUs (1, 0.5)")
    return gpus


def _mem(text: str) -> str:
    from .options import parse_mem  # (its regexes compiled when a --mem is first read, not when the magics load)

    parse_mem(text)  # checked here: a mistake is one line before anything is sent
    return text


def _working_dir(text: str) -> str:
    folder = os.path.abspath(os.path.expanduser(text))
    if not os.path.isdir(folder):
        raise UsageProblem(f"--working-dir {shown_value(text)}: not a folder here (Ray uploads it to the node)")
    return folder


_OPTIONS = (
    cpus_option("CPUs reserved per job (entrypoint_num_cpus); 0: none reserved (Ray's default).",
                help="CPUs reserved for the job"),
    mem_option("Memory reserved per job (4G, 500M; Ray schedules by it); empty: none reserved.", parse=_mem),
    gpus_option("GPUs for the job (1, 0.5)", "GPUs reserved per job (1, 0.5); empty: none.", parse=_gpus),
    Option("working_dir", "a folder here that Ray uploads as the job's working directory on the node",
           flag="--working-dir", metavar="DIR", setting=False, parse=_working_dir),
    Option("address", "The Ray dashboard's URL (http://host:8265); empty: RAY_ADDRESS, else"
                      " http://127.0.0.1:8265."),
    Option("request_timeout", "Seconds one request to the Ray dashboard may take before it counts as failed.",
           kind=float, default=30.0),
)


def _make(values: Mapping[str, Any], grace: float) -> Backend:
    from .backend import RayBackend
    from .options import RayOptions

    options = RayOptions(cpus=values.get("cpus") or None, gpus=values.get("gpus"), mem=values.get("mem") or None,
                         working_dir=values.get("working_dir") or None)
    return RayBackend(options, address=values.get("address") or None, grace=min(grace, 2.0),
                      request_timeout=values.get("request_timeout") or 30.0)


SPEC = BackendSpec(name="ray", help="a Ray job, through the dashboard's Jobs API", make=_make, options=_OPTIONS,
                   settings_name="RayBackend", settings_example='address = "http://head:8265"')
