"""A result's ``stdout`` is all the command wrote: read back from the log when memory kept only its start
and end, never the kept head and tail passed off as the value.  What displays and agents show stays the
bounded ``stdout_capture.text``, and nothing is read back until the value is asked for."""

from __future__ import annotations

import os

import pytest

from execmagic.engine import Engine, RunOptions
from execmagic.process.capture import StreamRecorder
from execmagic.process.results import OutputUnavailable

KEEP = 4096  # bytes memory keeps per stream in these tests: any output past it is cut there


@pytest.fixture
def small(tmp_path):
    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3, keep_bytes=KEEP))
    yield engine
    engine.close()


def seq(n: int) -> str:
    return "".join(f"{i}\n" for i in range(1, n + 1))


def test_stdout_is_whole_when_memory_kept_only_part(small):
    r = small.run_script("seq 1 500000; seq 1 3000 >&2")
    assert r.truncated and len(r.stdout_capture.text) < KEEP + 300  # memory: the head and tail only
    assert "whole_text" not in vars(r.stdout_capture)  # nothing read back yet
    assert r.stdout == seq(500000) and r.stderr == seq(3000)
    assert r.lines[:2] == ["1", "2"] and r.lines[-1] == "500000" and len(r.lines) == 500000
    assert r.stdout is r.stdout  # read back once, then kept: it is the value asked for


def test_the_kept_head_and_tail_end_on_whole_lines(small):
    """The bounded form a display or an agent shows never holds half a row (``…85184\\n85`` + ``572\\n4285…``)."""
    kept = small.run_script("seq 1 500000").stdout_capture.text
    head, note, tail = kept.partition("\n… [")[0], *kept.partition("\n… [")[1:]
    assert head.split("\n") == [str(i) for i in range(1, len(head.split("\n")) + 1)]
    rows = tail.split("] …\n", 1)[1].rstrip("\n").split("\n")
    assert rows == [str(i) for i in range(500001 - len(rows), 500001)] and note


def test_a_single_long_line_is_cut_inside_it(small):
    r = small.run_script("head -c 100000 /dev/zero | tr '\\0' x")
    assert r.stdout_capture.text.startswith("x" * (KEEP // 2 - 10)) and r.stdout == "x" * 100000
    assert r.lines == ["x" * 100000]


def test_lines_split_at_newlines_only(engine):
    r = engine.run_script(r"printf 'a\fb\x1cc\nd\n\ne'")
    assert r.lines == ["a\fb\x1cc", "d", "", "e"]
    assert engine.run_script("true").lines == [] and engine.run_script("echo").lines == [""]


def test_read_back_text_is_what_memory_would_have_held(small, py):
    """Undecodable bytes as U+FFFD and ``\\r`` progress collapsed, as in an output that fits; the exact bytes
    stay one call away."""
    code = ("import sys; w = sys.stdout.buffer.write\n"
            "for i in range(3000): w(b'row %d \\xff\\r\\n' % i)\n"
            "w(b'10%\\r50%\\r100%\\n')\n")
    r = small.run_argv(py(code))
    assert r.stdout_capture.truncated
    expected = "".join(f"row {i} \ufffd\n" for i in range(3000)) + "100%\n"
    assert r.stdout == expected
    assert r.stdout_capture.read_bytes().endswith(b"row 2999 \xff\r\n10%\r50%\r100%\n")


def test_binary_output_stays_its_note(small):
    r = small.run_argv(["head", "-c", "20000", "/dev/urandom"])
    assert r.binary and r.stdout.startswith("[binary output: 20.0 KB; full output in ")
    assert len(r.stdout_capture.read_bytes()) == 20000


def test_a_log_gone_since_is_an_error_not_the_head_and_tail(small):
    r = small.run_script("seq 1 100000")
    os.unlink(r.stdout_capture.log_path)
    with pytest.raises(OutputUnavailable) as info:
        r.stdout  # noqa: B018
    assert isinstance(info.value, OSError) and info.value.stream == "stdout"
    assert info.value.reason == "No such file or directory" and info.value.log_path == r.stdout_capture.log_path
    assert "omitted from the middle" in r.stdout_capture.text  # what displays show is still there


@pytest.mark.parametrize("keep", [11, 12, 13])
@pytest.mark.parametrize("size", [10, 11, 12, 13, 14, 30])
def test_output_cut_in_memory_always_has_its_log(tmp_path, keep, size):
    """Deferred logs are written once output outgrows what memory holds -- exactly then, an odd ``keep_bytes``
    included (it holds one byte less than it says), and with any ``log_over``."""
    opened = []

    def open_log(name):
        path = str(tmp_path / f"{name}-{len(opened)}.log")
        opened.append(path)
        return path, open(path, "wb")  # the recorder closes it

    for log_over in (None, 5, 1000):
        recorder = StreamRecorder("stdout", open_log, keep, defer_log=True, log_over=log_over)
        data = bytes(ord("a") + i % 26 for i in range(size))
        for i in range(0, size, 3):
            recorder.feed(data[i:i + 3])
        capture = recorder.finish()
        if capture.truncated:
            assert capture.log_path is not None
        assert capture.whole_text == data.decode()
