"""Which line of a multi-line bash cell gave the status it failed with (``Result.failed_line``).

Named where it is known for sure, in every session run: a cold bash, a standby, inside the sandbox, with
``--errexit`` or without, an ``exit N`` too; said nowhere rather than wrong (an exit that may not be the one, a
script's own ERR trap, a status no ERR trap saw, sh).  The traps that learn it never show: not in a ``set -x`` trace, not in ``$_``.
"""

from __future__ import annotations

import os

import pytest

from execmagic.engine import Engine, RunOptions
from waiting import wait_until

READY = 10.0  # seconds a standby may take to start on a busy machine (awaited, not slept)


@pytest.mark.parametrize(("script", "line"), [
    ("echo a\nfalse\necho b\nls /no/such/execmagic-path", 4),  # the last command, with an earlier failure
    ("false\nfalse\ntrue\nfalse || false\n", 4),  # the same text on several lines: LINENO tells them apart
    ("f() {\n  false\n}\necho a\nf\n", 5),  # a function's failure: the line that called it
    ("echo a\n(\n  cd /\n  false\n)", 5),  # a subshell: its own line (bash names its last one)
    ("echo a | (read -r x; [ -z x ])\ntrue | false", 2),  # a pipeline: its status is its last command's
    ("echo a\ncd / && ls /no/such/execmagic-path\n", 2),  # `a && b` that failed on b: the ERR trap saw it
    ("[ -d / ] && echo a\n! true || false\nfalse", 3),  # && and ! before the line that failed
    ("set -u\necho a\nfalse\n", 3),  # nounset: the traps read no unset name
    # an exit: no ERR trap sees it, and bash keeps no line for the EXIT trap; the one `exit N` of that status
    ("echo a\n[ -f /no/such ] || exit 3\necho b", 2),
    ("false\nexit 3 # the end\n", 2),
    ("f() {\n  echo in f; exit 4\n}\necho a\nf\nexit 5", 2),
])
def test_a_failed_multi_line_cell_names_the_line_that_gave_its_status(engine, script, line):
    r = engine.run_script(script)
    assert not r.success and r.failed_line == line
    assert r.outcome() == f"exit {r.exit_code} at line {line}"
    assert r.to_json()["failed_line"] == line


@pytest.mark.parametrize("script", [
    "false",  # one line: the line is the cell
    "false\ntrue",  # it succeeded
    "ls /no/such/execmagic-path\necho $? >/dev/null\n[ -f /no/such ] && echo yes",  # no ERR trap saw it
    "false\nexit 1",  # exit fires no ERR trap and leaves $_ as it was: false would be named, wrongly
    "rc=3\necho a\nexit $rc",  # an exit whose status is not written
    "[ -f /no/such ] && exit 4\necho a\nexit 1\n",  # an && that may have given the status, not the exit
    "if [ -f /no/such ]; then exit 1; fi\n[ -d / ] || exit 1\nexit 1",  # several lines exit 1
    "set -eu\nf() {\n  [ -f /no/such ]\n}\nf\nexit 1",  # set -e of its own: f's failure is unseen
    "trap 'echo caught' ERR\nfalse\ntrue\nfalse",  # the script's own ERR trap replaced ours
    "set -e\nf() {\n  false\n}\nf",  # set -e of its own: a function's failure ends the shell inside it
    # after a noted failure, a status no ERR trap sees, with the same $_: only `a && b` and `! a` give one
    "grep -q x /dev/null\ngrep -q y /dev/null && echo found",
    "grep -q x /dev/null\n! grep -q '' /dev/null /dev/null",
])
def test_nothing_is_named_where_the_line_is_not_known_for_sure(engine, script):
    r = engine.run_script(script)
    assert r.failed_line is None and "line" not in r.outcome()
    assert "failed_line" not in r.to_json()


def test_the_traps_that_learn_it_stay_out_of_sight(engine):
    """A trace shows the user's commands only, ``$_`` and ``$?`` stay what bash makes them, a script's own ERR
    trap still runs, and no variable of ours is exported into the next run."""
    r = engine.run_script("set -x\nls /no/such/execmagic-path 2>/dev/null\necho \"$_ $?\"\nfalse")
    assert r.stdout == "/no/such/execmagic-path 2\n" and r.failed_line == 4
    assert r.stderr == "+ ls /no/such/execmagic-path\n+ echo '/no/such/execmagic-path 2'\n+ false\n"
    mine = engine.run_script("trap 'echo caught $LINENO' ERR\nfalse")
    assert mine.stdout == "caught 2\n"
    assert "__execmagic" not in engine.run_script("env; declare -p | grep -c __execmagic_q || true").stdout


def test_errexit_names_in_the_result_the_line_its_stderr_names(engine):
    r = engine.run_script("echo a\nfalse\necho b\nexit 3", errexit=True)
    assert (r.exit_code, r.failed_line) == (1, 2)  # stopped before the exit: the exit does not matter
    assert r.stderr == "--errexit stopped the cell at line 2: exit 1\n"
    piped = engine.run_script("seq 1 100000 | head -1\necho b", errexit=True)
    assert (piped.exit_code, piped.failed_line, piped.stdout) == (141, 1, "1\n")
    assert piped.outcome() == "exit 141 at line 1 (SIGPIPE: a reader such as head closed the pipe early)"
    unstopped = engine.run_script("set -o pipefail\nseq 1 100000 | head -1")  # the same without --errexit
    assert unstopped.outcome() == "exit 141 at line 2 (SIGPIPE: a reader such as head closed the pipe early)"


def test_a_big_cell_that_goes_through_a_file_names_its_line(engine):
    big = "".join(f": {i:06d}\n" for i in range(12000)) + "false\necho after\nfalse\n"
    r = engine.run_script(big)
    assert (r.exit_code, r.failed_line) == (1, 12003)  # read by a boot line's eval, not from the argv


def test_sh_says_nothing(engine):
    """dash has no ERR trap."""
    assert engine.run_script("false\nfalse", "sh").failed_line is None


def test_an_isolated_run_names_it_and_still_leaves_the_session_alone(engine):
    """Its prelude writes only the failed line, and only when it failed: no cwd, no exports, no file left."""
    r = engine.run_script("cd /\nexport EXECMAGIC_T=1\nfalse\ntrue | false\necho a", isolated=True)
    assert (r.exit_code, r.failed_line) == (0, None)
    r = engine.run_script("cd /\nexport EXECMAGIC_T=1\nfalse\necho a\nls /no/such/execmagic-path", isolated=True)
    assert (r.exit_code, r.failed_line, r.new_cwd, r.notes) == (2, 5, None, ())
    stopped = engine.run_script("echo a\nfalse\nexit 3", isolated=True, errexit=True)
    assert (stopped.exit_code, stopped.failed_line) == (1, 2)
    assert engine.run_script("false\nexit 1", isolated=True).failed_line is None  # not sure: silent, as ever
    assert engine.session.cwd is None and "EXECMAGIC_T" not in engine.session.environment()
    assert os.listdir(engine.logs.runtime()) == []  # nothing left behind, whether it failed or not
    assert "__execmagic" not in engine.run_script("env; declare -p | grep -c __execmagic_w || true",
                                                  isolated=True).stdout


def test_a_standby_names_it_as_a_cold_start_does(tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    engine.standby = True
    try:
        engine.run_script("true")
        standby = engine.warm.wait_ready(READY)
        assert standby is not None
        r = engine.run_script("echo a\nfalse\necho b\nfalse")
        assert standby.runner.poll() is not None  # the run was in it
        assert (r.exit_code, r.failed_line) == (1, 4)
        assert engine.warm.wait_ready(READY) is not None
        quiet = engine.run_script("false\n[ -f /no/such ] && echo yes")  # the runner's $_ hides what ran last
        assert (quiet.exit_code, quiet.failed_line) == (1, None)
        assert engine.warm.wait_ready(READY) is not None
        ended = engine.run_script("echo a\n[ -f /no/such ] || exit 3\necho b")
        assert (ended.exit_code, ended.failed_line) == (3, 2)
    finally:
        engine.close(0.3)


def test_a_sandboxed_run_names_it_too(engine, sandbox_place):
    box = engine.sandbox("workspace").sandbox
    r = engine.run_script("echo a\ntouch /etc/execmagic-no 2>/dev/null\ntrue\nfalse | true\nfalse", sandbox=box)
    assert r.sandbox and (r.exit_code, r.failed_line) == (1, 5)
    alone = engine.run_script("echo a\nfalse\necho b", sandbox=box, isolated=True)  # exit 0: its empty file goes
    assert (alone.exit_code, alone.failed_line) == (0, None)
    alone = engine.run_script("echo a\nfalse\necho b\nfalse", sandbox=box, isolated=True)
    assert (alone.exit_code, alone.failed_line) == (1, 4)
    assert not [name for name in os.listdir(os.path.join(engine.logs.runtime(), "sandboxed")) if "failed" in name]


@pytest.mark.parametrize("failure", [b"", b"0\n", b"9\n", b"-1\n", b"2x\n", b"99999999999\n", b"\xff\nstop",
                                     b"2\nstop\nmore"])
def test_what_a_run_wrote_into_its_state_file_names_only_a_line_of_the_script(failure):
    """A sandboxed run can write its own state file: nothing but a number within the script is a line."""
    from execmagic.engine.failure_line import failed_line

    assert failed_line(failure, "a\nb\nc\n", 1) in (None, 2)
    assert failed_line(failure, "a\nb\nc\n", 1) is None or failure.startswith(b"2\n")
    assert failed_line(b"2\nstop", "false\nexit 1", 1) == 2  # --errexit stopped it there, before any exit
    assert failed_line(b"2\n", "a\nb", 1) == 2 and failed_line(b"2\n", "a b", 1) is None
    assert failed_line(b"2\nunnoted", "a\nexit 1", 1) is None  # a line with unnoted: written by no trap of ours
    assert failed_line(b"\nunnoted", "a\nexit 1", 1) == 2 and failed_line(b"\nunnoted", "a\nexit 1", 2) is None


def _ended(engine, shell_id):
    """The shell's info once it has ended and every byte of it was read."""
    def ended():
        out = engine.shells.read(shell_id, wait=0.5)
        return out.shell if out.at_end else None
    return wait_until(ended, 20, f"{shell_id} to end", interval=0)


@pytest.mark.parametrize("isolated", [False, True])
def test_a_background_shell_names_it_where_its_ending_is_shown(engine, isolated):
    """As a foreground run says it, in the shell's info, its JSON and the words that show its status."""
    from execmagic.display.shells import ShellTable, output_status_text, table_text

    plan = engine.plan_script("echo a\nfalse\necho b\nls /no/such/execmagic-path 2>/dev/null", save_session=False,
                              isolated=isolated)
    info = _ended(engine, engine.start_background(plan).id)
    assert (info.exit_code, info.failed_line, info.to_json()["failed_line"]) == (2, 4, 4)
    out = engine.shells.read(info.id)
    assert "exited 2 at line 4" in output_status_text(out)
    assert "exited 2 at line 4" in table_text(ShellTable((out.shell,)))
    for script in ("echo a\nfalse\ntrue", "false\nexit 1"):  # it succeeded; not sure: said nowhere, as ever
        info = _ended(engine, engine.start_background(engine.plan_script(script, save_session=False)).id)
        assert info.failed_line is None and "failed_line" not in info.to_json()
        assert " at line" not in table_text(ShellTable((info,)))
    assert os.listdir(engine.logs.runtime()) == []  # nothing left behind, failed or not
    assert engine.session.cwd is None


def test_a_background_shell_that_was_stopped_names_no_line(engine):
    """Its status is the signal's, not its script's: nothing is named, and the file its trap wrote is gone."""
    plan = engine.plan_script("false\ntrap 'exit 7' TERM\necho ready\nsleep 60 & wait", save_session=False)
    info = engine.start_background(plan)
    wait_until(lambda: engine.shells.read(info.id, reader="w", whole_log=True).stdout, 20, "the shell to start")
    engine.shells.kill(info.id, grace=5)
    info = _ended(engine, info.id)
    assert info.failed_line is None and info.status in ("killed", "exited 7")
    assert os.listdir(engine.logs.runtime()) == []


def test_a_sandboxed_background_shell_names_it_and_leaves_no_file(engine, sandbox_place):
    box = engine.sandbox("workspace").sandbox
    for script, line in (("echo a\nfalse\ntrue", None), ("echo a\nfalse\necho b\nfalse", 4)):
        info = _ended(engine, engine.start_background(engine.plan_script(script, save_session=False,
                                                                         sandbox=box)).id)
        assert info.failed_line == line
    assert not [name for name in os.listdir(os.path.join(engine.logs.runtime(), "sandboxed")) if "failed" in name]
