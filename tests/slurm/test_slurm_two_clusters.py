"""Two clusters in turn, one logs folder: job ids are unique only within one cluster and start again
when a cluster's state is rebuilt, while many sites share one home folder between clusters.

Each cluster here is fresh (so both number their first job 1) and has the same name (a rebuilt
cluster's): only the run's marker in the files' names tells the two jobs apart.
"""

from __future__ import annotations

import os

import pytest

import slurm_cluster
from execmagic.background.backends.slurm import SlurmBackend
from execmagic.background.registry import ShellRegistry
from execmagic.process.errors import UsageProblem
from execmagic.process.spec import Command
from processes import TOKEN_VAR, processes_with
from waiting import wait_until

pytestmark = pytest.mark.timeout(120)


def bash(code: str, cwd: str) -> Command:
    return Command(argv=("bash", "-c", code), cwd=cwd, env=dict(os.environ), display=code)


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    """Start a fresh one-node cluster in a folder of its own and point SLURM_CONF at it."""
    absent = slurm_cluster.missing()
    if absent:
        pytest.skip(f"SLURM is not installed (missing {', '.join(absent)})")
    started = []

    def start(folder: str) -> slurm_cluster.Cluster:
        os.makedirs(folder)
        one = slurm_cluster.Cluster(folder)
        started.append(one)
        one.start()
        monkeypatch.setenv("SLURM_CONF", one.conf)
        return one

    yield start
    for one in started:
        one.stop()


def test_the_second_clusters_job_never_reads_the_first_ones_files(cluster, tmp_path, no_leftover_processes):
    logs = str(tmp_path / "shared-home" / "slurm")
    first = cluster(str(tmp_path / "first"))
    earlier = ShellRegistry(log_dir=lambda: str(tmp_path / "kernel-1"), grace=0.5, watchdog=False)
    try:
        gone = earlier.start(bash("echo first; sleep 1; exit 3", str(tmp_path)), marker_prefix="k1",
                             backend=SlurmBackend(logs_dir=logs, grace=0.5, command_timeout=20))
        assert earlier.read(gone.id, wait=30).stdout == "first\n"
    finally:
        earlier.close()  # the kernel goes while its job runs on: nobody copies the job's files any more
    # so the first job's files stay once it ended: stdout, stderr, slurm, exit, json
    def five_files():
        names = set(os.listdir(logs))
        return names if len(names) == 5 else None

    left = wait_until(five_files, 30, "the first job to end and leave its five files")
    first.stop()

    cluster(str(tmp_path / "second"))
    later = ShellRegistry(log_dir=lambda: str(tmp_path / "kernel-2"), grace=0.5, watchdog=False)
    try:
        backend = SlurmBackend(logs_dir=logs, grace=0.5, command_timeout=20)
        info = later.start(bash("echo second; sleep 300", str(tmp_path)), marker_prefix="k2", backend=backend)
        assert info.job_id == gone.job_id  # a fresh cluster numbers its jobs again
        assert later.read(info.id, wait=30).stdout == "second\n"
        assert later.info(info.id).running and later.info(info.id).status.startswith("running")
        assert not left & {n for n in os.listdir(logs) if n not in left}
        found = SlurmBackend(logs_dir=logs).find_jobs()
        assert [(r.job_id, r.shell_id) for r in found] == [(info.job_id, info.id)]
        first_marker = next(n for n in left if n.endswith(".json")).split("-", 3)[-1].removesuffix(".json")
        with pytest.raises(UsageProblem):  # the first cluster's record is not this job's
            backend.reattach(info.job_id, marker=first_marker)
        outcome = later.kill(info.id)
        assert outcome.shell.status == "killed"
        # the job's end is its wrapper's exit code on the shared folder: the wrapper and its reaper exit
        # just after writing it, on the node (here, this machine)
        wait_until(lambda: not processes_with(TOKEN_VAR, no_leftover_processes), 10, "the job's processes to end")
        assert later.read(info.id, whole_log=True).stdout == "second\n"
    finally:
        later.close()
