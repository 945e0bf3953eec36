"""What the system lacks is decided once, in ``process.system``, and the paths taken without a pidfd
can be forced on Linux (``EXECMAGIC_NO_PIDFD=1``), so that they are tested where they are rarely needed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from execmagic.process import system

WITHOUT_PIDFD = textwrap.dedent("""
    import logging, tempfile, time
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from execmagic.process import system
    from execmagic.engine import Engine, RunOptions
    from execmagic.process.pump import Pump
    assert system.PIDFD is False and system.pidfd_open(1) is None, system.LIMITS
    with tempfile.TemporaryDirectory() as logs:
        engine = Engine(log_dir=logs, options=RunOptions(grace=0.3))
        try:
            result = engine.run_script("echo fg; sleep 0.2 & echo quick")
            assert result.success and result.stdout == "fg\\nquick\\n", result
            info = engine.start_background(engine.plan_script("sleep 0.2; echo bg", save_session=False))
            shell = engine.shells._get(info.id)
            out = engine.shells.read(info.id, wait=10)
            while not out.at_end:
                out = engine.shells.read(info.id, wait=10)
            assert shell.exit_fd is None and out.shell.status == "exited 0", out.shell
            timed = engine.start_background(engine.plan_script("sleep 30", save_session=False), timeout=0.2)
            while engine.shells.info(timed.id).running:
                time.sleep(0.02)
            assert engine.shells.info(timed.id).status == "timed out"
        finally:
            engine.close()
    print("ok")
""")


def test_the_no_pidfd_switch_takes_the_polling_paths_and_says_so_once():
    env = {**os.environ, system.NO_PIDFD_VAR: "1"}
    done = subprocess.run([sys.executable, "-c", WITHOUT_PIDFD], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok"
    said = [line for line in done.stderr.splitlines() if "no pidfd" in line]
    assert said == [f"execmagic on {sys.platform}: no pidfd (switched off by EXECMAGIC_NO_PIDFD): "
                    "process exits are polled for"], done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.environ.get(system.NO_PIDFD_VAR),
                    reason="a recent Linux, pidfd not switched off")
def test_a_recent_linux_lacks_nothing():
    assert system.PIDFD and system.ENVIRON_OF_OTHERS and system.LIMITS == ()
    fd = system.pidfd_open(os.getpid())
    assert fd is not None
    os.close(fd)


def test_pidfd_of_a_reaped_process_is_none():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert system.pidfd_open(proc.pid) is None or not system.PIDFD
