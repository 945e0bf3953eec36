"""A run on Ray puts no secret on any argv, nor in Ray's record or log of the job.

``{db_password}`` is shown ``[REDACTED]``, yet the value is in the script: in the job's entrypoint (which
Ray's log starts with, and its job list shows) and on the command's argv on the node, every user of the
node reads it in ``ps``.  The script travels in the job's environment instead (``env_vars``), and the
node's wrapper hands it to the command by a descriptor, keeping ``bash -c``'s ways.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import shlex
import threading

import psutil
import pytest

import execmagic
from execmagic.background.backends.ray import RayOptions
from execmagic.background.backends.ray.backend import RayBackend
from execmagic.background.backends.script_env import SCRIPT_VAR
from processes import TOKEN_VAR
from waiting import wait_until

pytestmark = pytest.mark.timeout(120)

#: Makes ``ready``, waits for ``go`` to go, then shows ``bash -c``'s ways: ``$0``, a line number, no piece of
#: the script left in the environment, and its own ``exit``.
_SCRIPT = ('echo {db_password} > /dev/null; touch ready; while [ -e go ]; do sleep 0.02; done\n'
           'echo "$0 $LINENO $(env | grep -c ^' + SCRIPT_VAR + ')"\n'
           'exit 3\n'
           'echo never\n')


def _spec_of(entrypoint: str) -> str:
    """What the entrypoint's base64 spec says, as text (base64 hides nothing from who reads it)."""
    return base64.b64decode(shlex.split(entrypoint)[-1]).decode()


def _looked_at(backend, work, secret, job_id) -> None:
    """Wait for the job to start, read what everyone reads, then let it go on; assert nothing was there."""
    try:
        wait_until(lambda: os.path.exists(work / "ready"), 60, "the job to start")
        seen = {f"pid {p.pid}": " ".join(p.info["cmdline"] or ()) for p in psutil.process_iter(["cmdline"])
                if p.pid != os.getpid()}  # every user of the machine, here also the node
        client = backend.ray.client
        entrypoint = client.info(job_id()).entrypoint
        seen["the job's entrypoint"] = entrypoint + _spec_of(entrypoint)
        seen["the job's log"] = client.logs(job_id())
    finally:
        os.remove(work / "go")
    assert {where: text for where, text in seen.items() if secret in text} == {}
    assert json.loads(_spec_of(entrypoint))["handed"]


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "w"
    path.mkdir()
    (path / "go").touch()
    return path


@pytest.fixture
def backend(ray, no_leftover_processes, work):
    """Jobs that run in ``work`` (the node is this machine) and carry the test's token."""
    return RayBackend(RayOptions(env=((TOKEN_VAR, no_leftover_processes),), cwd=str(work)), address=ray.address,
                   grace=1.0, request_timeout=20)


def test_a_background_job_puts_no_secret_on_any_argv_nor_in_rays_record(engine, backend, work):
    secret = f"s3cr3t-{os.urandom(6).hex()}"
    info = execmagic.start(_SCRIPT, params={"db_password": secret}, on=backend, name="secret", engine=engine)
    _looked_at(backend, work, secret, lambda: info.job_id)
    wait_until(lambda: execmagic.read("secret", wait=5, engine=engine).at_end, 60, "the job to end")
    out = execmagic.read("secret", whole_log=True, engine=engine)
    assert (out.stdout, out.shell.exit_code) == ("bash 2 0\n", 3), out


def test_a_foreground_run_puts_no_secret_on_any_argv_nor_in_rays_record(engine, backend, work):
    secret = f"s3cr3t-{os.urandom(6).hex()}"
    plan = engine.plan_script(_SCRIPT, params={"db_password": secret}, save_session=False)
    job = backend.foreground(plan.command, name=f"secret-{os.urandom(4).hex()}")
    results = []
    worker = threading.Thread(target=lambda: results.append(engine.run(dataclasses.replace(plan, command=job.command))))
    worker.start()
    try:
        _looked_at(backend, work, secret, lambda: job.job_id)
    finally:
        worker.join(60)
        job.finish(stopped=False)
    (result,) = results
    assert (result.stdout, result.exit_code) == ("bash 2 0\n", 3), result.stderr
