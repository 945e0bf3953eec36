"""The standby keeper's bookkeeping (:class:`execmagic.engine.warm.WarmShell`), with stand-ins for standbys.

What a standby is and does is tested with real shells (tests/process/test_standby.py, the sandboxed ones in
test_sandboxed_standby.py); here only which one a run takes, which are discarded, when misses count, and when
the next is started.  The stand-ins fit a command whose cwd is the one they were made with, as a real standby does.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading

import execmagic.engine.warm as warm_module
from execmagic.engine.warm import WarmShell
from execmagic.process.spec import Command
from waiting import wait_until

READY = 10.0  # seconds the worker may take on a busy machine (awaited, not slept)


class _Standin:
    """What the keeper uses of a standby: whether a command fits it, its discard, and whether it was handed its
    script (set by the run that took it: :func:`_take`)."""

    def __init__(self, cwd: str, name: int, on_fits=None, handed_when_made=()) -> None:
        self.cwd, self.name, self.discarded = cwd, name, False
        self._on_fits = on_fits
        self.handed = threading.Event()
        self.handed_when_made = handed_when_made  # whether each one made before it had been handed its script

    def fits(self, command: Command, ignore: frozenset[str]) -> bool:
        if self._on_fits is not None:
            self._on_fits()
        return command.cwd == self.cwd

    def discard(self) -> None:
        self.discarded = True


class _Session:
    """Makes stand-ins for the session's current cwd, numbered as they are made."""

    def __init__(self) -> None:
        self.cwd = "/one"
        self.made: list[_Standin] = []
        self._names = itertools.count(1)
        self.on_fits = None

    def make(self) -> _Standin:
        standby = _Standin(self.cwd, next(self._names), self.on_fits,
                           tuple(made.handed.is_set() for made in self.made))
        self.made.append(standby)
        return standby

    def command(self) -> Command:
        return Command(argv=("bash", "-c", "true"), cwd=self.cwd, env={}, display="true")


def _take(warm: WarmShell, session: _Session):
    """What a run does first: take a standby and hand it its script."""
    taken = warm.take(session.command(), frozenset())
    if taken is not None:
        taken.handed.set()
    return taken


def _run(warm: WarmShell, session: _Session):
    """What a run does: take a standby, hand it its script, then ask for the next one."""
    taken = _take(warm, session)
    warm.refill()
    return taken


def test_two_are_kept_and_the_oldest_is_taken_first():
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        first, second = warm.wait_full(READY)
        assert (first.name, second.name) == (1, 2)
        assert _run(warm, session) is first
        assert _run(warm, session) is second  # at once, before another is made: the second one
        assert len(warm.wait_full(READY)) == 2 and not any(s.discarded for s in session.made)
    finally:
        warm.close()
    assert all(s.discarded for s in session.made[2:])


def test_one_made_before_a_session_change_is_discarded_and_no_miss():
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        first, second = warm.wait_full(READY)
        assert _run(warm, session) is first
        session.cwd = "/two"  # what the run did (a cd): the second standby is stale
        taken = _run(warm, session)
        assert taken is None and second.discarded and warm._misses == 0
        following = warm.wait_full(READY)
        assert [s.cwd for s in following] == ["/two", "/two"]
        assert _run(warm, session) is following[0]
    finally:
        warm.close()


def test_those_made_after_the_last_run_that_do_not_fit_count_as_misses():
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        warm.wait_full(READY)
        other = Command(argv=("bash", "-c", "true"), cwd="/elsewhere", env={}, display="true")
        assert warm.take(other, frozenset()) is None and warm._misses == 1
    finally:
        warm.close()


def test_a_close_while_a_run_takes_one_leaves_none_behind():
    """The keeper is closed (or dropped) while a run looks at its standbys: those it would have put back are
    discarded, not kept by a keeper that is closed."""
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    warm.refill()
    first, second = warm.wait_full(READY)
    closing = threading.Thread(target=warm.close)
    first._on_fits = lambda: (closing.start(), closing.join(READY))  # close as the first is looked at
    assert warm.take(session.command(), frozenset()) is first
    assert second.discarded and warm.ready is None


def _slow_refills(monkeypatch):
    """A refill waits as long as a test may take: only a run that leaves none can start the next before it."""
    monkeypatch.setattr(warm_module, "REFILL_DELAY", 3600.0)


def test_runs_back_to_back_each_find_one_made_while_the_run_before_ran(monkeypatch):
    """Two are kept; the run that takes the last one has the next started at once, while it runs (not after
    the delay), so the run right after it finds one too -- and a run that leaves one starts none early."""
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        first, second = warm.wait_full(READY)
        _slow_refills(monkeypatch)
        assert _run(warm, session) is first  # one is left: the next is made after the delay, not now
        assert len(session.made) == 2
        assert _take(warm, session) is second  # the last one: the next is made at once
        during = warm.wait_ready(READY)
        assert during is not None and during.name == 3  # before this run ends (asks again)
        warm.refill()
        for name in (3, 4, 5):  # and so on, one made while each run runs
            assert _take(warm, session) is session.made[name - 1]
            assert warm.wait_ready(READY) is session.made[name]
            warm.refill()
        assert not any(s.discarded for s in session.made)
    finally:
        warm.close()


def test_a_refill_asked_at_once_is_made_without_the_delay_and_only_the_first(monkeypatch):
    """The first standby, asked for before any run (no run's end to keep clear of), is started without the
    delay; the one kept beside it waits for the delay as usual."""
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        _slow_refills(monkeypatch)
        warm.refill(at_once=True)
        first = warm.wait_ready(READY)
        assert first is not None and first.name == 1
        assert _take(warm, session) is first  # the last one taken: the next is made at once, as ever
        assert warm.wait_ready(READY) is session.made[1]
    finally:
        warm.close()


def test_one_made_while_a_run_changed_the_session_is_discarded_and_no_miss(monkeypatch):
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        warm.wait_full(READY)
        _slow_refills(monkeypatch)
        _run(warm, session)
        assert _take(warm, session) is not None  # the last: the next is made at once
        during = warm.wait_ready(READY)
        assert during is not None and during.cwd == "/one"
        session.cwd = "/two"  # what the run did (a cd), after its successor was started
        warm.refill()
        assert _take(warm, session) is None
        assert during.discarded and warm._misses == 0
    finally:
        warm.close()


def test_the_next_is_started_only_once_the_one_taken_has_its_script(monkeypatch):
    """Starting one holds the lock a hand-off takes: the run that took the last one would wait for that start."""
    session = _Session()
    warm = WarmShell(session.make, depth=2)  # type: ignore[arg-type]
    try:
        warm.refill()
        warm.wait_full(READY)
        _slow_refills(monkeypatch)
        monkeypatch.setattr(warm_module, "_HANDOFF_WAIT", 3600.0)  # however late this thread looks
        _run(warm, session)
        taken = warm.take(session.command(), frozenset())  # the last: the next is wished at once, not yet made
        wait_until(lambda: warm._making or len(session.made) > 2, READY, "the worker to start the next", interval=0)
        assert len(session.made) == 2  # it waits for the hand-off
        taken.handed.set()
        made = warm.wait_ready(READY)
        assert made is not None and made.handed_when_made == (True, True)
    finally:
        warm.close()


def _ended(pid: int) -> tuple[int] | None:
    """``(wait status,)`` once the child ``pid`` ended (reaped), else ``None``."""
    done, status = os.waitpid(pid, os.WNOHANG)
    return (status,) if done else None


def test_a_child_forked_while_a_standby_is_made_runs_without_waiting_and_keeps_its_own(monkeypatch):
    """A child forked without exec (multiprocessing's fork start) while the worker makes a standby: its runs do
    not wait for that standby (the worker is not in the child: it would never come), and a refill there starts a
    worker of the child's own.  The child says how it went in its exit status."""
    session = _Session()
    parent = os.getpid()
    making, gate = threading.Event(), threading.Event()

    def make():
        if os.getpid() == parent:  # the parent's worker is held inside its make
            making.set()
            gate.wait(READY)
        return session.make()

    monkeypatch.setattr(warm_module, "_WAIT_FOR_MAKING", 3600.0)  # a child that waits is seen to hang
    warm = WarmShell(make)  # type: ignore[arg-type]
    child = None
    try:
        warm.refill()
        assert making.wait(READY)
        child = os.fork()
        if child == 0:  # the child: no pytest here, only an exit status
            status = 1
            try:
                if warm.take(session.command(), frozenset()) is None:
                    status = 2
                    warm.refill()
                    if warm.wait_ready(READY) is not None:
                        status = 0
            finally:
                os._exit(status)
        (status,) = wait_until(lambda: _ended(child), READY, "the forked child to end")
        child = None
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        if child:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
        gate.set()
        warm.close()

