"""The files one SLURM job has in the logs folder on the shared filesystem, and the rule that keeps
each job's files its own (see :class:`JobFiles`).

Several owners may read one job's files (a kernel and a later one attached to the same job), so
reading holds a shared lock on the job's record and removing takes it exclusively.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os

from ....process.private import write_file
from ..base import STREAMS, JobRecord
from ..jobnames import file_word

__all__ = ["JobFiles", "write_private"]


def write_private(path: str, text: str) -> None:
    """Replace the file at ``path`` with ``text``, 0600 (a new file beside it, then renamed over it)."""
    partial = write_file(f"{path}.{os.getpid()}.tmp", text.encode(), unique=True)
    os.replace(partial, path)


class JobFiles:
    """The files one job has in the logs folder: its output, its exit code, its record, the grace.

    Named after the cluster, the job id *and* the run's marker (``CLUSTER-JOB-MARKER.stdout``): job
    ids are unique only within one cluster, and start again when a cluster's state is rebuilt,
    while many sites share one home folder between clusters.  So a job never reads, trusts or
    removes a file written for another one.
    """

    #: ``slurm``: what SLURM itself writes about the job (sbatch's ``--output``), kept apart from
    #: the command's output so that a cancel notice never shows as the command's stderr.
    SUFFIXES = (*STREAMS, "slurm", "exit", "json", "grace")

    def __init__(self, logs_dir: str, cluster: str, job_id: str, marker: str) -> None:
        self.logs_dir = logs_dir
        self.cluster = cluster
        self.job_id = job_id
        self.marker = marker
        self.stem = os.path.join(logs_dir, f"{file_word(cluster)}-{job_id}-{file_word(marker)}")

    @staticmethod
    def pattern(logs_dir: str, cluster: str, marker: str) -> str:
        """The files' path without suffix as ``sbatch`` and the wrapper take it, ``%j`` for the job id."""
        return os.path.join(logs_dir, f"{file_word(cluster)}-%j-{file_word(marker)}")

    def path(self, suffix: str) -> str:
        return f"{self.stem}.{suffix}"

    def write_record(self, record: JobRecord) -> None:
        fields = {**dataclasses.asdict(record), "cluster": self.cluster}
        with contextlib.suppress(OSError):
            write_private(self.path("json"), json.dumps(fields))

    def read_record(self) -> JobRecord | None:
        """The record written at submission; ``None`` when missing, unreadable or another job's."""
        try:
            with open(self.path("json")) as fh:
                fields = json.load(fh)
            cluster = fields.pop("cluster")
            record = JobRecord(**fields)
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if (cluster, record.job_id, record.marker) != (self.cluster, self.job_id, self.marker):
            return None
        return record

    def hold(self) -> int | None:
        """Say that this owner reads the job's files: a shared lock on its record, held by the open
        descriptor returned (``None``: no record to lock), until :meth:`release`."""
        try:
            fd = os.open(self.path("json"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            return None
        return fd

    @staticmethod
    def release(fd: int | None) -> None:
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def remove(self) -> bool:
        """Delete the job's files unless another owner still reads them (it holds the record's
        lock: a kernel attached to the same job); True when they are gone."""
        try:
            fd = os.open(self.path("json"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = None
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by another reader: it is not ours to take away
            self.release(fd)
            return False
        for suffix in self.SUFFIXES:
            with contextlib.suppress(OSError):
                os.unlink(self.path(suffix))
        self.release(fd)
        return True
