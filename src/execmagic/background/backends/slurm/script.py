"""What a SLURM job runs: the wrapper shipped with execmagic (:file:`slurm_job.sh`) around the command,
and the job's argv and environment, for ``sbatch`` and ``srun`` alike.

A script that must stand on no argv goes in the environment (see :mod:`..script_env` for why); the
wrapper hands the script to the command on descriptor :data:`SCRIPT_FD`, so the boot names that number
before the job starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from ....process.spec import Command
from ..script_env import handed_off, without_pieces

__all__ = ["SCRIPT_FD", "job_command", "wrapper_path", "wrapper_text"]

#: The descriptor the wrapper hands the script on (0-2 are the command's streams).
SCRIPT_FD = 3


def job_command(command: Command, env: Mapping[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """``command``'s argv as the job runs it, and the job's environment: ``env`` (without variables named
    like the script's pieces) and the pieces.  :class:`~execmagic.process.errors.UsageProblem` for a
    script too big to send."""
    argv, pieces = handed_off(command, to="SLURM")
    if pieces:
        argv = (*argv[:-1], argv[-1].replace("{fd}", str(SCRIPT_FD)))
    return argv, {**without_pieces(env), **pieces}


def wrapper_path() -> str:
    """The job wrapper shipped with the package (``sbatch`` copies it into the job: no shared path needed)."""
    return str(resources.files(__package__).joinpath("slurm_job.sh"))


def wrapper_text() -> str:
    """The wrapper's text, for ``srun`` (which runs a command, not a script it copies)."""
    with open(wrapper_path()) as fh:
        return fh.read()
