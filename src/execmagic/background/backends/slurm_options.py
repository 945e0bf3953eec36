"""``--on slurm``: what a SLURM job asks for, the options and settings that say it, and the
backend's :class:`~.registry.BackendSpec` (imported when the magics load: no SLURM command here).

Every option maps to one ``sbatch``/``srun`` option (:meth:`SlurmOptions.sbatch_args`);
``--sbatch-args`` passes more, except those the backend sets itself (:data:`OWNED_SBATCH_OPTIONS`).
The settings section keeps its public name, ``c.SlurmBackend.*``, as the README documents it.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping
from typing import Any

from ...process.errors import UsageProblem, shown_value
from .base import Backend, Option
from .registry import BackendSpec

__all__ = [
    "OWNED_SBATCH_OPTIONS", "SPEC", "SlurmOptions", "check_extra", "checked_logs_dir", "default_logs_dir",
    "sbatch_words",
]


def default_logs_dir() -> str:
    """``~/.execmagic/slurm``: under the home folder, which clusters share between login and compute
    nodes (the kernel's temp folder is local to its machine, where a job's node cannot write)."""
    return os.path.join(os.path.expanduser("~"), ".execmagic", "slurm")


def checked_logs_dir(path: str) -> str:
    """The logs folder as SLURM must be given it: ``~`` expanded and absolute (SLURM reads a relative
    path against the job's ``--chdir``, not the kernel's folder), with no ``%`` (SLURM expands it)."""
    absolute = os.path.abspath(os.path.expanduser(path))
    if "%" in absolute:
        raise UsageProblem(f"the SLURM logs folder may not contain '%' (SLURM expands it in file names): {absolute}")
    return absolute


@dataclasses.dataclass(frozen=True)
class SlurmOptions:
    """What a job asks SLURM for; ``None``/empty: the site's default."""

    partition: str | None = None
    cpus: int | None = None
    mem: str | None = None
    gpus: str | None = None
    time: str | None = None
    account: str | None = None
    #: More ``sbatch`` options, as separate words (``("--qos=debug", "--constraint=a100")``).
    extra: tuple[str, ...] = ()

    def sbatch_args(self) -> list[str]:
        args = []
        for flag, value in (("--partition", self.partition), ("--cpus-per-task", self.cpus), ("--mem", self.mem),
                            ("--gpus", self.gpus), ("--time", self.time), ("--account", self.account)):
            if value is not None and value != "":
                args.append(f"{flag}={value}")
        check_extra(self.extra)
        return [*args, *self.extra]


#: sbatch options the backend sets itself (where the output goes, the job's name and folder, what it
#: runs and how sbatch answers): given again in ``--sbatch-args`` they would silently take its
#: output elsewhere, hide the job from a restarted kernel or make sbatch answer with something
#: other than a job id.
OWNED_SBATCH_OPTIONS = {
    "-o": "--output", "--output": "--output", "-e": "--error", "--error": "--error", "-J": "--job-name",
    "--job-name": "--job-name", "-D": "--chdir", "--chdir": "--chdir", "--parsable": "--parsable",
    "--wrap": "--wrap", "-a": "--array", "--array": "--array", "--test-only": "--test-only", "-h": "--help",
    "--help": "--help", "--usage": "--usage", "-V": "--version", "--version": "--version", "--export": "--export",
    "--comment": "--comment", "-W": "--wait", "--wait": "--wait", "-i": "--input", "--input": "--input",
}


def sbatch_words(text: str) -> tuple[str, ...]:
    """``--sbatch-args "--qos=debug --constraint='a100 80gb'"`` as words, split as a shell would;
    an option the backend sets itself is refused (see :data:`OWNED_SBATCH_OPTIONS`)."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageProblem(f"cannot split --sbatch-args {shown_value(text)}: {exc}") from None
    check_extra(words)
    return words


def check_extra(words: tuple[str, ...]) -> None:
    """Refuse extra sbatch words that would override what the backend sets (one line, naming it)."""
    for word in words:
        flag = word.split("=", 1)[0]
        if not flag.startswith("--") and len(flag) > 2 and flag.startswith("-"):
            flag = flag[:2]  # -ofile, -Jname: a short option with its value attached
        if flag in OWNED_SBATCH_OPTIONS:
            raise UsageProblem(f"--sbatch-args may not set {OWNED_SBATCH_OPTIONS[flag]}: execmagic sets it itself"
                               " (the job's logs, name, folder and id depend on it)")


def _cpus(value: int) -> int:
    if value < 1:
        raise UsageProblem(f"--cpus needs a whole number of CPUs, at least 1, not {value}")
    return value


_OPTIONS = (
    Option("partition", "the partition (default: the cluster's)", flag="--partition", metavar="NAME",
           setting_help="Partition for jobs; empty: the cluster's default partition."),
    Option("cpus", "CPUs for the job (--cpus-per-task)", kind=int, default=0, flag="--cpus", metavar="N",
           setting_help="CPUs per job (--cpus-per-task); 0: the cluster's default (one).", parse=_cpus),
    Option("mem", "memory for the job (4G, 500M)", flag="--mem", metavar="SIZE",
           setting_help="Memory per job (4G, 500M); empty: the cluster's default."),
    Option("gpus", "GPUs for the job (2, a100:1)", flag="--gpus", metavar="N",
           setting_help="GPUs per job (2, a100:1); empty: none asked for."),
    Option("time", "SLURM's time limit (30, 2:00:00, 1-0)", flag="--time", metavar="LIMIT",
           setting_help="SLURM time limit per job (30, 2:00:00, 1-0); empty: the partition's."),
    Option("account", "the account the job is charged to", flag="--account", metavar="NAME",
           setting_help="Account jobs are charged to; empty: the user's default account."),
    Option("sbatch_args", 'more sbatch options, quoted as one: --sbatch-args="--qos=debug --exclusive"',
           flag="--sbatch-args", metavar="ARGS", parse=sbatch_words, adds_to_setting=True,
           setting_help='More sbatch options for every job, as typed ("--qos=debug --constraint=a100").'),
    Option("logs_dir", "Folder the jobs write their output and exit codes to; it must be on a filesystem the"
                       " cluster's nodes share with the kernel. Empty: ~/.execmagic/slurm."),
    Option("command_timeout", "Seconds a SLURM command (sbatch, squeue, scancel) may take before it counts as"
                              " failed (an unreachable controller makes them retry).", kind=float, default=30.0),
)


def _make(values: Mapping[str, Any], grace: float) -> Backend:
    from .slurm import SlurmJobs

    options = SlurmOptions(partition=values.get("partition"), cpus=values.get("cpus"), mem=values.get("mem"),
                           gpus=values.get("gpus"), time=values.get("time"), account=values.get("account"),
                           extra=values.get("sbatch_args") or ())
    return SlurmJobs(options, logs_dir=values.get("logs_dir"), grace=grace,
                     command_timeout=values.get("command_timeout") or 30.0)


SPEC = BackendSpec(name="slurm", help="a batch job; its logs on a shared folder", make=_make, options=_OPTIONS,
                   settings_name="SlurmBackend", settings_example='partition = "gpu"')
