"""``execmagic.start(..., on=...)``: the Python API sends a background shell to SLURM."""

from __future__ import annotations

import pytest

import execmagic
from execmagic import SlurmBackend, SlurmOptions

pytestmark = pytest.mark.timeout(60)


def test_start_on_a_slurm_backend_then_read_and_reattach(engine, slurm_logs):
    backend = SlurmBackend(SlurmOptions(cpus=1), logs_dir=slurm_logs, grace=0.5)
    info = execmagic.start("echo api; sleep 300", on=backend, name="api", engine=engine)
    assert info.backend == "slurm" and info.job_id
    assert execmagic.read("api", wait=30, engine=engine).stdout == "api\n"
    assert [s.id for s in engine.reattach(backend)] == ["api"]  # already known: not taken twice
    assert execmagic.kill("api", engine=engine).shell.status == "killed"


def test_an_unknown_backend_name_is_a_usage_problem(engine):
    with pytest.raises(execmagic.UsageProblem, match="unknown backend 'ray'"):
        execmagic.start("true", on="ray", engine=engine)
