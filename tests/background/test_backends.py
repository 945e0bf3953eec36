"""The backend interface: the registry runs shells on a backend it knows only through the protocol.

``PolledBackend`` is what a cluster backend looks like to the registry: no exit descriptor (the
reader polls), jobs that outlive the owner (no watchdog), streams the reader mirrors into logs.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from execmagic.background.backends import Backend, Handle, LocalBackend
from execmagic.background.registry import ShellRegistry
from execmagic.process.errors import UsageProblem
from execmagic.process.spec import Command
from execmagic.process.stop import StopReport
from waiting import wait_until


class PolledHandle:
    poll_interval = 0.02
    guard = None
    enforces_timeout = False

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.job_id = f"job{proc.pid}"
        self.streams = {}
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            assert pipe is not None
            fd = os.dup(pipe.fileno())
            pipe.close()
            os.set_blocking(fd, False)
            self.streams[name] = fd
        self.stops: list[tuple[int, float]] = []

    @property
    def returncode(self):
        return self.proc.returncode

    def poll(self):
        return self.proc.poll()

    def exit_fd(self):
        return None

    def stop(self, sig, grace):
        self.stops.append((sig, grace))
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait()
        return StopReport(signalled=(self.pid,), killed=(), survivors=())

    def leftovers(self):
        return False

    def describe(self):
        return None

    def remove_files(self):
        pass

    def detach(self):
        pass


class PolledBackend:
    name = "polled"

    def __init__(self) -> None:
        self.handles: list[PolledHandle] = []

    def start(self, command, *, marker, log_paths, timeout=None, shell_id="job"):
        assert set(log_paths) == {"stdout", "stderr"} and all(os.path.exists(p) for p in log_paths.values())
        proc = subprocess.Popen(list(command.argv), cwd=command.cwd, env=dict(command.env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.handles.append(PolledHandle(proc))
        return self.handles[-1]

    def reattach(self, job_id, *, marker):
        raise UsageProblem("no")


def sh(code: str, tmp_path) -> Command:
    return Command(argv=("sh", "-c", code), cwd=str(tmp_path), env=dict(os.environ), display=code)


@pytest.fixture
def registry(tmp_path):
    backend = PolledBackend()
    reg = ShellRegistry(log_dir=lambda: str(tmp_path / "logs"), backend=backend, grace=0.5)
    yield reg
    reg.close()


def test_the_protocols_describe_the_local_backend():
    backend: Backend = LocalBackend()
    assert backend.name == "local"
    with pytest.raises(UsageProblem, match="cannot be reattached"):
        backend.reattach("123", marker="m")
    assert Handle is not None


def test_a_polled_backend_streams_reads_and_ends(registry, tmp_path):
    info = registry.start(sh("echo one; echo two >&2; exit 3", tmp_path), marker_prefix="t")
    out = wait_until(lambda: got if (got := registry.read(info.id, wait=10)).at_end else None, 30,
                     "the shell to end", interval=0)
    assert out.shell.status == "exited 3" and out.shell.exit_code == 3
    assert registry.read(info.id, whole_log=True).stdout == "one\n"
    assert registry.read(info.id, whole_log=True, stream="stderr").stderr == "two\n"
    assert registry.watchdog_pid is None  # its jobs carry no guard: nothing for a watchdog to stop


def test_a_polled_backend_is_stopped_through_its_handle(registry, tmp_path):
    info = registry.start(sh("echo ready; exec sleep 30", tmp_path), marker_prefix="t", name="job")
    assert registry.read("job", wait=10).stdout == "ready\n"
    outcome = registry.kill("job", sig="INT", grace=0.25)
    assert outcome.message == "job stopped with SIGINT" and outcome.shell.status == "killed"
    assert registry.backend.handles[0].stops == [(signal.SIGINT, 0.25)]
    assert registry.info(info.id).runtime_s < 10


def test_a_polled_backend_timeout_is_noticed_by_the_reader(registry, tmp_path):
    registry.start(sh("exec sleep 30", tmp_path), marker_prefix="t", name="slow", timeout=0.2)
    out = registry.read("slow", wait=10)
    assert out.shell.status == "timed out" and not out.shell.running
