"""Disk use stays bounded: no foreground logs for small commands, gone owners' folders pruned."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from execmagic.engine import Engine, RunOptions
from execmagic.process.retention import prune_log_folders
from waiting import wait_until


def test_a_thousand_small_runs_leave_no_foreground_logs(tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    try:
        for i in range(1000):
            r = engine.run_script(f"echo {i}; echo e >&2")
            assert r.stdout == f"{i}\n"
        left = sorted(os.listdir(engine.logs.path))
        assert left == [], left[:5]  # (the prelude is in a private folder of the default root: see LogDir)
        big = engine.run_script("head -c 3000000 /dev/zero | tr '\\0' x")
        assert big.truncated and os.path.exists(big.log_paths["stdout"])  # a cut result points at its log
    finally:
        engine.close(0.3)


def _folder(root, stamp_age_s, pid, size=0, mtime_age_s=None):
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() - stamp_age_s))
    path = root / f"{stamp}-{pid}"
    path.mkdir()
    if size:
        (path / "0001.stdout.log").write_bytes(b"x" * size)
    age = stamp_age_s if mtime_age_s is None else mtime_age_s
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_gone_owners_folders_go_after_the_retention_and_past_the_quota(tmp_path):
    dead = _dead_pid()
    old_dead = _folder(tmp_path, 10 * 86400, dead, size=10)
    young_dead = _folder(tmp_path, 3600, dead, size=10)
    old_live = _folder(tmp_path, 10 * 86400, os.getpid(), mtime_age_s=10 * 86400)  # our pid, but started later
    live = _folder(tmp_path, -5, os.getpid(), size=10)  # stamped after this process started: it is ours
    other = tmp_path / "not-ours"
    other.mkdir()
    os.utime(other, (0, 0))
    report = prune_log_folders(str(tmp_path), retention_days=7)
    assert set(report.removed) == {str(old_dead), str(old_live)}
    assert young_dead.exists() and live.exists() and other.exists()
    report = prune_log_folders(str(tmp_path), retention_days=7, quota=15, keep=str(live))
    assert report.removed == (str(young_dead),) and live.exists()


def test_a_prune_since_a_time_leaves_what_was_made_before_it(tmp_path):
    """What the test suite does at its end: its own gone engines' folders go, a week's older logs stay."""
    dead = _dead_pid()
    before = _folder(tmp_path, 3600, dead, size=10)
    during = _folder(tmp_path, 5, dead, size=10)
    live = _folder(tmp_path, -5, os.getpid(), size=10)
    report = prune_log_folders(str(tmp_path), retention_days=0, since=time.time() - 60)
    assert report.removed == (str(during),)
    assert before.exists() and live.exists()


def test_an_engine_that_kept_no_log_leaves_no_folder(tmp_path, monkeypatch):
    """Most kernels run only commands that print little: their engine's folder goes with it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the default location, under this test's folder
    quiet = Engine(options=RunOptions(grace=0.3))
    loud = Engine(options=RunOptions(grace=0.3))
    chosen = Engine(log_dir=str(tmp_path / "mine"), options=RunOptions(grace=0.3))
    try:
        assert quiet.run_script("echo hi").stdout == "hi\n"
        big = loud.run_script("head -c 3000000 /dev/zero | tr '\\0' x")
        assert chosen.run_script("true").exit_code == 0
    finally:
        for engine in (quiet, loud, chosen):
            engine.close(0.3)
    assert not os.path.exists(quiet.logs.path)
    assert os.path.exists(big.log_paths["stdout"])  # a log a notebook points at stays
    assert os.path.isdir(chosen.logs.path)  # a folder the user chose is theirs


def test_an_engine_prunes_its_siblings_when_it_first_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the default location, under this test's folder
    root = tmp_path / f"execmagic-{os.getuid()}"
    root.mkdir(mode=0o700)
    stale = _folder(root, 30 * 86400, _dead_pid(), size=5)
    engine = Engine(options=RunOptions(grace=0.3))
    assert os.path.dirname(engine.logs.path) == str(root)
    try:
        engine.run_script("true")
        assert engine.start_pruning() is None  # once per engine
        wait_until(lambda: not stale.exists(), 10, "the stale folder to be pruned", interval=0.01)
        assert Engine(log_dir=str(tmp_path / "mine")).start_pruning() is None  # a chosen folder is not pruned
    finally:
        engine.close(0.3)
