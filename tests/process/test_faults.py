"""Output that is not quite text, and logs on a disk that is full: the result survives both.

Binary detection needs evidence (a NUL byte, or > 30 % undecodable over at least 1 KB);
anything less is text with a few U+FFFD and a note counting them.  A log that cannot be
opened or written costs neither the run nor its result: the head and tail in memory are
kept and a note says ``log incomplete: <reason>``.  The full disks are real: a small tmpfs
filled to the brim (we mount it when we may), and ``/dev/full``, which every system has.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess

import pytest

from execmagic import api
from execmagic.display.render import render_text
from execmagic.engine import Engine, RunOptions
from execmagic.process.results import OutputUnavailable
from waiting import wait_until

SEQ = ["seq", "1", "150000"]  # about 1 MB of numbered lines: the head and the tail are recognisable
SEQ_BYTES = sum(len(f"{i}\n") for i in range(1, 150001))


def write_bytes(py, data: bytes):
    """argv of a child that writes ``data`` to stdout, byte for byte."""
    return py(f"import sys; sys.stdout.buffer.write({data!r})")


# -- undecodable bytes and binary output --------------------------------------------------------------
def test_two_bad_bytes_in_a_short_line_are_shown_and_counted(engine):
    r = engine.run_argv(["printf", r"ok\377\376\n"])
    assert not r.binary and r.stdout == "ok\ufffd\ufffd\n"
    assert r.notes == ("2 bytes were not UTF-8 on stdout (shown as \ufffd)",)
    assert r.stdout_capture.undecodable == 2
    assert "  note: 2 bytes were not UTF-8 on stdout" in render_text(r)


def test_latin1_text_with_a_few_accents_is_text(engine, py):
    text = "Le café de la gare, déjà fermé à midi.\n" * 60  # 2.3 KB, 5 accents a line
    r = engine.run_argv(write_bytes(py, text.encode("latin-1")))
    assert not r.binary and r.stdout == text.replace("é", "\ufffd").replace("à", "\ufffd")
    assert r.notes == ("300 bytes were not UTF-8 on stdout (shown as \ufffd)",)


def test_a_nul_byte_makes_a_stream_binary(engine):
    r = engine.run_argv(["printf", r"text\000more"])
    assert r.binary and r.stdout.startswith("[binary output: 9 B; full output in ")
    assert r.notes == ()  # binary output is flagged, not counted


def test_mostly_undecodable_past_1kb_is_binary_and_not_dumped(engine, py):
    # no NUL (the share of bad bytes decides) and no braces (argv words are templates: "{{x}}" means "{x}")
    noise = bytes(b for b in os.urandom(6000) if b and b not in b"{}")[:4000]
    chunks = []
    r = engine.run_argv(write_bytes(py, noise), on_output=lambda s, t: chunks.append(t))
    assert r.binary and r.stdout_capture.bytes == 4000 and len(r.stdout) < 300
    assert sum(len(c) for c in chunks) < 300 and "binary output on stdout" in "".join(chunks)


def test_garbage_under_1kb_is_still_text(engine, py):
    r = engine.run_argv(write_bytes(py, b"\xff" * 500 + b"\n"))
    assert not r.binary and r.stdout == "\ufffd" * 500 + "\n"
    assert r.notes == ("500 bytes were not UTF-8 on stdout (shown as \ufffd)",)


def test_split_characters_and_real_replacement_characters_are_not_counted(engine, py, tmp_path):
    flag = tmp_path / "first-half-shown"
    code = ("import os, time\n"
            "os.write(1, b'price: \\xe2\\x82')\n"
            f"while not os.path.exists({str(flag)!r}): time.sleep(0.005)\n"  # the halves arrive in separate reads
            "os.write(1, b'\\xac, and \\xef\\xbf\\xbd as written\\n')\n")
    chunks = []

    def shown(stream, text):
        chunks.append(text)
        flag.touch()

    r = engine.run_argv(py(code), on_output=shown, options=RunOptions(grace=0.3, timeout=10))
    assert chunks[0] == "price: "  # the cut character was held back, not replaced
    assert r.stdout == "price: €, and \ufffd as written\n" and "".join(chunks) == r.stdout
    assert r.notes == ()


def test_an_incomplete_last_character_is_counted(engine):
    r = engine.run_argv(["printf", r"cut \342\202"])
    assert r.stdout == "cut \ufffd" and r.notes == ("2 bytes were not UTF-8 on stdout (shown as \ufffd)",)
    one = engine.run_argv(["printf", r"x\377"])
    assert one.notes == ("1 byte was not UTF-8 on stdout (shown as \ufffd)",)


# -- full disks ---------------------------------------------------------------------------------------
def _mount_tmpfs(where, options: str) -> bool:
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                              check=False, capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def _fill(folder, *, files: bool) -> None:
    """Use up the tmpfs: its bytes (one big file) or its inodes (empty files) until it says ENOSPC."""
    with pytest.raises(OSError) as full:
        if files:
            for i in range(100_000):
                (folder / f"filler{i}").touch()
        with open(folder / "filler", "wb", buffering=0) as fh:
            while True:
                fh.write(b"\0" * 4096)
    assert full.value.errno == errno.ENOSPC


@pytest.fixture(params=["bytes", "inodes"])
def full_disk(request, tmp_path):
    """A log directory on a tmpfs with no room left: for data (``bytes``) or for new files (``inodes``)."""
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    options = "size=64k" if request.param == "bytes" else "size=64k,nr_inodes=16"
    if not _mount_tmpfs(mount_point, options):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        logs = mount_point / "logs"
        logs.mkdir()
        _fill(mount_point, files=request.param == "inodes")
        yield request.param, logs
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


@pytest.fixture
def engine_on(full_disk):
    kind, logs = full_disk
    engine = Engine(log_dir=str(logs), options=RunOptions(grace=0.3, keep_bytes=100_000))
    try:
        yield kind, engine
    finally:
        engine.close()


def assert_head_tail_and_note(r, log_kept: bool):
    kept = r.stdout_capture.text
    assert r.success and r.exit_code == 0 and r.stdout_capture.bytes == SEQ_BYTES
    assert kept.startswith("1\n2\n3\n") and kept.endswith("149999\n150000\n")
    assert r.truncated and "omitted from the middle" in kept
    note = next(n for n in r.notes if n.startswith("log incomplete: "))
    assert note.startswith("log incomplete: No space left on device (stdout ")
    assert ("the log " in kept and "is incomplete" in kept) if log_kept else ("not logged" in kept)
    assert f"  note: {note}" in render_text(r)
    # the whole value is nowhere: asking for it is an error that says so, never the head and tail as if whole
    with pytest.raises(OutputUnavailable, match=r"^\[Errno 5\] stdout was kept in memory only in part") as info:
        r.stdout  # noqa: B018
    assert (info.value.stream, info.value.reason) == ("stdout", "No space left on device")
    assert info.value.log_path == r.stdout_capture.log_path
    with pytest.raises(OSError):
        r.stdout_capture.read_bytes()


def test_foreground_run_on_a_full_disk_keeps_its_result(engine_on):
    kind, engine = engine_on
    r = engine.run_argv(SEQ)
    assert_head_tail_and_note(r, log_kept=kind == "bytes")
    if kind == "bytes":  # the file was created, nothing fitted in it
        assert os.path.getsize(r.log_paths["stdout"]) < SEQ_BYTES
    else:  # no file could be created at all
        assert r.log_paths == {} and "log incomplete: No space left on device (stdout was not logged)" in r.notes


@pytest.mark.parametrize("full_disk", ["bytes"], indirect=True)
def test_background_shell_on_a_full_disk_finishes_and_reports(engine_on):
    _kind, engine = engine_on
    info = api.start("seq 1 100000; echo done >&2", engine=engine)
    out = wait_until(lambda: got if (got := engine.shells.read(info.id, wait=10)).at_end else None, 30,
                     "the shell to end", interval=0)
    assert out.shell.status == "exited 0" and out.shell.exit_code == 0 and not out.shell.running
    assert out.shell.lost_bytes == 588895 + len("done\n")  # drained, counted, not stuck on the full disk


def test_a_planted_link_is_never_written_through(engine, py):
    """A file already where a run's log goes (here links to ``/dev/full``) is left alone: the log is a new
    private file beside it, so a planted link can neither swallow the output nor send it elsewhere."""
    plan = engine.plan_argv(py("print('short'); import sys; print('err', file=sys.stderr)"))
    for stream in ("stdout", "stderr"):
        os.symlink("/dev/full", os.path.join(engine.logs.path, f"{plan.label}.{stream}.log"))
    r = engine.run(plan, options=RunOptions(keep_logs=True))
    assert r.success and (r.stdout, r.stderr) == ("short\n", "err\n") and r.notes == ()
    for stream, text in (("stdout", "short\n"), ("stderr", "err\n")):
        path = r.log_paths[stream]
        assert path.endswith(f"{plan.label}.{stream}-2.log") and not os.path.islink(path)
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
        with open(path) as fh:
            assert fh.read() == text


def test_a_shell_cell_on_a_full_disk_runs_and_says_what_was_not_saved(engine_on):
    """%exec with its chosen log folder on a full disk: the command runs all the same, with its result,
    and says which log is incomplete.  What bash reads (prelude, state, big scripts) is not in a chosen
    folder (see process.logdir), so the session and a big cell still work."""
    _kind, engine = engine_on
    r = engine.run_script("seq 1 150000; cd /")
    assert r.exit_code == 0 and r.stdout_capture.bytes == SEQ_BYTES
    assert any(n.startswith("log incomplete: No space left on device") for n in r.notes), r.notes
    assert engine.session.cwd == "/"
    big = engine.run_script("cat <<'EOF' | wc -c\n" + "x" * 200_000 + "\nEOF", "sh")
    assert big.success and big.stdout == "200001\n"
