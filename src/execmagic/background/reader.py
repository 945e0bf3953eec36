"""The one reader thread that drains every background shell into its log files.

One selector for all shells, not two threads per shell: a chatty shell never blocks on a full
pipe and memory stays flat whatever it prints.  Each stream's descriptor (from the shell's
backend) is mirrored into its log file, which is the single record every read is cut from.  Exits
arrive on the same selector (a pidfd) so nothing polls; deadlines are the selector's timeout.
After every batch of events the registry's condition is notified, so waiting readers wake at once.

The reader must outlive any one shell's trouble: an error while reading one shell marks that
shell failed (and stops it, since nobody could read it any more) while the others keep
streaming, and a supervisor around the loop rebuilds the selector and goes on if the loop itself
ever fails.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the registry imports the shells' module when a first shell starts
    from .shell import Shell, Stream

__all__ = ["ShellReader"]

_READ_SIZE = 1 << 16
#: Longest single ``select``: a far deadline is waited for in steps, never overflowing.
_MAX_SELECT = 3600.0
#: Pause before the supervisor rebuilds a failed loop (doubling up to a second), so a persistent
#: failure costs a little CPU, not a busy loop.
_RESTART_DELAY = 0.05


def _one_line(exc: BaseException) -> str:
    """An exception as one short line for a status (``OverflowError: timeout is too large``)."""
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 200 else text[:197] + "..."


class ShellReader:
    """Drains the registry's shells on one thread, started with the first shell.

    It shares the registry's condition (every step runs holding it) and is told the rest through
    calls: ``shells`` (the live shell table), ``closed`` (the registry closed: end once every pipe
    is drained), ``on_exit`` (a shell was seen to end: tell the watchdog) and ``stop`` (stop a
    shell with TERM and the registry's grace; run on a thread of its own, it waits).
    """

    def __init__(self, cond: threading.Condition, *, shells: Callable[[], Iterable[Shell]],
                 closed: Callable[[], bool], on_exit: Callable[[Shell], None],
                 stop: Callable[[Shell], object]) -> None:
        self._cond = cond
        self._shells = shells
        self._closed = closed
        self._on_exit = on_exit
        self._stop = stop
        self._pending: list[tuple[Shell, Callable[[], None]]] = []
        self._selector: selectors.BaseSelector | None = None
        self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None
        #: The last error that broke the loop itself (the supervisor went on after it).
        self.error: str | None = None

    # -- what the registry calls (holding the condition) ------------------------------
    def watch(self, shell: Shell) -> None:
        """Start draining ``shell`` (starting the thread if needed); the selector is changed on the
        reader thread, since selectors are not safe to change from another one."""
        self._ensure_thread()
        self._submit(shell, lambda: self._watch(shell))

    def ensure_alive(self) -> None:
        """Restart a thread that ended while shells still have pipes open."""
        if self._thread is not None and not self._thread.is_alive() and not self._closed() and self._has_work():
            self._ensure_thread()

    def finish(self, timeout: float) -> None:
        """Wake the thread (the registry is closed: it ends once every pipe is drained) and wait for it."""
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(timeout=timeout)

    # -- the thread and its supervisor ---------------------------------------------------
    def _ensure_thread(self) -> None:
        """Start the thread, or start it again if it ever ended while shells are registered."""
        if self._thread is not None and self._thread.is_alive():
            return
        if self._selector is None:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
        self._new_selector()
        self._thread = threading.Thread(target=self._main, name="execmagic-shells", daemon=True)
        self._thread.start()

    def _new_selector(self) -> None:
        """A fresh selector watching the wake pipe and every open descriptor of the live shells."""
        if self._selector is not None:
            with contextlib.suppress(Exception):
                self._selector.close()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        for shell in self._shells():
            if shell.failure is None:
                self._guarded(shell, self._register_fds, shell)

    def _main(self) -> None:
        """The supervisor: run the loop; if it fails outside any one shell, rebuild the selector and go on.

        Without this, one unexpected error would leave every shell unread (pipes fill, shells
        block) and unreaped (they look "running" forever).
        """
        delay = _RESTART_DELAY
        while True:
            try:
                self._loop()
                return
            except Exception as exc:  # recorded; the loop must go on for the other shells
                self.error = _one_line(exc)
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
            with self._cond:
                if self._closed() and not self._has_work():
                    return
                self._new_selector()

    def _loop(self) -> None:
        assert self._selector is not None
        while True:
            with self._cond:
                if self._closed() and not any(True for _ in self._shells()):
                    break
                timeout = self._next_timeout()
                selector = self._selector
            events = selector.select(timeout)
            with self._cond:
                for key, _ in events:
                    self._dispatch(key.data)
                self._check_exits_and_deadlines()
                self._cond.notify_all()
                if self._closed() and not self._has_work():
                    break

    def _dispatch(self, data: tuple[Shell, Stream | None] | None) -> None:
        """One ready descriptor: the wake pipe (``None``), a shell's exit (no stream) or a stream."""
        if data is None:
            self._run_pending()
            return
        shell, stream = data
        if shell.failure is not None:
            return
        if stream is None:
            self._guarded(shell, self._note_exit, shell)
        elif stream.pipe_fd is not None:
            self._guarded(shell, self._drain, shell, stream)

    def _has_work(self) -> bool:
        return any(not s.drained for s in self._shells())

    def _next_timeout(self) -> float | None:
        """Until the nearest deadline, or the poll of a shell without an exit descriptor; None: none."""
        now = time.monotonic()
        shells = list(self._shells())
        waits = [s.deadline - now for s in shells if s.deadline is not None and s.running]
        waits += [s.handle.poll_interval for s in shells if s.exit_fd is None and s.running]
        return min(max(min(waits), 0.0), _MAX_SELECT) if waits else None

    # -- steps, each for one shell -------------------------------------------------------
    def _submit(self, shell: Shell, op: Callable[[], None]) -> None:
        self._pending.append((shell, op))
        os.write(self._wake_w, b"x")

    def _run_pending(self) -> None:
        """Empty the wake pipe and run what other threads submitted, each op guarded for its own shell."""
        with contextlib.suppress(BlockingIOError):
            os.read(self._wake_r, 4096)
        ops, self._pending = self._pending, []
        for shell, op in ops:
            if shell.failure is None:
                self._guarded(shell, op)

    def _guarded(self, shell: Shell, op: Callable[..., None], *args: object) -> None:
        """Run one shell's step; an error fails that shell only, never the reader."""
        try:
            op(*args)
        except Exception as exc:  # one shell's trouble, told in its status
            self._fail(shell, exc)

    def _watch(self, shell: Shell) -> None:
        """Open the shell's exit descriptor (exits wake the reader, no polling) and watch it and the streams."""
        if shell.exit_fd is None and shell.ended is None:
            shell.exit_fd = shell.handle.exit_fd()
        self._register_fds(shell)

    def _register_fds(self, shell: Shell) -> None:
        """Watch what of ``shell`` is open and not watched yet (so a rebuild and a late ``_watch`` agree)."""
        assert self._selector is not None
        watched = self._selector.get_map()
        for stream in shell.streams.values():
            if stream.pipe_fd is not None and stream.pipe_fd not in watched:
                self._selector.register(stream.pipe_fd, selectors.EVENT_READ, (shell, stream))
        if shell.exit_fd is not None and shell.exit_fd not in watched:
            self._selector.register(shell.exit_fd, selectors.EVENT_READ, (shell, None))

    def _drain(self, shell: Shell, stream: Stream) -> None:
        """Copy what is in the pipe to the log; at EOF stop watching it and close both."""
        assert stream.pipe_fd is not None and self._selector is not None
        try:
            data = os.read(stream.pipe_fd, _READ_SIZE)
        except BlockingIOError:
            return
        if data:
            written = _write_all(stream.log_fd, data)
            stream.size += written  # cursors never pass what is really in the file
            stream.lost += len(data) - written  # a full disk must not stall the shell: count, keep draining
            return
        self._selector.unregister(stream.pipe_fd)
        os.close(stream.pipe_fd)
        stream.pipe_fd = None
        os.close(stream.log_fd)

    def _note_exit(self, shell: Shell) -> None:
        """The exit descriptor fired: stop watching it and record the exit."""
        assert self._selector is not None
        if shell.exit_fd is not None:
            self._selector.unregister(shell.exit_fd)
            os.close(shell.exit_fd)
            shell.exit_fd = None
        self._notice_exit(shell)

    def _notice_exit(self, shell: Shell) -> None:
        if shell.notice_exit():
            self._on_exit(shell)

    def _check_exits_and_deadlines(self) -> None:
        """Poll the shells without an exit descriptor, and stop those past their timeout."""
        now = time.monotonic()
        for shell in list(self._shells()):
            if shell.exit_fd is None and shell.ended is None:
                step = self._notice_exit if shell.failure is not None else self._note_exit
                self._guarded(shell, step, shell)
            if shell.running and shell.deadline is not None and now >= shell.deadline and shell.stopped_as is None:
                shell.stopped_as = "timed out"
                self._stop_later(shell, "timeout")

    def _stop_later(self, shell: Shell, why: str) -> None:
        """Stop ``shell`` on a thread of its own: the grace period must not hold up the other shells."""
        threading.Thread(target=self._stop, args=(shell,), name=f"execmagic-{why}-{shell.id}", daemon=True).start()

    def _fail(self, shell: Shell, exc: BaseException) -> None:
        """Give up on reading ``shell``: say why in its status, close its pipes and stop it (unread, it
        would block on a full pipe; stopped, nothing of it is left running unseen)."""
        shell.failure = f"reader error: {_one_line(exc)}"
        for stream in shell.streams.values():
            if stream.pipe_fd is not None:
                self._forget_fd(stream.pipe_fd)
                stream.pipe_fd = None
                with contextlib.suppress(OSError):
                    os.close(stream.log_fd)
        if shell.exit_fd is not None:
            self._forget_fd(shell.exit_fd)
            shell.exit_fd = None  # exits are now noticed by polling
        with contextlib.suppress(Exception):
            self._notice_exit(shell)
        if shell.running:
            self._stop_later(shell, "failed")

    def _forget_fd(self, fd: int) -> None:
        """Stop watching and close ``fd``, whatever state the selector is in."""
        if self._selector is not None:
            with contextlib.suppress(Exception):
                self._selector.unregister(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


def _write_all(fd: int, data: bytes) -> int:
    """Write ``data``, going on after a partial write; return how many bytes reached the file."""
    done = 0
    while done < len(data):
        try:
            done += os.write(fd, data[done:])
        except OSError:
            break
    return done
