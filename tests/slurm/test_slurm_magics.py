"""``%bg --on slurm``, ``%%exec --bg --on slurm``, ``%bgout`` and ``%kill`` in a real InteractiveShell,
against the real one-node cluster."""

from __future__ import annotations

import time

import pytest
from IPython.core.error import UsageError

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.magics import StartFailed
from magic_calls import magic

pytestmark = [pytest.mark.watchdog_outlives_test, pytest.mark.timeout(90)]


@pytest.fixture(scope="module")
def ip(notebook_shell):
    return notebook_shell


@pytest.fixture(autouse=True)
def fresh(ip, slurm_logs, tmp_path):
    magics = ip.magics_manager.registry["ExecMagics"]
    ip.run_line_magic("config", f"ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
    ip.run_line_magic("config", "ExecMagics.kill_grace = 0.5")
    ip.run_line_magic("config", f"SlurmBackend.logs_dir = {slurm_logs!r}")
    yield magics
    magics.engine.shells.kill_all()
    magics.engine.shells.cleanup()
    magics.engine.shells._counter = 0
    ip.run_line_magic("config", "SlurmBackend.logs_dir = ''")
    ip.run_line_magic("config", "SlurmBackend.cpus = 0")


def data(cap, mime="text/plain"):
    return [o.data[mime] for o in cap.outputs if mime in o.data]


def bgout_until_end(ip, shell_id):
    texts, errs = [], []
    while True:
        cap = magic(ip, "bgout", f"{shell_id} --wait 5")
        texts.append(cap.stdout)
        errs.append(cap.stderr)
        info = data(cap, PROVENANCE)[0]
        if info["at_end"]:
            return texts, errs, info


def test_bg_on_slurm_reads_in_pieces_and_ends_with_the_exit_code(ip, slurm):
    cap = magic(ip, "bg", "--on slurm --name job for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.5; done; exit 3")
    (text,) = data(cap)
    assert text.startswith("▶ job · slurm job ") and "%bgout job" in text
    started = data(cap, PROVENANCE)[0]
    assert started["backend"] == "slurm" and started["job_id"]
    texts, errs, info = bgout_until_end(ip, "job")
    assert "".join(texts) == "out1\nout2\nout3\n" and "".join(errs) == "err1\nerr2\nerr3\n"
    assert info["shell"]["status"] == "exited 3" and info["shell"]["exit_code"] == 3
    table = magic(ip, "bg", "")
    assert f"slurm {started['job_id']}" in data(table)[0]


def test_exec_bg_cell_on_slurm_with_the_sessions_cwd_and_env(ip, slurm, tmp_path):
    (tmp_path / "work").mkdir()
    magic(ip, "exec", f"cd {tmp_path / 'work'} && export STAGE=train")
    magic(ip, "exec", "bash --bg --on slurm --name cell", cell='pwd\necho "stage=$STAGE"\n')
    texts, errs, info = bgout_until_end(ip, "cell")
    assert "".join(texts) == f"{tmp_path / 'work'}\nstage=train\n", (info, errs)
    assert info["shell"]["status"] == "exited 0"
    magic(ip, "exec", "cd - > /dev/null")


def test_kill_all_includes_jobs_and_a_queued_job_shows_slurms_reason(ip, slurm):
    magic(ip, "bg", "--on slurm --cpus 64 --name big echo never")
    magic(ip, "bg", "--on slurm --name small sleep 300")
    deadline = time.monotonic() + 20
    while True:
        shells = {s["id"]: s for s in data(magic(ip, "bg", "--on slurm"), PROVENANCE)[0]}
        if shells["big"]["status"].startswith("queued (") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert shells["big"]["status"].startswith("queued (") and shells["big"]["running"]
    cap = magic(ip, "kill", "--all")
    outcomes = {o["shell"]["id"]: o for o in data(cap, PROVENANCE)}
    assert set(outcomes) == {"big", "small"}
    assert all(o["shell"]["status"] == "killed" for o in outcomes.values()), {
        i: (o["shell"]["status"], o["shell"]["exit_code"]) for i, o in outcomes.items()}


def test_traits_give_the_defaults_and_options_win(ip, slurm):
    ip.run_line_magic("config", "SlurmBackend.cpus = 64")
    magic(ip, "bg", "--on slurm --name t1 sleep 300")
    magic(ip, "bg", "--on slurm --cpus 1 --name t2 echo ok")
    texts, _, _ = bgout_until_end(ip, "t2")
    assert "".join(texts) == "ok\n"
    assert ip.magics_manager.registry["ExecMagics"].engine.shells.info("t1").status.startswith(("queued", "running"))
    magic(ip, "kill", "t1")


def test_user_mistakes_are_one_line(ip, slurm):
    with pytest.raises(UsageError, match=r"^--partition goes with --on slurm$"):
        ip.run_line_magic("bg", "--partition gpu true")
    with pytest.raises(UsageError, match="argument --on: invalid choice: 'kubernetes'"):
        ip.run_cell_magic("exec", "--on kubernetes", "true")
    with pytest.raises(UsageError, match="--cpus needs a whole number"):
        ip.run_line_magic("bg", "--on slurm --cpus 0 true")
    with pytest.raises(UsageError, match="cannot split --sbatch-args"):
        ip.run_line_magic("bg", "--on slurm --sbatch-args=\"--qos='x\" true")
    with pytest.raises(StartFailed) as caught:
        ip.run_line_magic("bg", "--on slurm --partition nope true")
    assert "invalid partition specified: nope" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(StartFailed, match="unrecognized option '--bogus'"):
        ip.run_line_magic("bg", "--on slurm --sbatch-args=--bogus true")


def test_a_multi_line_cell_that_fails_on_slurm_ends_with_its_status_and_names_no_line(ip, slurm):
    """The job runs elsewhere: no file here for its line, and nothing of the local way (a prelude, a path) goes
    with it; the cell runs as written, in the background and --isolated alike."""
    magic(ip, "exec", "bash --bg --on slurm --name lined", cell="echo a\nfalse\necho b\nexit 3\n")
    texts, errs, info = bgout_until_end(ip, "lined")
    assert "".join(texts) == "a\nb\n" and "".join(errs) == "", info
    assert info["shell"]["status"] == "exited 3" and "failed_line" not in info["shell"]
    magic(ip, "exec", "bash --on slurm --isolated --no-raise --out r", cell="echo a\nfalse\necho b\nfalse\n")
    r = ip.user_ns["r"]
    assert (r.stdout, r.exit_code, r.failed_line) == ("a\nb\n", 1, None) and "BASH_ENV" not in r.stderr
