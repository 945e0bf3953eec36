"""Keeping one standby shell ready for the next run (see :mod:`..process.standby`).

After a session run ends, a worker thread starts the bash the next plain run would get (the
session's cwd and environment, as they are once this run's changes are in), a moment
later (:data:`REFILL_DELAY`), when the notebook has shown the result and waits for the
next cell.  A run takes it only if it fits
exactly -- the same cwd and environment, no options that change them, no input, and what
the process would hand a cold start (user, groups, capabilities, namespaces, limits,
scheduling...: see :mod:`..process.inherit`) -- so a ``cd``/``export`` (or a change to
``os.environ``, ``os.setgroups`` or ``unshare`` from Python) is never run with stale
state: the standby is discarded (never waiting on it: see :meth:`.Standby.discard`) and
the run starts cold.  After a few misses in a row
(every run sets ``--env``, say) only one run in :data:`RETRY_EVERY` refills, so a notebook
whose runs never fit does not pay for standbys it cannot use.
"""

from __future__ import annotations

import contextlib
import threading
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
#: A run that comes sooner starts cold and cancels it (the end of that run asks again).
REFILL_DELAY = 0.01
#: Seconds a run waits for a standby that is being started at that moment (less than a cold start would take).
_WAIT_FOR_MAKING = 0.05
#: Seconds :meth:`WarmShell.close` waits for a standby being started to be done.
_CLOSE_WAIT = 5.0


class WarmShell:
    """The engine's one standby: taken by a run that fits it, started again after a run by a worker thread.

    ``make`` starts a standby for the next plain run (``None``: it cannot now, e.g. the log folder
    cannot be written); it runs in the worker thread.
    """

    def __init__(self, make: Callable[[], Standby | None]) -> None:
        self._make = make
        self._cond = threading.Condition()
        self._ready: Standby | None = None
        self._wanted = self._making = self._closed = False
        self._worker: threading.Thread | None = None
        self._misses = 0
        self._skipped = 0
        self._generation = 0  # a drop() makes what is being started at that moment unwanted

    @property
    def ready(self) -> Standby | None:
        """The standby waiting for a run, if any (for tests and introspection)."""
        with self._cond:
            return self._ready

    def wait_ready(self, timeout: float) -> Standby | None:
        """The standby once one is ready (``None`` if none is on its way, or after ``timeout`` seconds)."""
        with self._cond:
            self._cond.wait_for(lambda: self._ready is not None or not (self._making or self._wanted), timeout)
            return self._ready

    def take(self, command: Command, ignore: frozenset[str]) -> Standby | None:
        """The standby, if ``command`` fits it (``ignore``: variables set per run); one that does not fit is
        discarded (its state would be stale)."""
        with self._cond:
            self._wanted = False  # one waiting for its delay is not started: this run ends by asking again
            if self._making:
                self._cond.wait_for(lambda: not self._making or self._closed, _WAIT_FOR_MAKING)
            standby, self._ready = self._ready, None
        if standby is None:
            return None
        if standby.fits(command, ignore):
            self._misses = 0
            return standby
        self._misses += 1
        standby.discard()
        return None

    def refill(self) -> None:
        """Have a standby started for the next run (in the worker; returns at once)."""
        with self._cond:
            if self._closed or self._ready is not None:
                return
            if self._misses >= MISSES_BEFORE_BACKOFF:
                self._skipped += 1
                if self._skipped % RETRY_EVERY:
                    return
            self._wanted = True
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="execmagic-standby", daemon=True)
                self._worker.start()
            self._cond.notify_all()

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wanted or self._closed)
                # then the delay, unless a run takes the wish back meanwhile
                self._cond.wait_for(lambda: not self._wanted or self._closed, REFILL_DELAY)
                if self._closed:
                    return
                if not self._wanted:
                    continue
                self._wanted, self._making = False, True
                generation = self._generation
            standby = None
            try:
                standby = self._make()
            finally:
                with self._cond:
                    self._making = False
                    if standby is None:  # it could not start (a broken locale, no bash): as good as a miss
                        self._misses += 1
                    # asked again meanwhile: the session may have changed since this one started
                    keep = (standby is not None and not self._closed and self._ready is None and not self._wanted
                            and self._generation == generation)
                    if keep:
                        self._ready = standby
                    self._cond.notify_all()
            if standby is not None and not keep:
                standby.discard()

    def drop(self) -> None:
        """Discard the standby waiting, if any, and the one being started (the next refill starts another)."""
        with self._cond:
            self._generation += 1
            self._wanted = False
            standby, self._ready = self._ready, None
        if standby is not None:
            standby.discard()

    def close(self) -> None:
        """Discard the standby and end the worker (after a standby it is starting is done and discarded)."""
        with self._cond:
            self._closed = True
            standby, self._ready = self._ready, None
            worker = self._worker
            self._cond.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join(_CLOSE_WAIT)
        if standby is not None:
            with contextlib.suppress(OSError):
                standby.discard()
