"""Value types the engine returns.  Frozen: a result is a record of what happened."""

from __future__ import annotations

import builtins
import dataclasses
import errno
import functools
import os
import signal as _signal
from typing import Any

from .errors import CommandFailed, shown_value
from .records import record

__all__ = [
    "TIMEOUT_EXIT_CODE", "KillOutcome", "OutputUnavailable", "Result", "ShellInfo", "ShellOutput", "StreamCapture",
    "collapse_carriage_returns", "exit_code_of", "format_bytes", "format_duration", "log_hint", "signal_name",
]

#: Exit code reported for a run stopped by its timeout (the ``timeout(1)`` convention).
TIMEOUT_EXIT_CODE = 124


def exit_code_of(returncode: int) -> tuple[int, int | None]:
    """``Popen.returncode`` → ``(exit_code, signal)`` in the shell's convention, the one conversion.

    ``Popen`` reports death by signal N as ``-N``; a shell, ``$?`` and every tool that
    reads an exit status expect ``128 + N``.  ``signal`` is N (``None`` for a normal
    exit), so a result can say "killed by SIGKILL" without decoding the number again.
    """
    if returncode < 0:
        return 128 - returncode, -returncode
    return returncode, None


def signal_name(signum: int) -> str:
    """``9`` → ``"SIGKILL"``; unknown numbers stay readable."""
    try:
        return _signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def format_duration(ms: int) -> str:
    """Short human duration: ``12 ms``, ``3.4 s``, ``2 min 05 s``."""
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def format_bytes(n: int) -> str:
    """``1536`` → ``1.5 KB`` (powers of 1000, as people read sizes)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"  # pragma: no cover


def collapse_carriage_returns(text: str) -> str:
    """Keep what a terminal would finally show of ``\\r`` progress lines (``\\r\\n`` is a newline)."""
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def log_hint(log_path: str | None, log_error: str | None) -> str:
    """Where the whole stream is, said honestly when the log stopped short (or was never written)."""
    if log_error is None:
        return f"full output in {log_path}"
    if log_path is None:
        return f"not logged: {log_error}"
    return f"the log {log_path} is incomplete: {log_error}"


class OutputUnavailable(OSError):
    """The whole of a stream was asked for, and the part memory did not keep cannot be read back: its log
    stopped short (a full disk) or is gone.  The head and tail kept in memory are still in the capture."""

    def __init__(self, stream: str, log_path: str | None, reason: str) -> None:
        self.stream = stream
        self.log_path = log_path
        self.reason = reason
        super().__init__(errno.EIO, f"{stream} was kept in memory only in part and its log cannot be read back"
                                    f" ({reason}); .{stream}_capture.text has its start and end", log_path)


@record
class StreamCapture:
    """What one output stream produced: text kept in memory, totals, and the full log on disk.

    :attr:`text` is bounded (the start and the end of a long stream, with a note of what is left out): what
    displays and agents show.  :attr:`whole_text` is all of it, read back from the log when memory kept only
    part of it, on first use (a 200 MB run costs its 1 MB in memory until someone asks for the rest).
    """

    text: str = ""
    bytes: int = 0
    truncated: bool = False
    binary: bool = False
    log_path: str | None = None
    #: Bytes that were not UTF-8 and are shown as U+FFFD (counted while the stream was decoded; 0 if binary).
    undecodable: int = 0
    #: Why the log on disk stopped short (``"No space left on device"``); ``None`` when it holds every byte.
    log_error: str | None = None

    def __repr__(self) -> str:  # a megabyte of text is no repr: the value's own fields say what it holds
        return (f"StreamCapture(text={shown_value(self.text)}, bytes={self.bytes}, truncated={self.truncated},"
                f" binary={self.binary}, log_path={self.log_path!r}, undecodable={self.undecodable},"
                f" log_error={self.log_error!r})")

    def log_hint(self) -> str:
        """``full output in PATH``, or why the log is not whole."""
        return log_hint(self.log_path, self.log_error)

    def read_bytes(self) -> builtins.bytes:  # the field named bytes hides the type here
        """Every byte the command wrote on this stream, exactly: ``\r`` progress lines, ``\r\n`` and
        bytes that are not UTF-8 as written.  Read from the log, which is kept whenever :attr:`text`
        differs from them (or is cut); otherwise :attr:`text` is exact.  ``OSError`` when the log is
        gone or stopped short."""
        if self.log_path is None:
            if self.truncated:  # the log could not even be opened: the middle is nowhere
                raise OSError(errno.EIO, f"the output was not logged ({self.log_error})")
            return self.text.encode("utf-8", "surrogateescape")
        if self.log_error is not None:
            raise OSError(errno.EIO, f"the log stopped short ({self.log_error})", self.log_path)
        from .private import open_own_file  # results are plain values: the file helpers only when asked

        with os.fdopen(open_own_file(self.log_path), "rb") as fh:
            return fh.read()

    @functools.cached_property
    def whole_text(self) -> str:
        """All of the stream as text, as :attr:`text` would be had memory held every byte: decoded (bytes
        that are not UTF-8 as U+FFFD), ``\r`` progress lines collapsed to what a terminal ends with.
        Read back from the log the first time when :attr:`text` is cut (then kept: it is the value asked
        for); a binary stream stays its one-line note (:meth:`read_bytes` has its bytes).  ``OSError``
        when the log is gone or stopped short."""
        if not self.truncated or self.binary:
            return self.text
        return collapse_carriage_returns(self.read_bytes().decode("utf-8", "replace"))


@record
class Result:
    """The outcome of one foreground run.

    ``exit_code`` follows the shell's conventions so that one number says how it
    ended: the program's own code, ``128 + N`` when killed by signal N, 124 on
    timeout, 127 when the command was not found, 126 when it could not be run.
    """

    command: str
    argv: tuple[str, ...]
    cwd: str
    exit_code: int
    duration_ms: int
    started_at: str
    stdout_capture: StreamCapture = StreamCapture()
    stderr_capture: StreamCapture = StreamCapture()
    signal: int | None = None
    timed_out: bool = False
    timeout: float | None = None
    interrupted: bool = False
    error: str | None = None
    new_cwd: str | None = None
    notes: tuple[str, ...] = ()
    #: Why it could not start, as an errno name (``"ENOENT"``, ``"EACCES"``); set with ``error`` when
    #: the reason is known, so callers map it (``os.strerror``) without reading ``error``'s text.
    error_code: str | None = None
    #: The walls it ran inside, in one line (mode, what was writable, the network); ``None``: none.
    sandbox: str | None = None
    #: Which line of a multi-line shell script gave the status it ended with (its last failure's, or its
    #: ``exit N``'s), where the engine could tell for sure; ``None``: it succeeded, it is one line, or unknown.
    failed_line: int | None = None
    #: The limit it was stopped at, in a few words (``"the sandbox's process limit (1,024 for the session)"``):
    #: a run that would never end by itself there (a fork bomb); ``None``: not stopped for a limit.
    stopped_at: str | None = None

    # -- convenient views -------------------------------------------------
    @property
    def success(self) -> bool:
        return self.exit_code == 0 and not (self.timed_out or self.interrupted or self.error or self.stopped_at)

    @property
    def stdout(self) -> str:
        """Everything the command wrote on stdout (read back from the log when memory kept only its start and
        end; :class:`OutputUnavailable` when that log cannot be read).  ``stdout_capture.text`` is the
        bounded form that displays show."""
        return self._whole("stdout")

    @property
    def stderr(self) -> str:
        """Everything the command wrote on stderr; see :attr:`stdout`."""
        return self._whole("stderr")

    @functools.cached_property
    def lines(self) -> list[str]:
        """stdout as a list of lines, split at newlines only (a form feed or ``\x1c`` inside a row is data),
        without their line ends: ``files = %exec --capture ls`` then ``files.lines``."""
        text = self.stdout
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the newline that ends the last line starts no new one
        return lines

    def _whole(self, stream: str) -> str:
        capture: StreamCapture = getattr(self, f"{stream}_capture")
        try:
            return capture.whole_text
        except OSError as exc:
            raise OutputUnavailable(stream, capture.log_path, capture.log_error or exc.strerror or str(exc)) from exc

    @property
    def truncated(self) -> bool:
        return self.stdout_capture.truncated or self.stderr_capture.truncated

    @property
    def binary(self) -> bool:
        return self.stdout_capture.binary or self.stderr_capture.binary

    @property
    def log_paths(self) -> dict[str, str]:
        paths = {"stdout": self.stdout_capture.log_path, "stderr": self.stderr_capture.log_path}
        return {k: v for k, v in paths.items() if v}

    # -- wording ------------------------------------------------------------
    def outcome(self) -> str:
        """How it ended, in a few words: ``exit 0``, ``exit 2``, ``killed by SIGKILL``, ``timed out after 5 s``."""
        if self.error:
            return self.error
        if self.timed_out:
            return f"timed out after {self.timeout:g} s"
        if self.interrupted:
            return "interrupted"
        if self.stopped_at:
            return f"stopped at {self.stopped_at}"
        if self.signal is not None:
            return f"killed by {signal_name(self.signal)}"
        if not self.failed_line:
            return f"exit {self.exit_code}"
        # a script's 141 is its pipeline's writer stopped by SIGPIPE (with pipefail): `zcat big.gz | head -3`
        why = " (SIGPIPE: a reader such as head closed the pipe early)" if self.exit_code == 141 else ""
        return f"exit {self.exit_code} at line {self.failed_line}{why}"

    def describe(self) -> str:
        """One line: outcome, duration and the command, for errors and logs."""
        return f"{self.outcome()} in {format_duration(self.duration_ms)}: {self.command}"

    def check(self) -> Result:
        """Return ``self`` when the run succeeded, else raise :class:`CommandFailed`."""
        if not self.success:
            raise CommandFailed(self)
        return self

    def to_json(self) -> dict[str, Any]:
        """Provenance as plain JSON: what ran, where, how it ended, when and for how long."""
        return {
            "command": self.command,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "new_cwd": self.new_cwd,
            "success": self.success,
            "exit_code": self.exit_code,
            "signal": signal_name(self.signal) if self.signal is not None else None,
            "timed_out": self.timed_out,
            "interrupted": self.interrupted,
            "error": self.error,
            "error_code": self.error_code,
            "started_at": self.started_at,
            "duration_ms": self.duration_ms,
            "stdout_bytes": self.stdout_capture.bytes,
            "stderr_bytes": self.stderr_capture.bytes,
            "truncated": self.truncated,
            "binary": self.binary,
            "log_paths": self.log_paths,
            "notes": list(self.notes),
            **({"sandbox": self.sandbox} if self.sandbox else {}),  # only when confined: older records stay alike
            **({"failed_line": self.failed_line} if self.failed_line else {}),  # only when known, as the sandbox
            **({"stopped_at": self.stopped_at} if self.stopped_at else {}),  # only when stopped at a limit
        }


@record
class ShellInfo:
    """A snapshot of one background shell (what ``%bg`` lists and returns)."""

    id: str
    pid: int
    command: str
    cwd: str
    status: str
    running: bool
    started_at: str
    runtime_s: float
    exit_code: int | None
    stdout_bytes: int
    stderr_bytes: int
    log_paths: dict[str, str]
    timeout: float | None = None
    #: Bytes drained from the shell but not written to its log (the disk refused them).
    lost_bytes: int = 0
    #: Where it runs: ``"local"`` or a cluster (``"slurm"``), and the cluster's job id there.
    backend: str = "local"
    job_id: str | None = None
    #: Which line of a multi-line bash script gave the status it exited with, as :attr:`Result.failed_line`
    #: (a local shell's, where it is known for sure); ``None``: running, succeeded, one line, or unknown.
    failed_line: int | None = None

    def to_json(self) -> dict[str, Any]:
        fields = dataclasses.asdict(self)
        if fields["failed_line"] is None:  # only when known, as in a Result's: older records stay alike
            del fields["failed_line"]
        return fields


@record
class ShellOutput:
    """What a background shell printed since the reader's previous look, and its status now."""

    shell: ShellInfo
    stdout: str
    stderr: str
    #: Bytes of new output not returned because they were past ``max_bytes`` (still in the log), per stream.
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    #: Lines left out by the filter (still in the log; ``tail``/``all`` show them), per stream.
    filtered_out: dict[str, int] = dataclasses.field(default_factory=dict)
    filter: str | None = None
    #: The shell has ended and this reader has seen all of its output.
    at_end: bool = False
    #: Streams whose filter ran out of time; their lines from that point on are returned unfiltered.
    filter_gave_up: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "shell": self.shell.to_json(),
            "at_end": self.at_end,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "skipped": self.skipped,
            "filtered_out": self.filtered_out,
            "filter": self.filter,
            "filter_gave_up": list(self.filter_gave_up),
        }


@record
class KillOutcome:
    """What ``kill`` did to one background shell; ``message`` is the calm one-line answer."""

    shell: ShellInfo
    message: str
    signalled: int = 0
    killed: int = 0
    survivors: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"shell": self.shell.to_json(), "message": self.message, "signalled": self.signalled,
                "killed": self.killed, "survivors": list(self.survivors)}
