"""Through a real ipykernel: the value asked for is whole, what reaches the notebook keeps within the display
budget, and a stable setting makes two runs of a cell save the same outputs."""

from __future__ import annotations

import json

import pytest

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from kernel_client import KERNEL_TOKEN_VAR, Kernel, loaded
from processes import assert_none_left

pytestmark = pytest.mark.kernel

BUDGET = 100_000  # the default display budget


@pytest.fixture(scope="module")
def kernel():
    yield from loaded(Kernel())


@pytest.fixture(autouse=True)
def nothing_left_by_the_kernel(kernel):
    yield
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, exclude=(kernel.pid,), watchdogs=False)


def sent(ex) -> int:
    """Characters of output the notebook receives (and saves) from one execution."""
    total = 0
    for msg in ex.of_type("stream", "display_data", "execute_result", "update_display_data"):
        content = msg["content"]
        values = [content["text"]] if "text" in content else content["data"].values()
        total += sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in values)
    return total


def test_out_of_500000_lines_is_whole(kernel):
    ex = kernel.execute("%exec --out big seq 1 500000\n"
                        "assert big.stdout == ''.join(f'{i}\\n' for i in range(1, 500001)), big.stdout[-200:]\n"
                        "assert big.lines == [str(i) for i in range(1, 500001)]\n"
                        "print('whole', len(big.stdout), big.stdout_capture.truncated)")
    assert ex.status == "ok", ex.reply["content"]
    assert ex.stream_text().endswith(f"whole {sum(len(f'{i}') + 1 for i in range(1, 500001))} True\n")
    assert sent(ex) < BUDGET + 3000


def test_the_5_mb_cell_keeps_within_the_budget(kernel):
    """``%exec --quiet --out big seq 1 500000`` saved 5.1 MB (the lines twice); now each format holds the
    start, the end and the log's path within the budget."""
    ex = kernel.execute("%exec --quiet --out big seq 1 500000")
    assert ex.status == "ok" and ex.of_type("stream") == []
    (shown,) = ex.of_type("display_data")
    data = shown["content"]["data"]
    assert len(data["text/plain"]) < BUDGET + 500 and len(data["text/html"]) < BUDGET + 1500
    assert len(json.dumps(data[PROVENANCE])) < 2000
    log = data[PROVENANCE]["log_paths"]["stdout"]
    for text in (data["text/plain"], data["text/html"]):
        assert "1\n2\n3\n4\n" in text and "\n499999\n500000" in text and f"full output in {log}" in text
    assert sent(ex) < 2 * BUDGET + 5000


def test_a_displayed_result_and_a_captured_one_keep_within_the_budget(kernel):
    ex = kernel.execute("%exec --quiet --out big seq 1 500000\nbig")
    assert ex.status == "ok"
    (value,) = ex.of_type("execute_result")
    assert len(value["content"]["data"]["text/plain"]) < BUDGET + 500
    assert sent(ex) < 4 * BUDGET + 10_000
    ex = kernel.execute("%spawn --capture seq 1 500000")
    (value,) = ex.of_type("execute_result")
    assert ex.of_type("display_data") == ex.of_type("stream") == []  # shown once: as the cell's value
    assert len(value["content"]["data"]["text/html"]) < BUDGET + 1500 and sent(ex) < 2 * BUDGET + 5000


def test_capture_takes_one_line(kernel):
    ex = kernel.execute("files = %exec --capture printf 'a.csv\\nb b.csv\\n'\nprint(files.lines)")
    assert ex.status == "ok" and ex.stream_text() == "['a.csv', 'b b.csv']\n"
    assert ex.of_type("display_data", "execute_result") == []


def test_live_output_keeps_within_the_budget(kernel):
    ex = kernel.execute("%exec seq 1 500000")
    assert ex.status == "ok"
    text = ex.stream_text()
    notes = [line for line in text.splitlines() if line.startswith("… [")]
    assert len(text) - sum(len(line) + 1 for line in notes) <= BUDGET and text.endswith("\n500000\n")


def test_stable_output_saves_the_same_outputs_twice(kernel):
    run = "%%exec --no-raise\nsleep 0.05; seq 1 300000 | tail -2; echo done >&2; exit 2"
    try:
        assert kernel.execute("%config ExecMagics.stable_output = True").status == "ok"
        first, second = (kernel.execute(run) for _ in range(2))
    finally:
        kernel.execute("%config ExecMagics.stable_output = False")
    outputs = [[(m["msg_type"], m["content"]) for m in ex.of_type("stream", "display_data")] for ex in (first, second)]
    assert outputs[0] == outputs[1]
    (summary,) = first.of_type("display_data")
    data = summary["content"]["data"]
    assert data["text/plain"] == "✘ exit 2 · sleep 0.05; seq 1 300000 | tail -2; echo done >&2; exit 2"
    assert data[PROVENANCE]["exit_code"] == 2 and data[PROVENANCE]["stderr_bytes"] == 5
