"""Foreground runs: one loop in the caller's thread reads both pipes, feeds stdin,
watches the deadline and forwards a ``KeyboardInterrupt`` to the command.

Running everything in the caller's thread (a selector, no reader threads) means
callbacks run where the caller expects -- in a notebook, the cell that started
the command -- and an interrupt arrives exactly where it can be forwarded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from .capture import StreamRecorder
from .clock import iso_at, now_iso
from .errors import PreExecError
from .launch import launch
from .leftovers import Births, left_behind
from .logdir import LogDir
from .pump import Cancelled, CancelToken, OutputCallback, ProgressCallback, Pump
from .results import TIMEOUT_EXIT_CODE, Result, StreamCapture, exit_code_of
from .sandbox_count import WATCH_EVERY, WATCH_FIRST
from .sandbox_end import ShellEnd
from .spec import Command, RunOptions
from .standby import Standby
from .standby_reap import reap_killed, reap_later
from .stop import StopReport, stop_tree
from .system import pidfd_open, readable

#: Told the run's leader (its process session) now and then; returns a limit to stop the run at, or ``None``.
Watch = Callable[[int], "str | None"]

__all__ = ["CancelToken", "OutputCallback", "ProgressCallback", "Watch", "failed_to_start", "run_command"]

_POLL_WITHOUT_PIDFD = 0.05
#: Seconds a sandboxed run that ended with its shell, and left processes inside, waits for bwrap's monitor to
#: end before it stops them (it ends at once by itself: its pid 1 tells it the shell has ended).
_MONITOR_WAIT = 1.0


def failed_to_start(command: Command, error: PreExecError, started_at: str | None = None) -> Result:
    """The result of a command that could not be started: a value, like any other failure."""
    return Result(
        command=command.display,
        argv=command.shown_argv or command.argv,
        cwd=command.cwd,
        exit_code=error.exit_code,
        duration_ms=0,
        started_at=started_at or now_iso(),
        error=str(error),
        error_code=error.code,
    )


def _describe_stop(report: StopReport, why: str) -> str:
    count = report.count
    noun = "process" if count == 1 else "processes"
    text = f"stopped {count} {noun} {why}"
    if report.killed:
        text += f" ({len(report.killed)} needed SIGKILL)"
    if report.survivors:
        text += f"; could not stop pid {', '.join(map(str, report.survivors))}"
    return text


def _capture_notes(captures: dict[str, StreamCapture]) -> list[str]:
    """What a reader of the result should know about its streams: bytes shown as U+FFFD, a log cut short."""
    notes = []
    for name, capture in captures.items():
        if capture.undecodable:
            count = capture.undecodable
            notes.append(f"{count} {'byte was' if count == 1 else 'bytes were'} not UTF-8 on {name} (shown as \ufffd)")
        if capture.log_error:
            where = f"{name} log {capture.log_path}" if capture.log_path else f"{name} was not logged"
            notes.append(f"log incomplete: {capture.log_error} ({where})")
    return notes


class _Run:
    """One foreground run between its start and its :class:`Result` (invoke's runner shape).

    :func:`run_command` is the order of the steps; each step is a method here:
    :meth:`loop` serves the pipes until the command ends (or the deadline, an
    interrupt, a cancel), :meth:`finish` stops what the command left behind and
    reaps it, :meth:`close` releases everything whatever happened, and
    :meth:`collate` turns what was seen into the result.  Every stop goes through
    :meth:`stop`, the one call of :func:`~.stop.stop_tree` in this module.
    """

    def __init__(self, command: Command, options: RunOptions, proc: subprocess.Popen[bytes], *, marker: str,
                 log_dir: LogDir, label: str, started_at: str, start: float, on_output: OutputCallback | None,
                 on_progress: ProgressCallback | None, cancel: CancelToken | None, watch: Watch | None = None,
                 shell_end: ShellEnd | None = None, ready: bool = False) -> None:
        self.command = command
        self.options = options
        self.proc = proc
        self.sid = proc.pid  # the command leads its own session (launch starts one)
        self.marker = marker
        self.started_at = started_at
        self.start = start
        self.on_progress = on_progress
        opener = log_dir.opener(label)
        recorders = {name: StreamRecorder(name, opener, options.keep_bytes, defer_log=not options.keep_logs,
                                          log_over=options.log_over)
                     for name in ("stdout", "stderr")}
        self.shell_end = shell_end
        self.pump = Pump(proc, recorders, command.input, on_output, cancel, shell_end, ready)
        self.deadline = start + options.timeout if options.timeout is not None else None
        self.timed_out = self.interrupted = False
        self.watch = watch
        self.next_watch = start + WATCH_FIRST
        self.stopped_at: str | None = None
        self.finished = False  # finish() has stopped what was left and reaped the command (or left it to reap)
        self.notes: list[str] = []
        self.last_flush = start  # a quick command's output then arrives as one piece per stream
        self.next_progress = start + options.progress_interval

    def stop(self, ladder: Sequence[int], why: str) -> None:
        """Stop the command's tree with ``ladder`` (then SIGKILL), and say so in the notes if anything was running.

        A second interrupt while waiting out the grace period skips the rest of the ladder.
        """
        try:
            report = stop_tree(self.sid, leader=self.proc, marker=self.marker, ladder=ladder, grace=self.options.grace)
        except KeyboardInterrupt:  # a second interrupt: no more patience
            report = stop_tree(self.sid, leader=self.proc, marker=self.marker, ladder=(), grace=0)
        if report.count:
            self.notes.append(_describe_stop(report, why))

    def loop(self) -> None:
        """Serve the pipes until the command and its output end, the deadline passes, or an interrupt or cancel."""
        pump = self.pump
        try:
            while pump.open_streams or pump.exited_at is None:
                pump.handle(self._wait_for(time.monotonic()))
                if self._after_events(time.monotonic()):
                    break
        except (KeyboardInterrupt, Cancelled):
            self.interrupted = True
            self.stop((signal.SIGINT, signal.SIGTERM), "after the interrupt")

    def _wait_for(self, now: float) -> float | None:
        """How long the selector may sleep: until the next flush, progress call, deadline or drain end."""
        pump, options = self.pump, self.options
        wakes = [self.next_progress if self.on_progress else None, self.deadline,
                 self.next_watch if self.watch else None]
        if pump.pending:
            wakes.append(self.last_flush + options.flush_interval)
        if pump.exited_at is not None:
            wakes.append(pump.exited_at + options.drain)
        elif pump.polled:
            wakes.append(now + _POLL_WITHOUT_PIDFD)
        due = [w for w in wakes if w is not None]
        return max(min(due) - now, 0) if due else None

    def _after_events(self, now: float) -> bool:
        """Flush live output and report progress when due; stop at the deadline or after the drain.

        Returns whether the loop is over (the command was stopped).
        """
        pump, options = self.pump, self.options
        if pump.pending and now - self.last_flush >= options.flush_interval:
            pump.flush()
            self.last_flush = now
        if self.on_progress and now >= self.next_progress:
            self.on_progress(now - self.start, pump.total_bytes)
            self.next_progress = now + options.progress_interval
        if self.watch is not None and now >= self.next_watch and pump.exited_at is None:
            self.next_watch = now + WATCH_EVERY
            self.stopped_at = self.watch(self.sid)
            if self.stopped_at is not None:
                self.stop((signal.SIGTERM,), f"at {self.stopped_at}")
                return True
        if self.deadline is not None and now >= self.deadline and (pump.open_streams or pump.exited_at is None):
            self.timed_out = True
            self.stop((signal.SIGTERM,), "at the timeout")
            return True
        if pump.exited_at is not None and pump.open_streams and now >= pump.exited_at + options.drain:
            self.stop((signal.SIGTERM,), "that still held the output open after the command exited")
            return True
        return False

    def finish(self, births: Births) -> None:
        """Read what is left, stop what the command left running (in its session or escaped from it), reap it."""
        self.pump.drain_nonblocking()
        # a run in a sandboxed standby: bwrap's pid 1 is ending with the shell, the runner's own -- unless it waits
        # for what the command left inside (its children now), which is left running in the background (whether
        # the run ended with the shell or, where its end could not be read, with bwrap's monitor)
        shell = self.shell_end
        kept = shell is not None and not shell.init_ending()
        own = (shell.init,) if shell is not None and not kept else ()
        in_session, escaped = left_behind(self.sid, self.proc.pid, births, self.marker, own)
        in_session = in_session or kept
        if (in_session or escaped) and shell is not None:
            self._monitor_ended()  # stopped as before the run ended with the shell: after bwrap's monitor
        if in_session and not (self.timed_out or self.interrupted):
            self.stop((signal.SIGTERM,), "left running in the background by the command")
            escaped = left_behind(self.sid, self.proc.pid, births, self.marker, own)[1]  # what left it meanwhile
        if escaped:
            self.stop((signal.SIGTERM,), "that had left the command's session (setsid or a double fork)")
        if self.proc.returncode is None:  # not reaped (a stop reaps it): the group's number is still ours
            with contextlib.suppress(ProcessLookupError, PermissionError):
                # What no look can find -- a process that forks a new pid and exits, over and over -- is still
                # in the command's process group, which the unreaped leader keeps ours: nothing else is in it.
                os.killpg(self.sid, signal.SIGKILL)
        if self.pump.status is None:
            self.proc.wait()
        else:  # it ended with its sandboxed shell: bwrap's monitor, killed just above, is reaped a moment later
            reap_later(self.proc)
        self.finished = True
        self.pump.flush()

    def _monitor_ended(self) -> None:
        """Wait a moment for bwrap's monitor (the leader) to end, unreaped, as it does once the shell has: a run
        that ended with its shell, and left processes in the sandbox, stops them as a run that waited for it."""
        pidfd = pidfd_open(self.proc.pid) if self.proc.returncode is None else None  # reaped: its pid is not ours
        if pidfd is not None:
            try:
                readable(pidfd, _MONITOR_WAIT)
            finally:
                os.close(pidfd)

    def close(self, unregister: Callable[[], None] | None) -> None:
        """Release the run whatever happened; an error that escaped the loop still leaves nothing running."""
        if self.proc.returncode is None and not self.finished:
            self.stop((), "after an unexpected error")
            self.proc.wait()
        if unregister is not None:
            unregister()
        self.pump.close()
        if self.shell_end is not None:
            self.shell_end.close()

    def collate(self) -> Result:
        """The result: how it ended (in the shell's exit-code convention), both streams, and the notes."""
        duration_ms = int((time.monotonic() - self.start) * 1000)
        status = self.pump.status  # told by a sandboxed shell, as bwrap would have told it
        exit_code, sig = exit_code_of(status if status is not None else self.proc.returncode)
        if self.timed_out:
            exit_code = TIMEOUT_EXIT_CODE
        options, command = self.options, self.command
        captures = {name: rec.finish(options.keep_logs) for name, rec in self.pump.recorders.items()}
        return Result(
            command=command.display,
            argv=command.shown_argv or command.argv,
            cwd=command.cwd,
            exit_code=exit_code,
            duration_ms=duration_ms,
            started_at=self.started_at,
            stdout_capture=captures["stdout"],
            stderr_capture=captures["stderr"],
            signal=sig,
            timed_out=self.timed_out,
            timeout=options.timeout,
            interrupted=self.interrupted,
            stopped_at=self.stopped_at,
            notes=tuple(self.notes + _capture_notes(captures)),
        )


def _started(command: Command, marker: str, standby: Standby | None) -> tuple[subprocess.Popen[bytes], ShellEnd | None]:
    """The run's process, and the end of its sandboxed shell where that is watched apart from the process: a
    standby (already started and registered, and it fits) is only handed its script (:class:`~.standby.StandbyGone`
    if it died meanwhile); otherwise the command is launched (:class:`PreExecError` if it cannot start)."""
    reap_killed()  # a monitor killed as the last run ended, if no standby was started since (see .standby_reap)
    if standby is None:
        return launch(command, marker), None
    proc = standby.release(command.argv[2].encode("utf-8", "surrogateescape"))
    shell_end, standby.shell_end = standby.shell_end, None  # the run's now: it closes it
    return proc, shell_end


def run_command(
    command: Command,
    options: RunOptions,
    *,
    log_dir: LogDir,
    label: str,
    marker: str,
    on_output: OutputCallback | None = None,
    on_progress: ProgressCallback | None = None,
    cancel: CancelToken | None = None,
    register: Callable[[int, str], Callable[[], None]] | None = None,
    standby: Standby | None = None,
    watch: Watch | None = None,
) -> Result:
    """Run ``command`` to its end, the deadline, an interrupt or ``cancel``; always return a :class:`Result`.

    ``register(sid, marker)`` is told of the process session as soon as it exists and
    returns what to call once it is gone: the watchdog that stops it if this process
    dies (a kernel killed by the OOM killer runs no cleanup of its own).

    ``standby`` (taken for this command: it fits it) runs the command instead of a launch,
    under its own marker; :class:`~.standby.StandbyGone` when it died meanwhile.

    ``watch(leader)`` is asked now and then while the command runs (a sandboxed run's
    :class:`~.sandbox_count.ProcessWatch`): what it returns is a limit the command holds
    its session at, and the command is stopped there (``Result.stopped_at``).

    Whatever happens -- including ``KeyboardInterrupt`` -- nothing the command
    started is left running when this returns.  A log that cannot be written (a full
    disk) costs neither the run nor its result: the result keeps its head and tail
    and says ``log incomplete: <reason>`` in its notes.
    """
    wall, start = time.time(), time.monotonic()  # (written out once the command runs: see .clock.iso_at)
    births = Births.now()  # to tell what is new at the end: anything new that carries the marker is ours
    try:
        proc, shell_end = _started(command, marker, standby)
    except PreExecError as exc:
        return failed_to_start(command, exc, iso_at(wall))
    try:
        if standby is not None:
            unregister: Callable[[], None] | None = standby.registration()
        else:
            unregister = register(proc.pid, marker) if register is not None else None
        run = _Run(command, options, proc, marker=marker, log_dir=log_dir, label=label, started_at=iso_at(wall),
                   start=start, on_output=on_output, on_progress=on_progress, cancel=cancel, watch=watch,
                   shell_end=shell_end, ready=standby is not None)  # a standby's pipes are read-ready
    except BaseException:  # the process exists and nothing else knows it: never leave it running
        if shell_end is not None:
            shell_end.close()
        stop_tree(proc.pid, leader=proc, marker=marker, ladder=(), grace=0)
        proc.wait()
        raise
    try:
        run.loop()
        run.finish(births)
    finally:
        run.close(unregister)
    return run.collate()
