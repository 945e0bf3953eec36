"""A real single-node SLURM cluster for this folder's tests (see ``tests/slurm_cluster.py``).

Started once per session, in a temp folder, as children of the test process; stopped by pid at
the end.  The tests skip only when SLURM or munge is not installed (the README says how to
install Debian's packages).
"""

from __future__ import annotations

import os

import pytest

import slurm_cluster


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """The running cluster; ``SLURM_CONF`` points at it for the whole session."""
    absent = slurm_cluster.missing()
    if absent:
        pytest.skip(f"SLURM is not installed (missing {', '.join(absent)}): "
                    "apt-get install -y slurmctld slurmd slurm-client munge")
    cluster = slurm_cluster.Cluster(str(tmp_path_factory.mktemp("slurm"))).start()
    before = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = cluster.conf
    try:
        yield cluster
    finally:
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before
        cluster.stop()


@pytest.fixture
def slurm_logs(slurm, tmp_path):
    """A fresh folder for the jobs' files (the cluster writes it, the test reads it)."""
    path = tmp_path / "slurm-logs"
    path.mkdir()
    return str(path)
