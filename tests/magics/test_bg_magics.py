"""%bg, %bgout, %kill and %%exec --bg in a real InteractiveShell."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from execmagic.display import PROVENANCE_MIME as PROVENANCE
from magic_calls import magic
from processes import TOKEN_VAR, pid_alive, processes_with
from waiting import wait_until

pytestmark = pytest.mark.watchdog_outlives_test


@pytest.fixture(autouse=True)
def fresh(ip, fresh_magics):
    yield fresh_magics
    ip.run_line_magic("config", "ExecMagics.max_background_shells = 32")  # %config: a later load reads it too


def data(cap, mime="text/plain"):
    return [o.data[mime] for o in cap.outputs if mime in o.data]


def follow(ip, shell_id, extra=""):
    return magic(ip, "bgout", f"{shell_id} --follow {extra}")


def test_bg_returns_a_handle_and_lists(ip):
    cap = magic(ip, "bg", "--name job echo hi; sleep 30")
    (text,) = data(cap)
    assert text.startswith("▶ job · pid ") and "logs: " in text and "%bgout job" in text
    assert data(cap, PROVENANCE)[0]["id"] == "job"
    assert cap.stdout == ""  # background output never appears by itself
    table = magic(ip, "bg", "")
    assert data(table)[0].splitlines()[0].split()[:3] == ["id", "pid", "status"]
    assert '<table class="execmagic-shells"' in data(table, "text/html")[0]
    assert data(table, PROVENANCE)[0][0]["status"] == "running"


def test_bgout_shows_only_new_output_and_status(ip):
    magic(ip, "bg", "echo one; sleep 0.4; echo two; echo oops >&2")
    first = magic(ip, "bgout", "bg1 --wait 5")
    assert first.stdout.startswith("one\n") and "two" not in first.stdout
    assert data(first)[0].startswith("⏳ bg1 · running")
    rest = follow(ip, "bg1")
    assert rest.stdout == "two\n" and rest.stderr == "oops\n"
    assert data(rest)[0].startswith("■ bg1 · exited 0")
    assert magic(ip, "bgout", "bg1").stdout == ""


def test_bgout_filter_stream_tail_all(ip):
    magic(ip, "bg", "for i in 1 2 3; do echo step $i; echo loss=$i; done; echo warn >&2")
    follow(ip, "bg1", "--filter ^loss")
    again = magic(ip, "bgout", "bg1 --all --filter step")
    assert again.stdout == "step 1\nstep 2\nstep 3\n"
    assert "did not match 'step'" in data(again)[0]
    assert magic(ip, "bgout", "bg1 --tail 1 --stream stdout").stdout == "loss=3\n"
    assert magic(ip, "bgout", "bg1 --all --stream stderr").stderr == "warn\n"


def test_follow_counts_what_its_filter_held_back_over_the_whole_follow(ip):
    """Each read counts its own held-back lines: the status after a follow says all of them, not the last read's
    (which said 0 or 1 by timing)."""
    magic(ip, "bg", "for i in 1 2 3; do echo loss $i; echo checkpoint $i >&2; sleep 0.3; done")
    cap = follow(ip, "bg1", "--filter loss")
    assert cap.stdout == "loss 1\nloss 2\nloss 3\n" and cap.stderr == ""
    assert "3 stderr lines did not match 'loss'" in data(cap)[0]
    assert data(cap, PROVENANCE)[0]["filtered_out"] == {"stdout": 0, "stderr": 3}


def test_follow_interrupt_stops_looking_not_the_shell(ip):
    magic(ip, "bg", "while true; do echo tick; sleep 0.1; done")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        cap = follow(ip, "bg1")
    finally:
        timer.cancel()
    assert "tick" in cap.stdout and "the shell itself was not touched" in cap.stderr
    assert ip.magics_manager.registry["ExecMagics"].engine.shells.info("bg1").running


def test_follow_stops_at_the_display_budget(ip, fresh):
    fresh.display_budget = 500
    try:
        magic(ip, "bg", "while true; do echo 0123456789; sleep 0.01; done")
        cap = follow(ip, "bg1")
    finally:
        fresh.display_budget = 100_000
    assert "stopped following bg1 at the display budget" in cap.stderr
    assert len(cap.stdout) < 1200


def test_cell_exec_bg(ip):
    with capture_output() as cap:
        ip.run_cell_magic("exec", "python --bg --name py", "import time\nprint('from python', flush=True)\ntime.sleep(30)")
    assert data(cap)[0].startswith("▶ py · pid ")
    assert magic(ip, "bgout", "py --wait 10").stdout == "from python\n"
    with pytest.raises(UsageError, match="--input does not apply to --bg"):
        ip.run_cell_magic("exec", "--bg --input x", "cat")
    with pytest.raises(UsageError, match="--name goes with --bg"):
        ip.run_cell_magic("exec", "--name x", "true")


def test_kill_answers(ip):
    magic(ip, "bg", "--name a sleep 30")
    magic(ip, "bg", "--name b trap '' TERM; echo trapped; sleep 30")
    assert magic(ip, "bgout", "b --wait 10").stdout == "trapped\n"  # the trap is set before the kill
    cap = magic(ip, "kill", "a b")
    texts = data(cap)
    assert texts[0] == "■ a stopped with SIGTERM"
    assert texts[1].startswith("■ b stopped with SIGTERM, then SIGKILL after 0.3 s")
    assert data(magic(ip, "kill", "a")) == ["■ a already killed; nothing to stop"]
    magic(ip, "bg", "--name c sleep 30")
    assert data(magic(ip, "kill", "--all --signal INT")) == ["■ c stopped with SIGINT"]
    assert magic(ip, "kill", "--all").stdout == "no background shell is running\n"


def test_a_shell_that_traps_the_signal_and_exits_reads_as_its_exit_not_as_killed(ip):
    """Its trap chose the exit code: the status says that code, as for any exit."""
    magic(ip, "bg", "--name t trap 'echo caught; exit 7' INT; echo ready; while :; do sleep 0.05; done")
    assert magic(ip, "bgout", "t --wait 10").stdout == "ready\n"  # the trap is set before the kill
    assert data(magic(ip, "kill", "t --signal INT"))[0].startswith("■ t stopped with SIGINT")
    assert data(magic(ip, "bg", ""), PROVENANCE)[0][0]["status"] == "exited 7"
    assert data(magic(ip, "kill", "t")) == ["■ t already exited with 7; nothing to stop"]


@pytest.mark.parametrize(
    "name, line, message",
    [
        ("bgout", "nope", r"no background shell 'nope' \(known: job\)"),
        ("kill", "nope", r"no background shell 'nope' \(known: job\)"),
        ("bgout", "job --filter (", r"invalid filter regex '\('"),
        ("bgout", "job --stream bogus", "invalid choice"),
        ("bgout", "job --follow --all", "does not combine"),
        ("bg", "--name job sleep 1", "named 'job' is already running"),
        ("kill", "job --signal SIGFOO", "unknown signal 'SIGFOO'"),
        ("kill", "", r"^%kill needs the id of the shell to stop \(running: job\), or --all$"),
        ("bgout", "", r"^%bgout needs the id of the shell to read \(shells: job\), e\.g\. %bgout job$"),
        ("bgout", "--wait 5", r"^%bgout needs the id of the shell to read \(shells: job\)"),
        ("bgout", "jbo", r"^no background shell 'jbo' \(known: job\); did you mean 'job'\?$"),
        ("kill", "job --all", "not both"),
        ("bg", "--timeout 0 sleep 1", "positive"),
        ("bg", "--name x", "needs a command line"),
        ("bg", "--bogus sleep 1", "unknown option"),
        ("bgout", "x --folow", r"^unknown option '--folow'; did you mean --follow\? \(see %bgout\?\)$"),
        ("kill", "--sgnal INT x", r"^unknown option '--sgnal'; did you mean --signal\? \(see %kill\?\)$"),
    ],
)
def test_one_line_errors(ip, name, line, message):
    magic(ip, "bg", "--name job sleep 30")
    with pytest.raises(UsageError, match=message) as info:
        ip.run_line_magic(name, line)
    assert "\n" not in str(info.value)
    assert ip.magics_manager.registry["ExecMagics"].engine.shells.info("job").running


def test_concurrency_limit_is_a_usage_error(ip):
    ip.run_line_magic("config", "ExecMagics.max_background_shells = 1")
    magic(ip, "bg", "sleep 30")
    with pytest.raises(UsageError, match="the limit is 1"):
        magic(ip, "bg", "sleep 30")


def test_bg_dry_run_and_timeout(ip):
    cap = magic(ip, "bg", "--dry-run --param n=5 sleep {n}")
    assert cap.stdout.splitlines()[0] == "sleep 5" and not cap.outputs
    magic(ip, "bg", "--timeout 0.3 sleep 30")
    cap = follow(ip, "bg1")
    assert data(cap)[0].startswith("■ bg1 · timed out")


def test_unload_stops_background_shells_and_the_watchdog(ip):
    magic(ip, "bg", "sleep 30")
    watchdog = ip.magics_manager.registry["ExecMagics"].engine.shells.watchdog_pid
    ip.run_line_magic("unload_ext", "execmagic")
    try:
        assert not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR])
        assert watchdog is not None and not pid_alive(watchdog)
    finally:
        ip.run_line_magic("load_ext", "execmagic")


def test_reload_keeps_background_shells_listed_readable_and_killable(ip):
    magic(ip, "bg", "--name keeper echo before; sleep 30")
    assert "before" in magic(ip, "bgout", "keeper --wait 5").stdout
    watchdog = ip.magics_manager.registry["ExecMagics"].engine.shells.watchdog_pid
    ip.run_line_magic("reload_ext", "execmagic")
    table = magic(ip, "bg", "")
    assert [(row["id"], row["status"]) for row in data(table, PROVENANCE)[0]] == [("keeper", "running")]
    assert ip.magics_manager.registry["ExecMagics"].engine.shells.watchdog_pid == watchdog and pid_alive(watchdog)
    assert data(magic(ip, "kill", "keeper"))[0].startswith("■ keeper")
    assert not processes_with(TOKEN_VAR, os.environ[TOKEN_VAR], exclude=(watchdog,))


def test_a_finished_name_can_be_reused(ip):
    magic(ip, "bg", "--name job true")
    follow(ip, "job")
    cap = magic(ip, "bg", "--name job echo again")
    assert data(cap)[0].startswith("▶ job · pid ")
    assert follow(ip, "job").stdout == "again\n"


def test_bg_timeout_nan_is_refused_and_other_shells_keep_streaming(ip):
    magic(ip, "bg", "--name ticker for i in $(seq 1 400); do echo tick $i; sleep 0.02; done")
    assert "tick" in magic(ip, "bgout", "ticker --wait 5").stdout
    for bad in ("nan", "inf", "1e12", "-1"):
        with pytest.raises(UsageError, match=r"^--timeout must be a positive number of seconds") as info:
            ip.run_line_magic("bg", f"--timeout {bad} sleep 1")
        assert type(info.value) is UsageError and "\n" not in str(info.value)
    assert [i.id for i in ip.magics_manager.registry["ExecMagics"].engine.shells.list()] == ["ticker"]
    for _ in range(2):
        assert "tick" in magic(ip, "bgout", "ticker --wait 5").stdout
    magic(ip, "bg", "--name after echo after")
    assert magic(ip, "bgout", "after --wait inf").stdout == "after\n"


def test_cleanup_forgets_ended_shells_and_deletes_their_logs(ip):
    magic(ip, "bg", "--name done echo finished")
    magic(ip, "bg", "--name live sleep 30")
    shells = ip.magics_manager.registry["ExecMagics"].engine.shells
    # the end, not just the output
    wait_until(lambda: shells.read("done", reader="test", wait=10).at_end, 30, "'done' to end", interval=0)
    logs = shells.info("done").log_paths
    assert os.path.exists(logs["stdout"])
    assert magic(ip, "bg", "--cleanup").stdout == "removed 1 ended shell and their logs: done\n"
    assert not any(os.path.exists(p) for p in logs.values())
    assert [i.id for i in ip.magics_manager.registry["ExecMagics"].engine.shells.list()] == ["live"]
    with pytest.raises(UsageError, match="--cleanup goes alone"):
        ip.run_line_magic("bg", "--cleanup sleep 1")


def test_follow_gathers_lines_into_a_few_blocks_in_order(ip):
    """One message per line would make a saved notebook (and its markdown export) one block per line."""
    import contextlib
    import io

    class CountingWrites(io.StringIO):
        def __init__(self):
            super().__init__()
            self.pieces = []

        def write(self, text):
            self.pieces.append(text)
            return super().write(text)

    magic(ip, "bg", "--name lines for i in $(seq 20); do echo line $i; [ $i = 10 ] && echo half >&2; sleep 0.05; done")
    out, err = CountingWrites(), CountingWrites()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        ip.run_line_magic("bgout", "lines --follow")
    shown = [piece for piece in out.pieces if "line " in piece]
    assert "".join(shown) == "".join(f"line {i}\n" for i in range(1, 21))  # all of it, in order
    assert len(shown) <= 10, shown  # gathered: fewer writes than half the lines
    assert err.getvalue() == "half\n"


def test_bgout_without_an_id_says_so_when_there_is_no_shell(ip):
    with pytest.raises(UsageError, match=r"^%bgout needs the id of the shell to read \(there is none yet; %bg starts"
                                         r" one\), e\.g\. %bgout bg1$"):
        ip.run_line_magic("bgout", "")


def test_a_shell_that_cannot_start_says_why_in_words_the_code_stays_in_the_fields(ip):
    from execmagic.magics import StartFailed

    with pytest.raises(StartFailed) as failed:
        ip.run_line_magic("bg", "--cwd ghost-dir sleep 1")
    assert str(failed.value) == "could not start: working directory does not exist 'ghost-dir'"
    assert failed.value.code == "ENOENT"
