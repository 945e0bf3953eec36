"""``%exec --on slurm`` / ``%%exec --on slurm``: a foreground run through ``srun``, streamed live."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from IPython.utils.capture import capture_output

from kernel_client import Kernel
from processes import TOKEN_VAR, processes_with

pytestmark = [pytest.mark.watchdog_outlives_test, pytest.mark.timeout(120)]


@pytest.fixture
def ip(notebook_shell, slurm_logs, tmp_path):
    notebook_shell.run_line_magic("config", f"ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
    notebook_shell.run_line_magic("config", f"SlurmBackend.logs_dir = {slurm_logs!r}")
    yield notebook_shell
    notebook_shell.run_line_magic("config", "SlurmBackend.logs_dir = ''")


def test_exec_on_slurm_keeps_the_streams_apart_and_the_exit_code(ip, slurm, tmp_path):
    (tmp_path / "w").mkdir()
    with capture_output() as cap:
        ip.run_line_magic("exec", f"--on slurm --cwd {tmp_path / 'w'} --no-raise --out r "
                                  "echo out; echo err >&2; pwd; echo $SLURM_JOB_NAME; exit 3")
    r = ip.user_ns["r"]
    lines = r.stdout.splitlines()
    assert lines[:2] == ["out", str(tmp_path / "w")] and lines[2].startswith("execmagic-")
    assert "err\n" in r.stderr and r.exit_code == 3
    assert "out\n" in cap.stdout


def test_exec_cell_on_slurm_runs_python_with_the_options(ip, slurm):
    with capture_output():
        ip.run_cell_magic("exec", "python --on slurm --cpus 2 --out r", "import os\nprint(os.environ['SLURM_CPUS_PER_TASK'])\n")
    assert ip.user_ns["r"].stdout == "2\n" and ip.user_ns["r"].exit_code == 0


@pytest.mark.kernel
def test_a_run_streams_before_it_ends_and_an_interrupt_cancels_the_job(slurm, slurm_logs, no_leftover_processes):
    k = Kernel()
    try:
        assert k.execute(f"%load_ext execmagic\n%config SlurmBackend.logs_dir = {slurm_logs!r}\n"
                         "%config ExecMagics.kill_grace = 0.5").status == "ok"
        started = threading.Event()
        first_at: list[float] = []

        def watch(msg):
            if msg["msg_type"] == "stream" and "started" in msg["content"]["text"]:
                first_at.append(time.monotonic())
                started.set()

        def interrupt_when_started():
            if started.wait(60):
                time.sleep(0.5)
                k.manager.interrupt_kernel()

        helper = threading.Thread(target=interrupt_when_started)
        helper.start()
        began = time.monotonic()
        ex = k.execute(f"%exec --on slurm --env {TOKEN_VAR}={no_leftover_processes} "
                       "(sleep 300 &); setsid sleep 301 & echo started; sleep 302", timeout=90, on_message=watch)
        helper.join()
        assert started.is_set() and first_at[0] - began < 30
        assert ex.status == "error" and ex.of_type("error")[0]["content"]["ename"] == "CommandInterrupted"
        deadline = time.monotonic() + 5
        while processes_with(TOKEN_VAR, no_leftover_processes):
            assert time.monotonic() < deadline, "something of the job survived the interrupt"
            time.sleep(0.1)
        while slurm.run("squeue", "--noheader").stdout.strip():  # COMPLETING for a moment, then gone
            assert time.monotonic() < deadline + 10, "the job is still in the queue"
            time.sleep(0.2)
    finally:
        k.shutdown()


@pytest.mark.kernel
def test_a_queued_run_says_so_in_its_status_line_and_an_interrupt_cancels_it(slurm, slurm_logs):
    k = Kernel()
    try:
        assert k.execute(f"%load_ext execmagic\n%config SlurmBackend.logs_dir = {slurm_logs!r}\n"
                         "%config ExecMagics.status_delay = 0").status == "ok"
        queued = threading.Event()
        lines: list[str] = []

        def watch(msg):
            if msg["msg_type"] in ("display_data", "update_display_data"):
                text = msg["content"]["data"].get("text/plain", "")
                lines.append(text)
                if text.startswith("⏳ queued ("):
                    queued.set()

        def interrupt_when_queued():
            if queued.wait(30):
                k.manager.interrupt_kernel()

        helper = threading.Thread(target=interrupt_when_queued)
        helper.start()
        ex = k.execute("%exec --on slurm --cpus 64 echo never", timeout=60, on_message=watch)
        helper.join()
        assert queued.is_set(), lines
        assert ex.status == "error" and ex.of_type("error")[0]["content"]["ename"] == "CommandInterrupted"
        deadline = time.monotonic() + 15
        while slurm.run("squeue", "--noheader").stdout.strip():
            assert time.monotonic() < deadline, "the queued job was not cancelled"
            time.sleep(0.2)
    finally:
        k.shutdown()


def test_a_foreground_run_leaves_no_file_in_the_logs_folder(ip, slurm, slurm_logs):
    """srun passes the exit code on: the wrapper writes no exit file for a foreground run."""
    with capture_output():
        ip.run_line_magic("exec", "--on slurm --no-raise --out r exit 4")
    assert ip.user_ns["r"].exit_code == 4
    assert os.listdir(slurm_logs) == []


@pytest.mark.kernel
def test_a_sigkilled_kernel_leaves_no_job_running(slurm, slurm_logs, no_leftover_processes):
    """srun killed outright leaves its allocation running: the kernel's watchdog cancels the job."""
    k = Kernel()
    try:
        assert k.execute(f"%load_ext execmagic\n%config SlurmBackend.logs_dir = {slurm_logs!r}\n"
                         "%config ExecMagics.kill_grace = 0.5").status == "ok"
        k.client.execute(f"%exec --on slurm --env {TOKEN_VAR}={no_leftover_processes} echo started; sleep 300")
        deadline = time.monotonic() + 30
        while "RUNNING" not in slurm.run("squeue", "--noheader", "--format=%T").stdout:
            assert time.monotonic() < deadline, "the job never ran"
            time.sleep(0.2)
        os.kill(k.pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while slurm.run("squeue", "--noheader").stdout.strip():
            assert time.monotonic() < deadline, "the dead kernel's job is still in the queue"
            time.sleep(0.2)
        while processes_with(TOKEN_VAR, no_leftover_processes):
            assert time.monotonic() < deadline + 5, "something of the job survived its kernel"
            time.sleep(0.1)
    finally:
        k.shutdown(now=True)
