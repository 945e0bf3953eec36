"""How a script that must stand on no argv reaches a job on a cluster (SLURM, Ray): in its environment.

The engine hands such a script -- one that holds a secret's value (``{db_password}``, shown
``[REDACTED]``), or one too big for an argument -- to a local program by a descriptor
(:attr:`~execmagic.process.spec.Command.script_boot`).  A descriptor does not reach a cluster's node.
On the argv of what submits the job (``srun``, ``sbatch``) or of the job itself, the script would be read
by every user of the kernel's machine (``ps``) and of the node, and kept where the cluster's users read
it: SLURM's record of the job (``scontrol show job``, ``squeue -o %o``) unless the site set
``PrivateData``, Ray's job log (which starts with the entrypoint).

A job's environment is read only by its owner and the cluster's administrators (and by whoever may run
jobs on a Ray head, who may read anything of it anyway); SLURM's ``--export=ALL`` and Ray's ``env_vars``
already send it, with the session's own exported secrets; and it needs no folder shared with the nodes
(a foreground run through ``srun`` needs none).  A file in a shared folder would need one, would outlive
a kernel killed before it could remove it, and would wait there for a job still queued.  So the script
goes in the variables ``EXECMAGIC_SCRIPT_0``, ``_1``, … (pieces: Linux refuses one variable over
128 KiB); the job's wrapper (:file:`slurm_job.sh`, :mod:`.ray.wrapper`) takes them out of its
environment before it starts anything, and hands the script to the command on a descriptor, which the
command's boot reads as it would locally: ``$0``, line numbers, ``exit`` and exit codes are those of
``bash -c``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...process.errors import UsageProblem
from ...process.spec import Command

__all__ = ["SCRIPT_LIMIT", "SCRIPT_VAR", "handed_off", "without_pieces"]

#: The pieces' names: this, then 0, 1, … (the wrappers read them in that order, and stop at a gap).
SCRIPT_VAR = "EXECMAGIC_SCRIPT_"
#: Characters per piece: at most 120,000 bytes in UTF-8, under Linux's 131,072 for one variable.
_PIECE = 30_000
#: Bytes of script at most: the environment and the argv of what starts the job share Linux's 2 MiB
#: (``ARG_MAX``) with the session's own variables, and the job's wrapper starts with them all again.
SCRIPT_LIMIT = 1 << 20


def handed_off(command: Command, *, to: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """``command``'s argv as the job runs it, and the pieces to add to the job's environment.

    A script that must stand on no argv (``command.script_boot`` set) goes into the pieces, and the boot
    takes its place as the argv's last word, its ``{fd}`` left for the wrapper that opens the descriptor;
    any other argv is as it is, with no pieces.  :class:`UsageProblem` when the script is over
    :data:`SCRIPT_LIMIT` (``to``: the cluster's kind, for the message)."""
    if command.script_boot is None:
        return command.argv, {}
    script = command.argv[-1]
    size = len(script.encode("utf-8", "surrogateescape"))
    if size > SCRIPT_LIMIT:
        raise UsageProblem(f"a script of {size:,} bytes is too big to send to {to} (at most {SCRIPT_LIMIT:,}):"
                           " save it in a file the nodes can read, and run that file")
    pieces = [script[i:i + _PIECE] for i in range(0, len(script), _PIECE)] or [""]
    return (*command.argv[:-1], command.script_boot), {f"{SCRIPT_VAR}{n}": piece for n, piece in enumerate(pieces)}


def without_pieces(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without variables named like the pieces: a session that exported one must not have the
    wrapper take it for a script."""
    return {name: value for name, value in env.items() if not name.startswith(SCRIPT_VAR)}
