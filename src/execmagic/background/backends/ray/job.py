"""One Ray job execmagic started, as its metadata records it (:class:`RayJob`).

Every job's metadata says it is execmagic's and whose (user and machine of the kernel), so a later
kernel finds this user's jobs again and shows them as the kernel that started them showed them.
"""

from __future__ import annotations

import getpass
import os
import socket

from ....process.records import record
from .client import JobInfo, RayPhase

__all__ = ["META_KEY", "RayJob", "owner"]

#: The metadata key that marks a job as execmagic's; the others are ``execmagic_*``.
META_KEY = "execmagic"
#: Characters of the command kept in a job's metadata (for the listing of a later kernel).
_META_COMMAND = 2000


@record
class RayJob:
    """One job execmagic started, as :meth:`~.cluster.RayCluster.find_jobs` finds it again."""

    job_id: str
    phase: RayPhase
    shell_id: str
    command: str
    marker: str
    tag: str
    user: str
    host: str
    started_at: str
    timeout: float | None = None

    @classmethod
    def from_info(cls, info: JobInfo) -> RayJob | None:
        """The record of one of Ray's jobs, ``None`` when execmagic did not start it."""
        meta = info.metadata
        if meta.get(META_KEY) != "1" or not meta.get("execmagic_tag"):
            return None
        try:
            timeout = float(meta["execmagic_timeout"]) if meta.get("execmagic_timeout") else None
        except ValueError:
            timeout = None
        return cls(job_id=info.submission_id, phase=info.phase, shell_id=meta.get("execmagic_shell", ""),
                   command=meta.get("execmagic_command", ""), marker=meta.get("execmagic_marker", ""),
                   tag=meta["execmagic_tag"], user=meta.get("execmagic_user", ""),
                   host=meta.get("execmagic_host", ""), started_at=meta.get("execmagic_started", ""),
                   timeout=timeout)

    @property
    def node_marker(self) -> str:
        """The marker the job's processes carry on the node: the shell's, made unique to this job --
        a node is shared by many kernels, and a registry's markers (``PREFIX-bg1-1``) repeat across them."""
        return f"{self.marker}-{self.tag.strip(':')}"

    def metadata(self) -> dict[str, str]:
        return {META_KEY: "1", "execmagic_shell": self.shell_id, "execmagic_command": self.command[:_META_COMMAND],
                "execmagic_marker": self.marker, "execmagic_tag": self.tag, "execmagic_user": self.user,
                "execmagic_host": self.host, "execmagic_started": self.started_at,
                "execmagic_timeout": "" if self.timeout is None else f"{self.timeout:g}"}


def owner() -> tuple[str, str]:
    """Whose jobs these are: this user on this machine (the rule a later kernel finds them by)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return user, socket.gethostname()

