"""Output into Python in one line (``files = %exec --capture ls``), whole; and every way a result reaches
the page -- live, ``--quiet``, a displayed ``Result``, a terminal -- within the display budget; a stable
setting for runbooks kept in git."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from execmagic.engine import Result
from execmagic.magics import CellCommandFailed
from magic_calls import magic

pytestmark = pytest.mark.watchdog_outlives_test


@pytest.fixture(autouse=True)
def fresh_session(ip, fresh_magics):
    yield
    fresh_magics.display_budget, fresh_magics.stable_output = 100_000, False
    for name in ("files", "big", "res"):
        ip.user_ns.pop(name, None)


def cell(ip, source):
    with capture_output() as cap:
        result = ip.run_cell(source)
    return cap, result


def sizes(output):
    return {mime: len(value if isinstance(value, str) else json.dumps(value)) for mime, value in output.data.items()}


# -- capture --------------------------------------------------------------------------------------
def test_capture_returns_the_result_and_shows_nothing(ip, tmp_path):
    for name in ("b.csv", "a.csv"):
        (tmp_path / name).write_text("x\n")
    cap, run = cell(ip, f"files = %exec --capture ls {tmp_path}")
    assert run.success and cap.stdout == cap.stderr == "" and cap.outputs == []
    files = ip.user_ns["files"]
    assert isinstance(files, Result) and files.lines == ["a.csv", "b.csv", "logs"]


def shown(ip, value):
    """What a kernel's display hook sends for a cell's value (the test shell prints its text as ``Out[]``)."""
    return ip.display_formatter.format(value)[0]


def test_capture_as_the_cells_value_is_shown_once(ip):
    cap, run = cell(ip, "%exec --capture echo once")
    assert run.success and isinstance(run.result, Result)
    assert cap.outputs == [] and cap.stdout.count("\nonce\n") == 1  # IPython's Out[], no summary of ours besides it
    data = shown(ip, run.result)
    assert data["text/plain"].startswith("✔ exit 0") and data["text/plain"].endswith("── stdout · 5 B ──\nonce")
    assert PROVENANCE in data


def test_capture_of_a_failure_shows_it_and_stops_the_cell(ip):
    cap, run = cell(ip, "files = %exec --capture echo why >&2; exit 4\nprint('not reached')")
    assert isinstance(run.error_in_exec, CellCommandFailed) and "files" not in ip.user_ns
    (output,) = cap.outputs
    assert output.data["text/plain"].startswith("✘ exit 4") and "── stderr · 4 B ──\nwhy" in output.data["text/plain"]
    cap, run = cell(ip, "files = %exec --capture --no-raise exit 4")
    assert run.success and cap.outputs == [] and ip.user_ns["files"].exit_code == 4


def test_capture_of_500000_lines_is_whole(ip):
    cap, run = cell(ip, "files = %spawn --capture seq 1 500000")
    files = ip.user_ns["files"]
    assert run.success and cap.outputs == [] and files.truncated  # memory kept its start and end only
    assert files.lines == [str(i) for i in range(1, 500001)]


def test_capture_does_not_go_with_bg(ip):
    with pytest.raises(UsageError, match=r"^--capture does not apply to --bg"):
        ip.run_cell_magic("exec", "--bg --capture", "true")


# -- the budget -----------------------------------------------------------------------------------
def test_quiet_out_of_500000_lines_keeps_within_the_budget(ip):
    """The 5 MB cell: 156,617 lines saved twice (text/plain and text/html) before; now the start, the end and
    the log's path in each format, and the value whole."""
    cap = magic(ip, "exec", "--quiet --out big seq 1 500000")
    (output,) = cap.outputs
    budget = 100_000
    assert sizes(output)["text/plain"] < budget + 1000 and sizes(output)["text/html"] < budget + 2000
    assert sizes(output)[PROVENANCE] < 2000
    big = ip.user_ns["big"]
    text = output.data["text/plain"]
    assert text.split("\n")[2:4] == ["1", "2"] and text.endswith("\n500000")
    assert f"full output in {big.stdout_capture.log_path}" in text and big.stdout_capture.log_path in output.data[
        "text/html"]
    assert big.stdout == "".join(f"{i}\n" for i in range(1, 500001))


def test_a_displayed_result_keeps_within_the_budget_set_now(ip):
    magic(ip, "exec", "--out big seq 1 500000")
    big = ip.user_ns["big"]
    assert {mime: len(value) for mime, value in shown(ip, big).items() if isinstance(value, str)} == {
        "text/plain": pytest.approx(100_000, abs=400), "text/html": pytest.approx(100_000, abs=1000)}
    ip.run_line_magic("config", "ExecMagics.display_budget = 3000")  # asked for at each rendering
    data = shown(ip, big)
    assert len(data["text/plain"]) < 3400 and len(data["text/html"]) < 4000 and len(json.dumps(data[PROVENANCE])) < 2000


def test_a_terminal_quiet_run_keeps_within_the_budget(ip):
    ip.run_line_magic("config", "ExecMagics.display_budget = 3000")
    notebook_types = ip.display_formatter.active_types
    ip.display_formatter.active_types = ["text/plain"]
    try:
        cap = magic(ip, "exec", "--quiet seq 1 3000")
    finally:
        ip.display_formatter.active_types = notebook_types
    (output,) = cap.outputs
    assert list(output.data) == ["text/plain"] and len(output.data["text/plain"]) < 3600


def test_every_live_cut_names_a_log(ip):
    """Both streams cut at once: each names the log that has all of it, never "not logged"."""
    ip.run_line_magic("config", "ExecMagics.display_budget = 2000")
    cap = magic(ip, "exec", "", "for i in $(seq 300); do echo out$i; echo err$i >&2; done")
    ends = [line for line in (cap.stdout + cap.stderr).splitlines() if line.startswith("… [") and " on std" in line]
    assert len(ends) == 2 and all("full output in " in line for line in ends)
    assert len(cap.stdout) + len(cap.stderr) - sum(len(line) + 1 for line in (cap.stdout + cap.stderr).splitlines()
                                                   if line.startswith("… [")) <= 2000


# -- stable output ----------------------------------------------------------------------------------
def test_stable_output_saves_the_same_for_the_same_run(ip):
    ip.run_line_magic("config", "ExecMagics.stable_output = True")
    first, second = (magic(ip, "exec", "--no-raise sleep 0.01; seq 1 200000 | tail -1; exit 3").outputs[0].data
                     for _ in range(2))
    assert first == second
    assert first["text/plain"] == "✘ exit 3 · sleep 0.01; seq 1 200000 | tail -1; exit 3"
    assert first[PROVENANCE]["exit_code"] == 3 and first[PROVENANCE]["command"].startswith("sleep 0.01")
    assert not {"started_at", "duration_ms", "log_paths"} & set(first[PROVENANCE])
    ip.run_line_magic("config", "ExecMagics.stable_output = False")
    usual = magic(ip, "exec", "true").outputs[0].data
    assert {"started_at", "duration_ms"} <= set(usual[PROVENANCE]) and " ms · true" in usual["text/plain"]
