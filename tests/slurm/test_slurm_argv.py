"""A run on SLURM puts no secret and no private path on any argv.

``{db_password}`` is shown ``[REDACTED]``, yet the value is in the script: on ``srun``'s or ``sbatch``'s argv
every user of the kernel's machine reads it in ``ps``, every user of the node reads the job's argv, and
SLURM keeps the job's command line, which every user of the cluster reads (``scontrol show job``'s
``Command``, ``squeue -o %o``).  The script travels in the job's environment instead, and the job's shell
reads it by a descriptor, keeping ``bash -c``'s ways.
"""

from __future__ import annotations

import dataclasses
import os
import threading

import psutil
import pytest

import execmagic
from execmagic import SlurmBackend
from execmagic.background.backends.script_env import SCRIPT_LIMIT, SCRIPT_VAR
from execmagic.background.backends.slurm.script import job_command
from execmagic.process.errors import UsageProblem
from execmagic.process.spec import Command
from waiting import wait_until

pytestmark = pytest.mark.timeout(120)

#: Makes ``ready``, waits for ``go`` to go, then shows ``bash -c``'s ways: ``$0``, a line number, no piece of
#: the script left in the environment, and its own ``exit``.
_SCRIPT = ('echo {db_password} > /dev/null; touch ready; while [ -e go ]; do sleep 0.02; done\n'
           'echo "$0 $LINENO $(env | grep -c ^' + SCRIPT_VAR + ')"\n'
           'exit 3\n'
           'echo never\n')
#: A heredoc of data that makes the script bigger than one argument may be (the engine hands it by a
#: descriptor, as it does a secret).
_PADDING = f"cat > /dev/null <<'EOF'\n{('x' * 99 + chr(10)) * 1200}EOF\n"


def _what_everyone_reads(slurm) -> dict[str, str]:
    """Every argv of the machine, and SLURM's record of every job as any user of the cluster asks for it."""
    # what any user of the machine (here also the node) reads of each process's argv (ps, /proc/PID/cmdline)
    seen = {f"pid {p.pid}": " ".join(p.info["cmdline"] or ()) for p in psutil.process_iter(["cmdline"])
            if p.pid != os.getpid()}
    seen["scontrol show job"] = slurm.run("scontrol", "show", "job").stdout
    seen["squeue -o %o"] = slurm.run("squeue", "--noheader", "-o", "%o").stdout
    return seen


def _work_and_secret(tmp_path):
    """A folder whose ``go`` file keeps the job's script waiting (see ``_SCRIPT``), and a fresh secret value."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "go").touch()
    return work, f"s3cr3t-{os.urandom(6).hex()}"


def _looked_at(engine, slurm, work, secret) -> None:
    """Wait for the job to start, read what everyone reads, then let it go on; assert nothing was there."""
    try:
        wait_until(lambda: os.path.exists(work / "ready"), 60, "the job to start")
        seen = _what_everyone_reads(slurm)
    finally:
        os.remove(work / "go")
    private = (engine.logs.path, engine.logs.runtime())
    leaked = {where: text for where, text in seen.items() if secret in text or any(p in text for p in private)}
    assert leaked == {}
    assert any("slurm_job.sh" in line for line in seen.values())  # the job was there to be looked at


@pytest.mark.parametrize("size", ["small", "big"])
def test_srun_puts_no_secret_on_any_argv_and_keeps_bash_c(engine, slurm, slurm_logs, tmp_path, size):
    work, secret = _work_and_secret(tmp_path)
    script = (_PADDING if size == "big" else "") + _SCRIPT
    plan = engine.plan_script(script, params={"db_password": secret}, cwd=str(work), save_session=False)
    assert "[REDACTED:db_password]" in plan.command.display
    job = SlurmBackend(logs_dir=slurm_logs, grace=0.5).foreground(plan.command, name="secret")
    results = []
    on_cluster = dataclasses.replace(plan, command=job.command)  # as %exec --on slurm runs it
    worker = threading.Thread(target=lambda: results.append(engine.run(on_cluster)))
    worker.start()
    try:
        _looked_at(engine, slurm, work, secret)
    finally:
        worker.join(60)
        job.finish(stopped=False)
    (result,) = results
    line = 2 + (1202 if size == "big" else 0)  # the heredoc: its line, 1200 of data, EOF
    assert (result.stdout, result.exit_code) == (f"bash {line} 0\n", 3), result


@pytest.mark.parametrize("language", ["python", "sh"])
def test_a_python_or_sh_script_with_a_secret_runs_on_slurm_as_it_would_here(engine, slurm, slurm_logs, language):
    code = {"python": "import os\nprint({db_password} == 'pw', os.environ.get('" + SCRIPT_VAR + "0'))\nraise SystemExit(4)",
            "sh": 'test {db_password} = pw && echo True "${' + SCRIPT_VAR + '0-None}"; exit 4'}[language]
    plan = engine.plan_script(code, language, params={"db_password": "pw"}, save_session=False)
    assert plan.command.script_boot is not None  # handed by a descriptor here: so it must be there too
    job = SlurmBackend(logs_dir=slurm_logs, grace=0.5).foreground(plan.command, name=f"secret-{language}")
    try:
        result = engine.run(dataclasses.replace(plan, command=job.command))
    finally:
        job.finish(stopped=False)
    assert (result.stdout, result.exit_code) == ("True None\n", 4), result.stderr


@pytest.mark.parametrize("size", ["small", "big"])
def test_sbatch_puts_no_secret_on_any_argv_nor_in_the_jobs_record(engine, slurm, slurm_logs, tmp_path, size):
    work, secret = _work_and_secret(tmp_path)
    backend = SlurmBackend(logs_dir=slurm_logs, grace=0.5)
    script = (_PADDING * 5 if size == "big" else "") + _SCRIPT  # big: 600 KB, in 20 pieces
    info = execmagic.start(script, params={"db_password": secret}, cwd=str(work), on=backend, name="secret",
                           engine=engine)
    assert info.job_id
    _looked_at(engine, slurm, work, secret)
    wait_until(lambda: execmagic.read("secret", wait=5, engine=engine).at_end, 60, "the job to end")
    out = execmagic.read("secret", whole_log=True, engine=engine)
    line = 2 + (1202 * 5 if size == "big" else 0)  # each heredoc: its line, 1200 of data, EOF
    assert (out.stdout, out.shell.exit_code) == (f"bash {line} 0\n", 3), out


def test_a_script_too_big_for_the_environment_is_a_usage_problem_and_a_stale_piece_is_left_out():
    boot = "read {fd}"
    big = Command(argv=("bash", "-c", "x" * (SCRIPT_LIMIT + 1)), cwd="/", env={}, display="", script_boot=boot)
    with pytest.raises(UsageProblem, match="too big to send to SLURM"):
        job_command(big, {})
    small = Command(argv=("bash", "-c", "echo hi"), cwd="/", env={}, display="")
    assert job_command(small, {"A": "1", f"{SCRIPT_VAR}0": "stale"}) == (("bash", "-c", "echo hi"), {"A": "1"})
