"""Cluster jobs outlive their kernel: a restarted kernel lists the running job, reads it and kills it."""

from __future__ import annotations

import pytest

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from kernel_client import Kernel
from processes import TOKEN_VAR, processes_with

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]


def provenance(ex):
    return [m["content"]["data"][PROVENANCE] for m in ex.of_type("display_data")
            if PROVENANCE in m["content"]["data"]]


def test_a_restarted_kernel_lists_reads_and_kills_the_running_job(slurm, slurm_logs, no_leftover_processes):
    setup = f"%load_ext execmagic\n%config SlurmBackend.logs_dir = {slurm_logs!r}\n%config ExecMagics.kill_grace = 0.5"
    k = Kernel()  # inherits SLURM_CONF from the test session
    try:
        assert k.execute(setup).status == "ok"
        # the job carries this test's token, so the leak check proves that the kill left nothing
        ex = k.execute(f"%bg --on slurm --name train --env {TOKEN_VAR}={no_leftover_processes} "
                       "for i in $(seq 300); do echo step$i; sleep 0.2; done")
        assert ex.status == "ok", ex.reply
        job_id = provenance(ex)[0]["job_id"]
        assert "step1\n" in k.execute("%bgout train --wait 30").stream_text()

        k.manager.restart_kernel(now=False)
        k.client.wait_for_ready(timeout=60)
        assert processes_with(TOKEN_VAR, no_leftover_processes), "the job should outlive the kernel"

        assert k.execute(setup).status == "ok"
        listed = k.execute("%bg --on slurm")
        (table,) = provenance(listed)
        assert [(s["id"], s["job_id"], s["running"]) for s in table] == [("train", job_id, True)]
        assert table[0]["status"].startswith("running")
        first = k.execute("%bgout train --wait 10").stream_text()
        assert first.startswith("step1\n")  # read again from the start, then only what is new
        last = int(first.splitlines()[-1].removeprefix("step"))
        newer = k.execute("%bgout train --wait 10").stream_text()
        assert newer.startswith(f"step{last + 1}\n")
        killed = k.execute("%kill train")
        assert "train stopped with SIGTERM" in killed.stream_text() or \
            provenance(killed)[0]["shell"]["status"] == "killed"
    finally:
        k.shutdown()
