"""The standby shell inside the sandbox: a confined run costs what an unconfined one does, and stays confined.

A standby stands in for one sandbox only: a confined run never takes one started outside the walls,
an unconfined run never takes one started inside them.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
from pathlib import Path

import psutil
import pytest

from execmagic.engine import Engine, RunOptions, warm
from execmagic.process.system import PIDFD
from waiting import wait_until

READY = 10.0  # seconds a standby may take to start on a busy machine (awaited, not slept)



@pytest.fixture
def place(sandbox_place):
    """The workspace and the fake home (``sandbox_place``, in conftest.py)."""
    return sandbox_place


@pytest.fixture
def engine(place, tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    engine.standby = True  # on even where EXECMAGIC_STANDBY=0 switched the default off (CI's other run)
    yield engine
    engine.close(0.3)


def test_a_confined_run_takes_a_standby_started_inside_the_sandbox(engine, place):
    ws, home = place
    box = engine.sandbox("workspace").sandbox
    first = engine.run_script("cd sub 2>/dev/null || mkdir sub && cd sub; export STAGE=one", sandbox=box)
    assert first.success and first.sandbox
    standby = engine.warm_for(box).wait_full(READY)[0]  # the one the next run takes, once none is being made
    assert standby is not None and engine.warm.ready is None  # started inside, for confined runs only
    r = engine.run_script("echo $$ $STAGE $PWD; touch made ~/x /etc/execmagic-x 2>&1 | sed 's/.*: //'", sandbox=box)
    pid, stage, cwd, *errors = r.stdout.split()
    assert pid == "2" or int(pid) < 100, r.stdout  # a pid of the sandbox's own namespace: it ran inside
    assert (stage, cwd) == ("one", f"{ws}/sub") and r.sandbox == first.sandbox
    assert errors == ["Read-only", "file", "system", "Read-only", "file", "system"]
    assert os.path.exists(f"{ws}/sub/made") and os.listdir(home) == []
    # the run was in it: its bwrap is gone a moment after (the run ends with the shell inside)
    wait_until(lambda: standby.runner.poll() is not None, READY, "the standby's bwrap to be gone")


def test_each_sandbox_and_the_outside_keep_a_standby_of_their_own(engine, place):
    """Alternating confined and unconfined runs each find their own standby: neither is ever taken by the other."""
    home = place[1]
    box = engine.sandbox("workspace").sandbox
    for i in range(3):
        engine.run_script("true")
        engine.run_script("true", sandbox=box)
        outside, (inside, *_) = engine.warm.wait_ready(READY), engine.warm_for(box).wait_full(READY)
        assert outside is not None and inside is not None and outside is not inside
        confined = engine.run_script(f"touch ~/never{i}; echo $?", sandbox=box)
        assert confined.stdout == "1\n"  # ran in the confined standby, whose bwrap is gone a moment after
        wait_until(lambda standby=inside: standby.runner.poll() is not None, READY, "its bwrap to be gone")
        assert outside.runner.poll() is None  # untouched, still waiting
        plain = engine.run_script(f"touch ~/plain{i}; echo $?")
        assert plain.stdout == "0\n" and plain.sandbox is None and outside.runner.poll() is not None
    assert sorted(os.listdir(home)) == ["plain0", "plain1", "plain2"]


#: What a run's bash was started with (its argv's NULs as spaces).
_CMDLINE = r"tr '\0' ' ' < /proc/$$/cmdline"


def _ran_in_a_standby(result) -> bool:
    """Whether ``result`` (of :data:`_CMDLINE`) came from a standby: its bash's argv is the boot line,
    a cold start's the script."""
    return "builtin read" in result.stdout


def test_a_sandboxed_run_right_after_a_run_takes_a_standby_too(engine, place):
    """A sandboxed standby takes far longer to start than a run: two are kept, so the run right after a run
    ("Run all") finds one ready while the other is started again."""
    box = engine.sandbox("workspace").sandbox
    engine.run_script("true", sandbox=box)
    assert len(engine.warm_for(box).wait_full(READY)) == 2
    for _ in range(2):
        first = engine.run_script(_CMDLINE, sandbox=box)
        second = engine.run_script(_CMDLINE, sandbox=box)  # at once: nothing was started since
        assert _ran_in_a_standby(first) and _ran_in_a_standby(second), (first.stdout, second.stdout)
        assert len(engine.warm_for(box).wait_full(READY)) == 2  # both started again


def test_a_standby_started_before_a_run_that_changed_the_session_is_not_used(engine, place):
    """The second standby was started before the run that took the first: after a ``cd`` and an ``export`` it
    is stale, discarded (not counted as a miss: the session changed, runs still fit)."""
    ws, _home = place
    box = engine.sandbox("workspace").sandbox
    engine.run_script("mkdir -p sub", sandbox=box)
    warm = engine.warm_for(box)
    stale = warm.wait_full(READY)
    assert len(stale) == 2
    engine.run_script("cd sub; export STAGE=two", sandbox=box)
    r = engine.run_script("echo $PWD $STAGE; " + _CMDLINE, sandbox=box)
    assert r.stdout.startswith(f"{ws}/sub two\n"), r.stdout
    wait_until(lambda: all(s.runner.poll() is not None for s in stale), READY, "both standbys to be gone")
    following = warm.wait_full(READY)
    assert len(following) == 2 and not set(following) & set(stale)
    assert warm._misses == 0
    assert _ran_in_a_standby(engine.run_script("echo $PWD $STAGE; " + _CMDLINE, sandbox=box))


def test_other_engines_logs_are_hidden_even_from_an_engine_logging_elsewhere(place, tmp_path, monkeypatch):
    """Where the temp folder is not the private /tmp (TMPDIR elsewhere), every engine's default log root is
    hidden, also from an engine whose own logs go to a folder the user chose."""
    import tempfile as temp

    shared = temp.mkdtemp(prefix="execmagic-tmpdir-", dir="/var/tmp")
    monkeypatch.setattr(temp, "tempdir", shared)
    other = Engine(options=RunOptions(grace=0.3, keep_logs=True))
    mine = Engine(log_dir=str(tmp_path / "mine"), options=RunOptions(grace=0.3))
    try:
        log = other.run_script("echo the-other-engines-secret").log_paths["stdout"]
        assert log.startswith(shared + "/")
        box = mine.sandbox("workspace").sandbox
        r = mine.run_script(f"cat {log}; ls {shared}/execmagic-{os.geteuid()}", sandbox=box)
        listed = r.stdout.split()  # only this run's own folder shows (its prelude and state are bound back)
        assert "the-other-engines-secret" not in r.stdout and os.path.basename(other.logs.path) not in listed
        assert "No such file" in r.stderr
    finally:
        other.close(0.3)
        mine.close(0.3)
        shutil.rmtree(shared, ignore_errors=True)


@pytest.mark.parametrize("standby", [True, False])
def test_of_the_engines_own_files_a_sandbox_may_write_only_its_state_folder(engine, standby):
    """The runtime folder (the prelude, unconfined runs' state files) stays read-only inside; the folder of
    sandboxed state files is writable there, and what is written in it reaches only the sandboxed session."""
    engine.standby = standby
    box = engine.sandbox("workspace").sandbox
    engine.run_script("true", sandbox=box)
    if standby:
        assert engine.warm_for(box).wait_ready(READY) is not None
    runtime = engine.logs.runtime()
    folder, prelude = os.path.join(runtime, "sandboxed"), engine._prelude
    assert prelude is not None and prelude.startswith("/dev/fd/")  # a sealed memory file, handed: no path
    r = engine.run_script(f'touch {folder}/x && echo state-ok; touch {runtime}/y 2>&1 | sed "s/.*: //"; '
                          f'{{ echo hi >> {prelude}; }} 2>&1 | sed "s/.*: //"; export ONLY_INSIDE=1', sandbox=box)
    # the shell's copy of the prelude's descriptor was closed as the prelude ended: nothing to write through
    assert r.stdout.splitlines() == ["state-ok", "Read-only file system", "No such file or directory"], r.stdout
    assert not os.path.exists(os.path.join(runtime, "y")) and not Path(prelude).read_text().endswith("hi\n")
    assert engine.run_script("echo ${ONLY_INSIDE:-unset}").stdout == "unset\n"
    assert engine.run_script("echo $ONLY_INSIDE", sandbox=box).stdout == "1\n"


def test_what_a_sandbox_plants_at_its_next_state_file_is_replaced(engine):
    """The folder of sandboxed state files is writable inside: a run can plant a fifo (or a link) where the
    next run's state goes.  The engine makes that file afresh before the run, so the next run's shell never
    blocks writing its state into a fifo nobody reads, and its session is saved."""
    engine.standby = False
    box = engine.sandbox("workspace").sandbox
    plan = engine.plan_script("export AFTER=planted-fifo", sandbox=box)
    assert plan.state_path is not None
    os.mkfifo(plan.state_path)  # what a sandboxed run could do: it sees its own state files' names
    r = engine.run(plan, options=RunOptions(grace=0.3, timeout=20))
    assert r.success and not r.timed_out, r
    assert engine.run_script("echo $AFTER", sandbox=box).stdout == "planted-fifo\n"


def _held_namespaces() -> set[str]:
    """The namespaces this process holds open by a descriptor (``mnt:[4026532…]``...)."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{fd}")
            if re.fullmatch(r"(mnt|net|ipc|uts|cgroup):\[\d+\]", link):
                held.add(link)
    return held


def _namespaces_of(standby) -> set[str]:
    """The mount and network namespaces of a waiting sandboxed standby (its bwrap's pid 1's)."""
    pid = standby.runner.pid
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
        (init,) = fh.read().split()
    return {os.readlink(f"/proc/{init}/ns/{ns}") for ns in ("mnt", "net")}


def test_a_sandboxed_standbys_namespaces_are_held_past_its_run_then_let_go(engine, monkeypatch):
    """Tearing a sandbox's namespaces down (its mounts, its network) is kept off the run's path: they are held
    from the standby's start until after its run -- let go when the next standby starts, and at close."""
    box = engine.sandbox("workspace").sandbox
    if box.walls is None:
        pytest.skip(f"no session holder here: {engine.sandbox('workspace').notes}")
    engine.run_script("true", sandbox=box)
    assert engine.warm_for(box).wait_full(READY)
    # the run leaves one standby, so the next starts after the refill's delay, when the run's namespaces are
    # let go: long here, so that a busy machine cannot let them go before they are looked at
    monkeypatch.setattr(warm, "REFILL_DELAY", 2.0)
    r = engine.run_script("readlink /proc/self/ns/mnt /proc/self/ns/net", sandbox=box)
    inside = set(r.stdout.split())
    assert len(inside) == 2 and not inside & {os.readlink(f"/proc/self/ns/{ns}") for ns in ("mnt", "net")}, r
    assert inside <= _held_namespaces()  # its pid 1 has exited: this process alone keeps them
    following = engine.warm_for(box).wait_full(READY)
    assert following
    # the next standbys', and no others (a number let go may be the next namespace's again)
    mounts_and_networks = {ns for ns in _held_namespaces() if ns.startswith(("mnt:", "net:"))}
    assert mounts_and_networks == set().union(*map(_namespaces_of, following))
    engine.close(0.3)
    assert not mounts_and_networks & _held_namespaces()


def test_a_child_forked_without_exec_holds_none_of_the_kept_namespaces(engine):
    """multiprocessing's fork start copies every descriptor: the child lets go of the held namespaces at once
    (else a long-lived worker would keep each sandbox's mounts for its whole life)."""
    box = engine.sandbox("workspace").sandbox
    if box.walls is None:
        pytest.skip(f"no session holder here: {engine.sandbox('workspace').notes}")
    engine.run_script("true", sandbox=box)
    standby = engine.warm_for(box).wait_ready(READY)
    assert standby is not None and _namespaces_of(standby) <= _held_namespaces()
    pid = os.fork()
    if pid == 0:  # the child: report how many namespaces it holds, and nothing else
        os._exit(min(len(_held_namespaces()), 100))
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _ready_standby(engine, box):
    """The sandboxed standby the next run takes, once started."""
    engine.run_script("true", sandbox=box)
    standby = engine.warm_for(box).wait_ready(READY)
    assert standby is not None
    return standby


def _cold_then_in_a_standby(engine, script: str):
    """``script`` run in the sandbox cold, then in a standby (proved to have taken it): both results."""
    box = engine.sandbox("workspace").sandbox
    engine.standby = False
    cold = engine.run_script(script, sandbox=box)
    engine.standby = True
    standby = _ready_standby(engine, box)
    warm = engine.run_script(script, sandbox=box)
    wait_until(lambda: standby.runner.poll() is not None, READY, "the standby to have run it")
    return cold, warm


def _bwrap_pid_1(standby) -> int:
    """The pid of a waiting sandboxed standby's bwrap pid 1 (its monitor's only child)."""
    pid = standby.runner.pid
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
        (init,) = fh.read().split()
    return int(init)


def test_a_sandboxed_run_ends_with_its_shell_not_with_bwrap(engine):
    """A run in a sandboxed standby is over when its shell has ended and its output is read: it waits neither for
    bwrap's pid 1 to reap the shell nor for its monitor to exit after it (two wake-ups more on a busy machine).
    Held still here, they would keep the run until its timeout."""
    if not PIDFD:
        pytest.skip("no pidfd here: a sandboxed run ends as bwrap tells it")
    box = engine.sandbox("workspace").sandbox
    standby = _ready_standby(engine, box)
    init = _bwrap_pid_1(standby)
    os.kill(init, signal.SIGSTOP)
    try:
        r = engine.run_script("echo out; echo err >&2; exit 3", sandbox=box, options=RunOptions(grace=0.3, timeout=5))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(init, signal.SIGCONT)
    assert (r.stdout, r.stderr, r.exit_code, r.signal, r.timed_out) == ("out\n", "err\n", 3, None, False), r
    assert not any(note.startswith("stopped") for note in r.notes), r.notes
    wait_until(lambda: standby.runner.poll() is not None, READY, "the standby's bwrap to be gone")


def test_the_monitor_of_a_run_that_ended_with_its_shell_is_reaped_by_the_next_start(engine):
    """bwrap's monitor, killed as the run ended with its shell, is reaped by the keeper's thread as it starts the
    next standby a moment later (no thread of its own woken at the end of every run): no zombie is left."""
    if not PIDFD:
        pytest.skip("no pidfd here: a sandboxed run ends as bwrap tells it")
    box = engine.sandbox("workspace").sandbox
    monitor = _ready_standby(engine, box).runner
    assert engine.run_script("true", sandbox=box).success
    engine.warm_for(box).wait_full(READY)
    # read, never polled here: returncode is set by whoever reaped it
    wait_until(lambda: monitor.returncode is not None, READY, "the monitor to be reaped")
    assert not os.path.exists(f"/proc/{monitor.pid}") or psutil.Process(monitor.pid).ppid() != os.getpid()


@pytest.mark.parametrize("script", ["exit 3", "kill -KILL $$", "kill -TERM $$", "kill -SEGV $$",
                                    "exec sh -c 'exit 7'", "trap 'exit 5' EXIT; true"])
def test_how_a_sandboxed_standbys_shell_ended_reads_as_from_a_cold_start(engine, script):
    """The status a run that ended with its shell reads is bwrap's: an exit code, 128 + N for a signal N."""
    cold, warm = _cold_then_in_a_standby(engine, script)
    assert (warm.exit_code, warm.signal, warm.stdout, warm.stderr) == (cold.exit_code, cold.signal, "", ""), script


def test_what_a_sandboxed_standbys_shell_says_as_it_starts_reaches_its_run(engine):
    """bash warns as it starts (a locale that is not installed) before the standby takes a script: its run shows
    it, on the stream a cold start writes it to."""
    box = engine.sandbox("workspace").sandbox
    engine.run_script("export LC_ALL=xx_XX.UTF-8", sandbox=box)
    engine.standby = False
    cold = engine.run_script(_CMDLINE, sandbox=box)
    engine.standby = True
    _ready_standby(engine, box)
    warm = engine.run_script(_CMDLINE, sandbox=box)
    assert _ran_in_a_standby(warm) and not _ran_in_a_standby(cold)
    assert "setlocale" in cold.stderr and warm.stderr == cold.stderr


_HELD = "stopped 2 processes that still held the output open after the command exited"
_LEFT = "stopped 2 processes left running in the background by the command"


@pytest.mark.parametrize(("script", "cold_said", "warm_said"), [
    ("sleep 30 &", _HELD, _HELD),
    # a cold start's bwrap pid 1 holds the output while it waits for what was left: a standby's does not
    ("sleep 30 > /dev/null 2>&1 &", _HELD, _LEFT),
    ("setsid sleep 30 > /dev/null 2>&1 &", _HELD, _LEFT),
])
def test_what_a_sandboxed_standbys_run_leaves_running_is_stopped(engine, script, cold_said, warm_said):
    """What a run leaves running inside is stopped (with bwrap's pid 1, which waits for it), and said."""
    cold, warm = _cold_then_in_a_standby(engine, script)
    assert (cold.exit_code, cold.notes, warm.exit_code, warm.notes) == (0, (cold_said,), 0, (warm_said,))


#: Descriptors a kernel may hold open (files, sockets): past ``select()``'s 1024, which takes none beyond.
_MANY = 1100


@contextlib.contextmanager
def _holding_many_descriptors():
    """This process holds :data:`_MANY` descriptors more (every one it opens next is numbered past them)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = _MANY + len(os.listdir("/proc/self/fd")) + 256
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the descriptor limit here is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    held = [os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC) for _ in range(_MANY)]
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_process_holding_over_a_thousand_descriptors_runs_in_sandboxed_standbys(engine):
    """Each wait on one descriptor (a standby saying it is up, bwrap's monitor ending, the session's holder
    starting) takes any number: a kernel with many files open still gets its sandbox and its standbys."""
    with _holding_many_descriptors():
        box = engine.sandbox("workspace").sandbox
        standby = _ready_standby(engine, box)
        r = engine.run_script("sleep 30 > /dev/null 2>&1 &", sandbox=box)  # bwrap's monitor is waited for
        assert (r.exit_code, r.notes) == (0, (_LEFT,)), r
        wait_until(lambda: standby.runner.poll() is not None, READY, "the standby that ran it to be gone")
        assert engine.warm_for(box).wait_ready(READY) is not None
