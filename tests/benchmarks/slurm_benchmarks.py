"""Figures for ``--on slurm`` on a real one-node cluster started in a temp folder, through a real kernel.

    python tests/benchmarks/slurm_benchmarks.py [--repeat N]

Needs Debian's SLURM and munge (``apt-get install -y slurmctld slurmd slurm-client munge``) and
root (or a user slurmd may run jobs as).  Prints a Markdown table: how long the cluster takes to
start, the ``%bg --on slurm`` cell (submit latency), the time from submitting to ``%bgout --wait``
delivering the job's first line (first-output latency: SLURM's scheduling and start, plus our
copy tick; each job is submitted to an idle node -- right after a kill, SLURM waits for the
killed job to finish completing, which adds about 2 s here), the ``%kill`` cell for a running job whose tree has a ``setsid`` child (and how long
until none of it is left), and a foreground ``%exec --on slurm true`` (srun).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import slurm_cluster
from kernel_client import Kernel


def median_max(values: list[float]) -> tuple[str, str]:
    return f"{statistics.median(values):.0f} ms (median of {len(values)})", f"max {max(values):.0f} ms"


def marked_sleeps(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "sleep" and proc.environ().get("BENCH_MARK") == marker:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    absent = slurm_cluster.missing()
    if absent:
        print(f"SLURM is not installed (missing {', '.join(absent)})", file=sys.stderr)
        return 1
    folder = tempfile.mkdtemp(prefix="execmagic-slurm-bench-")
    cluster = slurm_cluster.Cluster(folder).start()
    rows = [("cluster start (munged + slurmctld + slurmd, until the node is idle)", f"{cluster.started_in * 1000:.0f} ms", "")]
    kernel = Kernel(extra_env={"SLURM_CONF": cluster.conf})
    try:
        logs = os.path.join(folder, "jobs")
        assert kernel.execute(f"%load_ext execmagic\n%config SlurmBackend.logs_dir = {logs!r}\n"
                              "%config ExecMagics.kill_grace = 1").status == "ok"
        submit, first, kill_cell, kill_gone = [], [], [], []
        for i in range(args.repeat):
            marker = f"b{i}"
            ex = kernel.execute(f"%bg --on slurm --name j{i} --env BENCH_MARK={marker} "
                                "echo first; (sleep 300 &); setsid sleep 301 & sleep 302")
            assert ex.status == "ok", ex.reply
            submit.append((ex.messages[-1][0] - ex.started) * 1000)
            arrived = {}

            def note(msg, arrived=arrived):
                if msg["msg_type"] == "stream" and "at" not in arrived:
                    arrived["at"] = time.monotonic()

            kernel.execute(f"%bgout j{i} --wait 60", on_message=note)
            first.append((arrived["at"] - ex.started) * 1000)
            deadline = time.monotonic() + 10
            while len(marked_sleeps(marker)) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            began = time.monotonic()
            ex = kernel.execute(f"%kill j{i}")
            kill_cell.append((ex.messages[-1][0] - ex.started) * 1000)
            while marked_sleeps(marker):
                time.sleep(0.01)
            kill_gone.append((time.monotonic() - began) * 1000)
            while cluster.run("squeue", "--noheader").stdout.strip():  # the next job starts on an idle node
                time.sleep(0.1)
        foreground = []
        for _ in range(args.repeat):
            ex = kernel.execute("%exec --on slurm true")
            assert ex.status == "ok", ex.reply
            foreground.append((ex.messages[-1][0] - ex.started) * 1000)
        rows.append(("`%bg --on slurm …` cell (sbatch, submit latency)", *median_max(submit)))
        rows.append(("submit → first line delivered by `%bgout --wait`", *median_max(first)))
        rows.append(("`%kill` cell, running job with a `setsid` child", *median_max(kill_cell)))
        rows.append(("`%kill` → no process of the job left", *median_max(kill_gone)))
        rows.append(("`%exec --on slurm true` cell (srun, foreground)", *median_max(foreground)))
    finally:
        kernel.shutdown()
        cluster.stop()
    print("| what | figure | spread |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
