"""A ``--filter`` is judged before it is compiled: a regex whose repeats unroll to gigabytes is one
line at once, in the magic and in ``BashOutput``, and the process's memory barely moves."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from execmagic.background import cursors
from execmagic.background.cursors import MAX_FILTER_CHARS, MAX_FILTER_COST, InvalidFilter
from execmagic.background.regex_cost import repeat_cost

BOMB = "(?:x{65535}){65535}"


@pytest.mark.parametrize("pattern", [r"\d{4}", "x{1,1000}", "(loss|error).*", r"^epoch \d+", r"[A-Z]{2,5}-\d+",
                                     "(?:x{300}){300}", "x{100000}", "a{,5}b{2,}", r"(?x) \d{4} - \d{2}  # a date",
                                     "[]{]x{5}", "(?#(unbalanced in a comment)x{9}", "[^]]+", "[]a]{3}",
                                     # named groups are not verbose mode, whatever letters their names hold
                                     r"(?P<idx>\d{1,6})/(?P<total>\d{1,6}) \[\d{2}:\d{2}<\d{2}:\d{2}, *"
                                     r"\d{1,3}\.\d{2}it/s\]"])
def test_ordinary_filters_stay_legal(pattern):
    assert repeat_cost(pattern) <= MAX_FILTER_COST
    assert cursors.compile_filter(pattern).pattern == pattern


@pytest.mark.parametrize(("pattern", "cost"), [
    (r"\d{4}", 4), ("x{1,1000}", 1000), ("(?:x{300}){300}", 90_000), ("a{9999}b{9999}", 19_998),
    ("(?:ab|cd){3}", 12), ("x{2,}", 2), ("x{,7}", 7), ("x*y+z?", 3), ("x{}", 3), ("[{(]{5}", 5),
])
def test_repeat_cost_multiplies_nesting_and_adds_siblings(pattern, cost):
    assert repeat_cost(pattern) == cost


@pytest.mark.parametrize("pattern", [
    BOMB, "(x{65535}){65535}", "(?=(?:x{1000}){1000})", "a{99999}" * 3,     # nesting, lookaround, siblings
    "(?x)(?:x{6 5535}){6 5535}",          # verbose mode reads digits apart: the bound without structure
    "(?x)(?:x{6#}\n5535}){65535}",        # a comment inside a count, with a brace in it
    "[(](?:x{65535}){65535}",             # a parenthesis in a class does not open a group
    "(?:x{65535}){65535}[",               # malformed: the engine would refuse it, but only after the bomb
    "((?:x{65535}){65535}",               # unbalanced as read here: judged without structure
    "[](?#]" + "a{99999}" * 100 + "[)]",  # a ']' first is a member: "(?#" is not a comment, the repeats count
    "[\\](?#]" + "a{99999}" * 3 + "[)]",  # nor after an escaped ']'
])
def test_compile_bombs_are_refused_before_compiling(pattern):
    assert repeat_cost(pattern) > MAX_FILTER_COST
    with pytest.raises(InvalidFilter, match=r"^invalid filter regex .*copies when compiled") as caught:
        cursors.compile_filter(pattern)
    assert caught.value.pattern == pattern and "\n" not in str(caught.value)


def test_a_long_filter_is_refused_and_shown_short():
    with pytest.raises(InvalidFilter) as caught:
        cursors.compile_filter("x" * (MAX_FILTER_CHARS + 1))
    assert str(caught.value) == (f"invalid filter regex '{'x' * 80}…' ({MAX_FILTER_CHARS + 1} characters):"
                                 f" a filter is at most {MAX_FILTER_CHARS:,} characters")


@pytest.mark.timeout(60)
def test_the_compile_bomb_is_one_line_in_the_magic_and_bash_output_under_a_memory_limit(tmp_path):
    """In a child limited to 3 GB of address space (the bomb alone asks for more): ``%bgout --filter``
    and ``BashOutput`` answer at once with one line, and the child's memory barely moves."""
    script = textwrap.dedent(f"""
        import json, resource, sys, time
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        import psutil
        from IPython.core.error import UsageError
        from IPython.testing.globalipapp import start_ipython
        from execmagic.agents.tools import Toolbox

        ip = start_ipython()
        ip.run_line_magic("load_ext", "execmagic")
        ip.run_line_magic("config", "ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
        box = Toolbox(ip.magics_manager.registry["ExecMagics"].engine)
        ip.run_line_magic("bg", "--name t echo hi")
        shell = box.dispatch("Bash", {{"command": "echo hi", "run_in_background": True}})["shell_id"]
        report = {{}}
        rss = psutil.Process().memory_info().rss
        start = time.monotonic()
        try:
            ip.run_line_magic("bgout", "t --filter '{BOMB}'")
        except UsageError as exc:
            report["magic"] = str(exc)
        report["magic_s"] = time.monotonic() - start
        start = time.monotonic()
        report["tool"] = box.dispatch("BashOutput", {{"bash_id": shell, "filter": {BOMB!r}}})
        report["tool_s"] = time.monotonic() - start
        report["growth"] = psutil.Process().memory_info().rss - rss
        ip.run_line_magic("unload_ext", "execmagic")
        print(json.dumps(report))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    expected = f"invalid filter regex '{BOMB}': its repeats ask for 4,294,836,225 copies when compiled"
    assert report["magic"].startswith(expected) and "\n" not in report["magic"] and report["magic_s"] < 2
    tool = report["tool"]
    assert tool["success"] is False and tool["error"].startswith(expected) and report["tool_s"] < 2
    assert report["growth"] < 10 * 1024 * 1024
