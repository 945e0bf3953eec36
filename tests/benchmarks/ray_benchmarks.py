"""Figures for the Ray Jobs backend on a real single-node Ray head, side by side with Ray's own CLI.

    python tests/benchmarks/ray_benchmarks.py [--repeat N]

Needs ``ray[default]`` (the ``ray`` extra) and, to run Ray in a network namespace of its own, root:
the script re-runs itself under ``unshare -n`` when it is not in one.  Prints a Markdown table, each
figure measured in the same run, the two sides interleaved (absolute times drift on shared machines):

- how long the head takes until its dashboard answers;
- submit → first line: through the backend (``registry.start`` then ``registry.read(wait=…)``, what
  ``%bg --on ray`` and ``%bgout --wait`` do), against ``ray job submit`` from the CLI (which
  submits and tails the log) until its stdout shows the line;
- stop → gone, for a job whose tree has a double-forked ``setsid`` child: our kill until no process
  of the tree is left, against ``ray job stop`` until Ray says STOPPED -- and what it left running.
"""

from __future__ import annotations

import argparse
import os
import selectors
import statistics
import subprocess
import sys
import tempfile
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import ray_head
from execmagic.background.backends.ray import RayClient, RayCluster, RayOptions
from execmagic.background.registry import ShellRegistry
from execmagic.process.spec import Command

MARK = "BENCH_MARK"
TREE = "(setsid sleep 300 &); echo first; sleep 301"


def median_max(values: list[float]) -> tuple[str, str]:
    return f"{statistics.median(values):.0f} ms (median of {len(values)})", f"max {max(values):.0f} ms"


def marked(value: str) -> list[psutil.Process]:
    """The job's tree (``bash -c TREE`` and its two ``sleep``s), not Ray's own processes that carry the
    job's environment too (the worker that ran its supervisor, the ``sleep 1`` of its fate-sharing
    watcher), which end a moment after the job."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.cmdline() in (["bash", "-c", TREE], ["sleep", "300"], ["sleep", "301"]) \
                    and proc.environ().get(MARK) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def wait_gone(value: str, limit: float = 30.0) -> float:
    began = time.monotonic()
    while marked(value) and time.monotonic() - began < limit:
        time.sleep(0.01)
    return (time.monotonic() - began) * 1000


def ours(registry: ShellRegistry, address: str, mark: str) -> tuple[float, float, float]:
    """(submit → first line, kill cell, kill → gone) through the backend."""
    backend = RayCluster(RayOptions(env=((MARK, mark),)), address=address, grace=1.0)
    began = time.monotonic()
    info = registry.start(Command(argv=("bash", "-c", TREE), cwd="/", env={}, display=TREE), marker_prefix="bench",
                          backend=backend)
    out = registry.read(info.id, wait=120)
    assert out.stdout == "first\n", out
    first = (time.monotonic() - began) * 1000
    while len(marked(mark)) < 2:
        time.sleep(0.01)
    began = time.monotonic()
    registry.kill(info.id)
    cell = (time.monotonic() - began) * 1000
    return first, cell, cell + wait_gone(mark)


def theirs(ray: str, address: str, mark: str) -> tuple[float, float, int]:
    """(submit → first line, stop → STOPPED, processes left) with Ray's CLI."""
    env = {**os.environ, "RAY_ADDRESS": address}
    began = time.monotonic()
    cli = subprocess.Popen([ray, "job", "submit", "--runtime-env-json", f'{{"env_vars": {{"{MARK}": "{mark}"}}}}',
                            "--", "bash", "-c", TREE], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert cli.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(cli.stdout, selectors.EVENT_READ)
    seen = b""
    while b"\nfirst\n" not in seen:
        if selector.select(120):
            chunk = os.read(cli.stdout.fileno(), 65536)
            assert chunk, seen
            seen += chunk
    first = (time.monotonic() - began) * 1000
    client = RayClient(address)
    job_id = next(j.submission_id for j in client.jobs() if not j.phase.terminal)
    while len(marked(mark)) < 2:
        time.sleep(0.01)
    began = time.monotonic()
    subprocess.run([ray, "job", "stop", job_id], env=env, capture_output=True, timeout=60)
    while not client.info(job_id).phase.terminal:
        time.sleep(0.01)
    stopped = (time.monotonic() - began) * 1000
    cli.kill()
    cli.wait()
    time.sleep(1.0)
    left = marked(mark)
    for proc in left:  # what Ray's stop left running
        proc.kill()
    return first, stopped, len(left)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if ray_head.ray_program() is None:
        print("Ray is not installed: pip install -e '.[ray]'", file=sys.stderr)
        return 1
    if not ray_head.only_loopback():
        if os.geteuid() != 0:
            print("run as root (Ray needs a network namespace of its own: unshare -n)", file=sys.stderr)
            return 1
        os.execvp("unshare", ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable,
                              os.path.abspath(__file__), *sys.argv[1:]])
    folder = tempfile.mkdtemp(prefix="execmagic-ray-bench-")
    head = ray_head.RayHead(folder).start()
    rows = [("Ray head start (`ray start --head --block`, until the dashboard answers)",
             f"{(head.started_in or 0) * 1000:.0f} ms", "")]
    registry = ShellRegistry(log_dir=lambda: os.path.join(folder, "logs"), grace=1.0, watchdog=False)
    ray = ray_head.ray_program()
    assert ray is not None
    try:
        ours(registry, head.address, "warm")  # the first job of a head starts its workers: not a figure
        our_first, our_cell, our_gone, cli_first, cli_stop, cli_left = [], [], [], [], [], []
        for i in range(args.repeat):
            first, cell, gone = ours(registry, head.address, f"o{i}")
            our_first.append(first)
            our_cell.append(cell)
            our_gone.append(gone)
            first, stopped, left = theirs(ray, head.address, f"c{i}")
            cli_first.append(first)
            cli_stop.append(stopped)
            cli_left.append(left)
        rows.append(("submit → first line, backend (`%bg --on ray` + `%bgout --wait`)", *median_max(our_first)))
        rows.append(("submit → first line, `ray job submit` CLI (submits and tails)", *median_max(cli_first)))
        rows.append(("`%kill` cell (Ray's stop; the wrapper sweeps the tree)", *median_max(our_cell)))
        rows.append(("`%kill` → no process of the tree left (a `setsid` double fork in it)", *median_max(our_gone)))
        rows.append(("`ray job stop` → Ray says STOPPED", *median_max(cli_stop)))
        rows.append(("processes `ray job stop` left running (the double-forked child)",
                     f"{sum(cli_left)} in {len(cli_left)} jobs", ""))
    finally:
        registry.kill_all(grace=0.5)
        registry.close()
        head.stop()
    print("| what | figure | spread |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
