"""Foreground runs through the engine: real processes, real pipes, real signals; no IPython."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from execmagic.engine import RunOptions, UsageProblem
from processes import pid_alive

FAST = RunOptions(grace=0.3)


def test_engine_imports_no_ipython():
    code = (
        "import sys, execmagic.engine as e;"
        "r = e.Engine(log_dir=sys.argv[1]).run_script('echo ok');"
        "assert r.stdout == 'ok\\n', r;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('IPython', 'traitlets', 'ipykernel')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code, "/tmp"], check=True, timeout=30)


def test_argv_run_keeps_streams_apart(engine, py):
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    r = engine.run_argv(py(code))
    assert (r.stdout, r.stderr, r.exit_code, r.success) == ("out\n", "err\n", 3, False)
    assert r.duration_ms >= 0 and r.started_at
    assert r.log_paths == {} and os.listdir(engine.logs.path) == []  # the result holds it all: no file
    r = engine.run_argv(py(code), options=RunOptions(keep_logs=True))
    assert r.log_paths["stdout"].endswith(".stdout.log")


def test_script_run_and_exit_codes(engine):
    assert engine.run_script("echo hi").stdout == "hi\n"
    assert engine.run_script("exit 7").exit_code == 7
    r = engine.run_script("kill -KILL $$")
    assert (r.exit_code, r.signal, r.outcome()) == (137, 9, "killed by SIGKILL")


@pytest.mark.parametrize(
    "language, script",
    [
        ("bash", "echo $((6*7))"),
        ("sh", "echo 42"),
        ("python", "print(6*7)"),
        ("python3", "print(6*7)"),
        pytest.param("node", "console.log(6*7)", marks=pytest.mark.skipif(not __import__("shutil").which("node"), reason="no node")),
        pytest.param("javascript", "console.log(6*7)", marks=pytest.mark.skipif(not __import__("shutil").which("node"), reason="no node")),
        ("perl", "print 6*7, qq(\\n);") if __import__("shutil").which("perl") else pytest.param("perl", "", marks=pytest.mark.skip),
    ],
)
def test_languages(engine, language, script):
    r = engine.run_script(script, language)
    assert (r.stdout, r.exit_code) == ("42\n", 0), r


def test_any_interpreter_on_path_gets_a_script_file(engine, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    interp = bindir / "myinterp"
    interp.write_text('#!/bin/sh\necho "interpreting $1"; cat "$1"\n')
    interp.chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    r = engine.run_script("line one\n", "myinterp", env=env)
    assert r.stdout.startswith("interpreting ") and r.stdout.endswith("line one\n")


def test_unknown_language_is_a_usage_problem(engine):
    with pytest.raises(UsageProblem, match=r"^exec: unknown language 'cobol-nope'.*\(EINVAL\)$"):
        engine.plan_script("x", "cobol-nope")


def test_stdin_is_closed(engine):
    start = time.monotonic()
    r = engine.run_script('read x; echo "got:[$x] rc=$?"; cat; echo done')
    assert r.stdout == "got:[] rc=1\ndone\n"
    assert time.monotonic() - start < 2


def test_input_reaches_stdin(engine):
    r = engine.run_script("read a; read b; echo $b-$a", input="one\ntwo\n")
    assert r.stdout == "two-one\n"
    big = "x" * 1_000_000
    r = engine.run_argv(["wc", "-c"], input=big)
    assert r.stdout.strip() == "1000000"


def test_input_to_a_command_that_does_not_read(engine):
    r = engine.run_argv(["true"], input="y" * 2_000_000)
    assert r.exit_code == 0


def test_env_merge_and_clear_env(engine, monkeypatch):
    monkeypatch.setenv("EXECMAGIC_T_BASE", "base")
    r = engine.run_argv(["sh", "-c", 'echo "$EXECMAGIC_T_BASE $EXTRA"'], env={"EXTRA": "x-${EXECMAGIC_T_BASE}"})
    assert r.stdout == "base x-base\n"
    r = engine.run_argv(["/usr/bin/env"], env={"ONLY": "1"}, clear_env=True)
    names = sorted(line.split("=", 1)[0] for line in r.stdout.splitlines())
    assert names == ["EXECMAGIC_RUN", "ONLY"]


def test_params_in_argv_and_script(engine):
    r = engine.run_argv(["printf", "%s|", "{a}", "{b}"], params={"a": "x y", "b": "; ls"})
    assert r.stdout == "x y|; ls|"
    r = engine.run_script("printf '%s|' {a} {b}; awk 'BEGIN {print 1}'", params={"a": "x y", "b": "; ls"})
    assert r.stdout == "x y|; ls|1\n"


@pytest.mark.parametrize(
    "make, error, code",
    [
        (lambda e, t: e.run_argv(["nosuchcmd-xyz"]), "exec: nosuchcmd-xyz not found in PATH (ENOENT)", 127),
        (lambda e, t: e.run_script("nosuchcmd-xyz --flag"), "exec: nosuchcmd-xyz not found in PATH (ENOENT)", 127),
        (lambda e, t: e.run_argv(["ls"], cwd="data/ghost"), "exec: working directory does not exist 'data/ghost' (ENOENT)", 1),
        (lambda e, t: e.run_argv(["ls"], cwd=str(t / "file")), "exec: working directory is not a directory '{t}/file' (ENOTDIR)", 1),
        (lambda e, t: e.run_argv(["./private.sh"], cwd=str(t)), "exec: permission denied './private.sh' (EACCES)", 126),
        (lambda e, t: e.run_argv(["./ghost.sh"], cwd=str(t)), "exec: no such file './ghost.sh' (ENOENT)", 127),
        (lambda e, t: e.run_script("./private.sh", cwd=str(t)), "exec: permission denied './private.sh' (EACCES)", 126),
        (lambda e, t: e.run_script("1", "node", env={"PATH": str(t)}), "exec: node not found in PATH (ENOENT)", 127),
        # a name the system refuses as too long is said so (not "does not exist"), and shown cut
        (lambda e, t: e.run_argv(["true"], cwd="d" * 300),
         f"exec: working directory name too long '{'d' * 80}…' (300 characters) (ENAMETOOLONG)", 1),
        (lambda e, t: e.run_argv(["true"], cwd="d/" * 3000),
         f"exec: working directory name too long '{'d/' * 40}…' (6000 characters) (ENAMETOOLONG)", 1),
        (lambda e, t: e.run_argv(["x" * 300]), f"exec: {'x' * 80}… (300 characters) not found in PATH (ENOENT)", 127),
    ],
)
def test_pre_execution_errors(engine, tmp_path, make, error, code):
    (tmp_path / "file").write_text("")
    (tmp_path / "private.sh").write_text("#!/bin/sh\necho hi\n")
    r = make(engine, tmp_path)
    assert r.error == error.replace("{t}", str(tmp_path))
    assert (r.exit_code, r.success) == (code, False)
    assert r.outcome() == r.error


def test_malformed_env_entry_is_a_usage_problem():
    from execmagic.engine import parse_env_entry

    assert parse_env_entry("A=b=c") == ("A", "b=c")
    for bad in ("NOEQUALS", "=v", "1X=v", "A-B=v"):
        with pytest.raises(UsageProblem, match=r"^exec: malformed env entry .*\(EINVAL\)$"):
            parse_env_entry(bad)


def test_split_multibyte_character_and_bad_bytes(engine, py):
    code = (
        "import os, time\n"
        "os.write(1, b'price: \\xe2\\x82'); time.sleep(0.3); os.write(1, b'\\xac ok\\n')\n"
        "os.write(1, b'bad: \\xff\\xfe end\\n')\n"
    )
    chunks = []
    r = engine.run_argv(py(code), on_output=lambda s, t: chunks.append(t))
    assert r.stdout == "price: € ok\nbad: \ufffd\ufffd end\n"
    assert "".join(chunks) == r.stdout
    assert len(chunks) >= 2  # the first part was delivered before the rest was written
    assert not r.binary


def test_binary_output_is_flagged_not_dumped(engine):
    chunks = []
    r = engine.run_argv(["head", "-c", "20000", "/dev/urandom"], on_output=lambda s, t: chunks.append(t))
    assert r.binary and r.stdout_capture.bytes == 20000
    assert "binary output" in r.stdout and len(r.stdout) < 300
    assert os.path.getsize(r.log_paths["stdout"]) == 20000
    assert sum(len(c) for c in chunks) < 300


def test_carriage_return_progress_collapses_in_the_result(engine):
    r = engine.run_script(r"printf '10%%\r50%%\r100%%\ndone\r\n'")
    assert r.stdout == "100%\ndone\n"


def test_100mb_output_bounded_memory_and_complete_log(engine):
    me = psutil.Process()
    before = me.memory_info().rss
    seen = [0]
    r = engine.run_script(
        "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 100000000",
        on_output=lambda s, t: seen.__setitem__(0, seen[0] + len(t)),
    )
    growth = me.memory_info().rss - before
    assert r.exit_code == 0 and r.stdout_capture.bytes == 100_000_000
    assert os.path.getsize(r.log_paths["stdout"]) == 100_000_000
    assert seen[0] == 100_000_000
    assert r.truncated and "omitted from the middle" in r.stdout_capture.text
    assert len(r.stdout_capture.text) < 1_100_000
    assert growth < 50_000_000, f"memory grew by {growth / 1e6:.1f} MB"  # nothing read back from the log yet
    assert "whole_text" not in vars(r.stdout_capture)


def test_timeout_keeps_partial_output_and_leaves_no_survivors(engine):
    start = time.monotonic()
    r = engine.run_script("echo started; sleep 30 & sleep 31", options=RunOptions(timeout=0.5, grace=0.3))
    assert time.monotonic() - start < 3
    assert r.timed_out and r.exit_code == 124 and not r.success
    assert r.outcome() == "timed out after 0.5 s"
    assert r.stdout == "started\n"
    assert any("at the timeout" in n for n in r.notes)


def test_grandchild_holding_pipes_does_not_hang(engine):
    start = time.monotonic()
    r = engine.run_argv(["sh", "-c", "sleep 30 & echo hi"])
    elapsed = time.monotonic() - start
    assert r.stdout == "hi\n" and r.exit_code == 0
    # not the grandchild's 30 s: the drain (0.25 s) and a TERM end it.  A hang check, not a speed target:
    # under load (CI's standby-off run, started cold) this once took 0.9 s against a bound of 0.8
    assert elapsed < 10, elapsed
    assert any("held the output open" in n for n in r.notes)


@pytest.mark.parametrize("look", ["pids handed out", "long run", "many pids"])
def test_what_a_run_left_is_found_however_its_new_processes_are_told(engine, look, monkeypatch, tmp_path):
    """A quick run's new processes are the pids handed out meanwhile; a long run, or one that saw many pids
    handed out, lists /proc instead.  Each way, a leftover in the session and one that left it are stopped."""
    from execmagic.process import leftovers

    if look == "long run":
        monkeypatch.setattr(leftovers, "QUICK", 0.0)
    elif look == "many pids":
        monkeypatch.setattr(leftovers, "RANGE_LIMIT", 0)
    fifo = tmp_path / "left"
    os.mkfifo(fifo)
    r = engine.run_script(f"sleep 30 >/dev/null 2>&1 & echo $!; setsid sh -c 'echo out > {fifo}; exec sleep 31' "
                          f">/dev/null 2>&1 < /dev/null & read left < {fifo}; echo $!")  # read: it has left
    assert r.exit_code == 0
    assert any("left running" in n for n in r.notes), r.notes
    assert not any(pid_alive(int(pid)) for pid in r.stdout.split())


HOP = r"""
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
/* A new pid every 0.2 ms for 5 s, never there when looked for by pid; holds argv[2] open while any lives. */
int main(int argc, char **argv) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    open(argv[2], O_WRONLY);
    for (int told = 0;; told = 1) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= 5) return 0;
        pid_t child = fork();
        if (child != 0) _exit(child < 0);
        if (!told) { int fd = open(argv[1], O_WRONLY); write(fd, "hopping\n", 8); close(fd); }
        usleep(200);
    }
}
"""


@pytest.fixture(scope="module")
def hop(tmp_path_factory):
    """A program that keeps changing its pid (compiled here: a script forks too slowly to slip by)."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc to build the pid-changing program")
    folder = tmp_path_factory.mktemp("hop")
    (folder / "hop.c").write_text(HOP)
    subprocess.run(["gcc", "-O2", "-o", str(folder / "hop"), str(folder / "hop.c")], check=True)
    return folder / "hop"


@pytest.mark.parametrize("standby", [False, True])
def test_a_leftover_that_keeps_changing_its_pid_is_stopped(engine, standby, tmp_path, hop):
    """It slips between the looks that list what is left, but stays in the command's process group, which
    the unreaped leader keeps ours: the group is killed even when no look finds it."""
    engine.standby = standby
    os.mkfifo(tmp_path / "hopping")
    os.mkfifo(tmp_path / "alive")
    alive = os.open(tmp_path / "alive", os.O_RDONLY | os.O_NONBLOCK)  # its end of file: no hop is left
    try:
        if standby:
            engine.run_script("true")
            engine.warm.wait_ready(10)
        r = engine.run_script(f"{hop} {tmp_path / 'hopping'} {tmp_path / 'alive'} >/dev/null 2>&1 & "
                              f"read started < {tmp_path / 'hopping'}")
        assert r.exit_code == 0
        assert select.select([alive], [], [], 3)[0] and os.read(alive, 1) == b"", "it is still hopping"
    finally:
        os.close(alive)


def test_detached_leftover_is_stopped_too(engine):
    r = engine.run_script("nohup sleep 30 >/dev/null 2>&1 &")
    assert r.exit_code == 0
    assert any("left running" in n for n in r.notes)


@pytest.mark.parametrize("pidfd", [True, False])
def test_a_leftover_that_dropped_the_marker_is_stopped_too(engine, pidfd, monkeypatch):
    """The command has exited, its session is found by number; no member carries the marker (``env -u``,
    or an environment unreadable for the instant of an exec) -- the unreaped leader is the proof that the
    session is ours, so the leftover is stopped all the same (it was left running)."""
    if not pidfd:
        monkeypatch.setattr("execmagic.process.pump.pidfd_open", lambda pid: None)
    r = engine.run_script("env -u EXECMAGIC_RUN sleep 30 >/dev/null 2>&1 & sleep 0.2")
    assert r.exit_code == 0
    assert any("left running" in n for n in r.notes), r.notes


def test_term_ignoring_child_is_killed_after_grace(engine):
    start = time.monotonic()
    r = engine.run_script("trap '' TERM; echo ready; sleep 30", options=RunOptions(timeout=0.3, grace=0.3))
    elapsed = time.monotonic() - start
    assert r.timed_out and r.stdout == "ready\n"
    assert any("needed SIGKILL" in n for n in r.notes), r.notes
    assert 0.55 < elapsed < 3


def test_interrupt_is_forwarded_and_nothing_survives(engine):
    timer = threading.Timer(0.4, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        r = engine.run_script("echo going; sleep 30 & sleep 31; echo never")
    finally:
        timer.cancel()
    assert r.interrupted and not r.success and r.outcome() == "interrupted"
    assert r.stdout == "going\n"
    assert r.exit_code == 130


def test_check_raises_typed_error(engine):
    from execmagic.engine import CommandFailed

    assert engine.run_script("true").check().success
    with pytest.raises(CommandFailed, match=r"^exit 2 in .*: exit 2$"):
        engine.run_script("exit 2").check()


def test_output_callbacks_are_coalesced(engine):
    calls = []
    r = engine.run_script("for i in $(seq 20000); do echo line $i; done", on_output=lambda s, t: calls.append(t))
    assert r.stdout.count("\n") == 20000
    assert len(calls) < 50, len(calls)
