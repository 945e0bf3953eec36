"""A remote job's state is typed, and said the same way by every backend: Ray's states and its
wrapper's records become the same :class:`JobStatus` values as SLURM's, rendered by one function,
and a look that failed is said once, by the shared handle, until the next look succeeds.

The same on the real engines is in ``tests/slurm`` and ``tests/ray``.
"""

from __future__ import annotations

import os
import signal

import pytest

from execmagic.background.backends.filepump import Pipe
from execmagic.background.backends.poller import Poller
from execmagic.background.backends.ray.client import JobInfo, RayPhase
from execmagic.background.backends.ray.framing import Outcome
from execmagic.background.backends.ray.status import NOT_STARTED, ended_status, status_of
from execmagic.background.backends.remote import RemoteHandle
from execmagic.background.backends.slurm.cli import JobState
from execmagic.background.backends.slurm.status import status_of as slurm_status_of
from execmagic.background.backends.status import JobStatus, Phase

WAITING = "Job has not started yet. It may be waiting for resources (CPUs, GPUs) to become available.\nMore."


def info(phase, **fields):
    return JobInfo(submission_id="raysubmit_x", phase=phase, **fields)


def test_a_queued_or_running_job_reads_the_same_on_ray_as_on_slurm():
    ray_queued = status_of(info(RayPhase.PENDING, message=WAITING))
    assert ray_queued.phase is Phase.PENDING and ray_queued.words() == f"queued ({WAITING.split(chr(10))[0][:-1]})"
    slurm_queued = slurm_status_of(JobState(job_id="7", state="PENDING", reason="Resources", nodes=""))
    assert slurm_queued.words() == "queued (Resources)"
    assert status_of(info(RayPhase.PENDING)).words() == "queued"
    assert status_of(info(RayPhase.RUNNING), "node7").words() == "running on node7"
    assert slurm_status_of(JobState(job_id="7", state="RUNNING", nodes="node7")).words() == "running on node7"
    assert status_of(info(RayPhase.RUNNING)).words() == "running"  # before the wrapper named its node
    for ended in (RayPhase.STOPPED, RayPhase.SUCCEEDED, RayPhase.FAILED):
        assert status_of(info(ended), "node7") is None  # its end is decided once its log is read


@pytest.mark.parametrize(("outcome", "expected"), [
    (Outcome("exit", 3), (3, Phase.EXITED, None)),
    (Outcome("signal", 128 + signal.SIGSEGV, "SIGSEGV"), (-signal.SIGSEGV, Phase.EXITED, None)),
    (Outcome("stopped", 128 + signal.SIGTERM, "SIGTERM"), (-signal.SIGTERM, Phase.KILLED, "killed")),
    (Outcome("timeout", 124), (124, Phase.TIMED_OUT, "timed out")),
    (Outcome("signal", 137, "SIGNOSUCH"), (137, Phase.EXITED, None)),  # a name this system lacks: its code
])
def test_the_wrappers_record_decides_the_end(outcome, expected):
    code, status = ended_status(outcome, info(RayPhase.FAILED, driver_exit_code=1), started=True, wrapper_ran=True)
    assert (code, status.phase, status.words()) == expected


def test_without_a_record_rays_fields_decide_the_end():
    def end(job, *, started=True, wrapper_ran=True):
        code, status = ended_status(None, job, started=started, wrapper_ran=wrapper_ran)
        return code, status.words()

    assert end(info(RayPhase.STOPPED)) == (-signal.SIGTERM, "killed")
    assert end(info(RayPhase.STOPPED), started=False) == (-signal.SIGTERM, "killed (before it started)")
    assert NOT_STARTED.words() == "killed (before it started)"
    assert end(info(RayPhase.FAILED, driver_exit_code=-9)) == (-9, None)  # the return code says "killed by SIGKILL"
    assert end(info(RayPhase.SUCCEEDED, driver_exit_code=0)) == (0, None)
    code, words = end(info(RayPhase.FAILED, driver_exit_code=127), wrapper_ran=False)
    assert code == 127 and words.startswith("failed: the job's wrapper did not start on the node (exit 127;")
    assert end(info(RayPhase.FAILED, error_type="RUNTIME_ENV_SETUP_FAILED", message="pip failed\nTraceback")) == (
        1, "failed: RUNTIME_ENV_SETUP_FAILED (pip failed)")
    assert end(None) == (1, "failed: Ray said nothing of the job")


def test_a_failed_look_is_said_after_what_was_known_until_the_next_look_succeeds():
    pipe = Pipe()
    handle = RemoteHandle({"stdout": pipe}, Poller("execmagic-test", 1.0), JobStatus(Phase.PENDING, reason="Priority"))
    try:
        handle.fail("no answer from http://head:8265 within 30 s")
        assert handle.describe() == "queued (Priority; status unknown: no answer from http://head:8265 within 30 s)"
        assert handle.status.phase is Phase.PENDING and handle.status.reason == "Priority"
        handle._learn(JobStatus(Phase.RUNNING, node="node7"))
        assert handle.describe() == "running on node7"
        handle.fail("ECONNREFUSED")
        assert handle.describe() == "running on node7 (status unknown: ECONNREFUSED)"
        handle._end(1, JobStatus(Phase.LOST, reason="Ray no longer knows the job"))
        handle.fail("ECONNREFUSED")  # an ended job is what it ended as
        assert handle.describe() == "lost: Ray no longer knows the job" and handle.returncode == 1
        handle._end(0, JobStatus(Phase.EXITED))  # the first to learn the end wins
        assert handle.returncode == 1 and handle.ended.is_set()
    finally:
        handle.detach()
        os.close(pipe.read_fd)
