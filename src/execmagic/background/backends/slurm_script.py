"""How a script that must stand on no argv reaches a SLURM job: in the job's environment.

The engine hands such a script -- one that holds a secret's value (``{db_password}``, shown
``[REDACTED]``), or one too big for an argument -- to a local program by a descriptor
(:attr:`~execmagic.process.spec.Command.script_boot`).  A descriptor does not reach a cluster's node, and
on ``srun``'s or ``sbatch``'s argv the script would be read by every user of the kernel's machine
(``ps``) while they run, by every user of the node while the job runs, and kept by SLURM in the job's
record, which every user of the cluster reads (``scontrol show job``'s ``Command``, ``squeue -o %o``)
unless the site set ``PrivateData``.

A job's environment is read only by its owner and the cluster's administrators, ``--export=ALL`` already
sends it (with the session's own exported secrets), and it needs no folder shared with the nodes: a
foreground run through ``srun`` needs none.  A file in the shared logs folder would need one, would
outlive a kernel killed before it could remove it, and would wait there for a job still queued.  So the
script goes in the variables ``EXECMAGIC_SCRIPT_0``, ``_1``, … (pieces: Linux refuses one variable
over 128 KiB); the wrapper (:file:`slurm_job.sh`) takes them out of its environment before it starts
anything, and hands the script to the command on descriptor :data:`SCRIPT_FD`, which the command's
boot reads as it would locally: ``$0``, line numbers, ``exit`` and exit codes are those of
``bash -c``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...process.errors import UsageProblem
from ...process.spec import Command

__all__ = ["SCRIPT_FD", "SCRIPT_LIMIT", "SCRIPT_VAR", "job_command"]

#: The pieces' names: this, then 0, 1, … (the wrapper reads them in that order, and stops at a gap).
SCRIPT_VAR = "EXECMAGIC_SCRIPT_"
#: The descriptor the wrapper hands the script on (one the command's boot names; 0-2 are its streams).
SCRIPT_FD = 3
#: Characters per piece: at most 120,000 bytes in UTF-8, under Linux's 131,072 for one variable.
_PIECE = 30_000
#: Bytes of script at most: the environment and the argv of ``srun``/``sbatch`` share Linux's 2 MiB
#: (``ARG_MAX``) with the session's own variables, and the job's shell starts with them all again.
SCRIPT_LIMIT = 1 << 20


def job_command(command: Command, env: Mapping[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """``command``'s argv as the job runs it, and the job's environment (``env`` and the script's pieces).

    A script that must stand on no argv (``command.script_boot`` set) goes into the pieces, and the boot,
    reading :data:`SCRIPT_FD`, takes its place as the argv's last word; any other argv is as it is.
    Variables of ``env`` named like the pieces are left out: a session that exported one must not have
    the wrapper take it for a script.  :class:`UsageProblem` when the script is over :data:`SCRIPT_LIMIT`."""
    job_env = {name: value for name, value in env.items() if not name.startswith(SCRIPT_VAR)}
    if command.script_boot is None:
        return command.argv, job_env
    script = command.argv[-1]
    size = len(script.encode("utf-8", "surrogateescape"))
    if size > SCRIPT_LIMIT:
        raise UsageProblem(f"a script of {size:,} bytes is too big to send to SLURM (at most {SCRIPT_LIMIT:,}):"
                           " save it in a file the nodes share, and run that file")
    pieces = [script[i:i + _PIECE] for i in range(0, len(script), _PIECE)] or [""]
    job_env.update((f"{SCRIPT_VAR}{n}", piece) for n, piece in enumerate(pieces))
    return (*command.argv[:-1], command.script_boot.replace("{fd}", str(SCRIPT_FD))), job_env
