"""The SLURM backend on a real single-node cluster, through the registry (no IPython).

Every job gets the test's token in its environment (sbatch exports the submitter's), so the
autouse leak check proves that nothing of a job survives its test.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from execmagic.background.backends.slurm import SlurmBackend, SlurmOptions
from execmagic.background.backends.slurm.cli import SlurmError
from execmagic.background.registry import ShellRegistry
from execmagic.process.errors import UsageProblem
from execmagic.process.spec import Command
from processes import TOKEN_VAR, processes_with

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def registry(slurm, tmp_path):
    reg = ShellRegistry(log_dir=lambda: str(tmp_path / "kernel-logs"), grace=1.0, watchdog=False)
    yield reg
    reg.kill_all(grace=0.5)
    reg.close()


@pytest.fixture
def backend(slurm_logs):
    return SlurmBackend(logs_dir=slurm_logs, grace=1.0, command_timeout=20)


def bash(code: str, cwd: str, **env: str) -> Command:
    return Command(argv=("bash", "-c", code), cwd=cwd, env={**os.environ, **env}, display=code)


def wait_status(registry, shell_id, predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while True:
        info = registry.info(shell_id)
        if predicate(info.status) or time.monotonic() > deadline:
            return info
        time.sleep(0.1)


def test_three_reads_are_disjoint_and_in_order_and_the_exit_code_comes_back(registry, backend, tmp_path):
    code = "for i in 1 2 3 4 5 6; do echo out$i; echo err$i >&2; sleep 0.4; done; exit 7"
    info = registry.start(bash(code, str(tmp_path)), marker_prefix="t", backend=backend)
    assert info.backend == "slurm" and info.job_id and info.status.startswith(("queued", "running"))
    pieces = []
    while True:
        out = registry.read(info.id, wait=3)
        pieces.append((out.stdout, out.stderr))
        if out.at_end:
            break
    stdout = "".join(p[0] for p in pieces)
    stderr = "".join(p[1] for p in pieces)
    assert stdout == "".join(f"out{i}\n" for i in range(1, 7))
    assert stderr == "".join(f"err{i}\n" for i in range(1, 7))
    assert sum(1 for p in pieces if p[0] or p[1]) >= 3  # several reads, each only what was new
    assert out.shell.status == "exited 7" and out.shell.exit_code == 7 and not out.shell.running
    assert registry.read(info.id).stdout == ""  # nothing twice
    assert registry.read(info.id, whole_log=True).stdout == stdout


def test_a_jobs_files_go_once_copied_and_cleanup_removes_the_logs(registry, backend, tmp_path, slurm_logs):
    info = registry.start(bash("echo started; sleep 1; echo done", str(tmp_path)), marker_prefix="t", backend=backend)
    out = registry.read(info.id, wait=30)
    names = os.listdir(slurm_logs)  # CLUSTER-JOB-MARKER.SUFFIX: a job id alone is unique only within one cluster
    assert out.stdout.startswith("started") and {"stdout", "stderr", "json"} <= {n.rpartition(".")[2] for n in names}
    assert all(n.startswith(f"execmagic-test-{info.job_id}-t-") for n in names), names
    while not out.at_end:
        out = registry.read(info.id, wait=10)
    assert os.listdir(slurm_logs) == []  # every byte is in the kernel's logs: the cluster's copy is gone
    assert registry.cleanup(remove_logs=True) == [info.id]
    assert not os.path.exists(info.log_paths["stdout"])


def test_wait_returns_soon_after_a_line(registry, backend, tmp_path):
    info = registry.start(bash("echo ready; sleep 2; date +%s.%N; sleep 30", str(tmp_path)), marker_prefix="t",
                          backend=backend)
    assert registry.read(info.id, wait=30).stdout == "ready\n"
    out = registry.read(info.id, wait=10)
    arrived = time.time()
    written = float(out.stdout)
    assert arrived - written < 1.5, arrived - written
    assert out.shell.status.startswith("running on ")
    assert registry.kill(info.id).shell.status == "killed"


def test_kill_leaves_no_sleep_of_a_setsid_tree(registry, backend, tmp_path, no_leftover_processes):
    code = "(sleep 300 &); setsid sleep 301 & echo started; sleep 302"
    info = registry.start(bash(code, str(tmp_path)), marker_prefix="t", backend=backend)
    assert registry.read(info.id, wait=30).stdout == "started\n"
    deadline = time.monotonic() + 5
    while len([p for p in processes_with(TOKEN_VAR, no_leftover_processes) if p.name() == "sleep"]) < 3:
        assert time.monotonic() < deadline, "the three sleeps never started"
        time.sleep(0.05)
    began = time.monotonic()
    outcome = registry.kill(info.id)
    assert outcome.shell.status == "killed" and outcome.message.startswith(f"{info.id} stopped with SIGTERM")
    while [p for p in processes_with(TOKEN_VAR, no_leftover_processes) if p.name() == "sleep"]:
        assert time.monotonic() - began < 5, "a sleep survived the kill"
        time.sleep(0.05)
    assert registry.kill(info.id).message == f"{info.id} already killed; nothing to stop"  # idempotent


def test_a_sigkilled_wrapper_still_leaves_nothing(registry, backend, tmp_path, no_leftover_processes):
    """``%kill --signal KILL``: SLURM kills the job's group at once, the wrapper cannot react; its
    reaper (a session of its own) sees the wrapper gone and stops what escaped the group."""
    info = registry.start(bash("setsid sleep 301 & echo started; sleep 302", str(tmp_path)), marker_prefix="t",
                          backend=backend)
    assert registry.read(info.id, wait=30).stdout == "started\n"
    registry.kill(info.id, sig="KILL")
    deadline = time.monotonic() + 5
    while processes_with(TOKEN_VAR, no_leftover_processes):
        assert time.monotonic() < deadline, "a process survived the SIGKILL of its job"
        time.sleep(0.05)


def test_a_term_ignoring_job_dies_after_the_grace(registry, backend, tmp_path, no_leftover_processes):
    info = registry.start(bash("trap '' TERM; echo started; sleep 300", str(tmp_path)), marker_prefix="t",
                          backend=backend)
    assert registry.read(info.id, wait=30).stdout == "started\n"
    began = time.monotonic()
    outcome = registry.kill(info.id, grace=0.5)
    took = time.monotonic() - began
    assert outcome.killed == 1 and "then SIGKILL after 0.5 s" in outcome.message
    assert 0.5 <= took < 5
    assert not processes_with(TOKEN_VAR, no_leftover_processes)


def test_a_job_asking_for_too_many_cpus_is_queued_with_slurms_reason_and_can_be_killed(registry, slurm_logs, tmp_path):
    backend = SlurmBackend(SlurmOptions(cpus=64), logs_dir=slurm_logs, grace=1.0)
    info = registry.start(bash("echo never", str(tmp_path)), marker_prefix="t", backend=backend)
    info = wait_status(registry, info.id, lambda s: s.startswith("queued ("))
    assert info.status.startswith("queued (") and info.status.endswith(")") and info.running
    outcome = registry.kill(info.id)
    assert outcome.shell.status == "killed" and not outcome.shell.running
    assert registry.read(info.id, wait=5).at_end


def test_the_timeout_is_applied_by_the_job_itself(registry, backend, tmp_path):
    info = registry.start(bash("echo go; sleep 60", str(tmp_path)), marker_prefix="t", backend=backend, timeout=1.0)
    out = registry.read(info.id, wait=30)
    while not out.at_end:
        out = registry.read(info.id, wait=10)
    assert out.shell.status == "timed out" and out.shell.exit_code == 124


def test_cwd_and_env_come_from_the_command(registry, backend, tmp_path):
    (tmp_path / "here").mkdir()
    info = registry.start(bash('pwd; echo "$GREETING"', str(tmp_path / "here"), GREETING="hi there"),
                          marker_prefix="t", backend=backend)
    out = registry.read(info.id, wait=30)
    while not out.at_end:
        out = registry.read(info.id, wait=10)
    assert registry.read(info.id, whole_log=True).stdout == f"{tmp_path / 'here'}\nhi there\n"


def test_sbatch_refusals_are_one_line_with_slurms_message(registry, slurm_logs, tmp_path):
    backend = SlurmBackend(SlurmOptions(partition="nope"), logs_dir=slurm_logs)
    with pytest.raises(SlurmError) as caught:
        registry.start(bash("true", str(tmp_path)), marker_prefix="t", backend=backend)
    assert "invalid partition specified: nope" in str(caught.value) and "\n" not in str(caught.value)
    backend = SlurmBackend(SlurmOptions(extra=("--bogus",)), logs_dir=slurm_logs)
    with pytest.raises(SlurmError, match="unrecognized option '--bogus'"):
        registry.start(bash("true", str(tmp_path)), marker_prefix="t", backend=backend)
    assert registry.list() == []  # nothing half-started


def test_no_sbatch_on_path_is_one_line(registry, slurm_logs, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SlurmError) as caught:
        registry.start(bash("true", str(tmp_path)), marker_prefix="t", backend=SlurmBackend(logs_dir=slurm_logs))
    assert str(caught.value) == "exec: sbatch not found in PATH: SLURM's client commands are not installed here (ENOENT)"


def test_an_unreachable_controller_is_a_bounded_one_line_error(registry, slurm, slurm_logs, tmp_path, monkeypatch):
    conf = tmp_path / "dead.conf"
    with open(slurm.conf) as fh:
        text = fh.read()
    port = next(line.split("=")[1] for line in text.splitlines() if line.startswith("SlurmctldPort="))
    conf.write_text(text.replace(f"SlurmctldPort={port}", "SlurmctldPort=9"))
    monkeypatch.setenv("SLURM_CONF", str(conf))
    began = time.monotonic()
    with pytest.raises(SlurmError) as caught:
        registry.start(bash("true", str(tmp_path)), marker_prefix="t",
                       backend=SlurmBackend(logs_dir=slurm_logs, command_timeout=3))
    assert time.monotonic() - began < 6
    assert "\n" not in str(caught.value) and caught.value.code in ("ETIMEDOUT", "EINVAL")


def test_a_new_owner_reattaches_reads_everything_and_kills(registry, backend, tmp_path, slurm_logs):
    info = registry.start(bash("echo one; sleep 1; echo two; sleep 300", str(tmp_path)), marker_prefix="t",
                          backend=backend)
    assert registry.read(info.id, wait=30).stdout == "one\n"
    registry.close()  # the owner goes away: the job runs on
    assert processes_with(TOKEN_VAR, os.environ[TOKEN_VAR])
    later = ShellRegistry(log_dir=lambda: str(tmp_path / "new-kernel-logs"), grace=1.0, watchdog=False)
    try:
        fresh = SlurmBackend(logs_dir=slurm_logs, grace=1.0)
        jobs = fresh.find_jobs()
        assert [j.job_id for j in jobs] == [info.job_id]
        handle = fresh.reattach(info.job_id)
        adopted = later.adopt(handle, backend="slurm", shell_id=handle.meta.shell_id, command=handle.meta.command,
                              cwd=handle.meta.cwd, marker=handle.meta.marker)
        assert adopted.id == info.id and adopted.job_id == info.job_id and adopted.running
        text = ""
        while "two" not in text:
            text += later.read(adopted.id, wait=10).stdout
        assert text == "one\ntwo\n"
        assert later.kill(adopted.id).shell.status == "killed"
    finally:
        later.close()
    with pytest.raises(UsageProblem):
        fresh.reattach("999999")


def test_an_sbatch_that_times_out_after_submitting_is_adopted_not_run_twice(registry, slurm, slurm_logs, tmp_path,
                                                                           monkeypatch):
    """sbatch submitted the job but its answer never came in time: the job is found by its marker."""
    real = shutil.which("sbatch")
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "sbatch").write_text(f'#!/bin/sh\n"{real}" "$@" || exit $?\nexec sleep 30\n')
    (folder / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    backend = SlurmBackend(logs_dir=slurm_logs, grace=0.5, command_timeout=2)
    info = registry.start(bash("echo once; sleep 300", str(tmp_path)), marker_prefix="t", name="slow", backend=backend)
    assert registry.read(info.id, wait=30).stdout == "once\n"
    listed = slurm.run("squeue", "--me", "--noheader", "--name=execmagic-slow", "--format=%i").stdout.split()
    assert listed == [info.job_id]
    assert registry.kill(info.id).shell.status == "killed"


def test_slurms_cancel_notice_is_not_the_commands_stderr(registry, backend, slurm, tmp_path):
    info = registry.start(bash("echo started; sleep 300", str(tmp_path)), marker_prefix="t", backend=backend)
    assert registry.read(info.id, wait=30).stdout == "started\n"
    slurm.run("scancel", info.job_id)
    out = registry.read(info.id, wait=10)
    while not out.at_end:
        out = registry.read(info.id, wait=10)
    assert out.shell.status == "killed"
    assert registry.read(info.id, whole_log=True).stderr == ""


def test_output_keeps_flowing_while_squeue_hangs(registry, backend, tmp_path, monkeypatch):
    """The controller hangs (one squeue hangs until the test lets it go): the job's output still reaches
    the reader."""
    real = shutil.which("squeue")
    hung, done, go, release = tmp_path / "hung", tmp_path / "done", tmp_path / "go", tmp_path / "release"
    folder = tmp_path / "bin"
    folder.mkdir()
    # hangs until released (at most 60 s), however long a loaded machine takes to bring the output
    (folder / "squeue").write_text(f'#!/bin/sh\nif [ ! -e "{hung}" ]; then touch "{hung}"; n=0; while [ ! -e'
                                   f' "{release}" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done;'
                                   f' touch "{done}"; exit 1; fi\nexec "{real}" "$@"\n')
    (folder / "squeue").chmod(0o755)
    code = f'echo first; while [ ! -e "{go}" ]; do sleep 0.05; done; echo second; sleep 300'
    info = registry.start(bash(code, str(tmp_path)), marker_prefix="t", backend=backend)
    assert registry.read(info.id, wait=30).stdout == "first\n"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    deadline = time.monotonic() + 10
    while not hung.exists():
        assert time.monotonic() < deadline, "squeue was not asked"
        time.sleep(0.05)
    go.touch()
    assert registry.read(info.id, wait=30).stdout == "second\n"
    assert not done.exists()  # it came while squeue still hung
    release.touch()
    while not done.exists():
        time.sleep(0.1)
    assert registry.kill(info.id).shell.status == "killed"


def test_cleanup_never_deletes_files_another_owner_still_reads(registry, backend, tmp_path):
    """Two owners attached to one job (a kernel that reattached while the first still ran): the
    first's cleanup right after the job ended leaves the files to the second, which reads them all."""
    # the wrapper signals the group and every marked process: the trap must print once
    code = "trap 'trap \"\" TERM; head -c 8000000 /dev/zero | tr \\\\0 x; exit 0' TERM; echo started; sleep 300 & wait"
    info = registry.start(bash(code, str(tmp_path)), marker_prefix="t", backend=backend)
    assert registry.read(info.id, wait=30).stdout == "started\n"
    other = ShellRegistry(log_dir=lambda: str(tmp_path / "other-logs"), grace=1.0, watchdog=False)
    try:
        fresh = SlurmBackend(logs_dir=backend.logs_dir, grace=1.0)
        handle = fresh.reattach(info.job_id)
        adopted = other.adopt(handle, backend="slurm", shell_id="twin", command=handle.meta.command,
                              cwd=handle.meta.cwd, marker=handle.meta.marker)
        registry.kill(info.id)
        out = registry.read(info.id, wait=30, max_bytes=1)
        while not out.at_end:
            out = registry.read(info.id, wait=30, max_bytes=1)
        assert registry.cleanup(remove_logs=True) == [info.id]
        end = other.read(adopted.id, wait=30, max_bytes=1)
        while not end.at_end:
            end = other.read(adopted.id, wait=30, max_bytes=1)
        assert end.shell.stdout_bytes == len("started\n") + 8_000_000
    finally:
        other.close()
