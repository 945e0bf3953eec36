"""``--on ray`` through the backend seam, against the real head: the magics (``%bg``, ``%bgout``,
``%kill``, ``%exec``), ``execmagic.start(on="ray")``, the Toolbox's ``background_on`` and a second
engine finding the first one's job -- the same paths ``--on slurm`` takes, with no code of their own.

The test's token reaches the job's processes on the node through ``--env`` (a variable the notebook
sets is sent with the job; the kernel's inherited ones are not), so the leak check covers them.
"""

from __future__ import annotations

import time

import pytest
from IPython.core.error import UsageError

import execmagic
from execmagic.background.backends import registry
from execmagic.background.backends.ray.backend import sent_environment
from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.engine import Engine, RunOptions
from magic_calls import magic
from processes import TOKEN_VAR, commands_with
from waiting import wait_until

pytestmark = [pytest.mark.watchdog_outlives_test, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def ip(notebook_shell):
    return notebook_shell


@pytest.fixture
def token_sent(monkeypatch, no_leftover_processes):
    """``--env`` words that send the test's token with the job (it differs from the kernel's then)."""
    monkeypatch.delenv(TOKEN_VAR)
    return f"--env {TOKEN_VAR}={no_leftover_processes}"


@pytest.fixture
def fresh(ip, ray, tmp_path):
    magics = ip.magics_manager.registry["ExecMagics"]
    ip.run_line_magic("config", f"ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
    ip.run_line_magic("config", "ExecMagics.kill_grace = 0.5")
    ip.run_line_magic("config", f"RayBackend.address = {ray.address!r}")
    yield magics
    magics.engine.shells.kill_all()
    magics.engine.shells.cleanup()
    ip.run_line_magic("config", "RayBackend.address = ''")


def data(cap, mime="text/plain"):
    return [o.data[mime] for o in cap.outputs if mime in o.data]


def bgout_until_end(ip, shell_id, limit=60.0):
    texts, errs = [], []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        cap = magic(ip, "bgout", f"{shell_id} --wait 5")
        texts.append(cap.stdout)
        errs.append(cap.stderr)
        info = data(cap, PROVENANCE)[0]
        if info["at_end"]:
            return "".join(texts), "".join(errs), info
    raise AssertionError(f"{shell_id} did not end within {limit} s: {''.join(texts)!r}")


def test_ray_is_a_backend_of_the_registry():
    assert "ray" in registry.names()
    assert registry.get("ray").settings_name == "RayBackend"


def test_what_a_job_is_sent_of_the_environment():
    inherited = {"PATH": "/usr/bin", "HOME": "/home/me", "EXECMAGIC_RUN": "m"}
    env = {**inherited, "EXECMAGIC_RUN": "other", "STAGE": "demo", "PWD": "/x", "BASH_ENV": "/p",
           "PATH": "/venv/bin:/usr/bin", "EXECMAGIC_MINE": "yes"}
    assert sent_environment(env, inherited) == {"STAGE": "demo", "EXECMAGIC_MINE": "yes"}


def test_bg_bgout_and_kill_on_ray(ip, fresh, token_sent, no_leftover_processes):
    cap = magic(ip, "bg", f"--on ray --name rj {token_sent} echo out; echo err >&2; exit 3")
    started = data(cap, PROVENANCE)[0]
    assert started["backend"] == "ray" and started["job_id"]
    out, err, info = bgout_until_end(ip, "rj")
    assert out == "out\n" and err == "err\n"
    assert info["shell"]["status"] == "exited 3" and info["shell"]["exit_code"] == 3
    magic(ip, "bg", f"--on ray --name long {token_sent} echo up; sleep 300")
    cap = magic(ip, "bgout", "long --wait 30")
    assert "up" in cap.stdout
    # the token went with the job (--env): the leak check below sees its processes on the node
    wait_until(lambda: "sleep 300" in commands_with(TOKEN_VAR, no_leftover_processes), 30, "the marked sleep")
    cap = magic(ip, "kill", "long")
    listed = "\n".join(data(magic(ip, "bg", "")))
    assert "long" in listed and "killed" in listed and "ray" in listed


def test_exec_on_ray_streams_apart_and_fails_with_the_exit_code(ip, fresh, token_sent):
    ip.run_line_magic("config", "ExecMagics.raise_on_error = False")
    try:
        cap = magic(ip, "exec", f"--on ray {token_sent} echo from-ray; echo oops >&2; exit 3")
    finally:
        ip.run_line_magic("config", "ExecMagics.raise_on_error = True")
    assert cap.stdout.startswith("from-ray\n") and "oops" in cap.stderr
    assert data(cap, PROVENANCE)[0]["exit_code"] == 3


def test_mistakes_with_on_ray_are_one_line(ip, fresh):
    for line, said in (("--on ray --cpus 0 true", "--cpus needs a whole number"),
                       ("--on ray --partition x true", "--partition goes with --on slurm"),
                       ("--on ray --sandbox true", "does not go with --on ray")):
        with pytest.raises(UsageError) as caught:
            magic(ip, "bg", line)
        assert said in str(caught.value), (line, str(caught.value))


def test_the_api_the_toolbox_and_a_second_engine(ray, tmp_path, monkeypatch, no_leftover_processes):
    monkeypatch.setenv("RAY_ADDRESS", ray.address)
    monkeypatch.delenv(TOKEN_VAR)
    first = Engine(log_dir=str(tmp_path / "one"), options=RunOptions(grace=0.5))
    second = Engine(log_dir=str(tmp_path / "two"), options=RunOptions(grace=0.5))
    try:
        shell = execmagic.start("echo api; sleep 300", on="ray", engine=first, name="api",
                                env={TOKEN_VAR: no_leftover_processes})
        assert shell.backend == "ray"
        seen = ""
        deadline = time.monotonic() + 60
        while "api" not in seen:
            assert time.monotonic() < deadline, seen
            seen += execmagic.read("api", engine=first, wait=5).stdout
        backend = registry.get("ray").backend()
        found = [info.id for info in second.reattach(backend)]
        assert "api" in found  # the next kernel finds this user's running job
        assert execmagic.kill("api", engine=second).shell.status == "killed"

        box = execmagic.Toolbox(first, background_on="ray", grace=0.5)
        answer = box.dispatch("Bash", {"command": f"{TOKEN_VAR}={no_leftover_processes} sh -c 'echo tool'",
                                       "run_in_background": True})
        assert answer["success"] and answer["backend"] == "ray", answer
        if box.sandbox.sandbox is not None:  # auto: the job runs on Ray, unsandboxed, and says so
            assert "ran unsandboxed: the job runs on ray, under its own rules" in answer["notes"]
    finally:
        first.close(0.5)
        second.close(0.5)


def test_a_sigkilled_kernels_exec_on_ray_job_is_stopped(ray, no_leftover_processes):
    """The kernel dies mid ``%exec --on ray``: its watchdog stops the local follower, which stops the job
    on the node -- its whole tree, a ``setsid`` child included."""
    import os
    import signal

    from kernel_client import KERNEL_TOKEN_VAR, Kernel
    from processes import assert_none_left

    kernel = Kernel(extra_env={"RAY_ADDRESS": ray.address})
    try:
        assert kernel.execute("%load_ext execmagic\n%config ExecMagics.kill_grace = 0.5").status == "ok"
        token = f"{TOKEN_VAR}={no_leftover_processes}"
        kernel.client.execute(f"%exec --on ray --env {token} (setsid sleep 341 &); sleep 342")
        wait_until(lambda: {"sleep 341", "sleep 342"} <= set(commands_with(TOKEN_VAR, no_leftover_processes)), 60,
                   "the job's two sleeps on the node")
        os.kill(kernel.pid, signal.SIGKILL)
        wait_until(lambda: not [c for c in commands_with(TOKEN_VAR, no_leftover_processes) if c.startswith("sleep")],
                   20, "the job's tree to end after the kernel died")
        assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=10)
    finally:
        kernel.shutdown(now=True)
