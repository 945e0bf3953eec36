"""SLURM's own client commands (``sbatch``, ``squeue``, ``scontrol``, ``scancel``), run and read.

The backend never talks to the controller itself: SLURM's commands know the site's configuration,
authentication and quirks.  Each call here is bounded by a timeout (an unreachable controller
makes them retry for a while; a kernel must not hang on it), and each failure becomes one line
built from SLURM's own message, so a user sees *why* (``invalid partition specified: gpu``).
"""

from __future__ import annotations

import enum
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence

from ....process.errors import PreExecError
from ....process.records import record

__all__ = [
    "ENDED_STATES", "PENDING_STATES", "Failure", "JobState", "SlurmError", "cancel", "cluster_name", "find_program",
    "job_record", "queue", "run_slurm", "slurm_message",
]

#: The job states that mean "not started yet" (squeue's long names).
PENDING_STATES = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"})
#: The states of a job that ended (``squeue --states=all`` lists them until ``MinJobAge``).
ENDED_STATES = frozenset({"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                          "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"})


class Failure(enum.Enum):
    """How a SLURM command failed, for code to decide on (the message is for people)."""

    #: The command is not installed here.
    MISSING = "ENOENT"
    #: No answer within the timeout (an unreachable controller is retried by SLURM's commands).
    TIMEOUT = "ETIMEDOUT"
    #: It ran and refused, with SLURM's own message.
    REFUSED = "EINVAL"
    #: It answered something this module cannot read.
    PROTOCOL = "EPROTO"


class SlurmError(PreExecError):
    """A SLURM command failed or timed out; ``str()`` is the one-line ``exec: … (CODE)`` form, and
    the fields say what failed: :attr:`failure`, :attr:`program`, its :attr:`returncode` and
    SLURM's one-line :attr:`message`."""

    def __init__(self, issue: str, failure: Failure, *, program: str, message: str = "",
                 returncode: int | None = None) -> None:
        super().__init__(issue, failure.value, exit_code=127 if failure is Failure.MISSING else 1)
        self.failure = failure
        self.program = program
        self.message = message
        self.returncode = returncode


@record
class JobState:
    """One job as ``squeue`` or ``scontrol`` sees it."""

    job_id: str
    state: str  # PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, …
    reason: str = ""
    nodes: str = ""
    name: str = ""
    comment: str = ""
    exit_code: tuple[int, int] | None = None  # (code, signal) from ExitCode=N:S

    @property
    def pending(self) -> bool:
        return self.state in PENDING_STATES

    @property
    def ended(self) -> bool:
        return self.state in ENDED_STATES


def find_program(name: str) -> str:
    """The path of a SLURM command on the kernel's PATH (not the job's: a session may have changed
    that), or the one-line error that SLURM's client commands are missing."""
    found = shutil.which(name, path=os.environ.get("PATH", os.defpath))
    if found is None:
        raise SlurmError(f"{name} not found in PATH: SLURM's client commands are not installed here",
                         Failure.MISSING, program=name)
    return found


def slurm_message(program: str, stderr: str) -> str:
    """SLURM's error output as one line: its ``error:`` lines without the ``sbatch: error:`` prefixes,
    without the "Try sbatch --help" advice."""
    parts = []
    for line in stderr.splitlines():
        text = line.strip()
        for prefix in (f"{program}: ", "error: ", "fatal: "):
            if text.startswith(prefix):
                text = text[len(prefix):].strip()
        if text and not text.startswith("Try ") and text not in parts:
            parts.append(text)
    return "; ".join(parts) or "no message"


def run_slurm(argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
              cwd: str | None = None, what: str | None = None) -> str:
    """Run one SLURM command and return its stdout; raise :class:`SlurmError` with SLURM's own
    message when it fails, or when it has not answered within ``timeout`` seconds (an unreachable
    controller is retried by SLURM's commands for a while)."""
    program = os.path.basename(argv[0])
    path = find_program(argv[0])
    try:
        done = subprocess.run([path, *argv[1:]], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{what or program} got no answer from SLURM within {timeout:g} s"
                         " (is the controller reachable?)", Failure.TIMEOUT, program=program) from None
    if done.returncode != 0:
        message = slurm_message(program, done.stderr)
        raise SlurmError(f"{what or program} failed: {message}", Failure.REFUSED, program=program, message=message,
                         returncode=done.returncode)
    return done.stdout


_SQUEUE_FORMAT = "%i|%T|%r|%N|%j|%k"


def queue(*, timeout: float, env: Mapping[str, str] | None = None, every_state: bool = False,
          name: str | None = None) -> dict[str, JobState]:
    """Every job of this user that SLURM still lists (pending, running, completing): one ``squeue``.

    ``every_state``: also the jobs that ended and the controller still remembers (``MinJobAge``), so
    a job missing from the answer is one SLURM forgot -- known from a listing that succeeded, never
    guessed from a command that failed.  ``name``: only the jobs of that name."""
    argv = ["squeue", "--me", "--noheader", f"--format={_SQUEUE_FORMAT}"]
    if every_state:
        argv.append("--states=all")
    if name is not None:
        argv.append(f"--name={name}")
    out = run_slurm(argv, timeout=timeout, env=env)
    jobs = {}
    for line in out.splitlines():
        fields = line.split("|", 5)
        if len(fields) == 6:
            job_id, state, reason, nodes, name, comment = fields
            jobs[job_id] = JobState(job_id, state, "" if reason == "None" else reason, nodes, name,
                                    "" if comment == "(null)" else comment)
    return jobs


def job_record(job_id: str, *, timeout: float, env: Mapping[str, str] | None = None) -> JobState:
    """What ``scontrol show job`` knows of a job that ended, with its exit code (``squeue`` has none).
    Raises :class:`SlurmError` when it cannot say, whatever the reason: whether SLURM forgot the job
    is :func:`queue`'s to say (``every_state``)."""
    out = run_slurm(["scontrol", "show", "job", "--oneliner", job_id], timeout=timeout, env=env)
    fields = dict(word.split("=", 1) for word in out.split() if "=" in word)
    exit_code = None
    code, _, sig = fields.get("ExitCode", "").partition(":")
    if code.isdigit() and sig.isdigit():
        exit_code = (int(code), int(sig))
    return JobState(job_id, fields.get("JobState", "UNKNOWN"), _none(fields.get("Reason", "")),
                    _none(fields.get("NodeList", "")), fields.get("JobName", ""), _none(fields.get("Comment", "")),
                    exit_code)


def cluster_name(*, timeout: float, env: Mapping[str, str] | None = None) -> str:
    """The cluster's ``ClusterName`` (``scontrol show config``): job ids are unique only within one
    cluster, so files named after a job id must name the cluster too."""
    out = run_slurm(["scontrol", "show", "config"], timeout=timeout, env=env)
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "ClusterName" and value.strip():
            return value.strip()
    raise SlurmError("scontrol show config named no ClusterName", Failure.PROTOCOL, program="scontrol")


def _none(value: str) -> str:
    return "" if value in ("None", "(null)") else value


def cancel(job_id: str, *, signal: str | None, timeout: float, env: Mapping[str, str] | None = None) -> None:
    """``scancel --signal=SIG --full JOB`` (every step and the batch shell), or a plain ``scancel``
    (``signal`` None: SLURM ends the job its own way, the only way for a pending one)."""
    argv = ["scancel", f"--signal={signal}", "--full", job_id] if signal else ["scancel", job_id]
    run_slurm(argv, timeout=timeout, env=env, what=f"scancel of job {job_id}")
