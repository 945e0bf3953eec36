"""The pure renderers keep within the view's budget in every format, on whole lines, saying where the rest
is; a stable view leaves out what changes from run to run and keeps what ran and how it ended."""

from __future__ import annotations

import itertools
import json

import pytest

from execmagic.display.cut import head, head_and_tail, tail
from execmagic.display.render import VOLATILE_FIELDS, View, render_html, render_json, render_text, status_line
from execmagic.engine import Engine, RunOptions

BUDGET = 2000
# the module's engine (and its watchdog) lives across tests; the fixture's teardown closes it
pytestmark = pytest.mark.watchdog_outlives_test


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Results of real runs (module scope: each command runs once), logged where the display cuts."""
    logs = str(tmp_path_factory.mktemp("logs"))
    engine = Engine(log_dir=logs, options=RunOptions(grace=0.3, log_over=BUDGET // 8))
    unlogged = Engine(log_dir=logs, options=RunOptions(grace=0.3))  # logs only what memory cannot hold
    try:
        yield {
            "big": engine.run_script("seq 1 500000"),
            "both": engine.run_script("seq 1 50000; seq 1 60000 >&2"),
            "small_err": engine.run_script("seq 1 50000; echo 'the one error line' >&2; exit 3"),
            "medium": unlogged.run_script("seq 1 1000"),  # 3.9 KB: whole in memory, over the budget, no log
            "fits": engine.run_script("echo hi"),
            "hostile": engine.run_script("head -c 30000 /dev/zero | tr '\\0' '<'"),
            "long_command": engine.run_script("true " + "x" * 10_000),
            "binary": engine.run_argv(["head", "-c", "20000", "/dev/urandom"]),
        }
    finally:
        engine.close()
        unlogged.close()


def shown_output(rendered: str) -> str:
    """The output characters a text rendering shows: without the status line, pane titles and notes."""
    lines = rendered.split("\n")[1:]
    return "\n".join(line for line in lines if not line.startswith(("── ", "… [")))


@pytest.mark.parametrize("name", ["big", "both", "small_err", "medium", "hostile"])
def test_every_format_keeps_within_the_budget(runs, name):
    r, view = runs[name], View(budget=BUDGET)
    text, page, record = render_text(r, view=view), render_html(r, view=view), render_json(r, view=view)
    assert len(shown_output(text)) <= BUDGET + 1  # + the line break before the note, when a cut is inside a line
    assert len(text) < BUDGET + 600 and len(page) < 6 * BUDGET + 1500  # html escapes '<' as 4 characters
    assert len(json.dumps(record)) < BUDGET + 1000


def test_the_start_and_the_end_on_whole_lines_and_where_the_rest_is(runs):
    r = runs["big"]
    text = render_text(r, view=View(budget=BUDGET))
    numbers = [int(line) for line in shown_output(text).split("\n") if line]
    assert numbers[0] == 1 and numbers[-1] == 500000
    assert len([1 for a, b in itertools.pairwise(numbers) if b != a + 1]) == 1
    log = r.stdout_capture.log_path
    assert f"── stdout · 3.4 MB · only its start and end shown; full output in {log} ──" in text
    assert f"… [3.4 MB in all; the middle is not shown here (the display budget); full output in {log}] …" in text
    assert f"full output in {log}" in render_html(r, view=View(budget=BUDGET))


def test_a_short_stream_keeps_all_of_itself(runs):
    """A one-line stderr beside a long stdout is shown whole: the long one gets the rest of the budget."""
    text = render_text(runs["small_err"], view=View(budget=BUDGET))
    assert "── stderr · 19 B ──\nthe one error line" in text
    assert text.index("── stdout") < text.index("── stderr")


def test_output_whole_in_memory_but_over_the_budget_points_at_the_value(runs):
    r = runs["medium"]
    assert not r.truncated
    text = render_text(r, view=View(budget=BUDGET))
    assert "only its start and end shown; all of it in the Result's .stdout" in text
    assert render_text(r, view=View(budget=10_000)).endswith("999\n1000")  # within the budget: whole


def test_binary_output_is_its_note(runs):
    r = runs["binary"]
    text = render_text(r, view=View(budget=BUDGET))
    assert text.split("\n")[1:] == ["── stdout · 20.0 KB · binary ──", r.stdout_capture.text]
    assert r.stdout_capture.text.startswith("[binary output: 20.0 KB; full output in ")


def test_a_result_within_the_budget_is_shown_as_before(runs):
    assert render_text(runs["fits"]).split("\n")[1:] == ["── stdout · 3 B ──", "hi"]


def test_a_long_command_is_bounded_in_the_html_title_and_the_record(runs):
    r, view = runs["long_command"], View(budget=1000)
    assert len(render_html(r, view=view)) < 2500
    record = render_json(r, view=view)
    assert len(record["command"]) < 1100 and "characters not shown" in record["command"]
    assert record["command"].startswith("true xxx") and record["exit_code"] == 0


def test_a_stable_view_leaves_out_what_changes_between_runs(runs):
    r = runs["big"]
    stable, usual = View(stable=True), View()
    record = render_json(r, view=stable)
    assert not set(VOLATILE_FIELDS) & set(record)
    assert {k: v for k, v in render_json(r, view=usual).items() if k not in VOLATILE_FIELDS} == record
    assert record["command"] == "seq 1 500000" and record["exit_code"] == 0 and record["success"] is True
    assert status_line(r, stable) == "✔ exit 0 · seq 1 500000"
    assert status_line(r, usual).startswith("✔ exit 0 · ") and status_line(r, usual) != status_line(r, stable)
    assert "ms</" not in render_html(r, view=stable) and " ms" not in render_text(r, view=stable).split("\n")[0]


@pytest.mark.parametrize("text", ["", "a", "abc\n", "1\n22\n333\n4444\n", "x" * 50, "\n" * 9, "é\n" * 20])
@pytest.mark.parametrize("room", [0, 1, 3, 7, 20, 100])
def test_cuts_keep_their_room_and_their_ends(text, room):
    front, back = head(text, room), tail(text, room)
    assert len(front) <= max(room, 0) and len(back) <= max(room, 0)
    assert text.startswith(front) and text.endswith(back)
    both = head_and_tail(text, room)
    assert (both is None) == (len(text) <= room)
    if both is not None:
        assert len(both[0]) + len(both[1]) <= room
