"""``--on slurm`` as the registry knows it: the options and settings that say what a job asks for,
and the backend's :class:`~..registry.BackendSpec` (imported when the magics load: no SLURM command,
nor the backend's own modules, here).  The settings section keeps its public name,
``c.SlurmBackend.*``, as the README documents it.  What a job asks SLURM for and the reading of
``--sbatch-args`` (:mod:`.options`) are imported when a line gives one or a job is made: the magics load
without that module (0.2-0.5 ms of ``%load_ext``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Backend, Option
from ..registry import BackendSpec
from ..resources import cpus_option, gpus_option, mem_option

__all__ = ["SPEC"]


def _sbatch_words(text: str) -> tuple[str, ...]:
    """``--sbatch-args`` as words (:func:`.options.sbatch_words`)."""
    from .options import sbatch_words

    return sbatch_words(text)


_OPTIONS = (
    Option("partition", "the partition (default: the cluster's)", flag="--partition", metavar="NAME",
           setting_help="Partition for jobs; empty: the cluster's default partition."),
    cpus_option("CPUs per job (--cpus-per-task); 0: the cluster's default (one).",
                help="CPUs for the job (--cpus-per-task)"),
    mem_option("Memory per job (4G, 500M); empty: the cluster's default."),
    gpus_option("GPUs for the job (2, a100:1)", "GPUs per job (2, a100:1); empty: none asked for."),
    Option("time", "SLURM's time limit (30, 2:00:00, 1-0)", flag="--time", metavar="LIMIT",
           setting_help="SLURM time limit per job (30, 2:00:00, 1-0); empty: the partition's."),
    Option("account", "the account the job is charged to", flag="--account", metavar="NAME",
           setting_help="Account jobs are charged to; empty: the user's default account."),
    Option("sbatch_args", 'more sbatch options, quoted as one: --sbatch-args="--qos=debug --exclusive"',
           flag="--sbatch-args", metavar="ARGS", parse=_sbatch_words, adds_to_setting=True,
           setting_help='More sbatch options for every job, as typed ("--qos=debug --constraint=a100").'),
    Option("logs_dir", "Folder the jobs write their output and exit codes to; it must be on a filesystem the"
                       " cluster's nodes share with the kernel. Empty: ~/.execmagic/slurm."),
    Option("command_timeout", "Seconds a SLURM command (sbatch, squeue, scancel) may take before it counts as"
                              " failed (an unreachable controller makes them retry).", kind=float, default=30.0),
)


def _make(values: Mapping[str, Any], grace: float) -> Backend:
    from .backend import SlurmBackend
    from .options import SlurmOptions

    options = SlurmOptions(partition=values.get("partition"), cpus=values.get("cpus"), mem=values.get("mem"),
                           gpus=values.get("gpus"), time=values.get("time"), account=values.get("account"),
                           extra=values.get("sbatch_args") or ())
    return SlurmBackend(options, logs_dir=values.get("logs_dir"), grace=grace,
                        command_timeout=values.get("command_timeout") or 30.0)


SPEC = BackendSpec(name="slurm", help="a batch job; its logs on a shared folder", make=_make, options=_OPTIONS,
                   settings_name="SlurmBackend", settings_example='partition = "gpu"')
