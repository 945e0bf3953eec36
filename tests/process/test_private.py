"""Private by default: what the engine writes, another user of the machine neither reads nor plants.

The attacks are real: a second user (``setpriv`` to uid 65534, so root only) makes the log root
first, swaps folders and plants preludes in a shared, sticky temp folder like ``/tmp``; the
victim's engine must refuse the root, move to a private folder, say so, and run nothing planted.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time

import pytest

from execmagic import api
from execmagic.engine.engine import Engine
from execmagic.guard.policy import Policy
from execmagic.process.capture import StreamRecorder
from execmagic.process.private import NotPrivate, create_file, private_folder
from execmagic.process.retention import prune_log_roots
from execmagic.process.spec import RunOptions
from waiting import wait_until

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                             reason="acting as a second user needs root and setpriv")


def as_nobody(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` run by ``sh`` as another user (uid/gid 65534, no groups)."""
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                           "sh", "-c", script], capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def shared_tmp(tmp_path, monkeypatch):  # tmp_path first: pytest finds its own temp folder before the patch
    """A temp folder every user may write in, sticky like ``/tmp``, used as the engine's default location."""
    folder = tempfile.mkdtemp(prefix="execmagic-shared-test-", dir="/tmp" if os.path.isdir("/tmp") else None)
    os.chmod(folder, 0o1777)
    monkeypatch.setattr(tempfile, "tempdir", folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _modes(top: str) -> dict[str, int]:
    modes = {}
    for folder, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            modes[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return modes


def _leave_records(engine: Engine) -> None:
    """Logs of every kind: a foreground run's (kept: its text is not its bytes), a big script, a shell."""
    r = engine.run_script("echo token-1234567890; printf 'a\\rb\\n'; export SOME_VAR=1")
    assert r.success and r.log_paths
    assert engine.run_script("echo " + "x" * 200_000 + " | wc -c", "sh").success  # a big script, written out
    info = api.start("echo bg-secret-token; echo to-stderr >&2", engine=engine)
    wait_until(lambda: engine.shells.read(info.id, wait=10).at_end, 30, "the shell to end", interval=0)


def test_every_folder_is_0700_and_every_file_0600(shared_tmp, tmp_path):
    audit = tmp_path / "audit.jsonl"
    engine = Engine(options=RunOptions(grace=0.3), policy=Policy(audit_log=str(audit)))
    try:
        _leave_records(engine)
        root = os.path.dirname(engine.logs.path)
        assert root == os.path.join(shared_tmp, f"execmagic-{os.geteuid()}") and engine.logs.take_notes() == ()
        modes = _modes(root)
        assert any(p.endswith(".stdout.log") for p in modes) and engine._prelude.startswith("/dev/fd/")
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        assert {p: m for p, m in modes.items() if m != (0o700 if os.path.isdir(p) else 0o600)} == {}
        assert stat.S_IMODE(os.stat(audit).st_mode) == 0o600
    finally:
        engine.close(0.3)


def test_a_chosen_log_folder_gets_private_files_too(tmp_path):
    logs = tmp_path / "made" / "for" / "logs"
    engine = Engine(log_dir=str(logs), options=RunOptions(grace=0.3))
    try:
        _leave_records(engine)
        assert stat.S_IMODE(os.stat(logs).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(logs.parent).st_mode) == 0o700  # the parents it made, too
        modes = _modes(str(logs))
        assert modes and {p: m for p, m in modes.items() if m != 0o600} == {}
    finally:
        engine.close(0.3)


def test_what_bash_reads_never_lives_in_a_folder_the_user_chose(shared_tmp, tmp_path, monkeypatch):
    """A chosen log_dir (here a relative one, and group-writable: a team folder) keeps the logs; the prelude,
    state files and big scripts live in a private folder of the default root, whose parents are not anyone's
    to swap, and paths handed to bash are absolute whatever the run's cwd."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team").mkdir(mode=0o775)
    os.chmod(tmp_path / "team", 0o775)
    engine = Engine(log_dir="team", options=RunOptions(grace=0.3, keep_logs=True))
    try:
        r = engine.run_script("echo hi", cwd="/")
        assert r.success and os.path.dirname(r.log_paths["stdout"]) == str(tmp_path / "team") and r.notes == ()
        assert engine.run_script("echo " + "x" * 200_000 + " | wc -c", cwd="/").stdout == "200001\n"
        assert engine.run_script("cd /; export X=1").success and engine.session.cwd == "/"  # the session works
        assert engine.run_script("cd /tmp").new_cwd == "/tmp"  # and from another cwd too
        assert [n for n in os.listdir(tmp_path / "team") if not n.endswith(".log")] == []
        assert engine._prelude.startswith("/dev/fd/")  # the prelude: a sealed memory file, in no folder at all
    finally:
        engine.close(0.3)


def test_reading_back_never_follows_a_link_or_waits_on_a_fifo(engine, tmp_path):
    """In a folder others may write, a log or state file can be swapped: a fifo would hang the reader, a
    link or a foreign file would be read as ours.  What is read back must be a regular file of ours."""
    from execmagic.process.private import open_own_file

    os.mkfifo(tmp_path / "fifo")
    os.symlink("/etc/hostname", tmp_path / "link")
    for name in ("fifo", "link"):
        with pytest.raises(OSError):
            open_own_file(str(tmp_path / name))
    info = api.start("echo one; echo two", engine=engine)
    wait_until(lambda: engine.shells.read(info.id, wait=10).at_end, 30, "the shell to end", interval=0)
    path = info.log_paths["stdout"]
    os.unlink(path)
    os.mkfifo(path)
    with pytest.raises(OSError):
        engine.shells.read(info.id, whole_log=True)


def test_an_existing_root_of_ours_open_for_writing_is_refused(shared_tmp):
    root = os.path.join(shared_tmp, f"execmagic-{os.geteuid()}")
    os.mkdir(root)
    os.chmod(root, 0o777)
    engine = Engine(options=RunOptions(grace=0.3))
    try:
        assert os.path.dirname(os.path.dirname(engine.logs.path)) == shared_tmp
        assert os.path.basename(os.path.dirname(engine.logs.path)).startswith(f"execmagic-{os.geteuid()}-")
        r = engine.run_script("echo hi")
        assert r.notes[0].startswith(f"log folder {root} refused (others may use it (mode 0777))")
        assert engine.run_script("true").notes == ()  # said once
    finally:
        engine.close(0.3)


def test_one_of_ours_only_others_could_read_is_closed(shared_tmp):
    """A root an older version made 0755: nothing can have been planted in it, so it is kept, made 0700."""
    root = os.path.join(shared_tmp, f"execmagic-{os.geteuid()}")
    os.mkdir(root)
    os.chmod(root, 0o755)
    engine = Engine(options=RunOptions(grace=0.3))
    try:
        assert os.path.dirname(engine.logs.path) == root and stat.S_IMODE(os.stat(root).st_mode) == 0o700
    finally:
        engine.close(0.3)


def test_symlinks_and_files_are_not_private_folders(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    os.symlink(tmp_path / "real", tmp_path / "link")
    (tmp_path / "file").write_text("x")
    for name in ("link", "file"):
        with pytest.raises(NotPrivate) as refused:
            private_folder(str(tmp_path / name))
        assert refused.value.why == "a symlink or not a folder"
    os.symlink("/dev/null", tmp_path / "planted")
    with pytest.raises(FileExistsError):
        os.close(create_file(str(tmp_path / "planted")))


@as_root
def test_another_user_reads_and_lists_nothing(shared_tmp, tmp_path):
    audit = os.path.join(shared_tmp, "audit.jsonl")  # where the other user could reach it, were it open
    engine = Engine(options=RunOptions(grace=0.3), policy=Policy(audit_log=audit))
    try:
        _leave_records(engine)
        root = os.path.dirname(engine.logs.path)
        paths = [root, *_modes(root), audit]
        assert len(paths) > 5
        for path in paths:
            verb = "ls" if os.path.isdir(path) else "cat"
            done = as_nobody(f"{verb} '{path}'")
            assert done.returncode != 0 and "Permission denied" in done.stderr, (path, done)
        assert as_nobody(f"ls '{shared_tmp}'").returncode == 0  # the other user is real and can look around
    finally:
        engine.close(0.3)


def _plant(shared_tmp: str, canary: str) -> str:
    """As the other user: the victim's log root made first, open to all, with folders for the next few
    seconds' engines, each holding a prelude that would leave ``canary`` if sourced."""
    root = os.path.join(shared_tmp, f"execmagic-{os.geteuid()}")
    now = time.time()
    names = [time.strftime("%Y%m%d-%H%M%S", time.localtime(now + s)) + f"-{os.getpid()}" for s in range(-1, 30)]
    prelude = f"touch {canary}\n"
    script = f"mkdir -m 777 '{root}' && cd '{root}' && for d in {' '.join(names)}; do mkdir -m 777 $d; " \
             f"printf '{prelude}' > $d/session-prelude-planted.bash; chmod 777 $d/session-prelude-planted.bash; done"
    done = as_nobody(script)
    assert done.returncode == 0, done.stderr
    assert os.stat(root).st_uid == NOBODY
    return root


@as_root
@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
def test_a_planted_root_is_refused_and_nothing_planted_runs(shared_tmp, tmp_path, standby):
    canary = tmp_path / "PWNED"
    os.chmod(tmp_path, 0o777)  # the other user could leave the canary, were the prelude sourced
    root = _plant(shared_tmp, str(canary))
    engine = Engine(options=RunOptions(grace=0.3))
    engine.standby = standby
    try:
        assert not engine.logs.path.startswith(root + "/")
        first = engine.run_script("echo one")
        assert first.success and first.notes[0].startswith(f"log folder {root} refused (owned by another user")
        if standby:
            assert engine.warm.wait_ready(10) is not None
        for _ in range(3):
            assert engine.run_script("echo again").stdout == "again\n"
        assert not canary.exists()
        done = as_nobody(f"ls '{engine.logs.path}'")
        assert done.returncode != 0
    finally:
        engine.close(0.3)


@as_root
@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
def test_a_root_swapped_while_in_use_is_left_and_nothing_planted_runs(shared_tmp, tmp_path, standby):
    """The other user cannot move our root in a sticky folder; were it gone and theirs in its place
    (here made so as root), the next run notices, moves to a private folder and sources nothing of theirs."""
    canary = tmp_path / "PWNED"
    os.chmod(tmp_path, 0o777)
    engine = Engine(options=RunOptions(grace=0.3))
    engine.standby = standby
    try:
        root = os.path.dirname(engine.logs.path)
        assert engine.run_script("echo one").success
        engine.warm.wait_full(10)  # the standbys' refills would make the root again under the swap
        assert as_nobody(f"mv '{root}' '{root}.gone'").returncode != 0  # sticky: not theirs to move
        os.rename(root, root + ".gone")
        _plant(shared_tmp, str(canary))
        os.chmod(os.path.join(root), 0o777)
        planted = os.path.join(root, os.path.basename(engine.logs.path))
        os.makedirs(planted, exist_ok=True)
        os.chown(planted, NOBODY, NOBODY)
        with open(os.path.join(planted, "session-prelude-x.bash"), "w") as fh:
            fh.write(f"touch {canary}\n")
        r = engine.run_script("echo two")
        assert r.stdout == "two\n" and any(n.startswith(f"log folder {root} refused") for n in r.notes)
        assert engine.run_script("echo three").stdout == "three\n"
        assert not canary.exists() and not engine.logs.path.startswith(root + "/")
    finally:
        engine.close(0.3)


def test_private_roots_made_instead_are_pruned_too(shared_tmp):
    old = time.time() - 30 * 86400
    fallback = tempfile.mkdtemp(prefix=f"execmagic-{os.geteuid()}-", dir=shared_tmp)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(fallback, time.strftime("%Y%m%d-%H%M%S", time.localtime(old)) + f"-{dead.pid}")
    os.mkdir(stale)
    for path in (stale, fallback):
        os.utime(path, (old, old))
    report = prune_log_roots(tmp=shared_tmp)
    assert set(report.removed) == {stale, fallback} and not os.path.exists(fallback)


def test_line_by_line_output_is_all_in_the_log(tmp_path):
    """200,000 one-line writes: more pieces than one writev takes (IOV_MAX), every byte in the log."""
    recorder = StreamRecorder("stdout", lambda s: (str(tmp_path / s), (tmp_path / s).open("wb", buffering=0)),
                              keep_bytes=1000)
    lines = [f"{i}\n".encode() for i in range(1, 200_001)]
    for line in lines:
        recorder.feed(line)
    capture = recorder.finish()
    assert capture.log_error is None
    assert (tmp_path / "stdout").read_bytes() == b"".join(lines)


def test_a_line_by_line_command_is_all_in_the_log(engine):
    r = engine.run_script("for i in $(seq 200000); do echo $i; done")
    expected = "".join(f"{i}\n" for i in range(1, 200_001)).encode()
    assert r.success and r.stdout_capture.log_error is None and r.notes == ()
    assert r.stdout_capture.read_bytes() == expected


def test_the_exact_bytes_of_progress_output_can_be_had(engine):
    r = engine.run_script(r"printf 'loading 10%%\rloading 99%%\rdone\r\n\377x\n'")
    assert r.stdout == "done\n\ufffdx\n"  # as shown and stored
    assert r.stdout_capture.read_bytes() == b"loading 10%\rloading 99%\rdone\r\n\xffx\n"
    plain = engine.run_script("echo plain")
    assert plain.stdout_capture.log_path is None and plain.stdout_capture.read_bytes() == b"plain\n"


@pytest.fixture
def scratch_tmp(tmp_path, monkeypatch):
    """A group scratch folder as the temp folder: every user may write in it, and it has no sticky bit."""
    folder = tempfile.mkdtemp(prefix="execmagic-scratch-test-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None)
    os.chmod(folder, 0o777)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", folder)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    try:
        yield folder, str(runtime)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_temp_folder_others_may_swap_in_is_refused_for_the_runtime_folder(scratch_tmp):
    scratch, runtime = scratch_tmp
    engine = Engine(options=RunOptions(grace=0.3))
    try:
        assert engine.logs.path.startswith(runtime + "/"), engine.logs.path
        r = engine.run_script("echo one; export KEPT=1")
        assert r.stdout == "one\n" and r.notes[0] == (
            f"temp folder {scratch} refused (others may write in {scratch} and it has no sticky bit: another user"
            f" could swap our folders there): logs go to {runtime}"), r.notes
        assert engine.run_script("echo $KEPT").stdout == "1\n" and engine.run_script("true").notes == ()
        assert os.listdir(scratch) == []  # nothing of ours where it could be swapped
    finally:
        engine.close(0.3)


@as_root
@pytest.mark.parametrize("standby", [True, False], ids=["standby", "cold"])
def test_another_user_swapping_folders_in_a_scratch_temp_folder_runs_nothing(scratch_tmp, tmp_path, standby):
    """A real second user swaps every folder it finds in the scratch folder for one of its own, holding a
    planted prelude at every name a run could look for, the whole time the victim runs."""
    scratch, _runtime = scratch_tmp
    canary = tmp_path / "PWNED"
    os.chmod(tmp_path, 0o777)
    racer = subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "sh", "-c",
         f"cd '{scratch}' || exit 1; while :; do for d in execmagic-*; do [ -e \"$d\" ] || continue; "
         f"mv \"$d\" \"gone-$$-$RANDOM\" 2>/dev/null; mkdir -m 777 -p \"$d/x\"; "
         f"printf 'touch {canary}\\n' > \"$d/x/session-prelude.bash\"; done; done"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    engine = Engine(options=RunOptions(grace=0.3))
    engine.standby = standby
    try:
        for i in range(20):
            assert engine.run_script(f"echo {i}; export N={i}").stdout == f"{i}\n"
        assert engine.run_script("echo $N").stdout == "19\n" and not canary.exists()
        assert not engine.logs.path.startswith(scratch)
    finally:
        engine.close(0.3)
        racer.kill()
        racer.wait()
