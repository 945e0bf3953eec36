"""``execmagic.run(..., on=...)`` and ``start(..., on=...)``: the Python API runs a command on SLURM, in the
foreground through ``srun`` as ``%exec --on slurm`` does, or as a background shell."""

from __future__ import annotations

import os
import time

import pytest

import execmagic
from execmagic import SlurmBackend, SlurmOptions
from waiting import wait_until

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


def test_run_on_slurm_is_srun_streamed_here_and_writes_no_session_back(engine, slurm, slurm_logs):
    backend = SlurmBackend(SlurmOptions(cpus=1), logs_dir=slurm_logs, grace=0.5)
    before = engine.session.current_cwd()
    streamed: list[tuple[str, str]] = []
    result = execmagic.run("cd /; export WHERE=cluster; echo out; echo err >&2; echo $SLURM_JOB_NAME; exit 3",
                           on=backend, engine=engine, on_output=lambda name, text: streamed.append((name, text)))
    assert result.exit_code == 3 and "err\n" in result.stderr
    out, job_name = result.stdout.splitlines()
    assert out == "out" and job_name == f"execmagic-{engine.token}-1"
    assert any(name == "stdout" and "out" in text for name, text in streamed)  # live, as a foreground run is
    assert engine.session.current_cwd() == before and "WHERE" not in engine.session.environment()
    deadline = time.monotonic() + 30
    while slurm.run("squeue", "--noheader").stdout.strip():  # COMPLETING for a moment, then gone
        assert time.monotonic() < deadline, "the job is still in the queue"
        time.sleep(0.2)


def test_run_and_start_on_slurm_by_its_name(engine, slurm, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the default logs folder, ~/.execmagic/slurm, goes here
    assert execmagic.run("echo $SLURM_JOB_NAME", on="slurm", engine=engine).stdout.startswith("execmagic-")
    info = execmagic.start("echo named; sleep 300", on="slurm", name="named", engine=engine)
    assert info.backend == "slurm" and info.job_id
    seen: list[str] = []  # a read may come back with news of the queue before the first line
    wait_until(lambda: seen.append(execmagic.read("named", wait=5, engine=engine).stdout) or "".join(seen), 60,
               "the job's first line", interval=0)
    assert "".join(seen) == "named\n"
    # the running job's files, in the default folder (once it has ended, the monitor removes what it copied)
    assert os.listdir(tmp_path / ".execmagic" / "slurm")
    assert execmagic.kill("named", engine=engine).shell.status == "killed"
