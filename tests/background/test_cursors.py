"""The pure log-reading functions of ``execmagic.background.cursors``: files written here, no shells."""

from __future__ import annotations

import io
import re

import pytest

from execmagic.background import cursors
from execmagic.background.cursors import Cut
from execmagic.process.errors import UsageProblem


@pytest.fixture
def log(tmp_path):
    def write(data: bytes) -> str:
        path = tmp_path / "x.stdout.log"
        path.write_bytes(data)
        return str(path)

    return write


# -- the filter ----------------------------------------------------------------------
def test_compile_filter_none_and_valid():
    assert cursors.compile_filter(None) is None
    assert cursors.compile_filter("err(or)?").pattern == "err(or)?"


def test_compile_filter_malformed_is_one_usage_line():
    with pytest.raises(UsageProblem, match=r"^invalid filter regex '\(': ") as exc:
        cursors.compile_filter("(")
    assert exc.value.__cause__ is None and "\n" not in str(exc.value)


def test_filter_lines_counts_what_it_dropped():
    assert cursors.filter_lines("a1\nb\na2\nc", cursors.compile_filter("a")) == ("a1\na2\n", 2, False)
    assert cursors.filter_lines("", cursors.compile_filter("a")) == ("", 0, False)


@pytest.mark.timeout(30)
def test_a_catastrophic_filter_gives_up_and_loses_nothing():
    """``(a|aa)+$`` backtracks for ages on sixty a's; the filter stops at its budget, says so, and
    returns the lines it had not judged yet, unfiltered."""
    lines = "match 1\nno\n" + "a" * 60 + "!\nmatch 2\nno\n"
    text, dropped, gave_up = cursors.filter_lines(lines, cursors.compile_filter(r"match|(a|aa)+$"), budget=0.2)
    assert gave_up and dropped == 1 and text == "match 1\n" + "a" * 60 + "!\nmatch 2\nno\n"


# -- the tail ------------------------------------------------------------------------
@pytest.mark.parametrize(("count", "expected"), [(0, ""), (1, "c\n"), (2, "b\nc\n"), (9, "a\nb\nc\n")])
def test_tail_lines(count, expected):
    assert cursors.tail_lines("a\nb\nc\n", count) == expected


def test_tail_counts_an_unfinished_last_line():
    assert cursors.tail_lines("a\nb\nunfinished", 1) == "unfinished"


# -- cursors -------------------------------------------------------------------------
def test_each_reader_has_its_own_cursor_from_zero():
    table: dict[str, dict[str, int]] = {}
    mine = cursors.cursor_for(table, "me", ("stdout", "stderr"))
    assert mine == {"stdout": 0, "stderr": 0}
    mine["stdout"] = 5
    assert cursors.cursor_for(table, "me", ("stdout", "stderr"))["stdout"] == 5
    assert cursors.cursor_for(table, "agent", ("stdout", "stderr"))["stdout"] == 0


# -- UTF-8 held back -----------------------------------------------------------------
@pytest.mark.parametrize(("tail", "held"), [
    (b"abc", 0),
    ("é".encode(), 0),  # complete two-byte character
    ("é".encode()[:1], 1),  # its lead byte only
    ("€".encode()[:2], 2),  # three-byte character, two written
    ("€".encode(), 0),
    ("😀".encode()[:3], 3),  # four-byte character, three written
    (b"a" + "😀".encode()[:1], 1),
    (b"\x80\x80\x80", 0),  # only continuation bytes: nothing to wait for, decoded as is
    (b"", 0),
])
def test_utf8_hold_back(tail, held):
    assert cursors.utf8_hold_back(tail) == held


# -- where a read may stop -----------------------------------------------------------
def test_readable_end_of_a_finished_log_is_its_end(log):
    data = b"partial line " + "é".encode()[:1]
    path = log(data)
    size = len(data)
    assert cursors.readable_end(path, 0, size, growing=False, whole_lines=True) == size


def test_readable_end_holds_back_a_split_character_while_growing(log):
    data = b"ok " + "€".encode()[:2]
    path = log(data)
    assert cursors.readable_end(path, 0, len(data), growing=True, whole_lines=False) == 3


def test_readable_end_whole_lines_stops_after_the_last_newline(log):
    data = b"one\ntwo\nthr"
    path = log(data)
    assert cursors.readable_end(path, 0, len(data), growing=True, whole_lines=True) == 8
    assert cursors.readable_end(path, 8, len(data), growing=True, whole_lines=True) == 8  # nothing whole yet


def test_readable_end_with_nothing_new(log):
    path = log(b"abc\n")
    assert cursors.readable_end(path, 4, 4, growing=True, whole_lines=True) == 4


def test_last_line_end_looks_back_across_blocks():
    data = b"head\n" + b"x" * (3 * (1 << 16)) + b"tail"
    fh = io.BytesIO(data)
    assert cursors.last_line_end(fh, 0, len(data)) == 5
    assert cursors.last_line_end(fh, 5, len(data)) == 5  # none after start


# -- cutting a range -----------------------------------------------------------------
def test_read_cut_plain_range(log):
    path = log(b"one\ntwo\nthree\n")
    assert cursors.read_cut(path, 4, 8, max_bytes=100) == Cut("two\n", 0, None)


def test_read_cut_over_max_bytes_keeps_the_latest_whole_lines(log):
    data = b"".join(b"line %d\n" % i for i in range(100))
    path = log(data)
    cut = cursors.read_cut(path, 0, len(data), max_bytes=20)
    assert cut.skipped == len(data) - 20
    assert cut.text == "line 98\nline 99\n"  # the cut-off start of "line 97" is dropped


def test_read_cut_tail_then_filter(log):
    path = log(b"a 1\nb 2\na 3\nb 4\na 5\n")
    cut = cursors.read_cut(path, 0, 20, max_bytes=1000, tail=3, regex=cursors.compile_filter("^a"))
    assert cut == Cut("a 3\na 5\n", 0, 1)


def test_read_cut_undecodable_bytes_are_replaced(log):
    path = log(b"ok \xff\n")
    assert cursors.read_cut(path, 0, 5, max_bytes=100).text == "ok \ufffd\n"


def test_read_cut_empty_range(log):
    path = log(b"abc")
    assert cursors.read_cut(path, 3, 3, max_bytes=10, regex=re.compile("x")) == Cut("", 0, 0)
