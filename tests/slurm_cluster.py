"""A real single-node SLURM cluster in a temp folder, for the tests, the benchmark and the notebook.

Debian's packages (``apt-get install -y slurmctld slurmd slurm-client munge``) give the daemons;
this writes a ``slurm.conf`` and a munge key into a folder, starts ``munged``, ``slurmctld`` and
``slurmd`` as children of this process (non-default ports, munge's own socket, everything on
127.0.0.1, state and spool in the folder), waits until the node is idle, and stops them by pid.

The daemons are the cluster, not a test's processes: they are started without the test token
(``EXECMAGIC_TEST_TOKEN``) in their environment, so the leak check does not count them, while the
jobs they run get the environment of whoever submitted them and are checked like any process.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import secrets
import shutil
import socket
import subprocess
import time

from processes import TOKEN_VAR

DAEMONS = ("munged", "slurmctld", "slurmd")
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")


def find_daemon(name: str) -> str | None:
    return shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), *_SBIN]))


def missing() -> list[str]:
    """What of SLURM and munge is not installed (the tests skip when this is not empty)."""
    return [name for name in (*DAEMONS, "sbatch", "srun", "squeue", "scontrol", "scancel") if not find_daemon(name)]


def _free_ports(count: int) -> list[int]:
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_config(folder: str, cpus: int = 2, name: str = "execmagic-test") -> str:
    """Write ``slurm.conf`` and the munge key into ``folder``; return the config's path."""
    host = socket.gethostname().split(".")[0]
    user = getpass.getuser()
    ctld_port, slurmd_port = _free_ports(2)
    for sub in ("state", "spool", "munge"):
        os.makedirs(os.path.join(folder, sub), mode=0o700, exist_ok=True)
    key = os.path.join(folder, "munge", "munge.key")
    with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        fh.write(secrets.token_bytes(1024))
    conf = os.path.join(folder, "slurm.conf")
    lines = [
        f"ClusterName={name}",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        f"SlurmUser={user}",
        f"SlurmdUser={user}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={os.path.join(folder, 'munge', 'munge.socket')}",
        f"StateSaveLocation={os.path.join(folder, 'state')}",
        f"SlurmdSpoolDir={os.path.join(folder, 'spool')}",
        f"SlurmctldPidFile={os.path.join(folder, 'slurmctld.pid')}",
        f"SlurmdPidFile={os.path.join(folder, 'slurmd.pid')}",
        f"SlurmctldLogFile={os.path.join(folder, 'slurmctld.log')}",
        f"SlurmdLogFile={os.path.join(folder, 'slurmd.log')}",
        "ProctrackType=proctrack/pgid",
        "TaskPlugin=task/none",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0",
        "MpiDefault=none",
        "ReturnToService=2",
        "MinJobAge=300",
        "KillWait=5",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
        f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
    ]
    with open(conf, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return conf


class Cluster:
    """The three daemons of a one-node cluster, started in ``folder``; :meth:`stop` ends them."""

    def __init__(self, folder: str, cpus: int = 2, name: str = "execmagic-test") -> None:
        self.folder = folder
        self.name = name
        self.conf = write_config(folder, cpus, name)
        self.env = {k: v for k, v in os.environ.items() if k != TOKEN_VAR}
        self.env["SLURM_CONF"] = self.conf
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.started_in: float | None = None

    def _spawn(self, name: str, *args: str) -> None:
        path = find_daemon(name)
        assert path is not None, f"{name} is not installed"
        log = open(os.path.join(self.folder, f"{name}.out"), "wb")  # noqa: SIM115 - the daemon owns it
        self.procs[name] = subprocess.Popen([path, *args], env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def start(self, timeout: float = 60.0) -> Cluster:
        begin = time.monotonic()
        munge = os.path.join(self.folder, "munge")
        self._spawn("munged", "--foreground", "--force", f"--socket={munge}/munge.socket",
                    f"--key-file={munge}/munge.key", f"--pid-file={munge}/munged.pid",
                    f"--log-file={munge}/munged.log", f"--seed-file={munge}/munged.seed")
        self._wait(lambda: os.path.exists(f"{munge}/munge.socket"), begin + timeout, "munged")
        self._spawn("slurmctld", "-D", "-f", self.conf)
        self._spawn("slurmd", "-D", "-f", self.conf)
        self._wait(self.idle, begin + timeout, "the node to be idle")
        self.started_in = time.monotonic() - begin
        return self

    def _wait(self, ready, deadline: float, what: str) -> None:
        while not ready():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"{name} exited with {proc.returncode}: {self.log_tail(name)}")
            if time.monotonic() > deadline:
                tails = {n: self.log_tail(n) for n in self.procs}
                self.stop()
                raise RuntimeError(f"timed out waiting for {what}: {tails}")
            time.sleep(0.05)

    def log_tail(self, name: str) -> str:
        with contextlib.suppress(OSError), open(os.path.join(self.folder, f"{name}.out"), errors="replace") as fh:
            return fh.read()[-1500:]
        return ""

    def run(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """A SLURM client command against this cluster."""
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)

    def idle(self) -> bool:
        try:
            out = self.run("sinfo", "--noheader", "--format=%t", timeout=5)
        except subprocess.TimeoutExpired:
            return False
        return out.returncode == 0 and out.stdout.split() == ["idle"]

    def stop(self) -> None:
        """Cancel what still runs on this private cluster, then end the daemons by pid, newest first."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.run("scancel", "--full", "--signal=KILL", "--me", timeout=10)
                self.run("scancel", "--me", timeout=10)
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
