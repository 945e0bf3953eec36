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


def run(spec: dict) -> int:
    framer = _Framer(spec["tag"])
    marker = spec["marker"]
    grace = float(spec.get("grace") or 2.0)
    timeout = spec.get("timeout")
    os.environ.pop("EXECMAGIC_RUN", None)  # only the command's processes may carry the marker
    framer.record("H", {"host": socket.gethostname(), "pid": os.getpid()})
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
    reaper = _start_reaper(marker, grace)
    argv, handed = _handed(spec)
    env = {**os.environ, "EXECMAGIC_RUN": marker}
    cwd = spec.get("cwd") or None
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, env=env, cwd=cwd,
                                pass_fds=handed, close_fds=True)
    except OSError as exc:
        framer.frame("E", f"execmagic: cannot start {spec['argv'][0]!r} on {socket.gethostname()}: "
                          f"{exc.strerror or exc}\n".encode())
        code = 126 if not isinstance(exc, FileNotFoundError) else 127
        framer.record("X", {"how": "exit", "code": code})
        _write_all(reaper, b"done\n")
        return code
    finally:
        for fd in handed:  # the command has its own
            os.close(fd)
    _write_all(reaper, f"sid {proc.pid}\n".encode())
    exclude = (os.getpid(),)
    kinds = {proc.stdout.fileno(): "O", proc.stderr.fileno(): "E"}  # type: ignore[union-attr]
    for fd in kinds:
        os.set_blocking(fd, False)
    deadline = time.monotonic() + float(timeout) if timeout else None
    how, stop_sig, escalated = None, 0, False
    exited_at = None
    while True:
        now = time.monotonic()
        if how is None and asked:
            how, stop_sig = "stopped", asked[0]
        elif how is None and deadline is not None and now >= deadline:
            how, stop_sig = "timeout", signal.SIGTERM
        if how is not None and stop_sig:
            escalated = sweep(stop_sig, grace, proc.pid, marker, exclude) or escalated
            stop_sig = 0
        if exited_at is None and proc.poll() is not None:
            if how is None and members(proc.pid, marker, exclude):  # what the command left running
                sweep(signal.SIGTERM, _LEFTOVER_GRACE, proc.pid, marker, exclude)
            exited_at = now = time.monotonic()
        if exited_at is not None and (not kinds or now - exited_at > _DRAIN):
            break  # all read, or a pipe some stray process still holds: stop waiting for its EOF
        wait = 0.2 if deadline is None or how is not None else max(0.0, min(0.2, deadline - now))
        try:
            ready, _, _ = select.select([*kinds, wake_r], [], [], wait)
        except InterruptedError:
            continue
        for fd in ready:
            if fd == wake_r:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 512)
                continue
            try:
                data = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if data:
                framer.frame(kinds[fd], data)
            else:
                del kinds[fd]
    returncode = proc.wait()
    record: dict[str, object]
    if how == "timeout":
        record, code = {"how": "timeout"}, 124
    elif how == "stopped":
        record, code = {"how": "stopped", "signal": signal.Signals(asked[0]).name}, 128 + asked[0]
    elif returncode < 0:
        record, code = {"how": "signal", "signal": signal.Signals(-returncode).name}, 128 - returncode
    else:
        record, code = {"how": "exit", "code": returncode}, returncode
    record["code"] = code
    record["escalated"] = escalated
    framer.record("X", record)
    _write_all(reaper, b"done\n")
    return code


def main(argv: list[str]) -> int:
    """``wrapper SPEC``: SPEC is base64 of a JSON object (tag, marker, argv, cwd, timeout, grace)."""
    return run(json.loads(base64.b64decode(argv[1])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
