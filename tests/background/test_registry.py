"""Background shells through the engine: real processes, pipes and signals; no IPython."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from execmagic.engine import PreExecError, UsageProblem
from execmagic.process.errors import ShellLimitReached, UnknownShell
from processes import TOKEN_VAR, commands_with, processes_with
from waiting import wait_until


def start(engine, script, **kwargs):
    plan_args = {k: kwargs.pop(k) for k in ("cwd", "env", "params", "isolated") if k in kwargs}
    return engine.start_background(engine.plan_script(script, save_session=False, **plan_args), **kwargs)


def wait_ended(engine, shell_id, timeout=20):
    """The shell's info once it has ended: read by a reader of its own (the test's cursor stays put),
    each read blocking until the end or half a second."""
    def ended():
        out = engine.shells.read(shell_id, reader="waiter", wait=0.5)
        return out.shell if out.at_end else None
    return wait_until(ended, timeout, f"{shell_id} to end", interval=0)


def shell_processes(engine):
    """Live processes this test started, apart from the engine's watchdog (which outlives shells by design)."""
    watchdog = engine.shells.watchdog_pid
    return processes_with(TOKEN_VAR, os.environ[TOKEN_VAR], exclude=(watchdog,) if watchdog else ())


TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def until_running(*commands):
    """One line of an owner script (it imports os): wait until ``commands`` run, marked as this test's, so
    the owner is killed with them up -- not too early on a busy machine, when there would be nothing to
    sweep and the test would pass without testing anything."""
    return (f"import sys; sys.path.insert(0, {TESTS!r}); from processes import TOKEN_VAR, commands_with; "
            f"from waiting import wait_until; wait_until(lambda: {set(commands)!r} <= "
            "commands_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 10, 'the shells to start')")


def log_text(info, stream="stdout"):
    with open(info.log_paths[stream], encoding="utf-8") as fh:
        return fh.read()


def test_ids_names_and_handle(engine):
    a = start(engine, "sleep 30")
    b = start(engine, "sleep 30", name="server")
    c = start(engine, "sleep 30")
    assert (a.id, b.id, c.id) == ("bg1", "server", "bg2")
    assert a.running and a.status == "running" and a.pid > 0
    assert set(a.log_paths) == {"stdout", "stderr"}
    assert [i.id for i in engine.shells.list()] == ["bg1", "server", "bg2"]


def test_consecutive_reads_are_disjoint_and_add_up_to_the_log(engine):
    info = start(engine, "for i in $(seq 1 40); do echo line $i; sleep 0.02; done")
    pieces = []
    for _ in range(3):
        out = engine.shells.read(info.id, wait=5)
        assert out.stdout, "each read should find something new"
        pieces.append(out.stdout)
        time.sleep(0.15)
    end = wait_ended(engine, info.id)
    pieces.append(engine.shells.read(info.id).stdout)
    assert "".join(pieces) == log_text(end) == "".join(f"line {i}\n" for i in range(1, 41))
    numbers = [int(line.split()[1]) for piece in pieces for line in piece.splitlines()]
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers))


def test_filter_narrows_but_moves_the_cursor_and_all_tail_show_the_rest(engine):
    info = start(engine, "for i in 1 2 3 4 5 6; do echo \"step $i\"; echo \"loss=0.$i\"; done")
    wait_ended(engine, info.id)
    out = engine.shells.read(info.id, pattern=r"^loss")
    assert out.stdout == "".join(f"loss=0.{i}\n" for i in range(1, 7))
    assert out.filtered_out == {"stdout": 6, "stderr": 0}
    assert engine.shells.read(info.id).stdout == ""  # the cursor moved past the filtered-out lines too
    assert engine.shells.read(info.id, whole_log=True).stdout.count("step") == 6
    assert engine.shells.read(info.id, tail=2).stdout == "step 6\nloss=0.6\n"


def test_wait_returns_soon_after_the_next_line(engine, py):
    info = start(engine, f"sleep 0.6; {sys.executable} -c 'import time; print(repr(time.time()))'; sleep 30")
    out = engine.shells.read(info.id, wait=5)
    returned = time.time()
    written = float(out.stdout)
    assert 0 <= returned - written < 0.1, returned - written


def test_wait_gives_up_at_its_time_and_at_exit(engine):
    quiet = start(engine, "sleep 30")
    begin = time.monotonic()
    out = engine.shells.read(quiet.id, wait=0.3)
    assert out.stdout == "" and 0.25 < time.monotonic() - begin < 2
    ending = start(engine, "sleep 0.2; exit 4")
    out = engine.shells.read(ending.id, wait=10)
    assert out.shell.status == "exited 4" and out.shell.exit_code == 4 and out.at_end


def test_a_filtered_wait_waits_for_a_matching_line_not_any_line(engine):
    info = start(engine, "for i in 1 2 3 4 5 6 7 8; do echo \"step $i\"; sleep 0.1; done; echo 'ERROR disk full' >&2;"
                         " sleep 30")
    out = engine.shells.read(info.id, pattern="ERROR", wait=20)
    assert out.stderr == "ERROR disk full\n" and out.stdout == "" and out.shell.running
    assert out.filtered_out["stdout"] == 8  # the steps were passed over while waiting, not lost
    assert engine.shells.read(info.id, whole_log=True).stdout.count("step") == 8


def test_a_filtered_wait_ends_at_its_time_or_at_the_end_without_a_match(engine):
    chatty = start(engine, "while :; do echo tick; sleep 0.05; done")
    begin = time.monotonic()
    out = engine.shells.read(chatty.id, pattern="ERROR", wait=0.6)
    assert out.stdout == "" and time.monotonic() - begin >= 0.55 and out.filtered_out["stdout"] > 0
    ending = start(engine, "echo fine; sleep 0.2; exit 3")
    out = engine.shells.read(ending.id, pattern="ERROR", wait=30)
    assert out.at_end and out.shell.exit_code == 3 and out.stdout == ""


def test_fifty_megabytes_unread_finishes_with_bounded_memory(engine):
    me = psutil.Process()
    before = me.memory_info().rss
    info = start(engine, "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 50000000; echo done >&2")
    end = wait_ended(engine, info.id, timeout=60)
    growth = me.memory_info().rss - before
    assert end.status == "exited 0" and end.stdout_bytes == 50_000_000
    assert os.path.getsize(end.log_paths["stdout"]) == 50_000_000
    assert log_text(end, "stderr") == "done\n"
    assert growth < 50_000_000, f"memory grew by {growth / 1e6:.1f} MB"
    out = engine.shells.read(info.id, max_bytes=10_000)
    assert out.skipped["stdout"] > 49_000_000 and len(out.stdout) <= 10_000


def test_twenty_idle_shells_cost_almost_no_cpu(engine):
    for _ in range(20):
        start(engine, "sleep 60")
    me = psutil.Process()
    before = sum(me.cpu_times()[:2])
    time.sleep(5)
    used = sum(me.cpu_times()[:2]) - before
    assert used < 0.02 * 5, f"{used:.3f} s of CPU in 5 s"


def test_kill_reaches_double_forked_and_setsid_children(engine):
    info = start(engine, "bash -c '(sleep 300 &); setsid sleep 301 & sleep 302'")
    wanted = {"sleep 300", "sleep 301", "sleep 302"}
    wait_until(lambda: wanted <= commands_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 5, "the three sleeps to start")
    outcome = engine.shells.kill(info.id)
    assert outcome.message.startswith("bg1 stopped with SIGTERM")
    assert not shell_processes(engine)
    assert engine.shells.info(info.id).status == "killed"


def test_term_ignoring_shell_dies_after_grace(engine):
    info = start(engine, "trap '' TERM; echo ready; sleep 30")
    engine.shells.read(info.id, wait=5)
    begin = time.monotonic()
    outcome = engine.shells.kill(info.id, grace=0.3)
    assert 0.25 < time.monotonic() - begin < 3
    assert "then SIGKILL after 0.3 s" in outcome.message and outcome.killed >= 1


def test_kill_twice_and_kill_finished_are_calm(engine):
    done = start(engine, "exit 0")
    wait_ended(engine, done.id)
    assert engine.shells.kill(done.id).message == "bg1 already exited with 0; nothing to stop"
    running = start(engine, "sleep 30")
    engine.shells.kill(running.id)
    assert engine.shells.kill(running.id).message == "bg2 already killed; nothing to stop"


def test_kill_with_chosen_signal_and_kill_all(engine):
    info = start(engine, "trap 'echo got INT; exit 0' INT; echo ready; while true; do sleep 0.05; done")
    seen = ""
    while "ready" not in seen:  # the trap is set once it says so (a fixed sleep raced on a busy machine)
        seen += engine.shells.read(info.id, wait=5).stdout
    assert engine.shells.kill(info.id, sig="INT").message.startswith("bg1 stopped with SIGINT")
    out = engine.shells.read(info.id, wait=5)
    seen += out.stdout
    while not out.at_end:  # the reader drains what the shell printed as it went
        out = engine.shells.read(info.id, wait=5)
        seen += out.stdout
    assert "got INT" in seen
    for _ in range(3):
        start(engine, "sleep 30")
    outcomes = engine.shells.kill_all()
    assert [o.shell.id for o in outcomes] == ["bg2", "bg3", "bg4"]
    assert not any(i.running for i in engine.shells.list())


def test_leftovers_of_an_exited_shell_are_stopped_by_kill(engine):
    info = start(engine, "sleep 30 >/dev/null 2>&1 & echo started")
    assert wait_ended(engine, info.id).status == "exited 0"
    outcome = engine.shells.kill(info.id)
    assert outcome.message == "bg1 had exited with 0; stopped 1 leftover process"


def test_timeout_stops_the_shell(engine):
    info = start(engine, "echo begun; sleep 30", timeout=0.3)
    end = wait_ended(engine, info.id)
    assert end.status == "timed out" and log_text(end) == "begun\n"


def test_errors_are_one_line(engine):
    start(engine, "sleep 30", name="job")
    with pytest.raises(UnknownShell, match=r"^no background shell 'nope' \(known: job\)$"):
        engine.shells.read("nope")
    with pytest.raises(UsageProblem, match=r"^invalid filter regex '\(': "):
        engine.shells.read("job", pattern="(")
    with pytest.raises(UsageProblem, match="named 'job' is already running"):
        start(engine, "true", name="job")
    with pytest.raises(UsageProblem, match=r"^unknown signal 'SIGFOO'"):
        engine.shells.kill("job", sig="SIGFOO")
    with pytest.raises(UsageProblem, match="invalid shell name"):
        start(engine, "true", name="has space")
    engine.shells.max_shells = 1
    with pytest.raises(ShellLimitReached, match="the limit is 1"):
        start(engine, "true")
    with pytest.raises(PreExecError, match="working directory does not exist"):
        start(engine, "true", cwd="ghost-dir")
    assert engine.shells.info("job").running  # nothing above harmed the running shell


def test_background_shells_read_but_never_write_the_session(engine, tmp_path):
    engine.run_script(f"cd {tmp_path}; export FROM_SESSION=yes")
    info = start(engine, 'pwd; echo "$FROM_SESSION"; cd /; export LEAK=1; read x; echo "read=$?"')
    end = wait_ended(engine, info.id)
    assert log_text(end) == f"{tmp_path}\nyes\nread=1\n"
    assert engine.run_script('pwd; echo "[${LEAK-}]"').stdout == f"{tmp_path}\n[]\n"


def test_cleanup_forgets_finished_shells(engine):
    done = start(engine, "true")
    live = start(engine, "sleep 30")
    wait_ended(engine, done.id)
    assert engine.shells.cleanup() == [done.id]
    assert [i.id for i in engine.shells.list()] == [live.id]


def test_close_stops_everything(engine):
    for _ in range(3):
        start(engine, "trap '' TERM; sleep 30")
    begin = time.monotonic()
    engine.close()
    assert time.monotonic() - begin < 3  # stubborn shells are stopped in parallel
    assert not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR])  # the watchdog is gone too


def test_watchdog_stops_shells_when_the_owner_is_killed(tmp_path):
    owner = textwrap.dedent(f"""
        import os, signal
        from execmagic.engine import Engine, RunOptions
        engine = Engine(log_dir={str(tmp_path)!r}, options=RunOptions(grace=0.3))
        engine.start_background(engine.plan_script("sleep 300", save_session=False))
        engine.start_background(engine.plan_script("trap '' TERM; setsid sleep 301 & sleep 302", save_session=False))
        {until_running("sleep 300", "sleep 301", "sleep 302")}
        print("started", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", owner], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -signal.SIGKILL and proc.stdout == "started\n"
    wait_until(lambda: not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 3, "the watchdog to stop every shell")


def test_watchdog_reads_its_record_after_the_owner_is_killed(tmp_path):
    """Reports go to an in-memory record (no wake per report), compacted as it grows: whatever was
    registered when the owner died -- shells started before and after compactions -- is swept."""
    owner = textwrap.dedent(f"""
        import os, signal
        import execmagic.background.watchdog_link as link
        from execmagic.engine import Engine, RunOptions
        link._RECORD_COMPACT = 200  # compact every few reports
        engine = Engine(log_dir={str(tmp_path)!r}, options=RunOptions(grace=0.3))
        engine.start_background(engine.plan_script("sleep 300", save_session=False))
        for _ in range(10):
            engine.run_script("true")
        engine.start_background(engine.plan_script("setsid sleep 301 & sleep 302", save_session=False))
        for _ in range(10):
            engine.run_script("true")
        watchdog = engine.shells.watchdog_pid
        with open(f"/proc/{{watchdog}}/cmdline", "rb") as fh:
            print(len(fh.read().split(b"\\0")[:-1]), flush=True)  # python -m module grace record
        {until_running("sleep 300", "sleep 301", "sleep 302")}
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", owner], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -signal.SIGKILL and proc.stdout == "5\n", proc.stderr
    wait_until(lambda: not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 3, "the watchdog to stop every shell")


def test_watchdog_runs_a_killed_owners_cleanup_for_the_run_it_swept(tmp_path):
    """A run that started a job elsewhere names its cancel (``Command.on_owner_death``): the watchdog
    runs it after sweeping the run, and never for a run that had ended."""
    swept, ended = tmp_path / "swept", tmp_path / "ended"
    owner = textwrap.dedent(f"""
        import dataclasses, os, signal, threading
        from execmagic.engine import Engine, RunOptions
        engine = Engine(log_dir={str(tmp_path)!r}, options=RunOptions(grace=0.3))

        def with_cleanup(script, flag):
            plan = engine.plan_script(script)
            return dataclasses.replace(plan, command=dataclasses.replace(plan.command, on_owner_death=("touch", flag)))

        engine.run(with_cleanup("true", {str(ended)!r}))
        threading.Thread(target=engine.run, args=(with_cleanup("sleep 300", {str(swept)!r}),), daemon=True).start()
        {until_running("sleep 300")}
        print("started", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", owner], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -signal.SIGKILL and proc.stdout == "started\n", proc.stderr
    wait_until(lambda: swept.exists() and not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 5,
               "the watchdog to sweep the run and run its cleanup")
    assert not ended.exists()


# -- the reader outlives one shell's trouble ------------------------------------------------------
TICKER = "for i in $(seq 1 400); do echo tick $i; sleep 0.02; done"


def keeps_streaming(engine, shell_id):
    """Two reads in a row each find new lines: the reader is still draining this shell."""
    for _ in range(2):
        assert "tick" in engine.shells.read(shell_id, reader="check", wait=5).stdout


def test_start_refuses_timeouts_that_would_break_the_reader(engine):
    import math

    for bad in (math.nan, math.inf, 1e12, -1, 0, "5"):
        with pytest.raises(UsageProblem, match=r"^timeout must be"):
            start(engine, "sleep 30", timeout=bad)
    assert engine.shells.list() == []  # refused before anything started


def test_one_shells_reader_error_fails_that_shell_only(engine, monkeypatch):
    start(engine, TICKER, name="good")
    registry = engine.shells
    real_drain = registry._reader._drain

    def drain(shell, stream):  # a shell whose draining raises (a bug, a broken log), the others fine
        if shell.id == "bad":
            raise RuntimeError("boom")
        real_drain(shell, stream)

    monkeypatch.setattr(registry._reader, "_drain", drain)
    bad = start(engine, "echo first; sleep 30", name="bad")
    ended = wait_ended(engine, "bad")
    assert ended.status == "failed: reader error: RuntimeError: boom" and not ended.running
    assert not psutil.pid_exists(bad.pid) or psutil.Process(bad.pid).status() == psutil.STATUS_ZOMBIE
    keeps_streaming(engine, "good")
    assert engine.shells.kill("bad").message.startswith("bad already failed: reader error")


def test_the_reader_loop_goes_on_after_an_error_outside_any_shell(engine, monkeypatch):
    start(engine, TICKER, name="good")
    keeps_streaming(engine, "good")
    registry = engine.shells
    real_next_timeout = registry._reader._next_timeout
    failed = []

    def next_timeout():
        if not failed:
            failed.append(True)
            raise OverflowError("timeout is too large")
        return real_next_timeout()

    monkeypatch.setattr(registry._reader, "_next_timeout", next_timeout)
    keeps_streaming(engine, "good")
    assert failed and registry.reader_error == "OverflowError: timeout is too large"
    later = start(engine, "echo late")
    assert engine.shells.read(later.id, wait=5).stdout == "late\n"


def test_kill_after_an_exit_the_reader_missed_says_exited_not_killed(engine, monkeypatch):
    registry = engine.shells

    def blind(shell):  # a reader that never notices exits, as one that had stopped would
        if shell.exit_fd is not None:
            registry._reader._forget_fd(shell.exit_fd)
            shell.exit_fd = None

    monkeypatch.setattr(registry._reader, "_note_exit", blind)
    info = start(engine, "exit 3")
    proc = psutil.Process(info.pid)
    wait_until(lambda: proc.status() == psutil.STATUS_ZOMBIE, 10, "the shell to exit", interval=0.01)
    assert registry.info(info.id).running  # nobody reaped it yet
    outcome = registry.kill(info.id)
    assert outcome.message == f"{info.id} already exited with 3; nothing to stop"
    assert outcome.shell.status == "exited 3" and outcome.signalled == 0


def test_close_stops_a_foreground_run_another_thread_still_waits_on(engine, tmp_path):
    """An owner closing (an MCP server stopping, a kernel ending) while a foreground run is in progress
    in another thread: the watchdog, given EOF instead of 'q', stops that run too."""
    import threading

    started = tmp_path / "started"
    results = []
    runner = threading.Thread(target=lambda: results.append(
        engine.run_script(f"touch {started}; exec sleep 66")), daemon=True)
    start(engine, "exec sleep 67")  # the watchdog runs from here on
    runner.start()
    wait_until(started.exists, 20, "the foreground run to start")
    engine.close(0.3)
    runner.join(20)
    assert results and results[0].signal is not None  # it was stopped, not left to run its 66 s


def test_an_owner_killed_between_launch_and_report_still_has_the_run_swept(tmp_path):
    """The marker is told before the launch: an owner killed after its command started but before it
    reported the session (the window a busy machine widens) leaves nothing -- swept by marker."""
    owner = textwrap.dedent(f"""
        import os, signal
        from execmagic.engine import Engine
        from execmagic.process.launch import launch
        from execmagic.process.spec import Command
        engine = Engine(log_dir={str(tmp_path)!r})
        marker = engine.token + "-unreported"
        engine.shells.expect_foreground(marker)  # what Engine.run does before run_command launches
        launch(Command(argv=("bash", "-c", "setsid sleep 303 & sleep 304"), cwd={str(tmp_path)!r},
                       env=dict(os.environ), display="x"), marker)
        while len([p for p in os.listdir("/proc") if p.isdigit()]) and not any(
                b"sleep\\0" + b"303" in open(f"/proc/{{p}}/cmdline", "rb").read()
                for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{{p}}/cmdline")):
            pass
        os.kill(os.getpid(), signal.SIGKILL)  # no '+ SID' was ever reported
    """)
    proc = subprocess.run([sys.executable, "-c", owner], capture_output=True, text=True, timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    wait_until(lambda: not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR]), 3, "the watchdog to stop every shell")
