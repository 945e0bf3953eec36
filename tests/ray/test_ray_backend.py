"""The Ray Jobs backend on a real single-node Ray head, through the registry (no IPython).

Every job gets the test's token in its environment (``--env``), so the autouse leak check proves
that nothing of a job survives its test -- also what Ray's own stop leaves behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import psutil
import pytest

from execmagic.background.backends.ray import RayClient, RayCluster, RayError, RayHandle, RayJob, RayOptions, RayPhase
from execmagic.process.errors import UsageProblem
from execmagic.process.spec import Command
from processes import TOKEN_VAR, processes_with

pytestmark = pytest.mark.timeout(120)


def bash(code: str) -> Command:
    return Command(argv=("bash", "-c", code), cwd="/", env={}, display=code)


def read_to_end(registry, shell_id, wait=60.0):
    pieces = []
    deadline = time.monotonic() + wait
    while True:
        out = registry.read(shell_id, wait=5)
        pieces.append(out)
        if out.at_end:
            return pieces
        assert time.monotonic() < deadline, f"the job did not end: {out.shell.status}"


def wait_for(predicate, timeout=30.0, what="it", why=lambda: ""):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"timed out waiting for {what} {why()}"
        time.sleep(0.1)
    return value


def sleeps(token):
    """The tests' own sleeps (``sleep 300`` and up), not the ``sleep 1`` of Ray's watcher."""
    found = []
    for proc in processes_with(TOKEN_VAR, token):
        try:
            words = proc.cmdline()  # empty for a process as it exits (its memory is let go of first): ended
            if proc.name() == "sleep" and words and words[-1].isdigit() and int(words[-1]) >= 300:
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def test_stdout_and_stderr_apart_any_bytes_and_the_exact_exit_code(registry, backend):
    code = r"echo out1; echo err1 >&2; printf 'bin\377\376\n'; sleep 0.3; echo out2; echo err2 >&2; exit 3"
    info = registry.start(bash(code), marker_prefix="t", backend=backend)
    assert info.backend == "ray" and info.job_id.startswith("execmagic-bg")
    pieces = read_to_end(registry, info.id)
    out = pieces[-1]
    assert out.shell.status == "exited 3" and out.shell.exit_code == 3 and not out.shell.running
    with open(out.shell.log_paths["stdout"], "rb") as fh:
        assert fh.read() == b"out1\nbin\xff\xfe\nout2\n"  # the exact bytes, nothing of the framing
    with open(out.shell.log_paths["stderr"], "rb") as fh:
        assert fh.read() == b"err1\nerr2\n"
    assert registry.read(info.id).stdout == ""  # nothing twice


def test_megabytes_of_binary_output_arrive_exact(registry, backend):
    """Many frames, many looks at a growing log: every byte once, in order."""
    code = "import sys; sys.stdout.buffer.write(bytes(range(256)) * 12000); sys.stderr.write('e' * 100000)"
    info = registry.start(Command(argv=("python3", "-c", code), cwd="/", env={}, display="python3"),
                          marker_prefix="t", backend=backend)
    out = read_to_end(registry, info.id)[-1]
    assert out.shell.status == "exited 0"
    with open(out.shell.log_paths["stdout"], "rb") as fh:
        assert fh.read() == bytes(range(256)) * 12000
    with open(out.shell.log_paths["stderr"], "rb") as fh:
        assert fh.read() == b"e" * 100000


def test_each_read_gives_only_what_is_new(registry, backend):
    code = "for i in 1 2 3 4 5; do echo line$i; sleep 0.5; done"
    info = registry.start(bash(code), marker_prefix="t", backend=backend)
    pieces = read_to_end(registry, info.id)
    text = "".join(p.stdout for p in pieces)
    assert text == "".join(f"line{i}\n" for i in range(1, 6))
    assert sum(1 for p in pieces if p.stdout) >= 3  # several reads, each only what was new
    assert registry.read(info.id, whole_log=True).stdout == text


def test_a_job_killed_by_a_signal_says_which(registry, backend):
    info = registry.start(bash("echo going; kill -KILL $$"), marker_prefix="t", backend=backend)
    out = read_to_end(registry, info.id)[-1]
    assert out.shell.status == "killed by SIGKILL" and out.shell.exit_code == 137


def test_the_wrapper_applies_the_timeout(registry, backend):
    info = registry.start(bash("echo started; sleep 60"), marker_prefix="t", backend=backend, timeout=2)
    out = read_to_end(registry, info.id)[-1]
    assert out.shell.status == "timed out" and out.shell.exit_code == 124


def test_running_on_the_node_then_kill_stops_the_whole_tree(registry, backend, no_leftover_processes):
    code = "(sleep 300 &); setsid sleep 301 & echo started; sleep 302"
    info = registry.start(bash(code), marker_prefix="t", backend=backend)
    assert registry.read(info.id, wait=60).stdout == "started\n"
    wait_for(lambda: len(sleeps(no_leftover_processes)) == 3, what="the three sleeps",
             why=lambda: subprocess.run(["ps", "-eo", "pid,ppid,pgid,sid,stat,args"], capture_output=True, text=True).stdout)
    assert registry.info(info.id).status == f"running on {socket.gethostname()}"
    began = time.monotonic()
    outcome = registry.kill(info.id)
    assert outcome.shell.status == "killed"
    wait_for(lambda: not sleeps(no_leftover_processes), timeout=5, what="the double-forked and setsid sleeps to end")
    assert time.monotonic() - began < 8
    assert registry.kill(info.id).message == f"{info.id} already killed; nothing to stop"  # idempotent


def test_rays_own_stop_leaves_a_setsid_child_running(ray, no_leftover_processes):
    """Why the wrapper sweeps: without it, Ray's stop signals a snapshot of the entrypoint's
    children and a ``setsid`` child lives on (here it is killed by hand after the check)."""
    client = RayClient(ray.address, timeout=20)
    sid = client.submit({"entrypoint": "(setsid sleep 303 &); echo started; sleep 304",
                         "runtime_env": {"env_vars": {TOKEN_VAR: no_leftover_processes}}})
    try:
        wait_for(lambda: len(sleeps(no_leftover_processes)) == 2, timeout=60, what="the two sleeps")
        client.stop(sid)
        wait_for(lambda: client.info(sid).phase.terminal, what="Ray's stop")
        time.sleep(1.0)  # Ray says STOPPED: give a stray signal time to land before looking
        left = sleeps(no_leftover_processes)
        assert [p.cmdline() for p in left] == [["sleep", "303"]]  # the double-forked setsid child
    finally:
        for proc in sleeps(no_leftover_processes):
            proc.kill()


def test_pending_says_why_and_kill_stops_it_before_it_starts(registry, ray, no_leftover_processes):
    backend = RayCluster(RayOptions(cpus=64, env=((TOKEN_VAR, no_leftover_processes),)), address=ray.address)
    info = registry.start(bash("echo never"), marker_prefix="t", backend=backend)
    wait_for(lambda: registry.info(info.id).status.startswith("queued ("), what="a pending reason")
    outcome = registry.kill(info.id)
    assert outcome.shell.status == "killed" and not outcome.shell.running
    assert registry.read(info.id, whole_log=True).stdout == ""


def test_a_job_started_in_one_kernel_is_found_by_the_next(ray, backend, tmp_path):
    from execmagic.background.registry import ShellRegistry

    first = ShellRegistry(log_dir=lambda: str(tmp_path / "one"), grace=1.0, watchdog=False)
    info = first.start(bash("echo before; sleep 1.5; echo after; sleep 60"), marker_prefix="t", name="train",
                       backend=backend)
    assert first.read(info.id, wait=60).stdout == "before\n"
    first.close()  # the kernel goes: the job runs on
    second = ShellRegistry(log_dir=lambda: str(tmp_path / "two"), grace=1.0, watchdog=False)
    try:
        later = RayCluster(address=ray.address)
        found = [job for job in later.find_jobs() if job.job_id == info.job_id]
        assert len(found) == 1 and found[0].shell_id == "train" and found[0].phase is RayPhase.RUNNING
        assert found[0].command == "echo before; sleep 1.5; echo after; sleep 60"
        job = found[0]
        again = second.adopt(later.reattach(job.job_id), backend="ray", shell_id=job.shell_id, command=job.command,
                             cwd="/", marker=job.marker, started_at=job.started_at)
        text = ""
        deadline = time.monotonic() + 30
        while "after" not in text and time.monotonic() < deadline:
            text += second.read(again.id, wait=5).stdout
        assert text == "before\nafter\n"  # read again from the start
        assert second.kill(again.id).shell.status == "killed"
    finally:
        second.kill_all(grace=0.5)
        second.close()


def test_a_job_let_go_can_still_be_stopped(backend, no_leftover_processes):
    """An owner closing lets its jobs go (their pipes end); stopping one afterwards still stops it and
    learns how it ended."""
    handle = backend.start(bash("trap 'echo bye; exit 0' TERM; echo started; sleep 311 & wait"), marker="t-letgo",
                           log_paths={})  # it prints after it was let go: nothing may wait on that
    wait_for(lambda: len(sleeps(no_leftover_processes)) == 1, timeout=60, what="the sleep")
    handle.detach()
    for fd in handle.streams.values():
        os.close(fd)
    handle.stop(signal.SIGTERM, 1.0)
    assert handle.returncode == -signal.SIGTERM
    assert not sleeps(no_leftover_processes)


def test_cleanup_deletes_the_job_from_ray(registry, backend):
    info = registry.start(bash("echo done"), marker_prefix="t", backend=backend)
    read_to_end(registry, info.id)
    assert registry.cleanup(remove_logs=True) == [info.id]
    with pytest.raises(RayError) as caught:
        backend.client.info(info.job_id)
    assert caught.value.code == "ENOENT"


def test_a_job_deleted_under_us_is_lost(registry, ray, backend):
    job = dict(backend.new_job(bash("true"), marker="m", shell_id="gone", timeout=None).__dict__)
    handle = RayHandle(backend, RayJob(**job))  # never submitted: Ray answers 404 as for a deleted job
    backend.monitor.add(handle)
    assert handle.ended.wait(10)
    assert handle.returncode == 1 and handle.describe().startswith("lost: Ray no longer knows the job")
    with pytest.raises(UsageProblem, match="has no job"):
        backend.reattach(job["job_id"])


def test_working_dir_is_uploaded_and_cwd_is_on_the_node(registry, ray, tmp_path, no_leftover_processes):
    folder = tmp_path / "project"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "data.txt").write_text("from the kernel's machine\n")
    options = RayOptions(working_dir=str(folder), cwd="sub", cpus=0.5, mem="100M",
                         env=((TOKEN_VAR, no_leftover_processes), ("GREETING", "hi there")))
    backend = RayCluster(options, address=ray.address)
    info = registry.start(bash('cat data.txt; echo "$GREETING"'), marker_prefix="t", backend=backend)
    out = read_to_end(registry, info.id)
    assert "".join(p.stdout for p in out) == "from the kernel's machine\nhi there\n"
    assert out[-1].shell.status == "exited 0"


def test_a_missing_program_is_127_with_the_reason_on_stderr(registry, backend):
    command = Command(argv=("no-such-program-xyz",), cwd="/", env={}, display="no-such-program-xyz")
    info = registry.start(command, marker_prefix="t", backend=backend)
    out = read_to_end(registry, info.id)
    assert out[-1].shell.status == "exited 127"
    assert "cannot start 'no-such-program-xyz'" in "".join(p.stderr for p in out)


# -- the foreground: %exec --on ray -----------------------------------------------------------------
def follow(backend, code, name=None, **popen):
    command = backend.foreground_command(Command(argv=("bash", "-c", code), cwd="/", env=dict(os.environ),
                                                 display=code), name=name or f"run-{time.monotonic_ns()}")
    return subprocess.Popen(command.argv, env=command.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def test_foreground_streams_apart_and_ends_with_the_exit_code(backend):
    proc = follow(backend, r"echo out; echo err >&2; printf '\377'; exit 3")
    out, err = proc.communicate(timeout=90)
    assert (proc.returncode, out, err) == (3, b"out\n\xff", b"err\n")


def test_foreground_dies_of_the_jobs_signal(backend):
    proc = follow(backend, "kill -TERM $$")
    proc.communicate(timeout=90)
    assert proc.returncode == -signal.SIGTERM


def test_a_signalled_foreground_stops_the_whole_job(backend, no_leftover_processes):
    """What the stop button and a dead kernel's watchdog do: signal the local follower."""
    proc = follow(backend, "setsid sleep 305 & echo started; sleep 306")
    assert proc.stdout.readline() == b"started\n"
    wait_for(lambda: len(sleeps(no_leftover_processes)) == 2, what="the two sleeps")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGTERM
    assert b"execmagic: Ray job" not in err  # its death by the signal says it was stopped
    wait_for(lambda: not sleeps(no_leftover_processes), timeout=5, what="the job's tree to end")


def test_a_foreground_job_stopped_while_queued_says_it_never_started(ray):
    """The status line reads as SLURM's (``queued (Ray's reason)``); stopped before Ray placed it, the
    job's command never ran, and the run's stderr says so in the words every backend uses."""
    backend = RayCluster(RayOptions(cpus=64), address=ray.address)
    name = f"fg-{time.monotonic_ns()}"
    watch = backend.watch_job(backend.foreground_job_id(name))
    proc = follow(backend, "echo never", name=name)
    try:
        wait_for(lambda: (watch.words or "").startswith("queued ("), what="the watch to say queued")
    finally:
        watch.stop()
        proc.send_signal(signal.SIGTERM)  # the stop button
        out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (-signal.SIGTERM, b"")
    assert err.endswith(b" killed (before it started)\n"), err


def test_the_watchdogs_ladder_on_a_foreground_stops_the_job(backend, no_leftover_processes):
    """A SIGKILLed kernel's watchdog stops its runs' sessions as here (TERM, a short grace, KILL):
    the follower has sent Ray's stop before its SIGKILL, and the wrapper stops the tree."""
    from execmagic.process.stop import stop_tree

    proc = follow(backend, "(setsid sleep 307 &); echo started; sleep 308", start_new_session=True)
    assert proc.stdout.readline() == b"started\n"
    wait_for(lambda: len(sleeps(no_leftover_processes)) == 2, what="the two sleeps")
    stop_tree(proc.pid, leader=proc, ladder=(signal.SIGTERM,), grace=0.2)
    proc.communicate(timeout=10)
    wait_for(lambda: not sleeps(no_leftover_processes), timeout=8, what="the job's tree to end")


def test_a_foreground_jobs_state_is_watched_and_it_can_be_stopped_by_id(backend, no_leftover_processes):
    """The status line of ``%exec --on ray`` watches the job by the id its name gives; a run killed
    too hard to stop its job (its follower SIGKILLed) is stopped by that id afterwards."""
    name = f"fg-{time.monotonic_ns()}"
    job_id = backend.foreground_job_id(name)
    watch = backend.watch_job(job_id)
    try:
        proc = follow(backend, "(setsid sleep 309 &); echo started; sleep 310", name=name)
        assert proc.stdout.readline() == b"started\n"
        wait_for(lambda: watch.words == "running", what="the watch to say running")
        wait_for(lambda: len(sleeps(no_leftover_processes)) == 2, what="the two sleeps")
        proc.kill()
        proc.communicate(timeout=10)
        time.sleep(0.5)
        assert len(sleeps(no_leftover_processes)) == 2  # nothing stopped the job
    finally:
        watch.stop()
        assert backend.stop_job(job_id)
    wait_for(lambda: not sleeps(no_leftover_processes), timeout=8, what="the job's tree to end")
    assert not backend.stop_job(f"{job_id}-no-such-job")


# -- one-line errors -----------------------------------------------------------------------------------
def test_no_ray_at_the_address(no_ray_address):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = RayCluster(address=f"http://127.0.0.1:{port}", request_timeout=5)
    with pytest.raises(RayError) as caught:
        backend.start(bash("true"), marker="m", log_paths={})
    assert caught.value.code == "ECONNREFUSED" and "\n" not in str(caught.value)
    assert f"no Ray dashboard at http://127.0.0.1:{port}" in str(caught.value)


@pytest.mark.parametrize("address", ["127.0.0.1:6379", "auto", "ray://head:10001"])
def test_a_ray_address_that_is_no_dashboard_url_says_what_to_give(no_ray_address, monkeypatch, address):
    monkeypatch.setenv("RAY_ADDRESS", address)
    with pytest.raises(UsageProblem) as caught:
        RayCluster()
    assert "RAY_ADDRESS" in str(caught.value) and "http://HEAD:8265" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_rejected_submission_is_one_line_from_ray(ray):
    client = RayClient(ray.address)
    with pytest.raises(RayError) as caught:
        client.submit({"entrypoint": "true", "entrypoint_memory": "lots"})
    assert caught.value.code == "EINVAL" and caught.value.http_status == 400
    assert str(caught.value) == ("exec: submitting the job to Ray: Ray refused it: TypeError: entrypoint_memory must"
                                 " be an integer, got <class 'str'> (EINVAL)")


def test_a_dashboard_answering_500_is_one_line(ray, no_leftover_processes):
    """Ray's own log API fails on one invalid UTF-8 byte (what the wrapper's framing avoids)."""
    client = RayClient(ray.address)
    sid = client.submit({"entrypoint": r"printf 'a\377\n'", "runtime_env": {"env_vars": {TOKEN_VAR: no_leftover_processes}}})
    wait_for(lambda: client.info(sid).phase.terminal, timeout=60, what="the job")
    with pytest.raises(RayError) as caught:
        client.logs(sid)
    assert caught.value.code == "EIO" and caught.value.http_status == 500
    assert "UnicodeDecodeError" in str(caught.value) and "\n" not in str(caught.value)
    client.delete(sid)


def test_a_dashboard_that_never_answers_times_out(no_ray_address):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)  # accepts the connection, never answers
        client = RayClient(f"http://127.0.0.1:{server.getsockname()[1]}", timeout=0.5)
        with pytest.raises(RayError) as caught:
            client.version()
    assert caught.value.code == "ETIMEDOUT" and "within 0.5 s" in str(caught.value)


def test_ray_job_headers_are_sent_and_never_shown(no_ray_address, monkeypatch):
    import http.server

    seen = {}

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.update(self.headers)
            body = json.dumps({"ray_version": "2.60.0"}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("RAY_JOB_HEADERS", json.dumps({"Authorization": "Bearer s3cr3t-token"}))
        client = RayClient(f"http://127.0.0.1:{server.server_address[1]}")
        assert client.version()["ray_version"] == "2.60.0"
        assert seen["Authorization"] == "Bearer s3cr3t-token"
        assert "s3cr3t" not in repr(client) and "s3cr3t" not in repr(RayCluster(address=client.address))
        monkeypatch.setenv("RAY_JOB_HEADERS", "{not json s3cr3t")
        with pytest.raises(UsageProblem) as caught:
            RayClient(client.address)
        assert "s3cr3t" not in str(caught.value)
    finally:
        server.shutdown()
        server.server_close()


def test_the_head_is_the_fixtures(ray):
    """The leak check ignores the head (no test token), and the fixture knows all of it by its own mark."""
    assert ray.processes() and all(TOKEN_VAR not in p.environ() for p in ray.processes())
    with urllib.request.urlopen(f"{ray.address}/api/version", timeout=5) as answer:
        assert json.load(answer)["ray_version"]
    assert psutil.Process(ray.proc.pid).status() != psutil.STATUS_ZOMBIE
