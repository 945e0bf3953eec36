"""``python -m execmagic.background.backends.ray.follow``: a command run as a Ray job, in the foreground.

What :meth:`~.cluster.RayCluster.foreground_command` starts for ``%exec --on ray``: a local process
the foreground loop treats like any command.  It submits the job (settings in the environment
variable ``EXECMAGIC_RAY_FOLLOW``), writes the job's stdout and stderr to its own as they arrive,
and ends as the command did: its exit code, or death by the command's signal, so the cell's status
reads as for a local run.  A stop signal (the stop button's SIGINT, the loop's SIGTERM at a timeout,
a dead kernel's watchdog) stops the job -- Ray's stop, the wrapper's sweep -- while the output keeps
flowing, and the process ends when the job has.

It starts in the run's folder (the foreground loop's, the one the policy checks), a notebook's folder,
which an agent may write; ``python -m`` would put that folder first on the module path, and an
``execmagic.py`` (or ``execmagic/``) planted there would run unconfined as this process.  So it starts
as :func:`follower_argv` says: ``-P`` from Python 3.11 (no folder of the command line's on the path),
else ``-c`` :data:`BOOTSTRAP`, which takes that folder off the path before it imports anything (``site``
runs before the folder is put there).  Its environment is the kernel's, not the run's (see
:meth:`~.cluster.RayCluster.foreground_command`).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import selectors
import signal
import sys
import threading

from ....process.spec import Command
from ..status import Phase
from .client import RayError
from .cluster import RayCluster
from .entry import BOOTSTRAP, follower_argv
from .handle import RayHandle
from .options import RayOptions

__all__ = ["BOOTSTRAP", "follower_argv", "main"]

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _backend(spec: dict) -> RayCluster:
    raw = dict(spec.get("options") or {})
    raw["env"] = tuple(tuple(pair) for pair in raw.get("env") or ())
    return RayCluster(RayOptions(**raw), address=spec["address"], grace=float(spec.get("grace") or 2.0),
                      request_timeout=float(spec.get("request_timeout") or 30.0))


def main() -> int:
    spec = json.loads(os.environ.pop("EXECMAGIC_RAY_FOLLOW"))
    # the job's processes carry a marker of their own: on a node that is this machine, the local
    # foreground's sweep must not reach past the job's own stop
    marker = f"{os.environ.get('EXECMAGIC_RUN') or 'ray'}-job-{secrets.token_hex(4)}"
    command = Command(argv=tuple(spec["argv"]), cwd=os.getcwd(), env={}, display=spec.get("display") or "",
                      script_boot=spec.get("script_boot"))
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    asked: list[int] = []
    for sig in _STOP_SIGNALS:
        signal.signal(sig, lambda signum, _frame: asked.append(signum))
    signal.set_wakeup_fd(wake_w)
    try:
        backend = _backend(spec)
        handle = backend.start(command, marker=marker, log_paths={}, timeout=spec.get("timeout"),
                               shell_id=spec.get("name") or "exec", job_id=spec.get("job_id"))
    except (RayError, ValueError, OSError) as exc:
        _write(2, f"{exc}\n".encode())
        return getattr(exc, "exit_code", 1)
    selector = selectors.DefaultSelector()
    targets = {handle.streams["stdout"]: 1, handle.streams["stderr"]: 2}
    for fd in targets:
        selector.register(fd, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    stopping: threading.Thread | None = None
    while targets:
        for key, _ in selector.select():
            fd = int(key.fd)
            if fd == wake_r:
                os.read(wake_r, 512)
                continue
            data = os.read(fd, 1 << 16)
            if data:
                _write(targets[fd], data)
            else:
                selector.unregister(fd)
                os.close(fd)
                del targets[fd]
        if asked and stopping is None:  # stop on a thread: the output keeps flowing meanwhile
            stopping = threading.Thread(target=_stop, args=(handle,), daemon=True)
            stopping.start()
    handle.ended.wait()
    returncode = handle.returncode if handle.returncode is not None else 1
    status = handle.status
    if status.reason or status.phase not in (Phase.EXITED, Phase.KILLED):
        # what this process's own end cannot say (its exit code, its death by the job's signal): a
        # timeout, a failure, a job lost or stopped before it started
        _write(2, f"execmagic: Ray job {handle.job_id} {status.words()}\n".encode())
    if returncode < 0:  # die of the command's signal, so the foreground reports it as for a local run
        signal.set_wakeup_fd(-1)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGSEGV of the job leaves no core here
        with contextlib.suppress(ValueError, OSError):
            signal.signal(-returncode, signal.SIG_DFL)  # SIGKILL and SIGSTOP have no handler to reset
        os.kill(os.getpid(), -returncode)
        return 128 - returncode
    return returncode


def _stop(handle: RayHandle) -> None:
    with contextlib.suppress(RayError):
        handle.stop(signal.SIGTERM, 0)


if __name__ == "__main__":
    sys.exit(main())
