#!/usr/bin/env bash
# The suite under load: the end-to-end and background-shell tests, three rounds in a row, while two
# CPU burners keep both cores of a small machine busy.  Every round must pass.
#
#     tests/stress.sh [PYTEST ARGS...]        (PYTHON=... to use another interpreter than .venv's)
#     tests/stress.sh --all [PYTEST ARGS...]  the whole suite, three rounds, under the same load
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" -c 'while True: pass' & burner1=$!
"$PY" -c 'while True: pass' & burner2=$!
trap 'kill "$burner1" "$burner2" 2>/dev/null || true' EXIT
# A script started in the background of a non-interactive shell inherits SIGINT ignored, and the
# stop-button tests need it; a shell cannot reset an ignored signal, Python can (then execs pytest).
pytest() {
  "$PY" -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.executable, [sys.executable, "-m", "pytest", *sys.argv[1:]])' "$@"
}
paths=(tests/test_kernel_e2e.py tests/background tests/magics/test_bg_magics.py)
if [ "${1:-}" = "--all" ]; then
  shift
  paths=()  # pyproject's testpaths: everything the README's test command runs
fi
for round in 1 2 3; do
  echo "== round $round of 3, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  pytest -q -p no:cacheprovider ${paths[@]+"${paths[@]}"} "$@"
done
echo "== 3 rounds passed under load"
