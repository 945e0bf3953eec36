"""One of each in ``process/``: one exit-code conversion, one clock, one stop path, error codes as fields.

Also a shape rule the layer keeps: every module declares ``__all__`` (and every name in it exists).
The lengths of functions and modules are checked for the whole package in ``tests/test_lint.py``.
"""

from __future__ import annotations

import datetime
import importlib
import pathlib
import re
import signal
import time

import pytest

from execmagic.process import foreground
from execmagic.process.clock import STAMP_FORMAT, iso_at, now_iso, now_stamp
from execmagic.process.errors import PreExecError
from execmagic.process.results import Result, exit_code_of
from execmagic.process.spec import Command, RunOptions

SRC = pathlib.Path(__file__).resolve().parents[2] / "src" / "execmagic"


@pytest.mark.parametrize(("returncode", "expected"), [
    (0, (0, None)), (3, (3, None)), (255, (255, None)), (-9, (137, 9)), (-15, (143, 15)), (-2, (130, 2)),
])
def test_exit_code_of_follows_the_shell(returncode, expected):
    assert exit_code_of(returncode) == expected


def test_a_signalled_run_reports_128_plus_n_and_the_signal(engine):
    r = engine.run_argv(["sh", "-c", "kill -TERM $$"])
    assert (r.exit_code, r.signal) == (128 + signal.SIGTERM, signal.SIGTERM)


def test_now_iso_is_local_with_an_offset_and_utc_on_request():
    local = now_iso()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d", local)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", now_iso("seconds"))
    assert now_iso(utc=True).endswith("+00:00")


def test_a_moment_noted_before_reads_as_now_iso_would_have_read_it():
    before = now_iso()
    moment = time.time()
    after = now_iso()
    assert before <= iso_at(moment) <= after
    assert iso_at(moment, "seconds", utc=True) == datetime.datetime.fromtimestamp(
        moment, datetime.timezone.utc).isoformat(timespec="seconds")
    assert iso_at(0.0, utc=True) == "1970-01-01T00:00:00.000+00:00"


def test_now_stamp_reads_back_with_its_format():
    stamp = now_stamp()
    assert re.fullmatch(r"\d{8}-\d{6}", stamp)
    assert abs(time.mktime(time.strptime(stamp, STAMP_FORMAT)) - time.time()) < 5


def test_a_run_records_when_it_started(engine):
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+[+-]\d\d:\d\d", engine.run_argv(["true"]).started_at)


def test_failed_to_start_keeps_the_errno_name_as_a_field():
    command = Command(argv=("x",), cwd="/", env={}, display="x")
    r = foreground.failed_to_start(command, PreExecError("x not found in PATH", "ENOENT"))
    assert (r.error, r.error_code, r.exit_code) == ("exec: x not found in PATH (ENOENT)", "ENOENT", 127)


@pytest.mark.parametrize(("argv", "code"), [
    (["no-such-command-execmagic"], "ENOENT"), (["/nonexistent/command/path"], "ENOENT"), ([], "EINVAL"),
])
def test_a_command_that_cannot_start_says_why_in_error_code(engine, argv, code):
    r = engine.run_argv(argv)
    assert not r.success and r.error and r.error_code == code


def test_permission_denied_is_eacces(engine, tmp_path):
    script = tmp_path / "private_script"
    script.write_text("#!/bin/sh\necho secret\n")
    script.chmod(0o600)
    r = engine.run_argv([str(script)])
    assert (r.error_code, r.exit_code) == ("EACCES", 126)


def test_a_run_that_started_has_no_error_code(engine):
    assert engine.run_argv(["sh", "-c", "exit 3"]).error_code is None


def test_an_unexpected_error_in_the_loop_stops_the_tree_through_the_one_stop_path(engine, monkeypatch):
    calls = []
    real_stop_tree = foreground.stop_tree

    def recording_stop_tree(*args, **kwargs):
        calls.append(kwargs)
        return real_stop_tree(*args, **kwargs)

    def broken_handle(self, timeout):
        raise RuntimeError("selector broke")

    monkeypatch.setattr(foreground, "stop_tree", recording_stop_tree)
    monkeypatch.setattr(foreground.Pump, "handle", broken_handle)
    with pytest.raises(RuntimeError, match="selector broke"):
        engine.run_argv(["sh", "-c", "sleep 30 & sleep 30"])
    assert [c["ladder"] for c in calls] == [()]  # straight to SIGKILL; the autouse fixture proves nothing is left


def test_a_timeout_stops_through_the_same_path(engine, monkeypatch):
    calls = []
    real_stop_tree = foreground.stop_tree
    monkeypatch.setattr(foreground, "stop_tree", lambda *a, **k: calls.append(k) or real_stop_tree(*a, **k))
    r = engine.run_argv(["sleep", "30"], options=RunOptions(timeout=0.2, grace=0.3))
    assert r.timed_out and r.exit_code == 124 and calls[0]["ladder"] == (signal.SIGTERM,)
    assert any("at the timeout" in note for note in r.notes)


# -- shape ---------------------------------------------------------------------------------------
def _modules() -> list[pathlib.Path]:
    files = sorted((SRC / "process").glob("*.py"))
    return [f for f in files if f.name != "__init__.py"] + [SRC / "agents" / "execute.py", SRC / "agents" / "plugins.py"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_module_declares_all_and_every_name_exists(path):
    name = "execmagic." + ".".join(path.relative_to(SRC).with_suffix("").parts)
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list), f"{name} declares no __all__"
    assert [n for n in module.__all__ if not hasattr(module, n)] == []


def test_result_error_code_defaults_to_none():
    assert Result(command="x", argv=("x",), cwd="/", exit_code=0, duration_ms=0, started_at="").error_code is None
