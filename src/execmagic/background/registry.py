"""Background shells: start, read only what is new, filter, wait, stop, list.

(Over 400 lines, on purpose: :class:`ShellRegistry` is the one owner of every shell's mutable state, behind
one condition; splitting its methods apart would spread that lock's rules over several modules.)

The registry is the bookkeeping: ids and names, the limit, reads with per-reader cursors, kills,
cleanup and close.  What it delegates, each to a module of its own:

- where a shell runs: a :class:`~.backends.base.Backend` (local processes by default);
- draining every shell's output into its log files: the one :class:`~.reader.ShellReader` thread;
- what a read returns from the log files: the pure functions of :mod:`.cursors`;
- telling the watchdog what to stop if this process dies: :class:`~.watchdog_link.WatchdogLink`.

A ``threading.Condition`` guards every shell's state; the reader notifies it when output or an
exit arrives, so ``read(wait=...)`` never polls.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import signal as signal_module
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..process import checks
from ..process.errors import ShellLimitReached, UnknownShell, UsageProblem, shown_value
from ..process.plural import counted
from ..process.results import KillOutcome, ShellInfo, ShellOutput, signal_name
from ..process.spec import Command
from ..process.stop import StopReport
from .backends.base import STREAMS, Backend, Handle
from .backends.local import LocalBackend
from .reader import ShellReader
from .watchdog_link import WatchdogLink

# The shells' own modules (.shell, .cursors and its regex costing: 3.5 ms) are imported by the methods that
# start or read a shell: every engine makes a registry, and a notebook's first command starts none.
if TYPE_CHECKING:
    from .shell import Shell, Stream

__all__ = ["STREAMS", "ShellRegistry", "kill_many", "parse_signal"]

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def parse_signal(name: str | int) -> int:
    """``"TERM"``, ``"SIGTERM"``, ``"15"`` or ``15`` → 15; anything else is a one-line usage problem."""
    if isinstance(name, int) or str(name).isdigit():
        number = int(name)
        if number in {s.value for s in signal_module.Signals}:
            return number
    else:
        upper = str(name).upper()
        upper = upper if upper.startswith("SIG") else "SIG" + upper
        if upper in signal_module.Signals.__members__:
            return int(signal_module.Signals[upper])
    raise UsageProblem(f"unknown signal {shown_value(name)} (try TERM, INT, HUP or KILL)")


class ShellRegistry:
    """The background shells of one owner (a kernel, a program, an agent).

    ``log_dir`` says where each new shell's logs go (asked per shell: the owner's log directory
    may move).  ``max_shells`` bounds how many may run at once; ``grace`` is the default time
    between TERM and KILL; ``watchdog`` guards shells against this process dying; ``backend``
    runs them (local processes unless told otherwise).
    """

    def __init__(self, *, log_dir: Callable[[], str], max_shells: int = 32, grace: float = 2.0,
                 watchdog: bool = True, backend: Backend | None = None) -> None:
        self._log_dir = log_dir
        self.max_shells = max_shells
        self.grace = grace
        self.backend: Backend = backend if backend is not None else LocalBackend()
        self._shells: dict[str, Shell] = {}
        self._counter = 0
        self._launches = 0
        self._cond = threading.Condition()
        self._closed = False
        self._watchdog = WatchdogLink(enabled=watchdog, grace=lambda: self.grace, closed=lambda: self._closed,
                                      live=self._live_guards)
        self._reader = ShellReader(self._cond, shells=lambda: self._shells.values(), closed=lambda: self._closed,
                                   on_exit=lambda shell: self._watchdog.ended(shell.handle.guard),
                                   stop=lambda shell: self._stop(shell, signal_module.SIGTERM, self.grace))
        #: Told ``(shell_id, signal)`` before a kill; returns what to tell the outcome (the audit log).
        self.on_kill: Callable[[str, int | str], Callable[[KillOutcome], None]] | None = None

    @property
    def reader_error(self) -> str | None:
        """The last error that broke the reader loop itself (the supervisor went on after it)."""
        return self._reader.error

    # -- starting -------------------------------------------------------------------
    def _next_id(self) -> str:
        while True:
            self._counter += 1
            candidate = f"bg{self._counter}"
            if candidate not in self._shells:
                return candidate

    def _check_can_start(self, name: str | None) -> None:
        """Refuse before anything starts: a closed registry, a bad or busy name, the limit reached."""
        if self._closed:
            raise UsageProblem("the background shell registry is closed")
        if name is not None:
            if not _NAME.fullmatch(name):
                raise UsageProblem(f"invalid shell name {shown_value(name)}: use letters, digits, '_', '-' or '.',"
                                   " starting with a letter, at most 64 characters")
            if name in self._shells and self._shells[name].running:
                raise UsageProblem(f"a background shell named {name!r} is already running;"
                                   " pick another name or stop it first")
        running = sum(1 for s in self._shells.values() if s.running)
        if running >= self.max_shells:
            raise ShellLimitReached(running, self.max_shells)

    def start(self, command: Command, *, marker_prefix: str, name: str | None = None,
              timeout: float | None = None, backend: Backend | None = None,
              on_end: Callable[[int | None], int | None] | None = None) -> ShellInfo:
        """Start ``command`` (an engine :class:`~execmagic.process.spec.Command`) in the background,
        on ``backend`` (default: :attr:`backend`, local processes).  ``on_end`` is asked once, as it is seen
        to end, which line of its script failed (see :attr:`.Shell.on_end`).

        Raises :class:`UsageProblem` for a bad or duplicate name, :class:`ShellLimitReached`
        past ``max_shells``, and :class:`~execmagic.process.errors.PreExecError` when it cannot start at all.
        """
        from .shell import Shell

        timeout = checks.timeout(timeout)  # before the shell joins the reader: nan/inf would break its waits
        name = checks.optional_text(name, "name")
        runs_on = backend if backend is not None else self.backend
        with self._cond:
            self._check_can_start(name)
            shell_id = name or self._next_id()
            label, logs = self._open_logs(shell_id)
            marker = f"{marker_prefix}-{label}"
            # guarded from its first instant (a cluster job outlives us by design: not told)
            expected = self._watchdog.expect(marker) if isinstance(runs_on, LocalBackend) else (lambda: None)
            try:
                handle = runs_on.start(command, marker=marker, log_paths={n: p for n, (p, _) in logs.items()},
                                       timeout=timeout, shell_id=shell_id)
            except BaseException:
                _close_logs(logs)
                expected()
                raise
            try:
                shell = self._add(Shell(shell_id, handle, command.display, command.cwd, marker,
                                        self._streams(handle, logs), timeout, backend=runs_on.name, on_end=on_end))
            finally:
                expected()  # a no-op once the shell was reported started
        return shell.info()

    def adopt(self, handle: Handle, *, backend: str, shell_id: str, command: str, cwd: str, marker: str,
              timeout: float | None = None, started_at: str | None = None) -> ShellInfo:
        """Take over a job started earlier, maybe by another owner (a cluster job a restarted kernel
        found again): its output is read again from the start into new logs.  A job already here is
        not taken twice; a busy ``shell_id`` gets the job id appended."""
        from .shell import Shell

        with self._cond:
            known = next((s for s in self._shells.values()
                          if s.backend == backend and s.handle.job_id == handle.job_id), None)
            if known is not None or self._closed:
                handle.detach()
                for fd in handle.streams.values():  # ours since we were handed the handle
                    with contextlib.suppress(OSError):
                        os.close(fd)
                if known is not None:
                    return known.info()
                raise UsageProblem("the background shell registry is closed")
            if not _NAME.fullmatch(shell_id):
                shell_id = f"{backend}{handle.job_id}"
            if shell_id in self._shells:
                shell_id = f"{shell_id}-{handle.job_id}"
            _, logs = self._open_logs(shell_id)
            shell = self._add(Shell(shell_id, handle, command, cwd, marker, self._streams(handle, logs), timeout,
                                    backend=backend, started_at=started_at))
        return shell.info()

    def _open_logs(self, shell_id: str) -> tuple[str, dict[str, tuple[str, int]]]:
        from .shell import open_logs

        self._launches += 1
        label = f"{shell_id}-{self._launches}"  # unique even when a finished shell's name is reused
        return label, open_logs(self._log_dir(), label)

    @staticmethod
    def _streams(handle: Handle, logs: dict[str, tuple[str, int]]) -> dict[str, Stream]:
        from .shell import Stream

        return {n: Stream(n, handle.streams[n], path, fd) for n, (path, fd) in logs.items()}

    def _add(self, shell: Shell) -> Shell:
        """Register ``shell`` (holding the condition): the watchdog is told before the reader can notice
        an exit, so "+ SID" always reaches it before "- SID" (the other way round, it would keep a stale
        SID and, if we died, stop whatever process had reused that number by then)."""
        self._shells[shell.id] = shell
        self._watchdog.started(shell.handle.guard)
        self._reader.watch(shell)
        return shell

    # -- looking --------------------------------------------------------------------
    def _get(self, shell_id: str) -> Shell:
        shell = self._shells.get(shell_id)
        if shell is None:
            raise UnknownShell(shell_id, builtins.list(self._shells))
        return shell

    def info(self, shell_id: str) -> ShellInfo:
        with self._cond:
            return self._get(shell_id).info()

    def list(self) -> builtins.list[ShellInfo]:
        """Every shell, running or finished (until :meth:`cleanup`), in start order."""
        with self._cond:
            return [s.info() for s in self._shells.values()]

    def ids(self) -> builtins.list[str]:
        with self._cond:
            return builtins.list(self._shells)

    def read(self, shell_id: str, *, reader: str = "default", stream: str = "both", pattern: str | None = None,
             wait: float = 0.0, tail: int | None = None, whole_log: bool = False,
             max_bytes: int = 1_000_000) -> ShellOutput:
        """What ``shell_id`` printed since ``reader``'s previous read (per stream), and its status.

        ``pattern`` keeps only matching lines while the cursor still moves past everything;
        ``tail`` (last N lines) and ``whole_log`` look at the whole log instead of what is new.
        ``wait`` blocks up to that many seconds until there is something new -- with ``pattern``, a line it
        keeps -- or the shell ends (``math.inf``: until it ends).
        At most ``max_bytes`` per stream are returned (the latest); the rest is counted as skipped.
        """
        from . import cursors

        if stream not in ("stdout", "stderr", "both"):
            raise UsageProblem(f"unknown stream {shown_value(stream)}: use stdout, stderr or both")
        wait = checks.wait(wait)  # inf: until the shell ends, clamped so no wait overflows
        tail = None if tail is None else checks.count(tail, "tail")
        max_bytes = checks.count(max_bytes, "max_bytes", minimum=1)
        regex = cursors.compile_filter(checks.optional_text(pattern, "filter"))
        names = STREAMS if stream == "both" else (stream,)
        look_back = tail is not None or whole_log
        if wait > 0 and not look_back and regex is not None:
            self._wait_for_match(shell_id, reader, names, regex, wait, max_bytes)
            wait = 0.0  # waited: what follows reads what is there now
        with self._cond:
            shell = self._get(shell_id)
            self._reader.ensure_alive()
            cursor = cursors.cursor_for(shell.cursors, reader, STREAMS)
            if wait > 0 and not look_back:
                self._wait_for_news(shell, cursor, names, False, wait)
            ranges = {}
            for n in names:
                start = 0 if look_back else cursor[n]
                ranges[n] = (start, shell.readable_end(n, start, regex is not None))
                cursor[n] = max(cursor[n], ranges[n][1])
            info = shell.info()
            paths = {n: shell.streams[n].log_path for n in names}
            at_end = not shell.running and shell.drained and all(cursor[n] >= shell.streams[n].size for n in names)
        cuts = {n: cursors.read_cut(paths[n], start, end, max_bytes=max_bytes, tail=tail, regex=regex)
                for n, (start, end) in ranges.items()}
        texts = {n: cuts[n].text if n in cuts else "" for n in STREAMS}
        return ShellOutput(shell=info, stdout=texts["stdout"], stderr=texts["stderr"],
                           skipped={n: c.skipped for n, c in cuts.items() if c.skipped},
                           filtered_out={n: c.filtered_out for n, c in cuts.items() if c.filtered_out is not None},
                           filter=pattern, at_end=at_end,
                           filter_gave_up=tuple(n for n, c in cuts.items() if c.filter_gave_up))

    def _wait_for_match(self, shell_id: str, reader: str, names: tuple[str, ...], regex: Any, wait: float,
                        max_bytes: int) -> None:
        """Block until a line ``regex`` keeps arrived past ``reader``'s cursor, the shell ended with every
        stream drained, or ``wait`` seconds passed: "wait up to S seconds for an ERROR line" is what a
        filtered wait means, so lines the filter drops do not end it.  What arrives is matched outside
        the condition (the reader thread must not wait on a regex), each byte once; the cursor itself
        does not move here -- the read that follows returns the match and moves it."""
        from . import cursors

        deadline = time.monotonic() + wait
        with self._cond:
            shell = self._get(shell_id)
            seen = dict(cursors.cursor_for(shell.cursors, reader, STREAMS))
        while True:
            with self._cond:
                self._wait_for_news(shell, seen, names, True, max(deadline - time.monotonic(), 0.0))
                ends = {n: shell.readable_end(n, seen[n], True) for n in names}
                ended = shell.drained and not shell.running
                paths = {n: shell.streams[n].log_path for n in names}
            for n in names:
                if ends[n] > seen[n]:
                    cut = cursors.read_cut(paths[n], seen[n], ends[n], max_bytes=max_bytes, regex=regex)
                    if cut.text or cut.filter_gave_up:
                        return
                    seen[n] = ends[n]
            if ended or time.monotonic() >= deadline:
                return

    def _wait_for_news(self, shell: Shell, cursor: dict[str, int], names: tuple[str, ...], whole_lines: bool,
                       wait: float) -> None:
        """Block (holding the condition, which the reader notifies) until something readable arrived
        past ``cursor``, the shell ended with every stream drained, or ``wait`` seconds passed."""
        deadline = time.monotonic() + wait
        while not any(shell.readable_end(n, cursor[n], whole_lines) > cursor[n] for n in names) \
                and not (shell.drained and not shell.running):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._cond.wait(left)

    # -- stopping -------------------------------------------------------------------
    def _stop(self, shell: Shell, sig: int, grace: float) -> StopReport:
        report = shell.handle.stop(sig, grace)
        with self._cond:
            if shell.notice_exit():  # the reader unregisters the exit descriptor when it fires
                self._watchdog.ended(shell.handle.guard)
            self._cond.notify_all()
        return report

    def kill(self, shell_id: str, *, sig: int | str = signal_module.SIGTERM, grace: float | None = None) -> KillOutcome:
        """Stop a shell and everything it started: ``sig`` to the group, session and marker, then KILL.

        Killing a finished shell (or twice) is a calm answer, not an error.  Every kill, however it
        was asked for (one id, several, ``--all``, the owner closing), is told to :attr:`on_kill`.
        """
        recorded = self.on_kill(shell_id, sig) if self.on_kill is not None else None
        outcome = self._kill(shell_id, sig, grace)
        if recorded is not None:
            recorded(outcome)
        return outcome

    def _kill(self, shell_id: str, sig: int | str, grace: float | None) -> KillOutcome:
        number = parse_signal(sig)
        grace = checks.grace(grace)
        with self._cond:
            shell = self._get(shell_id)
            if shell.notice_exit():  # an exit the reader has not seen yet is an exit, not a kill
                self._watchdog.ended(shell.handle.guard)
            was_running = shell.running
            if was_running and shell.stopped_as is None:
                shell.stopped_as = "killed"
            status_before = shell.status()
        if not (was_running or shell.handle.leftovers()):
            return KillOutcome(self.info(shell_id),
                               f"{shell_id} already {_ended_phrase(status_before)}; nothing to stop")
        used_grace = self.grace if grace is None else grace
        report = self._stop(shell, number, used_grace)
        if was_running:
            message = f"{shell_id} stopped with {signal_name(number)}"
            if report.killed:
                message += f", then SIGKILL after {used_grace:g} s"
        else:
            leftovers = counted(report.count, "leftover process", "leftover processes")
            message = f"{shell_id} had {_ended_phrase(status_before)}; stopped {leftovers}"
        if report.count > 1:
            message += f" ({report.count} processes)"
        if report.survivors:
            message += f"; could not stop pid {', '.join(map(str, report.survivors))}"
        return KillOutcome(self.info(shell_id), message, signalled=report.count, killed=len(report.killed),
                           survivors=report.survivors)

    def kill_all(self, *, sig: int | str = signal_module.SIGTERM, grace: float | None = None,
                 outliving: bool = True) -> builtins.list[KillOutcome]:
        """Stop every shell that is running (in parallel, so N stubborn shells cost one grace period);
        ``outliving=False`` leaves alone the jobs meant to outlive their owner (cluster jobs)."""
        parse_signal(sig)
        grace = checks.grace(grace)  # checked here: an error in the worker threads would be lost
        with self._cond:
            ids = [i for i, s in self._shells.items() if s.running and (outliving or s.handle.guard is not None)]
        outcomes: dict[str, KillOutcome] = {}

        def one(shell_id: str) -> None:
            outcomes[shell_id] = self.kill(shell_id, sig=sig, grace=grace)

        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [outcomes[i] for i in ids if i in outcomes]

    def cleanup(self, remove_logs: bool = False) -> builtins.list[str]:
        """Forget finished shells (``remove_logs``: and delete their log files, and a cluster job's own
        files); return their ids.

        A name can be reused once its shell has finished, without cleaning up first.
        """
        with self._cond:
            done = [i for i, s in self._shells.items() if not s.running]
            paths = [s.log_path for i in done for s in self._shells[i].streams.values()]
            handles = [self._shells[i].handle for i in done]
            for shell_id in done:
                del self._shells[shell_id]
        for path in paths if remove_logs else ():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        for handle in handles if remove_logs else ():
            handle.remove_files()
        return done

    def close(self, grace: float | None = None) -> None:
        """Stop every shell (except the jobs that outlive their owner by design, which are only
        let go), the reader thread and the watchdog.  Safe to call more than once."""
        if self._closed:
            return
        self.kill_all(grace=self.grace if grace is None else grace, outliving=False)
        with self._cond:
            for shell in self._shells.values():
                if shell.running and shell.handle.guard is None:
                    shell.handle.detach()  # a cluster job runs on; a new owner can reattach to it
            self._closed = True
            self._shells = {i: s for i, s in self._shells.items() if not s.drained}
        self._reader.finish(timeout=2)
        self._watchdog.close()

    # -- the watchdog ---------------------------------------------------------------
    @property
    def watchdog_pid(self) -> int | None:
        """The pid of the helper that stops our shells if this process dies (None until the first shell)."""
        return self._watchdog.pid

    def expect_foreground(self, marker: str, cleanup: Sequence[str] = ()) -> Callable[[], None]:
        """Tell the watchdog of a foreground run's marker before it is launched (see
        :meth:`WatchdogLink.expect`; ``cleanup``: what it runs after sweeping it, the command's
        :attr:`~execmagic.process.spec.Command.on_owner_death`); call the result once the run is over."""
        return self._watchdog.expect(marker, cleanup)

    def guard_foreground(self, sid: int, marker: str) -> Callable[[], None]:
        """Have the watchdog stop a foreground run's session if this process dies mid-run (an
        owner killed by the OOM killer runs no cleanup); the returned call says the run is over."""
        return self._watchdog.guard(sid, marker)

    def _live_guards(self) -> builtins.list[tuple[int, str]]:
        """What a restarted watchdog must be told: the sessions of every running shell."""
        return [s.handle.guard for s in builtins.list(self._shells.values())
                if s.running and s.handle.guard is not None]


def _close_logs(logs: dict[str, tuple[str, int]]) -> None:
    for _, fd in logs.values():
        with contextlib.suppress(OSError):
            os.close(fd)


def _ended_phrase(status: str) -> str:
    """``"exited 0"`` → ``"exited with 0"``; ``"killed"``, ``"timed out"``, ``"killed by SIGSEGV"`` as they are."""
    if status.startswith("exited "):
        return f"exited with {status.split()[1]}"
    return status


def kill_many(registry: ShellRegistry, ids: Iterable[str], **kwargs) -> list[KillOutcome]:
    """Kill several shells; unknown ids raise before anything is stopped."""
    ids = list(ids)
    known = registry.ids()
    for shell_id in ids:
        if shell_id not in known:
            raise UnknownShell(shell_id, known)
    return [registry.kill(shell_id, **kwargs) for shell_id in ids]
