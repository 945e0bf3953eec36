"""A session id is a pid, and pids are reused (here they wrap at /proc/sys/kernel/pid_max, 32768 on many
systems: minutes on a busy machine).  Stopping by session id must never reach a session that is no
longer ours: after our leader is reaped, a session is ours only while a member carries our marker.

Also the order of what the watchdog is told: "+ SID" before "- SID", always, or it keeps a stale SID and,
when its owner dies, stops whatever process got that number."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from execmagic.background.registry import ShellRegistry
from execmagic.process import stop
from execmagic.process.launch import MARKER_VAR
from execmagic.process.spec import Command
from execmagic.process.stop import remaining, stop_tree
from execmagic.process.system import ENVIRON_OF_OTHERS
from waiting import wait_until

pytestmark = pytest.mark.skipif(not ENVIRON_OF_OTHERS, reason="needs other processes' environments (Linux)")


def session_leader(marker: str | None) -> subprocess.Popen[bytes]:
    """A process leading a session of its own: what a reused number would lead."""
    env = {k: v for k, v in os.environ.items() if k != MARKER_VAR}
    if marker is not None:
        env[MARKER_VAR] = marker
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env, start_new_session=True)


def test_a_session_that_is_not_ours_any_more_is_left_alone():
    stranger = session_leader(None)  # as if it had been given the number of our reaped leader
    try:
        assert remaining(stranger.pid, "ours-123") == []
        report = stop_tree(stranger.pid, marker="ours-123", grace=0.2)
        assert report.signalled == () and stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


def test_a_session_whose_members_carry_our_marker_is_stopped_after_its_leader_is_gone():
    ours = session_leader("ours-456")
    try:
        assert [p.pid for p in remaining(ours.pid, "ours-456")] == [ours.pid]
        report = stop_tree(ours.pid, marker="ours-456", grace=0.2)  # no leader handle: by session and marker
        assert report.signalled == (ours.pid,)
        assert ours.wait(timeout=5) == -signal.SIGTERM
    finally:
        if ours.poll() is None:
            ours.kill()
            ours.wait()


def test_a_member_caught_in_an_exec_still_proves_the_session_ours(monkeypatch):
    """In the middle of ``execve`` a process's environment reads empty: when that member is all that is
    left of a shell (``cmd &`` as the shell exits), the stop must wait for an answer, not pass it by.
    The member here reads empty for 20 ms (``env -i``), then execs into one that carries the marker; the
    waits are made long, for a busy machine to run those two execs in."""
    monkeypatch.setattr(stop, "_EXEC_WAITS", (0.002, 0.008, 0.04, 0.2, 1.0, 4.0))
    script = f"sleep 0.02; exec env {MARKER_VAR}=ours-789 sleep 30"
    member = subprocess.Popen(["env", "-i", "sh", "-c", script], start_new_session=True)
    try:
        wait_until(lambda: not psutil.Process(member.pid).environ(), 10, "the member to read empty")
        assert [p.pid for p in remaining(member.pid, "ours-789")] == [member.pid]
    finally:
        member.kill()
        member.wait()


def test_a_session_whose_members_never_say_is_left_alone():
    stranger = subprocess.Popen(["env", "-i", "sleep", "30"], start_new_session=True)  # an empty environment
    try:
        wait_until(lambda: not psutil.Process(stranger.pid).environ(), 10, "the stranger to read empty")
        assert remaining(stranger.pid, "ours-123") == []
    finally:
        stranger.kill()
        stranger.wait()


def test_the_watchdog_hears_of_a_shell_before_it_hears_of_its_end(tmp_path):
    registry = ShellRegistry(log_dir=lambda: str(tmp_path / "logs"), grace=0.3)
    told: list[str] = []
    link = registry._watchdog
    real_report = link._report  # every + and - report passes here, into the record or the pipe

    def record(line: str) -> None:
        told.append(line)
        real_report(line)

    link._report = record  # type: ignore[method-assign]
    try:
        env = dict(os.environ)
        for _ in range(30):  # shells that end at once: their end races their start
            registry.start(Command(argv=("true",), cwd=str(tmp_path), env=env, display="true"), marker_prefix="t")
        # an exit is noticed and told under the registry's condition, which list() takes: once none
        # runs, every end was told
        wait_until(lambda: not any(info.running for info in registry.list()), 20, "every shell to end")
    finally:
        registry.close()
    seen: set[str] = set()
    for line in told:
        kind, sid = line.split()[:2]
        if kind == "+":
            seen.add(sid)
        elif kind == "-":  # ('*'/'~' lines name a marker before its launch, not a session)
            assert sid in seen, f"'- {sid}' before '+ {sid}': {told}"
    assert len(seen) == 30 and sum(line.startswith("-") for line in told) == 30


def test_a_process_that_ignores_the_signal_gets_the_next_one_without_waiting_the_grace():
    """``cmd &`` in a shell without job control ignores SIGINT: the stop button's SIGINT cannot reach it,
    so it gets SIGTERM at once instead of after a grace period (here a minute; the stop takes far less).
    Before SIGKILL the grace is always waited (tests/process/test_foreground.py: a TERM-ignoring child)."""
    from execmagic.process.stop import ignores

    deaf = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                             "print('ready', flush=True); time.sleep(60)"],
                            stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert deaf.stdout is not None and deaf.stdout.readline() == b"ready\n"
        assert ignores(deaf.pid, signal.SIGINT) and not ignores(deaf.pid, signal.SIGTERM)
        began = time.monotonic()
        report = stop_tree(deaf.pid, leader=deaf, ladder=(signal.SIGINT, signal.SIGTERM), grace=60)
        assert time.monotonic() - began < 30  # half the grace: SIGTERM came without waiting for it
        assert deaf.returncode == -signal.SIGTERM and report.killed == ()
    finally:
        if deaf.poll() is None:
            deaf.kill()
            deaf.wait()


def test_the_stop_button_reaches_a_background_child_of_the_command_at_once(engine):
    from execmagic.engine import RunOptions
    from execmagic.process.pump import CancelToken

    cancel = CancelToken()
    plan = engine.plan_script("sleep 30 & echo started; sleep 31")
    began = time.monotonic()
    result = engine.run(plan, options=RunOptions(grace=60), cancel=cancel,
                        on_output=lambda stream, text: cancel.cancel())  # the stop button, once it runs
    assert result.interrupted and result.stdout == "started\n"
    assert time.monotonic() - began < 30  # the ignored SIGINT did not cost the minute of grace
