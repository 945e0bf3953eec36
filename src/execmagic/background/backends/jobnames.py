"""How execmagic names what it starts on a cluster, the same for every remote backend: a job's name
or id, and the words of the files it keeps for a job on a shared folder.

A later owner finds its jobs among everyone's by these names (with the marker in the job's metadata,
see :mod:`.base`), and a user reads them in the cluster's own tools (``squeue``, Ray's dashboard): so
they start with :data:`JOB_PREFIX` and hold only characters that every such tool and file system
takes as they are.
"""

from __future__ import annotations

import re

__all__ = ["JOB_PREFIX", "file_word", "job_id", "job_name"]

#: Every job's name (SLURM's ``--job-name``) or id (Ray's ``submission_id``) starts with this.
JOB_PREFIX = "execmagic-"


def job_name(name: str) -> str:
    """``execmagic-NAME``, a job's name where the cluster takes any text for one (SLURM's ``--job-name``)."""
    return f"{JOB_PREFIX}{name}"


def job_id(name: str) -> str:
    """``execmagic-NAME`` as a job id may be spelt (Ray takes any string; a URL path and a dashboard
    table read these best): letters, digits, ``-_.``; at most 64 of them."""
    return JOB_PREFIX + ("".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:64] or "job")


def file_word(text: str) -> str:
    """``text`` as part of a file name a cluster is given (no ``/``, no ``%`` SLURM would expand)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)
