"""Side-by-side figures from one kernel in one run (absolute times drift on shared machines).

    python tests/benchmarks/run_benchmarks.py [--repeat N]

Prints a Markdown table: per-command latency of ``%exec true`` against
``%%bash``, ``!`` and ``subprocess.run``; stream messages and wall time for
2 MB printed as 20,000 lines by ``%%exec`` and ``%%bash``; kernel memory growth
while ``%%exec`` prints 200 MB; for background shells, the time from a line being
written to ``%bgout --wait`` delivering it, kernel CPU with 20 idle shells, and
the time ``%kill`` takes to leave a tree gone; how long redacting 30,000 characters takes
(one line, and 300 lines; against a plain ``str.replace`` pass); and, when it is installed, the same foreground
figures for bash_kernel (``pip install bash_kernel && python -m bash_kernel.install --sys-prefix``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_client import Kernel

TWO_MB = "for i in $(seq 20000); do printf '%0103d\\n' $i; done"


def cell_times(kernel: Kernel, code: str, repeat: int) -> list[float]:
    kernel.execute(code)  # warm up
    times = []
    for _ in range(repeat):
        ex = kernel.execute(code)
        assert ex.status == "ok", ex.reply
        times.append((ex.messages[-1][0] - ex.started) * 1000)
    return times


def background_rows(kernel: Kernel, proc: psutil.Process, repeat: int) -> list[tuple[str, str, str]]:
    rows = []
    delays = []
    stamp = f"{sys.executable} -c 'import time; print(time.time())'"
    for i in range(max(repeat // 4, 5)):
        kernel.execute(f"%bg --name lat{i} sleep 0.5; {stamp}; sleep 30")
        arrived = {}

        def note(msg, arrived=arrived):
            if msg["msg_type"] == "stream" and "text" not in arrived:
                arrived["text"], arrived["at"] = msg["content"]["text"], time.time()

        kernel.execute(f"%bgout lat{i} --wait 5", on_message=note)
        delays.append((arrived["at"] - float(arrived["text"])) * 1000)
        kernel.execute(f"%kill lat{i}")
    rows.append(("background line written → `%bgout --wait` delivers it",
                 f"{statistics.median(delays):.1f} ms (median of {len(delays)})", f"max {max(delays):.1f} ms"))
    kernel.execute("%kill --all")
    idle_before = sum(proc.cpu_times()[:2])
    time.sleep(5)
    idle = sum(proc.cpu_times()[:2]) - idle_before
    for i in range(20):
        kernel.execute(f"%bg --name idle{i} sleep 600")
    time.sleep(0.5)
    busy_before = sum(proc.cpu_times()[:2])
    time.sleep(5)
    busy = sum(proc.cpu_times()[:2]) - busy_before
    rows.append(("kernel CPU over 5 s with 20 idle background shells", f"{busy / 5 * 100:.2f} % of one core",
                 f"{idle / 5 * 100:.2f} % with none"))
    kernel.execute("%kill --all")
    kills = []
    for i in range(5):
        kernel.execute(f"%bg --name tree{i} bash -c '(sleep 300 &); setsid sleep 301 & sleep 302'")
        time.sleep(0.3)
        ex = kernel.execute(f"%kill tree{i}")
        kills.append((ex.messages[-1][0] - ex.started) * 1000)
    rows.append(("`%kill` of a double-forked + setsid tree, until gone", f"{statistics.median(kills):.1f} ms (median of 5)",
                 "cell round trip included"))
    return rows


def bash_kernel_rows(repeat: int) -> list[tuple[str, str, str]]:
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("bash")
    except NoSuchKernel:
        return [("bash_kernel", "not installed", "pip install bash_kernel && python -m bash_kernel.install --sys-prefix")]
    kernel = Kernel(kernel_name="bash")
    rows = []
    try:
        ms = statistics.median(cell_times(kernel, "true", repeat))
        rows.append(("cell latency, bash_kernel `true`", f"{ms:.1f} ms (median of {repeat})", ""))
        ex = kernel.execute(TWO_MB, timeout=300)
        wall = ex.messages[-1][0] - ex.started
        received = sum(len(m["content"]["text"]) for m in ex.of_type("stream"))
        rows.append(("2 MB as 20,000 lines, bash_kernel", f"{len(ex.of_type('stream'))} stream messages, {wall:.2f} s",
                     f"{received / 1e6:.2f} MB sent to the frontend"))
        try:
            kernel.execute("read answer; echo got $answer", timeout=5)
            rows.append(("bash_kernel `read answer`", "returned", ""))
        except TimeoutError:
            rows.append(("bash_kernel `read answer`", "still waiting after 5 s", "`%exec read answer` returns at once (EOF)"))
            kernel.manager.interrupt_kernel()
    finally:
        kernel.shutdown(now=True)
    return rows


def redaction_rows(repeat: int) -> list[tuple[str, str, str]]:
    """Redaction must stay linear: a 30,000-character single line once took 1.3 s."""
    from execmagic.guard.secrets import redact

    rows = []
    secrets = {"API_TOKEN": "s3cr3t-value"}
    for label, text in [("one line", "a" * 29_990 + " s3cr3t-value"[:10]),
                        ("300 lines", ("x" * 99 + "\n") * 300)]:
        times, plain = [], []
        for _ in range(max(repeat // 4, 5)):
            start = time.perf_counter()
            redact(text, secrets)
            times.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            text.replace("s3cr3t-value", "[REDACTED]")
            plain.append((time.perf_counter() - start) * 1000)
        rows.append((f"redact 30,000 characters, {label}", f"{statistics.median(times):.2f} ms",
                     f"str.replace alone {statistics.median(plain):.3f} ms"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    kernel = Kernel()
    rows: list[tuple[str, str, str]] = []
    try:
        kernel.execute("%load_ext execmagic\nimport subprocess")
        latency = {}
        for label, code in [
            ("`subprocess.run(['bash','-c','true'])`", "subprocess.run(['bash', '-c', 'true']);"),
            ("`%exec true`", "%exec true"),
            ("`%%bash true`", "%%bash\ntrue"),
            ("`!true`", "!true"),
            ("empty cell (kernel round trip)", "pass"),
        ]:
            latency[label] = statistics.median(cell_times(kernel, code, args.repeat))
        base = latency["`subprocess.run(['bash','-c','true'])`"]
        for label, ms in latency.items():
            rows.append((f"cell latency, {label}", f"{ms:.1f} ms (median of {args.repeat})", f"{ms / base:.2f}× subprocess.run"))
        for label, code in [("`%%exec`", "%%exec\n" + TWO_MB), ("`%%bash`", "%%bash\n" + TWO_MB)]:
            ex = kernel.execute(code, timeout=300)
            streams = len(ex.of_type("stream"))
            wall = ex.messages[-1][0] - ex.started
            received = sum(len(m["content"]["text"]) for m in ex.of_type("stream"))
            rows.append((f"2 MB as 20,000 lines, {label}", f"{streams} stream messages, {wall:.2f} s",
                         f"{received / 1e6:.2f} MB sent to the frontend"))
        proc = psutil.Process(kernel.pid)
        kernel.execute("%exec true")
        before = proc.memory_info().rss
        ex = kernel.execute("%%exec\nyes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000", timeout=600)
        growth = proc.memory_info().rss - before
        wall = ex.messages[-1][0] - ex.started
        rows.append(("200 MB of output, `%%exec`", f"kernel RSS growth {growth / 1e6:.1f} MB", f"{wall:.2f} s, {len(ex.of_type('stream'))} stream messages"))
        rows += background_rows(kernel, proc, args.repeat)
    finally:
        kernel.shutdown()
    rows += redaction_rows(args.repeat)
    rows += bash_kernel_rows(args.repeat)
    print("| measurement | figure | compared |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
