"""``--on slurm``: the options and the settings that send a command to a SLURM cluster.

The defaults are traits of their own section, ``c.SlurmBackend.partition = "gpu"`` in
``ipython_config.py`` or ``%config SlurmBackend.partition = "gpu"``, named after the backend they
configure (:class:`execmagic.background.backends.slurm.SlurmBackend`); an option on the magic's line
wins over its trait.  Turned into a plain backend at call time, as every setting is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument
from traitlets import Float, Int, Unicode
from traitlets.config import Configurable

if TYPE_CHECKING:  # the backend is imported by the first --on slurm, not at %load_ext
    from ..background.backends import slurm

__all__ = ["CLUSTER_OPTIONS", "SlurmBackend", "cluster_options"]

#: The options that only mean something with ``--on slurm`` (argparse dest → option as typed).
CLUSTER_OPTIONS = {"partition": "--partition", "cpus": "--cpus", "mem": "--mem", "gpus": "--gpus", "time": "--time",
                   "account": "--account", "sbatch_args": "--sbatch-args"}


def cluster_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--on`` and the SLURM options, for the magics that can run on a cluster."""
    decorators = [
        argument("--on", choices=("local", "slurm"), default=None,
                 help="where to run: local (default) or slurm (a batch job; its logs on a shared folder)"),
        argument("--partition", metavar="NAME", help="with --on slurm: the partition (default: the cluster's)"),
        argument("--cpus", type=int, metavar="N", help="with --on slurm: CPUs for the job (--cpus-per-task)"),
        argument("--mem", metavar="SIZE", help="with --on slurm: memory for the job (4G, 500M)"),
        argument("--gpus", metavar="N", help="with --on slurm: GPUs for the job (2, a100:1)"),
        argument("--time", metavar="LIMIT", help="with --on slurm: SLURM's time limit (30, 2:00:00, 1-0)"),
        argument("--account", metavar="NAME", help="with --on slurm: the account the job is charged to"),
        argument("--sbatch-args", metavar="ARGS",
                 help='with --on slurm: more sbatch options, quoted as one: --sbatch-args="--qos=debug --exclusive"'),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


class SlurmBackend(Configurable):
    """Defaults for ``--on slurm`` (``%bg``, ``%%exec --bg``): ``c.SlurmBackend.partition = "gpu"``."""

    partition = Unicode("", help="Partition for jobs; empty: the cluster's default partition.").tag(config=True)
    cpus = Int(0, help="CPUs per job (--cpus-per-task); 0: the cluster's default (one).").tag(config=True)
    mem = Unicode("", help="Memory per job (4G, 500M); empty: the cluster's default.").tag(config=True)
    gpus = Unicode("", help="GPUs per job (2, a100:1); empty: none asked for.").tag(config=True)
    time = Unicode("", help="SLURM time limit per job (30, 2:00:00, 1-0); empty: the partition's.").tag(config=True)
    account = Unicode("", help="Account jobs are charged to; empty: the user's default account.").tag(config=True)
    sbatch_args = Unicode("", help='More sbatch options for every job, as typed ("--qos=debug --constraint=a100").'
                          ).tag(config=True)
    logs_dir = Unicode(
        "", help="Folder the jobs write their output and exit codes to; it must be on a filesystem the cluster's"
                 " nodes share with the kernel. Empty: ~/.execmagic/slurm.",
    ).tag(config=True)
    command_timeout = Float(
        30.0, help="Seconds a SLURM command (sbatch, squeue, scancel) may take before it counts as failed"
                   " (an unreachable controller makes them retry).",
    ).tag(config=True)

    def backend(self, args: Any, grace: float) -> slurm.SlurmBackend | None:
        """The backend ``args`` ask for (``None``: local), each option over its trait; an option
        given without ``--on slurm`` is a one-line usage error."""
        on = getattr(args, "on", None)
        given = [flag for dest, flag in CLUSTER_OPTIONS.items() if getattr(args, dest, None) is not None]
        if on != "slurm":
            if given:
                raise UsageError(f"{given[0]} goes with --on slurm")
            return None
        from ..background.backends import slurm
        from ..process.errors import UsageProblem

        cpus = args.cpus if args.cpus is not None else (self.cpus or None)
        if cpus is not None and cpus < 1:
            raise UsageError(f"--cpus needs a whole number of CPUs, at least 1, not {cpus}")
        try:
            extra = slurm.sbatch_words(self.sbatch_args) + slurm.sbatch_words(args.sbatch_args or "")
        except UsageProblem as exc:
            raise UsageError(str(exc)) from None
        options = slurm.SlurmOptions(
            partition=_pick(args.partition, self.partition), cpus=cpus, mem=_pick(args.mem, self.mem),
            gpus=_pick(args.gpus, self.gpus), time=_pick(args.time, self.time),
            account=_pick(args.account, self.account), extra=extra)
        return slurm.SlurmBackend(options, logs_dir=self.logs_dir or None, grace=grace,
                                  command_timeout=self.command_timeout)


def _pick(option: str | None, trait: str) -> str | None:
    value = option if option is not None else trait
    return value or None
