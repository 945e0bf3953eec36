"""A real single-node Ray head from the ``ray[default]`` wheel, for the tests and the benchmark.

``ray start --head --block`` runs in a session of its own, its dashboard and every port on
127.0.0.1, its temp folder in a folder of the caller's; :meth:`RayHead.stop` ends it by its process
group, then SIGKILLs whatever of it escaped the group -- found by a variable only the head's
processes carry (``EXECMAGIC_TEST_RAY_HEAD``).  Never ``ray stop``: it kills every Ray process of
the machine, other users' and other tests' included.

Ray binds some ports on every interface and advertises the machine's routable address, so the
tests run in a network namespace of their own (``unshare -n``, see ``.ci/run``), where only the
loopback exists.  The head is not a test's process: it is started without the test token
(``EXECMAGIC_TEST_TOKEN``), so the leak check does not count it; the jobs get the token through
their environment and are checked like any process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid

import psutil

from processes import TOKEN_VAR
from slurm_cluster import _free_ports as free_ports  # free ports on 127.0.0.1, as for SLURM's daemons

HEAD_VAR = "EXECMAGIC_TEST_RAY_HEAD"


def ray_program() -> str | None:
    """The ``ray`` command next to this Python (the venv's), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "ray")
    return beside if os.access(beside, os.X_OK) else shutil.which("ray")


def only_loopback() -> bool:
    """Whether this process sees no network but the loopback (inside ``unshare -n``)."""
    names = [name for _, name in socket.if_nameindex()]
    return names == ["lo"]


def why_not() -> str | None:
    """Why the Ray tests cannot run here; ``None`` when they can."""
    if ray_program() is None:
        return "Ray is not installed: pip install 'ray[default]==2.60.0' (the 'ray' extra)"
    if not only_loopback():
        return ("the Ray tests run in a network namespace of their own (Ray binds ports on every interface):"
                " unshare -n sh -c 'ip link set lo up && exec python -m pytest tests/ray' (as root; see .ci/run)")
    return None


class RayHead:
    """One ``ray start --head --block``; :meth:`start` waits for its dashboard, :meth:`stop` ends it."""

    def __init__(self, folder: str, cpus: int = 2) -> None:
        self.folder = folder
        self.cpus = cpus
        self.id = uuid.uuid4().hex
        gcs, dashboard, agent_grpc, agent_http, client = free_ports(5)
        self.address = f"http://127.0.0.1:{dashboard}"
        program = ray_program()
        assert program is not None
        self.argv = [program, "start", "--head", "--block", f"--port={gcs}", f"--dashboard-port={dashboard}",
                     "--dashboard-host=127.0.0.1", "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}",
                     "--num-gpus=0", f"--dashboard-agent-grpc-port={agent_grpc}",
                     f"--dashboard-agent-listen-port={agent_http}", f"--ray-client-server-port={client}",
                     "--disable-usage-stats", f"--temp-dir={os.path.join(folder, 'ray')}"]
        self.env = {k: v for k, v in os.environ.items() if k not in (TOKEN_VAR, "RAY_ADDRESS")}
        self.env[HEAD_VAR] = self.id
        # the jobs' entrypoints find this Python (and so the wrapper runs with it)
        self.env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), self.env.get("PATH", os.defpath)])
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_in: float | None = None

    def start(self, timeout: float = 120.0) -> RayHead:
        begin = time.monotonic()
        log = open(os.path.join(self.folder, "head.out"), "wb")  # noqa: SIM115 - the head owns it
        self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        while not self.ready():
            if self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"ray start exited with {self.proc.returncode}: {self.log_tail()}")
            if time.monotonic() - begin > timeout:
                self.stop()
                raise RuntimeError(f"Ray's dashboard did not answer within {timeout:g} s: {self.log_tail()}")
            time.sleep(0.1)
        self.started_in = time.monotonic() - begin
        return self

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/api/version", timeout=2) as answer:
                version = json.load(answer)
            with urllib.request.urlopen(f"{self.address}/api/jobs/", timeout=5) as answer:
                json.load(answer)
        except (OSError, ValueError):
            return False
        return "ray_version" in version

    def log_tail(self) -> str:
        with contextlib.suppress(OSError), open(os.path.join(self.folder, "head.out"), errors="replace") as fh:
            return fh.read()[-1500:]
        return ""

    def processes(self) -> list[psutil.Process]:
        """Every live process of this head (its variable is in their environment)."""
        found = []
        for proc in psutil.process_iter():
            try:
                if proc.environ().get(HEAD_VAR) == self.id and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
                continue
        return found

    def stop(self, grace: float = 3.0) -> None:
        """SIGTERM to the head's process group, then (Ray takes half a minute to wind down, and
        nothing of its state is kept) SIGKILL to the group and to whatever of this head is left,
        wherever it went."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        deadline = time.monotonic() + 5
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for proc in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
