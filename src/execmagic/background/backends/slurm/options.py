"""What a SLURM job asks for (:class:`SlurmOptions`), and the checks of what a user gives for it:
the logs folder, ``--sbatch-args``.

Every option maps to one ``sbatch``/``srun`` option (:meth:`SlurmOptions.sbatch_args`; the flags and
settings that say them are in :mod:`.spec`); ``--sbatch-args`` passes more, except those the backend
sets itself (:data:`OWNED_SBATCH_OPTIONS`).
"""

from __future__ import annotations

import os
import shlex

from ....process.errors import UsageProblem, shown_value
from ....process.records import record

__all__ = ["OWNED_SBATCH_OPTIONS", "SlurmOptions", "check_extra", "checked_logs_dir", "default_logs_dir",
           "sbatch_words"]


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


@record
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
