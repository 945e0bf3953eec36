"""Side-by-side figures from one kernel in one run (absolute times drift on shared machines).

    python tests/benchmarks/run_benchmarks.py [--repeat N] [--kernels K] [--rounds R]

Prints a Markdown table: the cost of ``%load_ext execmagic`` over an empty cell in K fresh
kernels, and of the first ``%exec true`` after it (the engine and its standby start then) against a later one;
per-command latency of an empty cell, ``subprocess.run(['bash','-c','true'])`` (alone, and with its exit code
printed: the same facts as ``%exec`` gives, by hand; and ``subprocess.run(['true'])`` with its exit code printed,
``%spawn``'s peer),
``%%bash``, ``%exec`` (``true``: bash's builtin, and the program ``true``: what ``%spawn true`` runs), ``%spawn`` and,
where bubblewrap is installed, ``%exec`` in the sandbox
(N cells each, interleaved, medians; ratios net of the empty cell) and ``!true``; a 200 MB stream through ``%%exec`` against the same command
writing to a file in the same folder (R rounds, interleaved, medians; kernel memory growth
and stream messages); stream messages and wall time for
2 MB printed as 20,000 lines by ``%%exec`` and ``%%bash``; for background shells, the time from a line being
written to ``%bgout --wait`` delivering it, kernel CPU with 20 idle shells, and
the time ``%kill`` takes to leave a tree gone; how long redacting 30,000 characters takes
(one line, and 300 lines; against a plain ``str.replace`` pass); and, when it is installed, the same foreground
figures for bash_kernel (``pip install bash_kernel && python -m bash_kernel.install --sys-prefix``).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from kernel_client import Kernel

TWO_MB = "for i in $(seq 20000); do printf '%0103d\\n' $i; done"
STREAM = "yes 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz | head -c 200000000"
SP_TRUE = "`subprocess.run(['bash','-c','true'])`"
#: What ``%exec true`` tells (that it ran, how it ended), done by hand: the peer its cost is held against.
BY_HAND = "`print(subprocess.run(['bash','-c','true']).returncode)` (by hand)"
#: The program ``true`` (``%exec true`` runs bash's builtin, and starts no program at all).
TRUE_PROGRAM = shutil.which("true") or "/bin/true"
EXEC_PROGRAM = f"`%exec {TRUE_PROGRAM}` (a program, not bash's builtin)"
#: What ``%spawn true`` tells, by hand: the program run with no shell between.
BY_HAND_ARGV = "`print(subprocess.run(['true']).returncode)` (by hand, no shell)"
SANDBOXED = "`%exec --sandbox-mode workspace true` (bubblewrap)"
#: Seconds between cells in the paced latency rounds: far less than a person takes between two cells.
PAUSE = 0.05


def cell_times(kernel: Kernel, code: str, repeat: int) -> list[float]:
    kernel.execute(code)  # warm up
    times = []
    for _ in range(repeat):
        ex = kernel.execute(code)
        assert ex.status == "ok", ex.reply
        times.append((ex.messages[-1][0] - ex.started) * 1000)
    return times


def wall_ms(ex) -> float:
    return (ex.messages[-1][0] - ex.started) * 1000


def load_ext_rows(kernels: int) -> list[tuple[str, str, str]]:
    """``%load_ext execmagic`` in fresh kernels, against the median empty cell of the same kernel.

    The package is compiled to bytecode first, as an installed wheel has it (with
    ``PYTHONDONTWRITEBYTECODE`` set, every kernel would compile each module again).
    """
    import compileall

    import execmagic

    compileall.compile_dir(os.path.dirname(execmagic.__file__), quiet=1)
    loads, empties, firsts, laters = [], [], [], []
    for _ in range(kernels):
        kernel = Kernel()
        try:
            empty = cell_times(kernel, "pass", 5)  # its warm-up cell is the kernel's first
            ex = kernel.execute("%load_ext execmagic")
            assert ex.status == "ok", ex.reply
            loads.append(wall_ms(ex))
            empties.append(statistics.median(empty))
            time.sleep(PAUSE)  # as a person runs the next cell: what the load left running may go on meanwhile
            ex = kernel.execute("%exec true")
            assert ex.status == "ok", ex.reply
            firsts.append(wall_ms(ex))
            laters.append(statistics.median(cell_times(kernel, "%exec true", 3)))
        finally:
            kernel.shutdown()
    net = statistics.median(load - empty for load, empty in zip(loads, empties, strict=True))
    return [("`%load_ext execmagic` in a fresh kernel, over an empty cell (bytecode compiled)",
             f"{net:.1f} ms (median of {kernels} kernels)",
             f"{statistics.median(loads):.1f} ms against {statistics.median(empties):.1f} ms"),
            (f"the first `%exec true` after loading ({PAUSE * 1000:.0f} ms after it)",
             f"{statistics.median(firsts):.1f} ms (median of {kernels} kernels)",
             f"later ones {statistics.median(laters):.1f} ms")]


def latency_rows(kernel: Kernel, repeat: int, pause: float = 0.0) -> list[tuple[str, str, str]]:
    """Each cell once per round, the rounds one after another, each in another order: drift, and what a cell
    leaves running, hit every cell alike.

    ``pause``: seconds between cells, as a person running them one by one leaves (what a kernel does
    meanwhile -- the standby shell started after a run -- is then charged to no cell, if done by then: a
    sandboxed one takes 30-90 ms, and lands on whichever cell comes next).  With none, the cells run
    back to back, as "Run all" runs them: each runs twice in a row and the second is timed, so what a cell
    leaves running is paid by a cell like it, as in a notebook of such cells.
    """
    cells = [
        ("empty cell (kernel round trip)", "pass"),
        (SP_TRUE, "subprocess.run(['bash', '-c', 'true']);"),
        (BY_HAND, "print(subprocess.run(['bash', '-c', 'true']).returncode)"),
        (BY_HAND_ARGV, "print(subprocess.run(['true']).returncode)"),
        ("`%%bash true`", "%%bash\ntrue"),
        ("`%exec true`", "%exec true"),
        # `true` is a bash builtin: %exec true starts no program; %spawn true does, as this does through bash
        (EXEC_PROGRAM, f"%exec {TRUE_PROGRAM}"),
        ("`%spawn true`", "%spawn true"),
        # what a summary costs by itself: one display message, as every %exec sends (subprocess.run sends none)
        ("one display message, `display({'text/plain': 'x'}, raw=True)`", "display({'text/plain': 'x'}, raw=True)"),
    ]
    if shutil.which("bwrap"):  # the same command inside the sandbox (bubblewrap), beside the one outside it
        cells.append((SANDBOXED, "%exec --sandbox-mode workspace true"))
    times: dict[str, list[float]] = {label: [] for label, _ in cells}
    for _label, code in cells:
        kernel.execute(code)  # warm up
    shuffle = random.Random(0).shuffle  # the same orders in every run of the benchmark
    for _ in range(repeat):
        order = list(cells)
        shuffle(order)  # each round in another order: what a cell leaves running lands on a different one
        for label, code in order:
            if not pause:  # back to back: run twice, the second timed (it pays for what the first left running)
                kernel.execute(code)
            time.sleep(pause)
            ex = kernel.execute(code)
            assert ex.status == "ok", ex.reply
            times[label].append(wall_ms(ex))
    median = {label: statistics.median(values) for label, values in times.items()}
    how = f"{pause * 1000:.0f} ms between cells" if pause else "back to back"
    empty = median["empty cell (kernel round trip)"]
    base, by_hand = median[SP_TRUE] - empty, median[BY_HAND] - empty
    rows = []
    for label, ms in median.items():
        compared = "" if ms == empty else f"net {ms - empty:.1f} ms = {(ms - empty) / base:.2f}× subprocess.run net"
        if label not in ("empty cell (kernel round trip)", SP_TRUE, BY_HAND, BY_HAND_ARGV):
            compared += f"; {(ms - empty) / by_hand:.2f}× by hand net"
        if label == "`%spawn true`":  # against its own peer, and against %exec (an argv run is the cheaper thing)
            compared += (f"; {(ms - empty) / (median[BY_HAND_ARGV] - empty):.2f}× by hand with no shell net"
                         f"; {(ms - empty) / (median['`%exec true`'] - empty):.2f}× `%exec true` net"
                         f"; {(ms - empty) / (median[EXEC_PROGRAM] - empty):.2f}× the same program through `%exec`")
        if label == SANDBOXED:
            compared += f"; {(ms - empty) / (median['`%exec true`'] - empty):.2f}× `%exec true` net"
        rows.append((f"cell latency, {label}", f"{ms:.1f} ms (median of {repeat}, interleaved, {how})", compared))
    if pause:
        return rows
    bang = statistics.median(cell_times(kernel, "!true", max(repeat // 4, 5)))
    rows.append(("cell latency, `!true`", f"{bang:.1f} ms (median of {max(repeat // 4, 5)})",
                 f"net {bang - empty:.1f} ms = {(bang - empty) / base:.2f}× subprocess.run net"))
    return rows


def stream_rows(kernel: Kernel, proc: psutil.Process, rounds: int) -> list[tuple[str, str, str]]:
    """200 MB through ``%%exec`` against ``cmd > file`` in the engine's log folder (the same disk)."""
    kernel.execute("import execmagic, glob, os\n_logs = execmagic.default_engine().logs.path\n"
                   "_out = os.path.join(_logs, 'bench.out')")
    tidy = "for _p in glob.glob(os.path.join(_logs, '*.log')) + [_out]:\n    os.path.exists(_p) and os.unlink(_p)"
    kernel.execute(tidy)
    to_file, through, growth, messages = [], [], [], 0
    for _ in range(rounds):
        ex = kernel.execute(f"subprocess.run(['bash', '-c', {STREAM + ' > '!r} + _out]);", timeout=600)
        assert ex.status == "ok", ex.reply
        to_file.append(wall_ms(ex) / 1000)
        kernel.execute(tidy)
        before = proc.memory_info().rss
        ex = kernel.execute("%%exec\n" + STREAM, timeout=600)
        assert ex.status == "ok", ex.reply
        through.append(wall_ms(ex) / 1000)
        growth.append(proc.memory_info().rss - before)
        messages = len(ex.of_type("stream"))
        kernel.execute(tidy)
    file_s, exec_s = statistics.median(to_file), statistics.median(through)
    return [
        ("200 MB stream, `cmd > file` (same folder as the logs)", f"{file_s:.2f} s (median of {rounds})",
         "min " + f"{min(to_file):.2f} s"),
        ("200 MB stream, `%%exec` (live, logged)", f"{exec_s:.2f} s (median of {rounds})",
         f"{exec_s / file_s:.2f}× `cmd > file`; {messages} stream messages"),
        ("200 MB stream, `%%exec`: kernel RSS growth", f"{max(growth) / 1e6:.1f} MB (largest of {rounds})", ""),
    ]


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
    parser.add_argument("--kernels", type=int, default=20, help="fresh kernels for the %%load_ext figures")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the 200 MB comparison")
    parser.add_argument("--quick", action="store_true", help="only start-up, latency and the 200 MB stream")
    args = parser.parse_args()
    rows: list[tuple[str, str, str]] = load_ext_rows(args.kernels)
    kernel = Kernel()
    try:
        kernel.execute("%load_ext execmagic\nimport subprocess")
        rows += latency_rows(kernel, args.repeat)
        rows += latency_rows(kernel, args.repeat, pause=PAUSE)
        proc = psutil.Process(kernel.pid)
        rows += stream_rows(kernel, proc, args.rounds)
        if not args.quick:
            for label, code in [("`%%exec`", "%%exec\n" + TWO_MB), ("`%%bash`", "%%bash\n" + TWO_MB)]:
                ex = kernel.execute(code, timeout=300)
                streams = len(ex.of_type("stream"))
                wall = ex.messages[-1][0] - ex.started
                received = sum(len(m["content"]["text"]) for m in ex.of_type("stream"))
                rows.append((f"2 MB as 20,000 lines, {label}", f"{streams} stream messages, {wall:.2f} s",
                             f"{received / 1e6:.2f} MB sent to the frontend"))
            rows += background_rows(kernel, proc, args.repeat)
    finally:
        kernel.shutdown()
    if not args.quick:
        rows += redaction_rows(args.repeat)
        rows += bash_kernel_rows(args.repeat)
    print("| measurement | figure | compared |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
