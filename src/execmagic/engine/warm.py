"""Keeping standby shells ready for the next runs (see :mod:`..process.standby`).

After a session run ends, a worker thread starts the bash the next plain run would get (the
session's cwd and environment, as they are once this run's changes are in), a moment
later (:data:`REFILL_DELAY`), when the notebook has shown the result and waits for the
next cell.  A run takes one only if it fits
exactly -- the same cwd and environment, no options that change them, no input, and what
the process would hand a cold start (user, groups, capabilities, namespaces, limits,
scheduling...: see :mod:`..process.inherit`) -- so a ``cd``/``export`` (or a change to
``os.environ``, ``os.setgroups`` or ``unshare`` from Python) is never run with stale
state: the standby is discarded (never waiting on it: see :meth:`.Standby.discard`) and
the run starts cold.  After a few misses in a row
(every run sets ``--env``, say) only one run in :data:`RETRY_EVERY` refills, so a notebook
whose runs never fit does not pay for standbys it cannot use.

A run that comes right after one -- "Run all", a cell that runs two commands -- comes before that moment is
over (or before a sandboxed standby is up: bubblewrap's namespaces and mounts, the session's cgroup take some
30 ms), and with one standby alone it would find none and start bash itself, at twice the cost and more.  A
keeper so holds more than one (``depth``; the engine keeps two): the run right after a run takes the second
while the first is made again.  The wait is cut short when a run takes the last one waiting (or finds none):
runs then come back to back, and the next would find none, so the next is started at once -- while that run's
command runs (once it has its script: a start holds the lock its hand-off takes), not while its successor
starts -- one a run, each taken by the run after.  Each is checked as it is taken: a standby started before
a run that changed the session (a ``cd``) does not fit the run after it, and is discarded without counting
as a miss.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable

from ..process.spec import Command
from ..process.standby import Standby

__all__ = ["MISSES_BEFORE_BACKOFF", "REFILL_DELAY", "RETRY_EVERY", "WarmShell"]

#: Misses in a row after which standbys are started only now and then.
MISSES_BEFORE_BACKOFF = 3
#: While backing off, one refill in this many is made (a notebook that stops missing gets its standby back).
RETRY_EVERY = 8
#: Seconds after a run before its successor's standby is started: the owner is then most likely idle
#: (a kernel has sent its reply) -- started at once, it competes with the end of the cell for the CPU.
#: A run that comes sooner takes one kept beside it; one that takes the last (or finds none) has the next
#: started at once.
REFILL_DELAY = 0.01
#: Seconds a run waits for a standby that is being started at that moment (less than a cold start would take).
_WAIT_FOR_MAKING = 0.05
#: Seconds the worker waits for the standby a run took to be handed its script before it starts the next: its
#: start holds the lock that hand-off takes (no fork may inherit a pipe half made), some milliseconds the run
#: would wait.  A run that never hands it over (it died meanwhile: it is discarded) costs this much at most.
_HANDOFF_WAIT = 0.05
#: Seconds :meth:`WarmShell.close` waits for a standby being started to be done.
_CLOSE_WAIT = 5.0


class WarmShell:
    """The engine's standbys (one, unless ``depth`` says more): taken by a run that fits one, started again
    after a run by a worker thread, one after the other until ``depth`` are ready.

    ``make`` starts a standby for the next plain run (``None``: it cannot now, e.g. the log folder
    cannot be written); it runs in the worker thread.
    """

    def __init__(self, make: Callable[[], Standby | None], depth: int = 1) -> None:
        self._make = make
        self._depth = depth
        self._cond = threading.Condition()
        self._ready: list[tuple[int, Standby]] = []  # the oldest first, each with the runs ended before its start
        self._runs = 0  # how many runs have asked for a standby
        self._ended = 0  # how many had asked when the last one that asked again ended (a refill)
        self._looking = 0  # runs looking at the standbys they took out (they put back those left)
        self._handing: Standby | None = None  # the last one taken, until the worker saw it handed its script
        self._wanted = self._making = self._closed = False
        self._worker: threading.Thread | None = None
        self._misses = 0
        self._skipped = 0
        self._generation = 0  # a drop() makes what is being started at that moment unwanted
        self._at_once = False  # the wish waiting is to be met without the delay (no run's end to keep clear of)
        _KEEPERS.add(self)

    @property
    def ready(self) -> Standby | None:
        """The standby the next run takes, if any is waiting (for tests and introspection)."""
        with self._cond:
            return self._ready[0][1] if self._ready else None

    @property
    def all_ready(self) -> tuple[Standby, ...]:
        """Every standby waiting, the next run's first (for tests and introspection)."""
        with self._cond:
            return tuple(standby for _, standby in self._ready)

    def wait_ready(self, timeout: float) -> Standby | None:
        """The standby the next run takes once one is ready (``None`` if none is on its way, or after
        ``timeout`` seconds)."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._ready) or not (self._making or self._wanted), timeout)
            return self._ready[0][1] if self._ready else None

    def wait_full(self, timeout: float) -> tuple[Standby, ...]:
        """Every standby waiting once as many are ready as are kept, or none is on its way (or after ``timeout``
        seconds)."""
        with self._cond:
            self._cond.wait_for(lambda: len(self._ready) >= self._depth or not (self._making or self._wanted),
                                timeout)
            return tuple(standby for _, standby in self._ready)

    def take(self, command: Command, ignore: frozenset[str]) -> Standby | None:
        """The oldest standby that ``command`` fits (``ignore``: variables set per run); those before it that do
        not fit are discarded (their state would be stale), those after it wait for the next runs.  Taking the
        last one (or finding none) has the worker start the next at once, if one is wished.

        Only one started since the last run ended that does not fit counts as a miss: one started before, or
        while a run ran, may be stale because that run changed the session (a ``cd``), which says nothing of
        how runs fit."""
        with self._cond:
            if self._making and not self._ready:
                self._cond.wait_for(lambda: not self._making or self._closed, _WAIT_FOR_MAKING)
            ready, self._ready = self._ready, []
            runs, self._runs = self._runs, self._runs + 1
            generation = self._generation
            self._looking += 1
        taken, unfit, after = None, [], []
        try:
            for at, (epoch, standby) in enumerate(ready):
                if standby.fits(command, ignore):
                    taken, after = standby, ready[at + 1:]
                    break
                unfit.append((epoch, standby))
        finally:
            with self._cond:  # those started after it (and any the worker added meanwhile) wait, in order,
                if self._closed or self._generation != generation:  # unless dropped or closed meanwhile
                    unfit += after
                else:
                    self._ready = after + self._ready
                if taken is not None:  # before the worker is woken: it starts none before its hand-off
                    self._handing = taken
                self._looking -= 1
                if self._wanted:  # a wish waiting for its delay goes now if none is left; a worker with no wish
                    self._cond.notify_all()  # has nothing to see here (woken, it took the CPU from this run)
        if taken is not None:
            self._misses = 0
        elif any(epoch == runs for epoch, _ in unfit):
            self._misses += 1
        for _, standby in unfit:
            standby.discard()
        return taken

    def refill(self, at_once: bool = False) -> None:
        """Have a standby started for the next run (in the worker; returns at once).

        ``at_once``: without :data:`REFILL_DELAY` -- asked when no run has just ended (the first standby,
        started while the notebook waits for its first command), the delay would only make it later."""
        with self._cond:
            if self._closed or len(self._ready) >= self._depth:
                return
            if self._misses >= MISSES_BEFORE_BACKOFF:
                self._skipped += 1
                if self._skipped % RETRY_EVERY:
                    return
            self._wanted, self._ended = True, self._runs
            self._at_once = at_once
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="execmagic-standby", daemon=True)
                self._worker.start()
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wanted or self._closed)
                # then the delay, unless a drop takes the wish back, or a run took the last one meanwhile
                self._cond.wait_for(lambda: not self._wanted or self._closed or self._at_once or self._back_to_back(),
                                    REFILL_DELAY)
                if self._closed:
                    return
                if not self._wanted:
                    continue
                self._wanted, self._making, self._at_once = False, True, False
                generation, epoch = self._generation, self._ended
                handing, self._handing = self._handing, None
            standby = None
            try:
                if handing is not None:  # a run took one a moment ago: its hand-off first (see _HANDOFF_WAIT)
                    handing.handed.wait(_HANDOFF_WAIT)
                standby = self._make()
            finally:
                with self._cond:
                    self._making = False
                    if standby is None:  # it could not start (a broken locale, no bash): as good as a miss
                        self._misses += 1
                    # kept even if a run changed the session meanwhile: its epoch says so when it is taken
                    keep = (standby is not None and not self._closed and len(self._ready) < self._depth
                            and self._generation == generation)
                    if keep and standby is not None:
                        self._ready.append((epoch, standby))
                        # the next one, after the delay again (cut short if a run takes the last meanwhile)
                        self._wanted = len(self._ready) < self._depth
                    self._cond.notify_all()
            if standby is not None and not keep:
                standby.discard()

    def _back_to_back(self) -> bool:
        """A run has asked since the last one ended and none is left: the next run would find none (under
        ``_cond``)."""
        return not self._ready and not self._looking and self._runs != self._ended

    def drop(self) -> None:
        """Discard the standbys waiting, if any, and the one being started (the next refill starts another)."""
        with self._cond:
            self._generation += 1
            self._wanted = False
            standbys, self._ready = [standby for _, standby in self._ready], []
        for standby in standbys:
            standby.discard()

    def _forked(self) -> None:
        """In a child forked without exec (multiprocessing's fork start), start afresh: the parent's worker is
        not in it (a standby it was making would have every run wait for it), nor the parent's runs, and the
        standbys waiting are the parent's (:mod:`..process.standby` lets them go in the child).  The next
        refill starts a worker of the child's own."""
        self._cond = threading.Condition()  # the parent's lock may have been held by a thread not in the child
        self._ready, self._handing, self._worker = [], None, None
        self._wanted = self._making = self._at_once = False
        self._looking = 0

    def close(self) -> None:
        """Discard the standbys and end the worker (after a standby it is starting is done and discarded)."""
        with self._cond:
            self._closed = True
            standbys, self._ready = [standby for _, standby in self._ready], []
            worker = self._worker
            self._cond.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join(_CLOSE_WAIT)
        for standby in standbys:
            with contextlib.suppress(OSError):
                standby.discard()


#: Every keeper, for :func:`_after_fork_in_child`.
_KEEPERS: weakref.WeakSet[WarmShell] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for keeper in list(_KEEPERS):
        keeper._forked()


os.register_at_fork(after_in_child=_after_fork_in_child)
