"""Background shells: start, read only what is new, filter, wait, stop, list (design §3.4).

One reader thread drains every shell's pipes (a selector, not two threads per
shell) straight into per-stream log files, so a chatty shell never blocks on a
full pipe and memory stays flat whatever it prints.  The log files are the
single record: a read is a byte range of them, from the reader's cursor to
the end.  A ``threading.Condition`` wakes waiting readers when output or an
exit arrives, so ``wait`` never polls.

The reader must outlive any one shell's trouble: an error while reading one
shell marks that shell failed (and stops it, since nobody could read it any
more) while the others keep streaming, and a supervisor around the loop
rebuilds the selector and goes on if the loop itself ever fails.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import datetime
import os
import re
import selectors
import signal as signal_module
import subprocess
import threading
import time
from collections.abc import Callable, Iterable

from ..process import checks
from ..process.errors import ShellLimitReached, UnknownShell, UsageProblem
from ..process.results import KillOutcome, ShellInfo, ShellOutput, signal_name
from ..process.launch import launch
from ..process.spec import Command
from ..process.stop import StopReport, remaining, stop_tree

_READ_SIZE = 1 << 16
#: Longest single ``select`` of the reader: a far deadline is waited for in steps, never overflowing.
_MAX_SELECT = 3600.0
#: Pause before the supervisor rebuilds a failed reader loop (doubling up to a second), so a
#: persistent failure costs a little CPU, not a busy loop.
_RESTART_DELAY = 0.05
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
STREAMS = ("stdout", "stderr")


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
    raise UsageProblem(f"unknown signal {name!r} (try TERM, INT, HUP or KILL)")


def compile_filter(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageProblem(f"invalid filter regex {pattern!r}: {exc}") from None


@dataclasses.dataclass
class _Stream:
    name: str
    pipe_fd: int | None
    log_path: str
    log_fd: int
    size: int = 0
    lost: int = 0  # bytes drained but not written (the log could not be written)


class _Shell:
    """Mutable state of one background shell; guarded by the registry's condition."""

    def __init__(self, shell_id: str, proc: subprocess.Popen[bytes], command: str, cwd: str, marker: str,
                 streams: dict[str, _Stream], timeout: float | None) -> None:
        self.id = shell_id
        self.proc = proc
        self.sid = proc.pid
        self.command = command
        self.cwd = cwd
        self.marker = marker
        self.streams = streams
        self.timeout = timeout
        self.started_at = datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat(timespec="seconds")
        self.start = time.monotonic()
        self.deadline = self.start + timeout if timeout else None
        self.ended: float | None = None
        self.stopped_as: str | None = None  # "killed" or "timed out" when we stopped it
        self.cursors: dict[str, dict[str, int]] = {}
        self.pidfd: int | None = None
        self.failure: str | None = None  # why the reader gave up on this shell

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    @property
    def drained(self) -> bool:
        return all(s.pipe_fd is None for s in self.streams.values())

    def status(self) -> str:
        rc = self.proc.returncode
        if rc is None:
            return "running"
        if self.failure:
            return f"failed: {self.failure}"
        if self.stopped_as:
            return self.stopped_as
        if rc < 0:
            return f"killed by {signal_name(-rc)}"
        return f"exited {rc}"

    def exit_code(self) -> int | None:
        rc = self.proc.returncode
        if rc is None:
            return None
        return 128 - rc if rc < 0 else rc

    def info(self) -> ShellInfo:
        end = self.ended if self.ended is not None else time.monotonic()
        return ShellInfo(
            id=self.id, pid=self.proc.pid, command=self.command, cwd=self.cwd, status=self.status(),
            running=self.running, started_at=self.started_at, runtime_s=round(end - self.start, 3),
            exit_code=self.exit_code(), stdout_bytes=self.streams["stdout"].size,
            stderr_bytes=self.streams["stderr"].size,
            log_paths={name: s.log_path for name, s in self.streams.items()}, timeout=self.timeout,
            lost_bytes=sum(s.lost for s in self.streams.values()),
        )


class ShellRegistry:
    """The background shells of one owner (a kernel, a program, an agent).

    ``launcher`` turns a request into a started process: the engine passes a
    function that plans with its session and logs.  ``max_shells`` bounds how
    many may run at once; ``grace`` is the default time between TERM and KILL.
    """

    def __init__(self, *, log_dir: Callable[[], str], max_shells: int = 32, grace: float = 2.0,
                 watchdog: bool = True) -> None:
        self._log_dir = log_dir
        self.max_shells = max_shells
        self.grace = grace
        self._use_watchdog = watchdog
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._watchdog_lock = threading.Lock()  # the reader thread and callers both report to it
        self._shells: dict[str, _Shell] = {}
        self._counter = 0
        self._launches = 0
        self._cond = threading.Condition()
        self._pending: list[tuple[_Shell, Callable[[], None]]] = []
        self._selector: selectors.BaseSelector | None = None
        self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None
        self._closed = False
        #: The last error that broke the reader loop itself (the supervisor went on after it).
        self.reader_error: str | None = None
        #: Told ``(shell_id, signal)`` before a kill; returns what to tell the outcome (the audit log).
        self.on_kill: Callable[[str, int | str], Callable[[KillOutcome], None]] | None = None

    # -- starting -------------------------------------------------------------------
    def _next_id(self) -> str:
        while True:
            self._counter += 1
            candidate = f"bg{self._counter}"
            if candidate not in self._shells:
                return candidate

    def start(self, command: Command, *, marker_prefix: str, name: str | None = None,
              timeout: float | None = None) -> ShellInfo:
        """Start ``command`` (an engine :class:`~execmagic.engine.spec.Command`) in the background.

        Raises :class:`UsageProblem` for a bad or duplicate name, :class:`ShellLimitReached`
        past ``max_shells``, and :class:`~execmagic.engine.errors.PreExecError` when it cannot start at all.
        """
        timeout = checks.timeout(timeout)  # before the shell joins the reader: nan/inf would break its waits
        name = checks.optional_text(name, "name")
        with self._cond:
            if self._closed:
                raise UsageProblem("the background shell registry is closed")
            if name is not None:
                if not _NAME.fullmatch(name):
                    raise UsageProblem(f"invalid shell name {name!r}: use letters, digits, '_', '-' or '.', starting with a letter")
                if name in self._shells and self._shells[name].running:
                    raise UsageProblem(f"a background shell named {name!r} is already running;"
                                       f" pick another name or stop it first (%kill {name})")
            running = sum(1 for s in self._shells.values() if s.running)
            if running >= self.max_shells:
                raise ShellLimitReached(f"{running} background shells are running, the limit is {self.max_shells};"
                                        " stop some with %kill / KillShell, or raise the limit")
            shell_id = name or self._next_id()
            self._launches += 1
            label = f"{shell_id}-{self._launches}"  # unique even when a finished shell's name is reused
            marker = f"{marker_prefix}-{label}"
            log_dir = self._log_dir()
            os.makedirs(log_dir, exist_ok=True)
            paths = {n: os.path.join(log_dir, f"{label}.{n}.log") for n in STREAMS}
            log_fds = {n: os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
                       for n, p in paths.items()}
            try:
                proc = launch(command, marker)
            except BaseException:
                for fd in log_fds.values():
                    os.close(fd)
                raise
            streams = {}
            for stream_name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
                assert pipe is not None
                fd = os.dup(pipe.fileno())
                pipe.close()
                os.set_blocking(fd, False)
                streams[stream_name] = _Stream(stream_name, fd, paths[stream_name], log_fds[stream_name])
            shell = _Shell(shell_id, proc, command.display, command.cwd, marker, streams, timeout)
            self._shells[shell_id] = shell
            self._ensure_reader()
            self._submit(shell, lambda: self._watch(shell))
        self._tell_watchdog(f"+ {shell.sid} {marker}\n")
        return shell.info()

    # -- the reader thread ----------------------------------------------------------
    def _ensure_reader(self) -> None:
        """Start the reader thread, or start it again if it ever ended while shells are registered."""
        if self._thread is not None and self._thread.is_alive():
            return
        if self._selector is None:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
        self._new_selector()
        self._thread = threading.Thread(target=self._reader_main, name="execmagic-shells", daemon=True)
        self._thread.start()

    def _ensure_reader_alive(self) -> None:
        """Restart a reader that ended while shells still have pipes open (callers hold the condition)."""
        if self._thread is not None and not self._thread.is_alive() and not self._closed \
                and self._thread_has_work_locked():
            self._ensure_reader()

    def _new_selector(self) -> None:
        """A fresh selector watching the wake pipe and every open pipe and pidfd of the live shells."""
        if self._selector is not None:
            with contextlib.suppress(Exception):
                self._selector.close()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        for shell in self._shells.values():
            if shell.failure is None:
                self._guarded(shell, self._register_fds, shell)

    def _submit(self, shell: _Shell, op: Callable[[], None]) -> None:
        """Run ``op`` for ``shell`` on the reader thread (selectors are not safe to change from another thread)."""
        self._pending.append((shell, op))
        os.write(self._wake_w, b"x")

    def _watch(self, shell: _Shell) -> None:
        """Open the shell's pidfd (exits wake the reader, no polling) and watch its pipes and pidfd."""
        if shell.pidfd is None and shell.ended is None:
            try:
                shell.pidfd = os.pidfd_open(shell.proc.pid)
            except (AttributeError, OSError):
                shell.pidfd = None
        self._register_fds(shell)

    def _register_fds(self, shell: _Shell) -> None:
        """Watch what of ``shell`` is open and not watched yet (so a rebuild and a late ``_watch`` agree)."""
        assert self._selector is not None
        watched = self._selector.get_map()
        for stream in shell.streams.values():
            if stream.pipe_fd is not None and stream.pipe_fd not in watched:
                self._selector.register(stream.pipe_fd, selectors.EVENT_READ, (shell, stream))
        if shell.pidfd is not None and shell.pidfd not in watched:
            self._selector.register(shell.pidfd, selectors.EVENT_READ, (shell, None))

    def _next_timeout(self) -> float | None:
        now = time.monotonic()
        waits = [s.deadline - now for s in self._shells.values() if s.deadline is not None and s.running]
        if any(s.pidfd is None and s.running for s in self._shells.values()):
            waits.append(0.1)  # no pidfd (this system, or a failed shell): notice exits by polling
        return min(max(min(waits), 0.0), _MAX_SELECT) if waits else None

    def _reader_main(self) -> None:
        """The supervisor: run the loop; if it fails outside any one shell, rebuild the selector and go on.

        Without this, one unexpected error would leave every shell unread (pipes fill, shells
        block) and unreaped (they look "running" forever).
        """
        delay = _RESTART_DELAY
        while True:
            try:
                self._reader_loop()
                return
            except Exception as exc:  # noqa: BLE001 -- recorded; the loop must go on for the other shells
                self.reader_error = _one_line(exc)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
            with self._cond:
                if self._closed and not self._thread_has_work_locked():
                    return
                self._new_selector()

    def _reader_loop(self) -> None:
        assert self._selector is not None
        while True:
            with self._cond:
                if self._closed and not self._shells:
                    break
                timeout = self._next_timeout()
                selector = self._selector
            events = selector.select(timeout)
            with self._cond:
                for key, _ in events:
                    if key.data is None:
                        self._run_pending()
                        continue
                    shell, stream = key.data
                    if shell.failure is not None:
                        continue
                    if stream is None:
                        self._guarded(shell, self._note_exit, shell)
                    elif stream.pipe_fd is not None:
                        self._guarded(shell, self._drain, shell, stream)
                self._check_exits_and_deadlines()
                self._cond.notify_all()
            if self._closed and not self._thread_has_work():
                break

    def _run_pending(self) -> None:
        """Empty the wake pipe and run what other threads submitted, each op guarded for its own shell."""
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_r, 4096)
        ops, self._pending = self._pending, []
        for shell, op in ops:
            if shell.failure is None:
                self._guarded(shell, op)

    def _guarded(self, shell: _Shell, op: Callable[..., None], *args: object) -> None:
        """Run one shell's step; an error fails that shell only, never the reader."""
        try:
            op(*args)
        except Exception as exc:  # noqa: BLE001 -- one shell's trouble, told in its status
            self._fail(shell, exc)

    def _fail(self, shell: _Shell, exc: BaseException) -> None:
        """Give up on reading ``shell``: say why in its status, close its pipes and stop it (unread, it
        would block on a full pipe; stopped, nothing of it is left running unseen)."""
        shell.failure = f"reader error: {_one_line(exc)}"
        for stream in shell.streams.values():
            if stream.pipe_fd is not None:
                self._forget_fd(stream.pipe_fd)
                stream.pipe_fd = None
                with contextlib.suppress(OSError):
                    os.close(stream.log_fd)
        if shell.pidfd is not None:
            self._forget_fd(shell.pidfd)
            shell.pidfd = None  # exits are now noticed by polling
        with contextlib.suppress(Exception):
            self._notice_exit(shell)
        if shell.running:
            threading.Thread(target=self._stop, args=(shell, signal_module.SIGTERM, self.grace),
                             name=f"execmagic-failed-{shell.id}", daemon=True).start()

    def _forget_fd(self, fd: int) -> None:
        """Stop watching and close ``fd``, whatever state the selector is in."""
        if self._selector is not None:
            with contextlib.suppress(Exception):
                self._selector.unregister(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _thread_has_work(self) -> bool:
        with self._cond:
            return self._thread_has_work_locked()

    def _thread_has_work_locked(self) -> bool:
        return any(not s.drained for s in self._shells.values())

    def _drain(self, shell: _Shell, stream: _Stream) -> None:
        assert stream.pipe_fd is not None and self._selector is not None
        try:
            data = os.read(stream.pipe_fd, _READ_SIZE)
        except BlockingIOError:
            return
        if data:
            try:
                os.write(stream.log_fd, data)
            except OSError:  # a full disk must not stall the shell: keep draining, count what was lost
                stream.lost += len(data)
                return
            stream.size += len(data)
            return
        self._selector.unregister(stream.pipe_fd)
        os.close(stream.pipe_fd)
        stream.pipe_fd = None
        os.close(stream.log_fd)

    def _note_exit(self, shell: _Shell) -> None:
        assert self._selector is not None
        if shell.pidfd is not None:
            self._selector.unregister(shell.pidfd)
            os.close(shell.pidfd)
            shell.pidfd = None
        self._notice_exit(shell)

    def _notice_exit(self, shell: _Shell) -> None:
        """Reap the shell if it ended and record when (callers hold the condition)."""
        shell.proc.poll()
        if shell.proc.returncode is not None and shell.ended is None:
            shell.ended = time.monotonic()
            self._tell_watchdog(f"- {shell.sid}\n")

    def _check_exits_and_deadlines(self) -> None:
        now = time.monotonic()
        for shell in list(self._shells.values()):
            if shell.pidfd is None and shell.ended is None:
                step = self._notice_exit if shell.failure is not None else self._note_exit
                self._guarded(shell, step, shell)
            if shell.running and shell.deadline is not None and now >= shell.deadline and shell.stopped_as is None:
                shell.stopped_as = "timed out"
                threading.Thread(target=self._stop, args=(shell, signal_module.SIGTERM, self.grace),
                                 name=f"execmagic-timeout-{shell.id}", daemon=True).start()

    # -- looking --------------------------------------------------------------------
    def _get(self, shell_id: str) -> _Shell:
        shell = self._shells.get(shell_id)
        if shell is None:
            raise UnknownShell(shell_id, list(self._shells))
        return shell

    def info(self, shell_id: str) -> ShellInfo:
        with self._cond:
            return self._get(shell_id).info()

    def list(self) -> list[ShellInfo]:
        with self._cond:
            return [s.info() for s in self._shells.values()]

    def ids(self) -> list[str]:
        with self._cond:
            return list(self._shells)

    def _readable_end(self, shell: _Shell, stream: _Stream, start: int, whole_lines: bool) -> int:
        """Where a read may stop: hold back an incomplete UTF-8 character (and, when filtering, an
        unfinished line) while the shell may still write the rest of it."""
        end = stream.size
        if not (shell.running or stream.pipe_fd is not None) or end <= start:
            return end
        with open(stream.log_path, "rb") as fh:
            if whole_lines:
                pos = end
                while pos > start:
                    block_start = max(start, pos - _READ_SIZE)
                    fh.seek(block_start)
                    block = fh.read(pos - block_start)
                    nl = block.rfind(b"\n")
                    if nl >= 0:
                        return block_start + nl + 1
                    pos = block_start
                return start
            fh.seek(max(start, end - 3))
            tail = fh.read()
        for back in range(1, len(tail) + 1):  # a lead byte whose sequence is not complete yet
            byte = tail[-back]
            if byte & 0xC0 == 0x80:
                continue
            need = 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return end - back if need > back else end
        return end

    def read(self, shell_id: str, *, reader: str = "default", stream: str = "both", pattern: str | None = None,
             wait: float = 0.0, tail: int | None = None, whole_log: bool = False, max_bytes: int = 1_000_000) -> ShellOutput:
        """What ``shell_id`` printed since ``reader``'s previous read (per stream), and its status.

        ``pattern`` keeps only matching lines while the cursor still moves past everything;
        ``tail`` (last N lines) and ``whole_log`` look at the whole log instead of what is new.
        ``wait`` blocks up to that many seconds until there is something new or the shell ends
        (``math.inf``: until it ends).
        At most ``max_bytes`` per stream are returned (the latest); the rest is counted as skipped.
        """
        if stream not in ("stdout", "stderr", "both"):
            raise UsageProblem(f"unknown stream {stream!r}: use stdout, stderr or both")
        wait = checks.wait(wait)  # inf: until the shell ends, clamped so no wait overflows
        tail = None if tail is None else checks.count(tail, "tail")
        max_bytes = checks.count(max_bytes, "max_bytes", minimum=1)
        regex = compile_filter(checks.optional_text(pattern, "filter"))
        names = STREAMS if stream == "both" else (stream,)
        whole_lines = regex is not None
        with self._cond:
            shell = self._get(shell_id)
            self._ensure_reader_alive()
            cursor = shell.cursors.setdefault(reader, {n: 0 for n in STREAMS})
            if wait > 0 and not (tail is not None or whole_log):
                deadline = time.monotonic() + wait
                while not any(self._readable_end(shell, shell.streams[n], cursor[n], whole_lines) > cursor[n]
                              for n in names) and not (shell.drained and not shell.running):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
            ranges = {}
            for n in names:
                s = shell.streams[n]
                start = 0 if (tail is not None or whole_log) else cursor[n]
                end = self._readable_end(shell, s, start, whole_lines)
                ranges[n] = (start, end)
                cursor[n] = max(cursor[n], end)
            info = shell.info()
            paths = {n: shell.streams[n].log_path for n in names}
            at_end = not shell.running and shell.drained and all(
                cursor[n] >= shell.streams[n].size for n in names)
        texts: dict[str, str] = {n: "" for n in STREAMS}
        skipped: dict[str, int] = {}
        filtered: dict[str, int] = {}
        for n, (start, end) in ranges.items():
            if end - start > max_bytes:
                skipped[n] = end - max_bytes - start
                start = end - max_bytes
            with open(paths[n], "rb") as fh:
                fh.seek(start)
                data = fh.read(end - start)
            text = codecs.decode(data, "utf-8", "replace")
            if skipped.get(n) and "\n" in text:
                text = text[text.index("\n") + 1:]  # start on a whole line
            if tail is not None:
                lines = text.splitlines(keepends=True)
                text = "".join(lines[-tail:]) if tail else ""
            if regex is not None:
                lines = text.splitlines(keepends=True)
                kept = [line for line in lines if regex.search(line)]
                filtered[n] = len(lines) - len(kept)
                text = "".join(kept)
            texts[n] = text
        return ShellOutput(shell=info, stdout=texts["stdout"], stderr=texts["stderr"], skipped=skipped,
                           filtered_out=filtered, filter=pattern, at_end=at_end)

    # -- stopping -------------------------------------------------------------------
    def _stop(self, shell: _Shell, sig: int, grace: float) -> StopReport:
        ladder = (sig,) if sig != signal_module.SIGKILL else ()
        report = stop_tree(shell.sid, leader=shell.proc, marker=shell.marker, ladder=ladder, grace=grace)
        with self._cond:
            shell.proc.poll()  # the reader thread unregisters the pidfd when it fires
            if shell.ended is None and shell.proc.returncode is not None:
                shell.ended = time.monotonic()
                self._tell_watchdog(f"- {shell.sid}\n")
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
            self._notice_exit(shell)  # an exit the reader has not seen yet is an exit, not a kill
            was_running = shell.running
            if was_running and shell.stopped_as is None:
                shell.stopped_as = "killed"
            status_before = shell.status()
        leftovers = was_running or bool(remaining(shell.sid, shell.marker))
        if not leftovers:
            return KillOutcome(self.info(shell_id), f"{shell_id} already {_ended_phrase(status_before)}; nothing to stop")
        report = self._stop(shell, number, self.grace if grace is None else grace)
        info = self.info(shell_id)
        if was_running:
            message = f"{shell_id} stopped with {signal_name(number)}"
            if report.killed:
                message += f", then SIGKILL after {self.grace if grace is None else grace:g} s"
        else:
            message = f"{shell_id} had {_ended_phrase(status_before)}; stopped {report.count} leftover process(es)"
        if report.count > 1:
            message += f" ({report.count} processes)"
        if report.survivors:
            message += f"; could not stop pid {', '.join(map(str, report.survivors))}"
        return KillOutcome(info, message, signalled=report.count, killed=len(report.killed), survivors=report.survivors)

    def kill_all(self, *, sig: int | str = signal_module.SIGTERM, grace: float | None = None) -> list[KillOutcome]:
        """Stop every shell that is running (in parallel, so N stubborn shells cost one grace period)."""
        parse_signal(sig)
        grace = checks.grace(grace)  # checked here: an error in the worker threads would be lost
        ids = [info.id for info in self.list() if info.running]
        outcomes: dict[str, KillOutcome] = {}

        def one(shell_id: str) -> None:
            outcomes[shell_id] = self.kill(shell_id, sig=sig, grace=grace)

        threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [outcomes[i] for i in ids if i in outcomes]

    def cleanup(self, remove_logs: bool = False) -> list[str]:
        """Forget finished shells (``remove_logs``: and delete their log files); return their ids.

        A name can be reused once its shell has finished, without cleaning up first.
        """
        with self._cond:
            done = [i for i, s in self._shells.items() if not s.running]
            paths = [p for i in done for p in self._shells[i].info().log_paths.values()]
            for shell_id in done:
                del self._shells[shell_id]
        for path in paths if remove_logs else ():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return done

    def close(self, grace: float | None = None) -> None:
        """Stop every shell, the reader thread and the watchdog.  Safe to call more than once."""
        if self._closed:
            return
        self.kill_all(grace=self.grace if grace is None else grace)
        with self._cond:
            self._closed = True
            self._shells = {i: s for i, s in self._shells.items() if not s.drained}
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(timeout=2)
        with self._watchdog_lock:
            if self._watchdog is not None:
                self._close_watchdog()

    # -- the watchdog ---------------------------------------------------------------
    @property
    def watchdog_pid(self) -> int | None:
        """The pid of the helper that stops our shells if this process dies (None until the first shell)."""
        watchdog = self._watchdog
        return watchdog.pid if watchdog is not None and watchdog.poll() is None else None

    def guard_foreground(self, sid: int, marker: str) -> Callable[[], None]:
        """Have the watchdog stop a foreground run's session if this process dies mid-run (an
        owner killed by the OOM killer runs no cleanup); the returned call says the run is over."""
        self._tell_watchdog(f"+ {sid} {marker}\n")
        return lambda: self._tell_watchdog(f"- {sid}\n")

    def _tell_watchdog(self, line: str) -> None:
        """Report ``+ SID MARKER`` (started) or ``- SID`` (ended) to the watchdog, starting it when needed."""
        if not self._use_watchdog or self._closed:
            return
        with self._watchdog_lock:
            if self._watchdog is None or self._watchdog.poll() is not None:
                if line.startswith("-"):
                    return  # nothing to tell a watchdog that is not there
                from ..process.watchdog import start_watchdog

                self._watchdog = start_watchdog(self.grace)
                for shell in list(self._shells.values()):
                    if shell.running and not line.startswith(f"+ {shell.sid} "):
                        self._write_watchdog(f"+ {shell.sid} {shell.marker}\n")
            self._write_watchdog(line)

    def _write_watchdog(self, line: str) -> None:
        assert self._watchdog is not None and self._watchdog.stdin is not None
        try:
            self._watchdog.stdin.write(line.encode())
            self._watchdog.stdin.flush()
        except (BrokenPipeError, ValueError):
            self._watchdog = None  # it died; the next registration starts a new one

    def _close_watchdog(self) -> None:
        assert self._watchdog is not None
        try:
            assert self._watchdog.stdin is not None
            self._watchdog.stdin.write(b"q\n")  # everything is stopped: exit without sweeping
            self._watchdog.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            self._watchdog.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._watchdog.kill()
            self._watchdog.wait()
        self._watchdog = None


def _one_line(exc: BaseException) -> str:
    """An exception as one short line for a status (``OverflowError: timeout is too large``)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 200 else text[:197] + "..."


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


__all__ = ["STREAMS", "ShellRegistry", "compile_filter", "kill_many", "parse_signal"]
