"""The audit log fails closed, and secrets never reach what is shown or saved."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from execmagic.agents.tools import Toolbox
from execmagic.engine import Engine, RunOptions
from execmagic.guard.policy import AuditUnavailable, Policy
from processes import TOKEN_VAR, assert_none_left, pid_alive
from waiting import wait_until

TOKEN = "ghp_" + "Ab3" * 12


@pytest.fixture
def audited(tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3),
                    policy=Policy(audit_log=str(tmp_path / "audit.jsonl")))
    yield engine
    engine.close(0.3)


def records(tmp_path):
    return [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]


def test_an_unwritable_audit_log_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    engine = Engine(log_dir=str(tmp_path / "logs"), policy=Policy(audit_log=str(tmp_path / "no" / "dir" / "a.jsonl")))
    try:
        with pytest.raises(AuditUnavailable, match=r"^not run: the audit log .* cannot be written \(No such file"):
            engine.run_script(f"touch {marker}")
        with pytest.raises(AuditUnavailable):
            engine.start_background(engine.plan_script(f"touch {marker}", save_session=False))
        answer = Toolbox(engine).dispatch("Bash", {"command": f"touch {marker}"})
        assert answer["success"] is False and answer["error"].startswith("not run: the audit log")
        answer = Toolbox(engine).dispatch("Bash", {"command": f"touch {marker}", "run_in_background": True})
        assert answer["success"] is False and "audit log" in answer["error"]
        assert not marker.exists() and engine.shells.list() == []
    finally:
        engine.close(0.3)


def test_every_decision_has_its_lines(audited, tmp_path):
    box = Toolbox(audited, grace=0.3)
    assert box.dispatch("Bash", {"command": "echo hi"})["success"]
    started = box.dispatch("Bash", {"command": "sleep 30", "run_in_background": True})
    shell_id = started["bash_id"] if "bash_id" in started else started["shell_id"]
    assert box.dispatch("KillShell", {"shell_id": shell_id})["success"]
    refused = box.dispatch("Bash", {"command": "rm -rf /"})
    assert refused["success"] is False
    lines = [(r["decision"], r.get("phase")) for r in records(tmp_path)]
    assert lines == [("run", "intent"), ("run", "outcome"),
                     ("background", "intent"), ("background", "outcome"),
                     ("kill", "intent"), ("kill", "outcome"),
                     ("refused", "outcome")]
    run_intent, run_outcome = records(tmp_path)[:2]
    assert run_intent["run"] == run_outcome["run"] and run_outcome["exit_code"] == 0
    assert all({"time", "decision"} <= set(r) for r in records(tmp_path))


def test_outcome_that_cannot_be_recorded_is_a_note_not_a_rerun(audited, tmp_path):
    log = tmp_path / "audit.jsonl"
    result = audited.run_script(f"chmod 0444 {log}; echo done") if os.getuid() else None
    if result is None:  # root writes read-only files; make the log a directory's place instead
        result = audited.run_script(f"rm {log} && mkdir {log}; echo done")
    assert result.exit_code == 0 and result.stdout == "done\n"
    assert any(n.startswith("audit log: this outcome was not recorded") for n in result.notes)


def test_a_sigkilled_owner_leaves_its_intent_line_and_no_process(tmp_path, no_leftover_processes):
    """An owner killed by the OOM killer mid-command: its intent is on disk, and its watchdog stops
    the command -- a setsid daemon and a double-forked child included -- within 3 s."""
    audit = tmp_path / "audit.jsonl"
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from execmagic.engine import Engine
        from execmagic.guard.policy import Policy
        Engine(log_dir={str(tmp_path / 'logs')!r}, policy=Policy(audit_log={str(audit)!r})).run_script(
            "(setsid sleep 31 &) ; ( (sleep 32 &) & ) ; touch {tmp_path}/started; sleep 30")
    """)])
    try:
        wait_until(lambda: (tmp_path / "started").exists() or owner.poll() is not None, 20, "the command to start")
        assert owner.poll() is None, "the owner died before its command started"
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
    (line,) = records(tmp_path)
    assert line["phase"] == "intent" and "sleep 30" in line["command"]
    assert not pid_alive(owner.pid)
    assert_none_left(TOKEN_VAR, no_leftover_processes, wait=3)


def test_secrets_are_redacted_in_what_is_shown_and_recorded(audited, tmp_path):
    result = audited.run_script('printf %s "token {tok}" | wc -c; printf %s {db_password} | wc -c',
                                params={"tok": TOKEN, "db_password": "hunter2!"})
    assert result.stdout.split() == [str(len("token " + TOKEN)), "8"]  # ran with the real values
    assert TOKEN not in result.command and "hunter2!" not in result.command
    assert "[REDACTED:db_password]" in result.command
    text = (tmp_path / "audit.jsonl").read_text()
    assert TOKEN not in text and "hunter2!" not in text


def test_secrets_stay_hidden_in_errors_cwd_dry_runs_and_typed_assignments(audited, tmp_path):
    pw = "hunter2hunter2"
    missing = audited.run_script("{db_password} --version", params={"db_password": pw})
    assert missing.error and pw not in missing.error and "[REDACTED:db_password]" in missing.error
    argv = audited.run_argv(["{db_password}"], params={"db_password": pw})
    assert pw not in (argv.error or "") and pw not in str(argv.to_json())
    (tmp_path / pw).mkdir()
    in_dir = audited.run_script("pwd", cwd=str(tmp_path / "{db_password}"), params={"db_password": pw})
    assert in_dir.stdout.strip() == str(tmp_path / pw)  # ran there
    assert pw not in in_dir.cwd and pw not in str(in_dir.to_json())
    gone = audited.run_script("true", cwd=str(tmp_path / "x{db_password}"), params={"db_password": pw})
    assert gone.error and pw not in gone.error
    plan = audited.plan_script("echo hi", env={"FOO": TOKEN}, cwd=str(tmp_path / "{db_password}"),
                               params={"db_password": pw})
    assert TOKEN not in plan.describe() and pw not in plan.describe()
    typed = audited.run_script(f"DB_PASSWORD={pw}; echo ok")
    assert typed.stdout == "ok\n" and pw not in typed.command
    assert pw not in (tmp_path / "audit.jsonl").read_text() and TOKEN not in (tmp_path / "audit.jsonl").read_text()


def test_an_audit_log_that_is_a_named_pipe_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)
    marker = tmp_path / "ran"
    engine = Engine(log_dir=str(tmp_path / "logs"), policy=Policy(audit_log=str(fifo)))
    try:
        with pytest.raises(AuditUnavailable):
            engine.run_script(f"touch {marker}")
        assert not marker.exists()
    finally:
        engine.close(0.3)


def test_a_new_audit_log_is_private_and_an_open_one_is_named_once(tmp_path, audited):
    """Made by us: 0600.  Made by the user beforehand and readable by others: kept as it is, said once."""
    assert audited.run_script("true").notes == ()
    assert os.stat(tmp_path / "audit.jsonl").st_mode & 0o777 == 0o600
    shared = tmp_path / "shared.jsonl"
    shared.write_text("")
    os.chmod(shared, 0o644)
    engine = Engine(log_dir=str(tmp_path / "logs2"), options=RunOptions(grace=0.3), policy=Policy(audit_log=str(shared)))
    try:
        first, second = engine.run_script("true"), engine.run_script("true")
        assert first.notes == (f"audit log {shared} is readable by others (mode 0644): chmod 600 it to keep the "
                               "commands it records private",)
        assert second.notes == () and os.stat(shared).st_mode & 0o777 == 0o644
    finally:
        engine.close(0.3)


def test_an_audit_log_that_is_a_link_or_someone_elses_runs_nothing(tmp_path):
    """A link planted where the audit log goes (to a start-up file, say) is not written through, and a file
    another user made ahead would let them read every command: both refuse, as any unwritable log does."""
    os.symlink(tmp_path / "bashrc", tmp_path / "link.jsonl")
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text("")
    if os.geteuid() == 0:
        os.chown(theirs, 65534, 65534)
    cases = [("link.jsonl", "a symlink")] + ([("theirs.jsonl", "owned by another user (uid 65534)")]
                                             if os.geteuid() == 0 else [])
    for name, why in cases:
        engine = Engine(log_dir=str(tmp_path / "logs"), policy=Policy(audit_log=str(tmp_path / name)))
        try:
            with pytest.raises(AuditUnavailable) as refused:
                engine.run_script(f"touch {tmp_path / 'ran'}")
            assert refused.value.reason.startswith(why)
        finally:
            engine.close(0.3)
    assert not (tmp_path / "ran").exists() and not (tmp_path / "bashrc").exists()
