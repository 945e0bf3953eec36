"""What a Ray job runs as its entrypoint: the command, under a wrapper that gives what Ray does not.

This file runs on the Ray node, in whatever Python is there (Ray needs one on every node), so it
imports nothing but the standard library and nothing of execmagic; the backend sends its text
inside the entrypoint (see :func:`execmagic.background.backends.ray.framing.entrypoint`), so no
shared path or installation is needed on the cluster.

- **stdout and stderr apart**: Ray writes both into one log.  The wrapper reads the command's two
  pipes itself and writes each chunk as one line ``TAG KIND BASE64`` (``O`` stdout, ``E`` stderr),
  ``TAG`` a random token per job, so the kernel splits them again and gets the exact bytes back.
- **any bytes**: base64 keeps the log plain ASCII -- Ray's log API reads the log as UTF-8 and
  answers HTTP 500 for the whole job on one invalid byte.
- **exact outcomes**: Ray reports the entrypoint's exit code, not a signal, a timeout or a stop.
  The last line is a record ``TAG X BASE64(JSON)``: ``{"how": "exit", "code": 3}``, ``"signal"``
  (the command died of one), ``"timeout"``, ``"stopped"`` (a signal reached this wrapper: Ray's
  stop), and whether SIGKILL was needed.  An ``H`` line first says the node and the wrapper's pid.
- **the whole tree stopped**: Ray's stop signals a snapshot of the entrypoint's children, which
  misses a double-forked or ``setsid`` child.  The command runs in a session of its own with
  ``EXECMAGIC_RUN=MARKER`` in its environment; on a stop signal, at the timeout and after the
  command's leader ended, the wrapper signals the session, the group and every process carrying
  the marker, waits the grace, then SIGKILLs what is left.  A *reaper* (double-forked, a session
  of its own, deaf to signals, outside Ray's snapshot) holds a pipe from the wrapper and does the
  same sweep if the wrapper dies without saying "done" (Ray's SIGKILL after its stop timeout).
- **no secret on an argv**: a script that must not stand on one comes in the environment, and the
  command reads it from a descriptor (see :func:`_handed`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

__all__ = ["main"]

_CHUNK = 1 << 15
#: Seconds the leftovers of a command that ended by itself get between TERM and KILL.
_LEFTOVER_GRACE = 0.5
#: Seconds to keep reading a pipe that a stopped process's leftovers hold open.
_DRAIN = 1.0
#: The pieces' names of a script sent in the environment (``execmagic.background.backends.script_env``).
_SCRIPT_VAR = "EXECMAGIC_SCRIPT_"
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except InterruptedError:
            continue


class _Framer:
    """Writes frames to the log (this process's stdout), one ``os.write`` each, so no other
    writer (Ray's own lines, appended to the same file) can cut into one."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def frame(self, kind: str, data: bytes) -> None:
        _write_all(1, f"{self.tag}{kind}{base64.b64encode(data).decode('ascii')}\n".encode("ascii"))

    def record(self, kind: str, value: dict[str, object]) -> None:
        self.frame(kind, json.dumps(value).encode())


def _stat(pid: str) -> tuple[int, int, str] | None:
    """``(session, group, state)`` of a process from ``/proc/PID/stat``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the name may hold spaces and parentheses
    if len(fields) < 4:
        return None
    return int(fields[3]), int(fields[2]), fields[0]


def _marked(pid: str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return needle in fh.read().split(b"\0")
    except OSError:
        return False


def members(sid: int, marker: str, exclude: tuple[int, ...]) -> list[int]:
    """The command's live processes: its session and group (the same id) and every process that
    carries the marker (a ``setsid`` or double-forked child), never the wrapper or its reaper."""
    needle = f"EXECMAGIC_RUN={marker}".encode()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc (a macOS node): the session and group, which killpg reaches, are all we find
        return []
    for name in names:
        if not name.isdigit() or int(name) in exclude:
            continue
        stat = _stat(name)
        if stat is None or stat[2] == "Z":
            continue
        if stat[0] == sid or stat[1] == sid or _marked(name, needle):
            found.append(int(name))
    return found


def signal_all(sig: int, sid: int, marker: str, exclude: tuple[int, ...]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(sid, sig)
    for pid in members(sid, marker, exclude):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def sweep(sig: int, grace: float, sid: int, marker: str, exclude: tuple[int, ...]) -> bool:
    """``sig`` to everything, the grace, then SIGKILL (a few rounds, for late forks); True when
    SIGKILL was needed."""
    signal_all(sig, sid, marker, exclude)
    deadline = time.monotonic() + grace
    while members(sid, marker, exclude) and time.monotonic() < deadline:
        time.sleep(0.05)
    escalated = False
    for _ in range(3):
        if not members(sid, marker, exclude):
            break
        escalated = True
        signal_all(signal.SIGKILL, sid, marker, exclude)
        time.sleep(0.05)
    return escalated


def _start_reaper(marker: str, grace: float) -> int:
    """Fork the reaper (see the module docstring); the write end of its pipe, which this process
    holds until it writes ``done``.  The reaper learns the command's session in a ``sid N`` line."""
    read_fd, write_fd = os.pipe()
    first = os.fork()
    if first:
        os.close(read_fd)
        os.waitpid(first, 0)
        return write_fd
    try:  # the middle process: a new session, fork the reaper, leave (so Ray's snapshot misses it)
        os.close(write_fd)
        os.setsid()
        if os.fork():
            os._exit(0)
        for sig in (*_STOP_SIGNALS, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        sid = 0
        done = False
        with os.fdopen(read_fd, "rb") as pipe:
            for line in pipe:
                words = line.split()
                if words[:1] == [b"sid"] and len(words) == 2:
                    sid = int(words[1])
                elif words == [b"done"]:
                    done = True
        if not done and sid:
            sweep(signal.SIGTERM, grace, sid, marker, (os.getpid(),))
    finally:
        os._exit(0)


def _handed(spec: dict) -> tuple[list[str], tuple[int, ...]]:
    """The command's argv, and the descriptor to pass it.  A script that must stand on no argv (a secret's:
    every user of the node reads an argv, and Ray's log starts with the entrypoint) comes in this
    process's environment, in pieces ``EXECMAGIC_SCRIPT_0``, ``_1``, …; they are taken out of it (the
    command's processes never see them), and with ``handed`` the script goes in a memory file whose
    number fills the boot's ``{fd}`` (the argv's last word), which reads it as ``bash -c`` would run it."""
    argv = list(spec["argv"])
    pieces: list[str] = []
    while f"{_SCRIPT_VAR}{len(pieces)}" in os.environ:
        pieces.append(os.environ.pop(f"{_SCRIPT_VAR}{len(pieces)}"))
    if not spec.get("handed"):
        return argv, ()
    try:
        fd = os.memfd_create("execmagic-script")
    except (AttributeError, OSError):  # not Linux: a file of its own, deleted at once
        with tempfile.TemporaryFile() as fh:
            fd = os.dup(fh.fileno())
    _write_all(fd, os.fsencode("".join(pieces)))
    os.lseek(fd, 0, os.SEEK_SET)
    argv[-1] = argv[-1].replace("{fd}", str(fd))
    return argv, (fd,)


def _catch_stop_signals() -> tuple[int, list[int]]:
    """Stop signals noted in a list (the loop acts on them), and a descriptor that wakes the loop's
    ``select`` on any signal, a child's exit included."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    asked: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        asked.append(signum)

    for sig in _STOP_SIGNALS:
        signal.signal(sig, on_signal)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # an exit wakes select through the wakeup fd
    return wake_r, asked


def _start_command(spec: dict, framer: _Framer, marker: str) -> subprocess.Popen[bytes] | int:
    """The command, in a session of its own and carrying the marker; the exit code to end with
    (126, 127) when it cannot start, which is said on its stderr and in the record."""
    argv, handed = _handed(spec)
    env = {**os.environ, "EXECMAGIC_RUN": marker}
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, env=env, cwd=spec.get("cwd") or None, pass_fds=handed,
                                close_fds=True)
    except OSError as exc:
        framer.frame("E", f"execmagic: cannot start {spec['argv'][0]!r} on {socket.gethostname()}: "
                          f"{exc.strerror or exc}\n".encode())
        code = 126 if not isinstance(exc, FileNotFoundError) else 127
        framer.record("X", {"how": "exit", "code": code})
        return code
    finally:
        for fd in handed:  # the command has its own
            os.close(fd)


class _Watch:
    """The command's life, watched: its output framed as it comes, a stop signal or the timeout
    answered by a sweep of its whole tree, what it left running swept when it ended."""

    def __init__(self, proc: subprocess.Popen[bytes], framer: _Framer, spec: dict, asked: list[int],
                 wake_r: int) -> None:
        self.proc = proc
        self.framer = framer
        self.marker = spec["marker"]
        self.grace = float(spec.get("grace") or 2.0)
        timeout = spec.get("timeout")
        self.deadline = time.monotonic() + float(timeout) if timeout else None
        self.asked = asked
        self.wake_r = wake_r
        self.exclude = (os.getpid(),)
        self.kinds = {proc.stdout.fileno(): "O", proc.stderr.fileno(): "E"}  # type: ignore[union-attr]
        for fd in self.kinds:
            os.set_blocking(fd, False)
        #: ``None`` while the command runs its course; ``"stopped"`` or ``"timeout"`` once we ended it.
        self.how: str | None = None
        self.escalated = False

    def run(self) -> None:
        """Until the command ended and its pipes are read (or held open past :data:`_DRAIN`)."""
        exited_at = None
        while True:
            now = time.monotonic()
            self._stop_if_asked(now)
            if exited_at is None and self.proc.poll() is not None:
                if self.how is None and members(self.proc.pid, self.marker, self.exclude):  # what it left running
                    sweep(signal.SIGTERM, _LEFTOVER_GRACE, self.proc.pid, self.marker, self.exclude)
                exited_at = now = time.monotonic()
            if exited_at is not None and (not self.kinds or now - exited_at > _DRAIN):
                return  # all read, or a pipe some stray process still holds: stop waiting for its EOF
            self._read(now)

    def _stop_if_asked(self, now: float) -> None:
        """The first stop signal, or the deadline: sweep the tree once with that signal."""
        if self.how is not None:
            return
        if self.asked:
            self.how, sig = "stopped", self.asked[0]
        elif self.deadline is not None and now >= self.deadline:
            self.how, sig = "timeout", signal.SIGTERM
        else:
            return
        self.escalated = sweep(sig, self.grace, self.proc.pid, self.marker, self.exclude) or self.escalated

    def _read(self, now: float) -> None:
        """Frame what the pipes hold, waiting at most until the deadline (or a fifth of a second)."""
        wait = 0.2 if self.deadline is None or self.how is not None else max(0.0, min(0.2, self.deadline - now))
        try:
            ready, _, _ = select.select([*self.kinds, self.wake_r], [], [], wait)
        except InterruptedError:
            return
        for fd in ready:
            if fd == self.wake_r:
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_r, 512)
                continue
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if data:
                self.framer.frame(self.kinds[fd], data)
            else:
                del self.kinds[fd]

    def outcome(self) -> tuple[dict[str, object], int]:
        """The record of how the command ended, and the exit code this wrapper ends with."""
        returncode = self.proc.wait()
        record: dict[str, object]
        if self.how == "timeout":
            record, code = {"how": "timeout"}, 124
        elif self.how == "stopped":
            record, code = {"how": "stopped", "signal": signal.Signals(self.asked[0]).name}, 128 + self.asked[0]
        elif returncode < 0:
            record, code = {"how": "signal", "signal": signal.Signals(-returncode).name}, 128 - returncode
        else:
            record, code = {"how": "exit", "code": returncode}, returncode
        record["code"] = code
        record["escalated"] = self.escalated
        return record, code


def run(spec: dict) -> int:
    framer = _Framer(spec["tag"])
    marker = spec["marker"]
    os.environ.pop("EXECMAGIC_RUN", None)  # only the command's processes may carry the marker
    framer.record("H", {"host": socket.gethostname(), "pid": os.getpid()})
    wake_r, asked = _catch_stop_signals()
    reaper = _start_reaper(marker, float(spec.get("grace") or 2.0))
    proc = _start_command(spec, framer, marker)
    if isinstance(proc, int):
        _write_all(reaper, b"done\n")
        return proc
    _write_all(reaper, f"sid {proc.pid}\n".encode())
    watch = _Watch(proc, framer, spec, asked, wake_r)
    watch.run()
    record, code = watch.outcome()
    framer.record("X", record)
    _write_all(reaper, b"done\n")
    return code


def main(argv: list[str]) -> int:
    """``wrapper SPEC``: SPEC is base64 of a JSON object (tag, marker, argv, cwd, timeout, grace)."""
    return run(json.loads(base64.b64decode(argv[1])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
