"""Every pass over command text, fed 1 MB of random and adversarial text: seconds per MB, and the growth.

    python tests/benchmarks/text_passes.py [--mb 1.0] [--limit 60] [--corpus NAME ...] [--pass NAME ...]

The passes run on every ``%exec`` (the standby's check, templating, the guard) or on every output
shown to an agent (redaction), so each must take time linear in its text, whatever the text.  Each
corpus is fed at half the size and at the full size; the table gives seconds per MB at the full size
and the ratio of the two times (about 2 when linear, about 4 when quadratic).  Times are the process's CPU
seconds: the machine is shared, and wall time would count the neighbours' work too.  A run that takes more
than ``--limit`` seconds (of wall time) is stopped and shown as ``>limit``.  An answer that is a refusal (the guard's
too-deep, the reader's "too complex") is an answer: its time is what is measured.

Corpora: random shell-like text, random brackets and quotes, ``;``/``|``/``&`` in all orders, nesting 4,000
deep and more (``(``, ``$(``, ``$((``, ``${``, ``"$(``, backticks; closed and not), ``((…))`` again and again
(each a place to ask "arithmetic?"), heredocs, a long word after a guard trigger (``python3 -c '…' {b64}``),
fork-bomb shapes, long brace lists (one, and one of lists), a script of many assignments, secret-shaped labels for
redaction; and what a notebook's cells are made of: a plain script the
standby takes (assignments, pipelines, quoted strings, comments), and one with loops, ``if``/``case``, functions,
heredocs and ``$(…)``, each 1 MB of varied lines.
Nothing here runs in the default suite; the suite bounds the *work* (``tests/work_count.py``), not time.
"""

from __future__ import annotations

import argparse
import base64
import random
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from execmagic.engine.template import expand_params
from execmagic.guard.check import check
from execmagic.guard.secrets import redact
from execmagic.shell.lexer import tokenize
from execmagic.shell.plain_syntax import surely_parses

MB = 1_000_000


def _random(alphabet: str, n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _repeat(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _orders(n: int) -> str:
    """``;``, ``|``, ``&`` and their doubles in every order, between short words."""
    rng = random.Random(3)
    ops = [";", "|", "&", "&&", "||", ";;", "|&", ";&", "&>", ">&"]
    return "".join(f"w{rng.randrange(9)} {rng.choice(ops)}{rng.choice(ops)} " for _ in range(n // 9 + 1))[:n]


def _b64(n: int) -> str:
    return base64.b64encode(random.Random(2).randbytes(n * 3 // 4 + 3)).decode()[:n]


#: What a notebook's shell cells are made of (data prep): lines the standby takes as they are -- assignments, pipelines,
#: redirections, quoted strings with ``$NAME``, comments, ``&&``/``||`` -- and, for :func:`_notebook`, the lines it
#: leaves to a new bash: loops, ``if``/``case``, functions, heredocs, ``$(…)``.
_FILES = ["data/raw.csv", "data/clean.csv", "out/counts.txt", "results.tsv", "log.txt", "$HOME/data/x.csv"]
_NAMES = ["N", "IN", "OUT", "DATA", "LOG", "ROWS", "n_rows", "day", "src", "dst"]
_TOOLS = ["sort", "uniq -c", "sort -rn", "head -20", "wc -l", "cut -d, -f2", "tr -d '\\r'", "grep -v '^#'",
          "awk -F, '$3 > 10'", "sed 's/,/\\t/g'", "tail -n +2", "gzip -c"]


def _plain_line(rng: random.Random) -> str:
    name, source, target, tool = rng.choice(_NAMES), rng.choice(_FILES), rng.choice(_FILES), rng.choice(_TOOLS)
    return rng.choice([
        f"{name}={rng.randrange(1000)}",
        f'{name}="{source}"  # where it goes',
        f"{tool} {source} | {rng.choice(_TOOLS)} | {rng.choice(_TOOLS)} > {target}",
        f'echo "rows: ${name} in ${{{name}}}" >> {target}',
        f"mkdir -p out/{rng.randrange(99)} && cd out || exit 1",
        f'python3 prep.py --in "${name}" --out {target} --limit={rng.randrange(9)} 2> err.log &',
        f"# step {rng.randrange(99)}: {tool} the {name} file",
        'export PATH="$HOME/bin:$PATH"; ls -la *.csv data/*.gz 2>/dev/null',
        f"grep -c 'ERROR' {source} || true",
        f"wait; test -s {target} && wc -l < {target}",
    ])


def _notebook_block(rng: random.Random) -> str:
    name, source, target, tool = rng.choice(_NAMES), rng.choice(_FILES), rng.choice(_FILES), rng.choice(_TOOLS)
    return rng.choice([
        f'for f in data/*.csv; do\n  {tool} "$f" > "out/$(basename "$f" .csv).txt"\ndone',
        f'if [ -s {source} ]; then\n  echo "$(wc -l < {source}) rows"\nelse\n  echo "empty" >&2\nfi',
        f'case "${name}" in\n  *.gz) zcat "${name}" | head -3 ;;\n  *) head -3 "${name}" ;;\nesac',
        f'count() {{\n  grep -c "$1" {source} || true\n}}\ncount ERROR',
        f"cat > {target} <<EOF\nname: ${name}\ndate: $(date +%F)\nEOF",
        "cat <<'EOF' | python3 -\nimport sys\nprint(sys.argv)\nEOF",
        f"n=$(({name} + 1)); echo \"${{{name}:-none}} $n\"",
        f"while read -r line; do echo \"$line\"; done < {source}",
    ] + [_plain_line(rng)] * 4)


def _lines(make: Callable[[random.Random], str], n: int) -> str:
    """Lines of ``make``, seeded, to about ``n`` characters (whole: none is cut, a heredoc ends)."""
    rng, lines, size = random.Random(5), [], 0
    while True:
        line = make(rng) + "\n"
        if size + len(line) > n:
            return "".join(lines)
        lines.append(line)
        size += len(line)


CORPORA: dict[str, Callable[[int], str]] = {
    "shell at random": lambda n: _random("()[]{}'\"`$;|&<>#\\\n \t=:-/*!?~abcdefrmEOF0123456789", n),
    "brackets, quotes at random": lambda n: _random("()[]{}$`'\" ", n),
    ";|& in all orders": _orders,
    "( deep, open": lambda n: "echo " + "(" * (n - 5),
    "( deep, closed": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "$( deep, open": lambda n: "echo " + "$(" * (n // 2),
    "$( deep, closed": lambda n: "echo " + "$(" * (n // 4) + ")" * (n // 4),
    "$(( deep, open": lambda n: "echo " + "$((" * (n // 3),
    "$(( deep, closed": lambda n: "echo " + "$((" * (n // 6) + "))" * (n // 6),
    "((…)) repeated": lambda n: _repeat("((1)) ", n),
    "${ deep, open": lambda n: "echo " + "${" * (n // 2),
    '"$( deep, open': lambda n: "echo " + '"$(' * (n // 3),
    "{ deep": lambda n: "echo " + "{" * n,
    "4,000 deep, repeated": lambda n: _repeat("echo " + "$(" * 4000 + ")" * 4000 + "\n", n),
    "backticks": lambda n: "echo " + "`" * n,
    "heredocs": lambda n: _repeat("cat <<EOF\n$(a\n'b\"\nEOF\n", n),
    "long word after a trigger": lambda n: "python3 -c 'import os' " + _b64(n),
    "fork-bomb shapes": lambda n: _repeat("f(){ f|f& };g (){ x; } ", n),
    "plain script (standby takes it)": lambda n: _lines(_plain_line, n),
    "notebook script (loops, heredocs, $(…))": lambda n: _lines(_notebook_block, n),
    "brace lists (mkdir -p {d0,…})": lambda n: "mkdir -p {" + ",".join(f"d{i}" for i in range(n // 4))[:n] + "}",
    "brace lists of brace lists": lambda n: "rm {" + _repeat("{a,b},", n) + "c}",
    "many assignments (NAME=…)": lambda n: "".join(f"v{i}=x\n" for i in range(n // 6))[:n] + " rm x",
    "a long script written, then run again and again": lambda n: "echo '" + "x" * (n // 2) + "' > s.sh\n" + (
        "sh s.sh\n" * (n // 16)),
    "secret-shaped labels": lambda n: _repeat("password=[] token: none api_key=(unset) Bearer x "
                                              "mysql -phunter2 curl -u a:b redis://:p@h ", n),
}

PASSES: dict[str, Callable[[str], Any]] = {
    "shell reader (tokenize)": tokenize,
    "standby check (surely_parses)": surely_parses,
    "templating (bash)": lambda text: expand_params(text + " {x}", {"x": "v"}, language="bash"),
    "templating (python)": lambda text: expand_params(text + " {x}", {"x": "v"}, language="python"),
    "guard (check all)": lambda text: check("all", text),
    "guard, walked (rm x; …)": lambda text: check("all", "rm x; " + text),
    "redaction": lambda text: redact(text, {"TOKEN": "s3cr3t-value"}),
}


class _Slow(Exception):
    pass


def _stop(*_: object) -> None:
    raise _Slow


def timed(run: Callable[[str], Any], text: str, limit: float) -> float | None:
    """Seconds ``run(text)`` took, or ``None`` past ``limit`` (an exception it raises is its answer)."""
    signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.process_time()
    try:
        run(text)
    except _Slow:
        return None
    except Exception:  # a refusal raised is an answer: its cost is what is measured
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=1.0, help="the full size, in MB (1 MB = 10**6 characters)")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds one run may take before it is stopped")
    parser.add_argument("--corpus", nargs="*", default=list(CORPORA))
    parser.add_argument("--pass", dest="passes", nargs="*", default=list(PASSES))
    args = parser.parse_args()
    size = int(args.mb * MB)
    sys.setrecursionlimit(10_000)
    print(f"| corpus | pass | s/MB at {args.mb:g} MB | ratio to half the size |")
    print("| --- | --- | ---: | ---: |")
    worst: dict[str, float] = {}
    for corpus in args.corpus:
        full, half = CORPORA[corpus](size), CORPORA[corpus](size // 2)
        for name in args.passes:
            run = PASSES[name]
            small = timed(run, half, args.limit)
            large = timed(run, full, args.limit) if small is not None else None
            per_mb = None if large is None else large / args.mb
            ratio = "" if small is None or large is None else f"{large / max(small, 1e-9):.2f}"
            shown = f">{args.limit:g} s" if per_mb is None else f"{per_mb:.3f}"
            print(f"| {corpus} | {name} | {shown} | {ratio} |", flush=True)
            worst[name] = max(worst.get(name, 0.0), float("inf") if per_mb is None else per_mb)
    print("\nworst s/MB per pass: " + ", ".join(f"{name} {value:.3f}" for name, value in worst.items()))


if __name__ == "__main__":
    main()
