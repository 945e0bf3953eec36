"""The Ray backend's parts that need no Ray: the job wrapper run as Ray runs it (``sh -c ENTRYPOINT``,
its stdout a file), the reader of its framing, the options and the address checks.

The same behaviour on a real head is in ``tests/ray`` (run in a network namespace of its own).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from execmagic.background.backends.ray.client import dashboard_address, job_headers
from execmagic.background.backends.ray.framing import FrameReader, entrypoint, new_tag
from execmagic.background.backends.ray.options import RayOptions, parse_env, parse_mem
from execmagic.process.errors import UsageProblem
from processes import TOKEN_VAR, processes_with


def run_wrapped(code, tmp_path, *, timeout=None, grace=1.0, signal_after=None, sig=signal.SIGTERM, cwd=None):
    """Run ``bash -c code`` under the wrapper as Ray would (``sh -c``, a new session, output to a
    log file); optionally signal the wrapper once it printed its first output line."""
    tag = new_tag()
    line = entrypoint(["bash", "-c", code], tag=tag, marker=f"m{tag[2:-1]}", timeout=timeout, grace=grace, cwd=cwd)
    log = tmp_path / "job.log"
    with open(log, "ab") as fh:
        fh.write(f"Running entrypoint for job x: {line}\n".encode())
        fh.flush()
        proc = subprocess.Popen(["sh", "-c", line], stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    if signal_after is not None:
        deadline = time.monotonic() + 10
        while log.read_text().count(f"{tag}O") < 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(signal_after)
        os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    frames = FrameReader(tag).feed(log.read_text())
    out = b"".join(f.data for f in frames if f.kind == "stdout")
    err = b"".join(f.data for f in frames if f.kind == "stderr")
    outcomes = [f.outcome for f in frames if f.outcome is not None]
    return proc.returncode, out, err, outcomes[-1] if outcomes else None


def test_streams_apart_exact_bytes_and_exit_code(tmp_path):
    code, out, err, outcome = run_wrapped(r"echo out; echo err >&2; printf 'x\377\000y'; exit 3", tmp_path)
    assert (code, out, err) == (3, b"out\nx\xff\x00y", b"err\n")
    assert (outcome.how, outcome.code) == ("exit", 3)
    log = (tmp_path / "job.log").read_bytes()
    log.decode("ascii")  # the whole log stays plain ASCII: Ray's log API reads it as UTF-8


def test_a_signal_death_is_named(tmp_path):
    code, _, _, outcome = run_wrapped("kill -SEGV $$", tmp_path)
    assert code == 128 + signal.SIGSEGV and (outcome.how, outcome.signal) == ("signal", "SIGSEGV")


def test_the_timeout_is_applied_with_the_grace_then_kill(tmp_path):
    began = time.monotonic()
    code, out, _, outcome = run_wrapped("trap '' TERM; echo up; sleep 30", tmp_path, timeout=0.5, grace=0.3)
    assert code == 124 and out == b"up\n" and outcome.how == "timeout" and outcome.escalated
    assert time.monotonic() - began < 5


def test_a_stop_sweeps_double_forked_and_setsid_children(tmp_path, no_leftover_processes):
    code, _, _, outcome = run_wrapped("(sleep 300 &); (setsid sleep 301 &); echo started; sleep 302", tmp_path,
                                      signal_after=0.2)
    assert code == 128 + signal.SIGTERM and (outcome.how, outcome.signal) == ("stopped", "SIGTERM")
    assert not [p for p in processes_with(TOKEN_VAR, no_leftover_processes) if p.name() == "sleep"]


def test_leftovers_of_a_finished_command_are_stopped(tmp_path, no_leftover_processes):
    code, _, _, outcome = run_wrapped("(setsid sleep 300 &); echo done", tmp_path)
    assert code == 0 and outcome.how == "exit"
    assert not [p for p in processes_with(TOKEN_VAR, no_leftover_processes) if p.name() == "sleep"]


def test_a_sigkilled_wrapper_leaves_its_reaper_to_sweep(tmp_path, no_leftover_processes):
    """Ray SIGKILLs the entrypoint 3 s after its stop signal: the reaper then stops the tree."""
    code, _, _, outcome = run_wrapped("(setsid sleep 301 &); echo started; sleep 302", tmp_path, signal_after=0.2,
                                      sig=signal.SIGKILL)
    assert code == -signal.SIGKILL and outcome is None
    deadline = time.monotonic() + 5
    while [p for p in processes_with(TOKEN_VAR, no_leftover_processes) if p.name() in ("sleep", "python3", "python")]:
        assert time.monotonic() < deadline, "the reaper did not stop the tree"
        time.sleep(0.05)


def test_cwd_on_the_node_and_a_missing_program(tmp_path):
    assert run_wrapped("pwd", tmp_path, cwd=str(tmp_path))[1] == f"{tmp_path}\n".encode()
    tag = new_tag()
    line = entrypoint(["no-such-program-xyz"], tag=tag, marker="m", timeout=None, grace=1)
    done = subprocess.run(["sh", "-c", line], capture_output=True, timeout=30)
    frames = FrameReader(tag).feed(done.stdout.decode())
    assert done.returncode == 127 and b"cannot start 'no-such-program-xyz'" in frames[1].data


def test_a_node_without_python_is_told_in_the_log(tmp_path):
    line = entrypoint(["true"], tag=new_tag(), marker="m", timeout=None, grace=1)
    done = subprocess.run(["/bin/sh", "-c", line], capture_output=True, timeout=30, env={"PATH": str(tmp_path)})
    assert (done.returncode, done.stdout) == (127, b"execmagic: no python3 on this Ray node\n")


def test_the_reader_takes_complete_lines_only_and_skips_others():
    tag = new_tag()
    reader = FrameReader(tag)
    log = f"Running entrypoint for job x: {tag}Ogarbage\nsomething else\n{tag}OaGk=\n{tag}Ea"
    assert [f.data for f in reader.feed(log)] == [b"hi"]  # the invalid and the unfinished line are not taken
    log += "GE=\n"
    frames = reader.feed(log)
    assert [(f.kind, f.data) for f in frames] == [("stderr", b"ha")] and reader.offset == len(log)
    assert reader.feed(log) == []  # nothing twice


def test_options_are_checked_before_anything_is_sent():
    assert parse_mem("4G") == 4 << 30 and parse_mem("512") == 512 << 20 and parse_mem("1.5M") == 3 << 19
    with pytest.raises(UsageProblem, match="--mem 'lots'"):
        parse_mem("lots")
    assert parse_env(["A=1", "B=x=y"]) == (("A", "1"), ("B", "x=y"))
    with pytest.raises(UsageProblem, match="NAME=VALUE"):
        parse_env(["1A=x"])
    with pytest.raises(UsageProblem, match="--cpus"):
        RayOptions(cpus=-1)
    fields = RayOptions.from_words(cpus=2, gpus=0.5, mem="1G", env=["K=V"]).submit_fields()
    assert fields == {"entrypoint_num_cpus": 2, "entrypoint_num_gpus": 0.5, "entrypoint_memory": 1 << 30}


@pytest.mark.parametrize("address", ["10.0.0.5:6379", "auto", "ray://head:10001"])
def test_only_a_dashboard_url_is_taken(monkeypatch, address):
    monkeypatch.setenv("RAY_ADDRESS", address)
    with pytest.raises(UsageProblem, match=r"^RAY_ADDRESS .*give the dashboard's URL, e\.g\. http://HEAD:8265$"):
        dashboard_address()
    monkeypatch.setenv("RAY_ADDRESS", "http://head:8265/")
    assert dashboard_address() == "http://head:8265"
    monkeypatch.delenv("RAY_ADDRESS")
    assert dashboard_address() == "http://127.0.0.1:8265"


def test_ray_job_headers_are_read_and_a_bad_value_is_not_echoed(monkeypatch):
    monkeypatch.setenv("RAY_JOB_HEADERS", '{"Authorization": "Bearer abc"}')
    assert job_headers() == {"Authorization": "Bearer abc"}
    monkeypatch.setenv("RAY_JOB_HEADERS", "Bearer abc")
    with pytest.raises(UsageProblem) as caught:
        job_headers()
    assert "abc" not in str(caught.value)


@pytest.mark.parametrize("start", ["this python", "before 3.11"])
def test_the_foreground_follower_imports_nothing_from_the_runs_folder(tmp_path, start):
    """``%exec --on ray``'s follower starts in the run's folder (a notebook's, which an agent may write):
    an ``execmagic`` planted there must not run in its place, nor through a ``PYTHONPATH`` the session set."""
    import dataclasses
    import sys

    from execmagic.background.backends.ray import RayCluster
    from execmagic.background.backends.ray.follow import BOOTSTRAP
    from execmagic.process.spec import Command

    work, marker = tmp_path / "notebooks", tmp_path / "planted-code-ran"
    (work / "execmagic").mkdir(parents=True)
    for planted in (work / "execmagic" / "__init__.py", work / "execmagic.py"):
        planted.write_text(f"open({str(marker)!r}, 'w').write('imported')\n")
    session = Command(argv=("bash", "-c", "true"), cwd=str(work), env={**os.environ, "PYTHONPATH": str(work)},
                      display="true")
    command = RayCluster(address="http://127.0.0.1:9", request_timeout=5).foreground_command(session, name="x")
    assert command.cwd == str(work) and command.env.get("PYTHONPATH") == os.environ.get("PYTHONPATH")
    if start == "before 3.11":
        command = dataclasses.replace(command, argv=(sys.executable, "-c", BOOTSTRAP))
    done = subprocess.run(command.argv, cwd=command.cwd, env=command.env, capture_output=True, text=True, timeout=60)
    assert not marker.exists()
    # the real follower ran: it could not reach Ray (nothing listens there), and said so in one line
    assert done.returncode != 0 and "Traceback" not in done.stderr and "127.0.0.1:9" in done.stderr, done.stderr


@pytest.mark.parametrize("language", ["bash", "python"])
def test_a_script_sent_in_the_environment_runs_as_bash_c_would_and_never_stands_on_an_argv(engine, tmp_path,
                                                                                           language):
    """A secret's script goes in the job's environment; the wrapper hands it to the command by a descriptor."""
    from execmagic.background.backends.script_env import SCRIPT_VAR, handed_off

    code = {"bash": 'x={pw}; echo "$0 $LINENO ${' + SCRIPT_VAR + '0-gone}"; ps -o args= -p $$; exit 3',
            "python": "import os, sys\nx = {pw}\nprint(os.environ.get('" + SCRIPT_VAR + "0', 'gone'), sys.argv)\n"
                      "sys.exit(3)"}
    plan = engine.plan_script(code[language] + "\n" + "# padding\n" * 20_000, language, params={"pw": "s3cr3t-x"})
    argv, pieces = handed_off(plan.command, to="Ray")
    assert len(pieces) > 1 and not [word for word in argv if "s3cr3t" in word]  # big: more than one piece
    tag = new_tag()
    line = entrypoint(argv, tag=tag, marker=f"m{tag[2:-1]}", timeout=None, grace=1.0, handed=True)
    with open(tmp_path / "job.log", "wb") as fh:
        done = subprocess.run(["sh", "-c", line], stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, **pieces},
                              timeout=60)
    frames = FrameReader(tag).feed((tmp_path / "job.log").read_text())
    out = b"".join(f.data for f in frames if f.kind == "stdout").decode()
    assert done.returncode == 3 and "s3cr3t" not in out, out
    if language == "bash":
        assert out.startswith("bash 1 gone\nbash -c IFS= builtin read"), out
    else:
        assert out == "gone ['-c']\n", out
