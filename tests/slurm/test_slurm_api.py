"""``execmagic.start(..., on=...)``: the Python API sends a background shell to SLURM."""

from __future__ import annotations

import time

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
    with pytest.raises(execmagic.UsageProblem, match="unknown backend 'kubernetes'"):
        execmagic.start("true", on="kubernetes", engine=engine)


def test_the_operator_sends_the_agents_background_commands_to_slurm(engine, slurm_logs):
    from execmagic import Toolbox

    box = Toolbox(engine, background_on=SlurmBackend(logs_dir=slurm_logs, grace=0.5), grace=0.5)
    assert "background_on" not in str(box.tools["Bash"].parameters)  # not something the model can choose
    started = box.dispatch("Bash", {"command": "echo from the cluster; sleep 300", "run_in_background": True})
    assert started["success"] and started["backend"] == "slurm" and started["job_id"]
    if box.sandbox.sandbox is not None:  # auto, where bubblewrap works: the job is not confined, and says so
        assert "sandbox" not in started
        assert "ran unsandboxed: the job runs on slurm, under its own rules" in started["notes"]
    out = box.dispatch("BashOutput", {"bash_id": started["shell_id"]})
    deadline = time.monotonic() + 30
    while "from the cluster" not in out["output"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
        out = box.dispatch("BashOutput", {"bash_id": started["shell_id"]})
    assert box.dispatch("KillShell", {"shell_id": started["shell_id"]})["status"] == "killed"
