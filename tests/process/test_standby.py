"""The standby shell: the next bash started ahead, used only when it fits, never with stale state,
never outliving its owner, and indistinguishable from a cold ``bash -c`` in what a script sees."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pytest

from execmagic.engine import Engine, RunOptions
from execmagic.engine.engine import STANDBYS
from execmagic.engine.warm import MISSES_BEFORE_BACKOFF, RETRY_EVERY
from execmagic.process.pump import CancelToken
from execmagic.process.standby import SCRIPT_LIMIT, _env_with_default_signal, can_stand_by, idle_pids
from execmagic.process.stop import ignores
from processes import pid_alive
from waiting import wait_until

READY = 10.0  # seconds a standby may take to be started on a busy machine (an event is awaited, not slept)


def ready(engine):
    standby = engine.warm.wait_ready(READY)
    assert standby is not None, "no standby was started"
    return standby


def warm_pid(engine, script="echo $$"):
    """Run ``script`` (it prints its shell's pid) in the waiting standby; return (result, standby pid)."""
    pid = ready(engine).runner.pid
    return engine.run_script(script), pid


@pytest.fixture
def engine(engine):
    engine.standby = True  # on here even where EXECMAGIC_STANDBY=0 switched the default off (CI's second run)
    return engine


@pytest.fixture
def cold(tmp_path):
    engine = Engine(log_dir=str(tmp_path / "cold-logs"), options=RunOptions(grace=0.3))
    engine.standby = False
    yield engine
    engine.close()


def test_a_run_after_the_first_takes_the_standby(engine):
    engine.run_script("true")
    r, pid = warm_pid(engine)
    assert r.stdout == f"{pid}\n" and r.exit_code == 0
    ready(engine)  # and the next one is started after it


def test_a_standbys_output_pipes_are_ready_to_read_before_its_run(engine):
    """They are made non-blocking as it starts, in the keeper's thread (its run's pump reads them as they are)."""
    engine.run_script("true")
    standby = ready(engine)
    assert not os.get_blocking(standby.runner.stdout.fileno())
    assert not os.get_blocking(standby.runner.stderr.fileno())
    r = engine.run_script("head -c 300000 /dev/zero | tr '\\0' x; echo done >&2")
    assert len(r.stdout) == 300000 and r.stderr == "done\n" and r.exit_code == 0


# What a script sees: the same in a standby as in a cold bash -c.
SAME = {
    "lineno": "echo $LINENO\necho $LINENO",
    "args": 'echo "$0|$#|$*|$-"',
    "last-arg": 'echo "[$_]"',
    "execution-string": 'echo "[$BASH_EXECUTION_STRING]"',
    "shlvl": "echo $SHLVL",
    "options": "set -o | tr -s ' \\t' ' '; shopt | tr -s ' \\t' ' '",
    "variables": "compgen -v | grep -v -e '^BASH_' -e '^_$' -e '^PPID$' -e '^SHLVL$' -e '^RANDOM$' -e '^SECONDS$' "
                 "-e '^EPOCH' -e '^SRANDOM$' -e '^LINENO$' -e '^PIPESTATUS$' -e '^COLUMNS$' -e '^LINES$'",
    "functions-and-traps": "declare -F; trap -p | sed 's/ >> .*//'",
    "stdin": "cat; echo rc=$?",
    "exit": "echo before; exit 4; echo after",
    "return": "return 3; echo still",
    "not-found": "nosuchcommand_xyz; echo $?",
    "syntax-first-line": "if then",
    "syntax-later-line": "echo one\nif then\necho never",
    "unterminated": 'echo "open',
    "arith-error": "x=$(( 1 + )); echo after",
    "extglob": "shopt -s extglob\ncase ab in @(ab|cd)) echo matched;; esac",
    "errexit-inside": "set -e; false; echo never",
    "heredoc": "cat <<EOF\nhello $((1+1))\nEOF",
    "unicode": "echo 'héllo ✓'; printf '%s\\n' \"${#BASH_EXECUTION_STRING}\"",
    "exports": "export -p | grep -c . >/dev/null; env | grep -c '^EXECMAGIC_RUN='",
    # eval adds a level of indirection that xtrace shows ("++ echo" where bash -c shows "+ echo")
    "xtrace": "set -x; f() { :; }; f",
    "xtrace-long-option": "set -o xtrace\necho hi",
    "xtrace-combined": "set -eux; echo hi",
    "descriptors": "ls /proc/$$/fd",  # the runner's pipes are closed (no pipeline: bash holds its pipes a while)
    "looks-like-options": "-la",  # bash -c takes it for options; eval would run a command
    "plain": 'cd / && echo "$PWD" > /dev/null; ls -d / | cat; echo done # a comment',
}


@pytest.mark.parametrize("name", SAME)
def test_a_script_sees_what_it_would_in_a_cold_bash(name, engine, cold):
    script = SAME[name]
    engine.run_script("true")
    ready(engine)
    warm, expected = engine.run_script(script), cold.run_script(script)
    assert (warm.stdout, warm.stderr, warm.exit_code) == (expected.stdout, expected.stderr, expected.exit_code)
    assert warm.notes == expected.notes


@pytest.mark.parametrize("script", ["tar -xf /dev/null 2>/dev/null; chmod +x /dev/null 2>/dev/null; echo $$",
                                    "grep -x -e a /dev/null; echo $$", "echo --max-count; echo $$"])
def test_words_like_x_flags_of_other_commands_still_run_in_the_standby(engine, script):
    engine.run_script("true")
    r, pid = warm_pid(engine, script)
    assert r.stdout.endswith(f"{pid}\n")


def test_a_syntax_error_runs_cold_and_reads_as_bash_c_wrote_it(engine):
    engine.run_script("true")
    standby = ready(engine)
    r = engine.run_script("echo one\nif then\necho never")
    assert r.stdout == "one\n" and r.exit_code == 2
    assert r.stderr.startswith("bash: -c: line 2: syntax error near unexpected token `then'")
    assert "eval" not in r.stderr
    assert engine.run_script("echo $$").stdout == f"{standby.runner.pid}\n"  # it waited for the next run


@pytest.mark.parametrize("script", ["for i in 1; do echo $$; done", "echo $(echo $$)", "f() { echo $$; }; f"])
def test_a_script_that_is_not_plain_runs_cold_and_the_standby_waits(engine, script):
    """Only a script that surely parses runs in the standby (a syntax error would read as eval's); any other
    starts cold, and the standby is still there for the next run."""
    engine.run_script("true")
    standby = ready(engine)
    r = engine.run_script(script)
    assert r.exit_code == 0 and r.stdout != f"{standby.runner.pid}\n"
    assert engine.run_script("echo $$").stdout == f"{standby.runner.pid}\n"


@pytest.mark.parametrize("name", ["builtin", "exec", "printf", "read", ":", "eval"])
def test_no_standby_with_an_exported_function_that_would_take_over_its_boot_line(name):
    assert can_stand_by({"PATH": "/usr/bin"})
    assert not can_stand_by({"PATH": "/usr/bin", f"BASH_FUNC_{name}%%": "() { echo hijacked; }"})


def test_a_warning_bash_prints_as_it_starts_is_the_runs_as_in_a_cold_bash(engine, cold, monkeypatch):
    """A locale that is not installed: bash warns on stderr as it starts.  The standby still comes up, and
    the warning is in the run's stderr, as a cold run has it."""
    monkeypatch.setenv("LC_ALL", "xx_XX.UTF-8")
    engine.run_script("true")
    r, pid = warm_pid(engine, "echo $$")
    expected = cold.run_script("echo $$")
    assert r.stdout == f"{pid}\n"
    assert "setlocale" in expected.stderr and r.stderr == expected.stderr


def test_a_bash_put_on_path_since_the_standby_started_is_the_one_that_runs(engine, tmp_path, monkeypatch):
    first = tmp_path / "first"
    first.mkdir()
    monkeypatch.setenv("PATH", f"{first}:{os.environ['PATH']}")
    engine.run_script("true")
    standby = ready(engine)
    shutil.copy(shutil.which("bash", path=os.environ["PATH"].split(":", 1)[1]), first / "bash")
    r = engine.run_script("echo $$; readlink /proc/$$/exe")
    assert r.stdout.split("\n")[:2] != [str(standby.runner.pid), standby.program]
    assert r.stdout.split("\n")[1] == str(first / "bash")


def test_a_bash_replaced_in_place_since_the_standby_started_is_the_one_that_runs(engine, tmp_path, monkeypatch):
    """A package upgrade puts a new file at bash's path: a cold start runs the new one, so the standby (running
    the old one, now deleted) does not fit."""
    first = tmp_path / "first"
    first.mkdir()
    bash = shutil.which("bash")
    shutil.copy(bash, first / "bash")
    monkeypatch.setenv("PATH", f"{first}:{os.environ['PATH']}")
    engine.run_script("true")
    standby = ready(engine)
    shutil.copy(bash, tmp_path / "new-bash")
    os.replace(tmp_path / "new-bash", first / "bash")
    pid, exe = engine.run_script("echo $$; readlink /proc/$$/exe").stdout.splitlines()
    assert pid != str(standby.runner.pid) and exe == str(first / "bash")


def test_seconds_counts_from_the_commands_start_not_the_standbys(engine):
    """A cold ``bash -c`` starts ``$SECONDS`` at 0; the standby waited since an earlier second."""
    engine.run_script("true")
    for _ in range(3):
        standby = ready(engine)
        time.sleep(1.02 - time.time() % 1)  # into the clock's next second: bash counts whole seconds of it
        second = int(time.time())
        r = engine.run_script("echo $$ $SECONDS")
        if int(time.time()) == second:  # (on a machine so busy that the run took into the next: again)
            assert r.stdout == f"{standby.runner.pid} 0\n"
            return
    pytest.fail("no run ended within the second it started")


def test_an_environment_setting_seconds_gets_no_standby(engine, cold, monkeypatch):
    """``bash -c`` counts ``$SECONDS`` from the value it inherits; the standby's boot line counts from 0."""
    assert not can_stand_by({"PATH": "/usr/bin", "SECONDS": "100"})
    monkeypatch.setenv("SECONDS", "100")
    engine.run_script("true")
    assert engine.run_script("echo $SECONDS").stdout == cold.run_script("echo $SECONDS").stdout == "100\n"


def test_a_script_over_the_limit_runs_cold(engine):
    engine.run_script("true")
    standby = ready(engine)
    script = "# " + "x" * SCRIPT_LIMIT + "\necho $$"
    r = engine.run_script(script)
    assert r.exit_code == 0 and r.stdout != f"{standby.runner.pid}\n"


def test_a_script_with_a_nul_byte_fails_as_it_does_cold(engine, cold):
    engine.run_script("true")
    ready(engine)
    with pytest.raises(ValueError):
        cold.run_script("echo a\0b")
    with pytest.raises(ValueError):  # not run with the NUL dropped (bash's read drops it)
        engine.run_script("echo a\0b")


# -- never stale --------------------------------------------------------------------------------
def test_cd_and_export_reach_the_next_standby(engine, tmp_path):
    engine.run_script(f"cd {tmp_path} && export EXECMAGIC_T_STEP=one")
    r, pid = warm_pid(engine, 'echo "$$ $PWD $EXECMAGIC_T_STEP"')
    assert r.stdout == f"{pid} {tmp_path} one\n"
    engine.run_script("unset EXECMAGIC_T_STEP; cd /")
    # the one kept beside the one that run took was started before its cd: stale, the next run discards it.  The
    # refill's may be stale too (started while that run ran) or fresh (after it): the next run takes the first
    # fresh one, or starts cold if none is; every one before it is discarded
    waiting = [standby.runner.pid for standby in engine.warm.wait_full(READY)]
    r = engine.run_script('echo "$$ $PWD"; printenv EXECMAGIC_T_STEP || echo unset')
    taken = int(r.stdout.split()[0])
    assert r.stdout == f"{taken} /\nunset\n"
    passed = waiting[:waiting.index(taken)] if taken in waiting else waiting
    wait_until(lambda: not any(pid_alive(pid) for pid in passed), READY, "the stale standbys discarded")


def test_a_change_from_python_discards_the_standby(engine, monkeypatch, tmp_path):
    engine.run_script("true")
    standby = ready(engine)
    monkeypatch.setenv("EXECMAGIC_T_LATE", "from python")
    r = engine.run_script('echo "$$ $EXECMAGIC_T_LATE"')
    pid, value = r.stdout.split(" ", 1)
    assert value == "from python\n" and pid != str(standby.runner.pid)
    assert not pid_alive(standby.runner.pid)
    standby = ready(engine)  # a fresh one, with the new environment
    monkeypatch.chdir(tmp_path)  # the session follows the kernel's cwd until a run changes it
    pid, cwd = engine.run_script("echo $$; pwd").stdout.splitlines()
    assert cwd == str(tmp_path) and pid != str(standby.runner.pid)
    assert not pid_alive(standby.runner.pid)


def test_a_cwd_removed_and_made_again_is_not_run_in_the_old_one(engine, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    engine.run_script(f"cd {work}")
    ready(engine)
    work.rmdir()
    work.mkdir()  # the same path, another directory: a cold bash starts in the new one
    r = engine.run_script("touch made && echo made")
    assert (r.stdout, r.stderr, r.exit_code) == ("made\n", "", 0)
    assert (work / "made").exists()


def test_a_umask_set_from_python_reaches_the_run(engine):
    engine.run_script("true")
    ready(engine)
    old = os.umask(0o077)
    try:
        assert engine.run_script("umask").stdout == "0077\n"
    finally:
        os.umask(old)


def test_sigint_ignored_when_the_standby_starts_is_not_ignored_in_the_run(engine, cold):
    """A kernel ignores SIGINT between cells (the standby starts then) and handles it in a cell (runs start
    then): the run in the standby has SIGINT as a cold run started with it handled; a run made while it is
    ignored, as a cold one would ignore it, starts cold."""
    script = "echo $$; grep SigIgn /proc/$$/status"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        engine.run_script("true")
        standby = ready(engine)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        r, expected = engine.run_script(script), cold.run_script(script)
        assert r.stdout.split("\n")[0] == str(standby.runner.pid)
        assert r.stdout.split("\n")[1] == expected.stdout.split("\n")[1]
        standby = ready(engine)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        r, expected = engine.run_script(script), cold.run_script(script)
        assert r.stdout.split("\n")[0] != str(standby.runner.pid)
        assert r.stdout.split("\n")[1] == expected.stdout.split("\n")[1]  # ignored, as started cold
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_standby_started_as_a_cell_ends_ignores_sigint_as_its_record_says(engine):
    """A kernel puts SIGINT back to ignored as a cell ends, which may fall between a standby's record of what it
    inherits and its fork.  Whatever the timing, the runner ignores SIGINT exactly as recorded: one that ignored it
    unrecorded would take the next cell's run, and Ctrl-C would not reach the command.  Where env can put SIGINT
    back at its default, every runner has it so, as a run in a cell has it (one that raced is started again)."""
    can_default = _env_with_default_signal() is not None
    previous = signal.getsignal(signal.SIGINT)
    flips = 0
    try:
        for _ in range(15):
            signal.signal(signal.SIGINT, signal.default_int_handler)
            engine.run_script("true")  # the next standbys start as the "cell" flips below
            deadline = time.monotonic() + READY
            while len(engine.warm.wait_full(0)) < STANDBYS and time.monotonic() < deadline:
                flips += 1
                signal.signal(signal.SIGINT, signal.SIG_IGN if flips % 2 else signal.default_int_handler)
            for standby in engine.warm.wait_full(0):
                recorded = bool(standby.inherited.ignored & 1 << (signal.SIGINT - 1))
                assert ignores(standby.runner.pid, signal.SIGINT) == recorded
                assert not (recorded and can_default)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_resource_limit_set_from_python_reaches_the_run(engine):
    import resource

    engine.run_script("true")
    ready(engine)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256) - 1, hard))
    try:
        assert engine.run_script("ulimit -n").stdout == f"{min(soft, 256) - 1}\n"
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_two_runs_in_a_row_each_take_a_standby(engine):
    """Two are kept: the run right after a run (as "Run all" runs cells) finds the second while the first is
    made again."""
    engine.run_script("true")
    standbys = engine.warm.wait_full(READY)
    assert len(standbys) == STANDBYS == 2
    ran_in = [engine.run_script("echo $$").stdout for _ in standbys]
    assert ran_in == [f"{standby.runner.pid}\n" for standby in standbys]
    assert engine.warm.wait_ready(READY) is not None  # and more on their way


def test_a_run_from_a_thread_with_another_niceness_gets_that_niceness(engine):
    engine.run_script("true")
    ready(engine)
    results = []

    def nicer():  # niceness is per thread on Linux: this one only
        os.nice(1)
        results.append((engine.run_script("nice").stdout, os.getpriority(os.PRIO_PROCESS, 0)))

    thread = threading.Thread(target=nicer)
    thread.start()
    thread.join(60)
    (shown, mine), = results
    assert shown == f"{mine}\n"


@pytest.mark.parametrize("options", [{"env": {"EXECMAGIC_T_ONE": "1"}}, {"cwd": "/"}, {"input": "in\n"},
                                     {"isolated": True}, {"errexit": True}])
def test_options_that_change_the_run_start_it_cold(engine, options):
    engine.run_script("true")
    standby = ready(engine)
    r = engine.run_script("echo $$; cat", **options)
    assert r.exit_code == 0 and r.stdout.split("\n")[0] != str(standby.runner.pid)


def test_after_misses_in_a_row_standbys_are_started_only_now_and_then(engine):
    engine.run_script("true")
    for i in range(MISSES_BEFORE_BACKOFF):
        engine.warm.wait_full(READY)  # every one made since the last run ended: a miss if none fits
        os.environ["EXECMAGIC_T_CHURN"] = str(i)  # every run sees a changed environment: a miss
        engine.run_script("true")
    del os.environ["EXECMAGIC_T_CHURN"]
    assert engine.warm.wait_ready(READY) is None  # returns at once: none is on its way
    for _ in range(RETRY_EVERY):  # one in a while is tried again (and it fits now)
        engine.run_script("true")
        if engine.warm.wait_ready(READY) is not None:
            break
    ready(engine)


# -- stopping, killing, closing -----------------------------------------------------------------
@pytest.mark.parametrize("how", ["timeout", "cancel"])
def test_a_timeout_or_cancel_in_a_standby_leaves_nothing(engine, how):
    """The run is stopped with what it started (the autouse fixture proves nothing is left)."""
    engine.run_script("true")
    pid = ready(engine).runner.pid
    cancel = CancelToken()
    if how == "cancel":
        threading.Timer(0.3, cancel.cancel).start()
    options = RunOptions(timeout=0.3 if how == "timeout" else None, grace=0.2)
    r = engine.run_script("echo $$; sleep 30 & sleep 31", options=options, cancel=cancel)
    assert r.stdout == f"{pid}\n"
    assert (r.timed_out, r.interrupted) == ((True, False) if how == "timeout" else (False, True))
    assert not pid_alive(pid)


def test_a_standby_killed_from_outside_costs_nothing(engine):
    engine.run_script("true")
    standby = ready(engine)
    os.kill(standby.runner.pid, signal.SIGKILL)
    standby.runner.wait()
    r = engine.run_script("echo fine")
    assert r.stdout == "fine\n" and r.exit_code == 0


def test_an_interrupt_as_the_run_starts_leaves_no_standby_behind(engine, monkeypatch):
    import execmagic.process.foreground as foreground

    engine.run_script("true")
    standby = ready(engine)
    real = foreground.Births.now

    def interrupted():  # Ctrl-C lands while the run notes what exists before it starts
        monkeypatch.setattr(foreground.Births, "now", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(foreground.Births, "now", interrupted)
    with pytest.raises(KeyboardInterrupt):
        engine.run_script("echo never")
    assert not pid_alive(standby.runner.pid)
    assert idle_pids() == []


def test_a_forked_child_holding_on_does_not_cost_the_parent_its_standby(engine):
    """A child forked without exec (multiprocessing's fork start) inherits every descriptor: it must not keep
    the standby's pipes open (the check would wait for an end of input that never comes)."""
    engine.run_script("true")
    standby = ready(engine)
    hold_r, hold_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        os.close(hold_w)
        os.read(hold_r, 1)
        os._exit(0)
    os.close(hold_r)
    try:
        r = engine.run_script("echo $$")
        assert r.stdout == f"{standby.runner.pid}\n"
    finally:
        os.close(hold_w)
        os.waitpid(child, 0)


def test_a_forked_child_using_the_engine_leaves_the_parents_standby_run_alone(engine, tmp_path):
    """The child's copy of the standby is the parent's: the child neither kills it nor has a watchdog of its
    own sweep it when the child exits."""
    engine.run_script("true")
    standby = ready(engine)
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    results = []
    parent_run = threading.Thread(target=lambda: results.append(engine.run_script(f"read line < {fifo}; echo $$")))
    parent_run.start()
    # handed its script: the run is under way
    wait_until(lambda: standby._script_fd is None, READY, "the standby to be handed its script", interval=0.01)
    child = os.fork()
    if child == 0:  # pragma: no cover (the child)
        code = 0 if engine.run_script("echo child").stdout == "child\n" else 1
        os._exit(code)
    _, status = os.waitpid(child, 0)
    with open(fifo, "w") as fh:
        fh.write("go\n")
    parent_run.join(60)
    assert os.waitstatus_to_exitcode(status) == 0
    (r,) = results
    assert (r.stdout, r.exit_code, r.signal) == (f"{standby.runner.pid}\n", 0, None)


def test_close_and_switching_off_discard_them(engine):
    engine.run_script("true")
    standbys = engine.warm.wait_full(READY)
    assert len(standbys) == STANDBYS
    engine.standby = False
    assert not any(pid_alive(standby.runner.pid) for standby in standbys)
    engine.run_script("true")
    assert engine.warm.wait_ready(0.5) is None
    engine.standby = True
    engine.run_script("true")
    standbys = engine.warm.wait_full(READY)
    assert len(standbys) == STANDBYS
    engine.close()
    assert not any(pid_alive(standby.runner.pid) for standby in standbys)
    assert idle_pids() == []


def test_concurrent_runs_share_one_standby_and_each_get_their_own_output(engine):
    engine.run_script("true")
    ready(engine)
    results = {}

    def run(i):
        results[i] = engine.run_script(f"echo {i}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert {i: r.stdout for i, r in results.items()} == {i: f"{i}\n" for i in range(8)}


OWNER = textwrap.dedent("""
    import sys, threading
    from execmagic.engine import Engine
    engine = Engine(log_dir=sys.argv[1])
    engine.standby = True
    engine.run_script("true")
    standbys = engine.warm.wait_full(10)
    if sys.argv[2] == "running":
        threading.Thread(target=engine.run_script, args=("echo started; sleep 64",), daemon=True).start()
    else:
        print(*(standby.runner.pid for standby in standbys), flush=True)
    sys.stdin.read()
""")


def argv(proc):
    try:
        return proc.cmdline()
    except psutil.Error:  # gone, or a zombie between two looks
        return []


@pytest.mark.parametrize("state", ["idle", "running"])
def test_a_standby_never_outlives_an_owner_killed_with_sigkill(state, tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path / "logs"), state],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if state == "idle":
            pids = [int(pid) for pid in owner.stdout.readline().split()]
        else:  # the run in the standby, and its sleep
            pids = wait_until(lambda: [p.pid for p in psutil.Process(owner.pid).children(recursive=True)
                                       if argv(p)[:2] == ["sleep", "64"]], READY, "the run to start")
            pids.append(psutil.Process(pids[0]).ppid())
        assert pids and all(pid_alive(pid) for pid in pids)
    finally:
        owner.kill()
        owner.wait()
        owner.stdin.close()
        owner.stdout.close()
    psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)
    assert not any(pid_alive(pid) for pid in pids)


def test_switching_off_while_one_is_being_started_keeps_none(engine):
    """A standby asked for just before the switch is turned off never becomes the waiting one."""
    for _ in range(5):
        engine.standby = True
        engine.run_script("true")  # asks for a standby, started a moment later
        engine.standby = False
        assert engine.warm.wait_ready(READY) is None
        assert idle_pids() == []


def test_the_environment_is_compared_as_name_by_name():
    """fits()'s comparison of environments (a dict comparison where it can be) says what asking each name
    says: every variable of the run's not ignored is the standby's, with its value."""
    import random

    from execmagic.process.standby import _same_environment

    def by_name(env, mine, ignore):
        missing = object()
        return all(name in ignore or mine.get(name, missing) == value for name, value in env.items())

    rng = random.Random(7)
    names = ["A", "B", "C", "EXECMAGIC_STATE", "PATH"]
    for _ in range(5000):
        env = {name: rng.choice(["x", "y", ""]) for name in names if rng.random() < 0.6}
        mine = {name: rng.choice(["x", "y", ""]) for name in names if rng.random() < 0.6}
        ignore = frozenset(name for name in names if rng.random() < 0.3)
        assert _same_environment(env, mine, ignore) == by_name(env, mine, ignore), (env, mine, ignore)



def test_a_discarded_standby_writes_no_state_back(tmp_path, monkeypatch):
    """A standby is killed before its script pipe closes: an end of input would be an empty script, run to its end,
    and its session's state written back into the engine's folder, kept there (and the folder with it) for good."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the default location, under this test's folder
    engine = Engine(options=RunOptions(grace=0.3))
    engine.standby = True
    try:
        for _ in range(20):  # discarded a moment after a run, as a person's next cell with a cd comes: one ready,
            engine.run_script("true")  # one booting, or both ready
            time.sleep(0.05)  # (no event to await: the moment itself is what is tried)
            engine.warm.drop()
        engine.warm.wait_full(READY)  # one being started as it was dropped is discarded when up: after it
        assert not [name for name in os.listdir(engine.logs.path) if name.endswith(".state")]
    finally:
        engine.close(0.3)


def test_a_killed_runner_let_go_of_is_reaped_by_the_next_look_or_a_thread_if_still_running():
    """``reap_later`` wakes no thread: the next ``reap_killed`` (a standby's start, a run's) reaps what has ended,
    and hands what has not to a thread that waits for it."""
    from execmagic.process.standby_reap import reap_killed, reap_later

    ended = subprocess.Popen(["sleep", "60"])
    running = subprocess.Popen(["sleep", "60"])
    try:
        ended.kill()
        wait_until(lambda: psutil.Process(ended.pid).status() == psutil.STATUS_ZOMBIE, READY, "the zombie")
        reap_later(ended)
        reap_later(running)
        assert ended.returncode is None and running.returncode is None  # let go of: nobody waits yet
        reap_killed()
        assert ended.returncode == -signal.SIGKILL  # reaped there and then
        assert running.returncode is None  # still running: a thread waits for it
        running.kill()
        wait_until(lambda: running.returncode is not None, READY, "the thread to reap it")
    finally:
        for proc in (ended, running):
            if proc.returncode is None:
                proc.kill()
                proc.wait()
    assert not pid_alive(ended.pid) and not pid_alive(running.pid)
