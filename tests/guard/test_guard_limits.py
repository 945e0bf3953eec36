"""What an attack on the guard and the redaction found: each case stays bounded, judged, and words intact."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from execmagic.guard.check import check
from execmagic.guard.secrets import redact


def test_a_value_doubled_again_and_again_costs_nothing():
    """``a=$a$a`` thirty times would be a gigabyte-long word: past 64 KiB a word is left as written."""
    started = time.monotonic()
    assert check("catastrophic", text="a=x; " + "; ".join(["a=$a$a"] * 30) + "; rm -rf $a") is None
    assert time.monotonic() - started < 5  # was minutes and gigabytes (a MemoryError past 28)
    assert check("catastrophic", text="a=/; a=$a; rm -rf $a").rule == "rm-recursive-root"  # short ones still count


def test_nesting_deeper_than_the_check_can_follow_is_refused_not_raised():
    """A walk that runs out of Python's stack is a refusal (rule too-deep), never an exception in the caller."""
    code = textwrap.dedent("""
        import sys
        from execmagic.guard.check import check
        text = "rm -rf " + "$(echo " * 40 + "/" + ")" * 40
        sys.setrecursionlimit(120)
        refusal = check("catastrophic", text=text, env={})
        print(refusal.rule if refusal else None)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["too-deep"]


def test_words_that_merely_contain_a_key_prefix_are_left_whole():
    for text in ("/data/task-classification-benchmark-2024/train.csv", "risk-adjusted-returns-quarterly-2024.parquet",
                 "disk-usage-report-for-the-cluster-2024.txt", "XAKIAIOSFODNN7EXAMPLE"):
        assert redact(text, {}) == text
    assert redact("key=sk-abcdefghijklmnopqrstuvwxyz12", {}) == "key=[REDACTED]"
    assert redact("id AKIAIOSFODNN7EXAMPLE", {}) == "id [REDACTED]"


@pytest.mark.parametrize("text", ["rm -rf ${HOME%/}", "rm -rf ${HOME#x}", "rm -rf ${HOME%%/}", "rm -rf ${R%x}"])
def test_a_literal_trim_of_a_variable_is_judged_as_its_value(text):
    assert check("catastrophic", text=text, env={"HOME": "/home/me", "R": "/x"}).rule == "rm-recursive-root"


@pytest.mark.parametrize("text", ["rm -rf ${HOME%/}/.cache/pip", "rm -rf ./${D#/data/}", "rm -rf ${D%/*}"])
def test_a_trim_that_leaves_an_ordinary_path_is_allowed(text):
    assert check("all", text=text, env={"HOME": "/home/me", "D": "/data/run1"}) is None


@pytest.mark.parametrize("text", [
    "echo >&'$(rm -rf /)'",          # >&WORD that is not a number: bash expands WORD a second time
    "(( x='$(rm -rf /)' ))",         # (( … )) reads '…' as no quote
    "echo $( false && echo $[ ' ] ) ' ] ; rm -rf / )",     # but its parser reads '…' as a quote: ) ends nothing
    "echo $( false && echo $(( ' )) ) ' )) ; rm -rf / )",   # (in arithmetic, in $[ … ] too)
    "echo $( false && (( ' )) ) ' )) ; rm -rf / )",
    "false && echo $[ # ] ; rm -rf /",                       # no comment starts in arithmetic
    "false && (( # )) ; rm -rf /",
    "false && echo $[ ${ ] ; rm -rf / ; ]",
    "false && echo $[ 1 <<EOF ]\nrm -rf /\n",              # a "<<" in arithmetic is a shift: no heredoc
    "false && (( 1 <<EOF ))\nrm -rf /\n",
    "echo $[ ; rm -rf / ; ]",                                # dash has no $[ … ]: what it runs there counts
    "$() rm -rf /",                  # an expansion that may be empty: the word after it is the command
    "`true` rm -rf /",
    "$X ${Y:+y} rm -rf /",
    "echo $((rm -rf /) | cat)",     # "$((a) | b)" is "$( (a) | b )"
    "`|<<`x ; rm -rf / ; ",         # in backticks a heredoc's word ends at the backtick: rm runs after them
    "echo `cat <<E`; rm -rf /",
    "echo `cat <<E`x; rm -rf /",
    "`cat <<`x\nrm -rf /\n",
    "rm -rf $\"\"/",                 # $"…" is a quote
    "true\r#; rm -rf /",             # "\r" is a letter to bash: no comment starts there
    "echo $'\\x'; rm -rf /",         # an escape with no hex digit once raised instead
    "trap 'rm -rf /' EXIT",          # a trap's command runs later
    "trap -- 'rm -rf /' INT TERM",
    "coproc rm -rf /",
])
@pytest.mark.parametrize("env", [None, {}], ids=["names unknown", "the session's names"])
def test_rm_hidden_in_corners_of_the_shell_is_refused(text, env):
    refusal = check("catastrophic", text=text, env=env)  # (known names: a word whose expansion is empty, its code too)
    assert refusal is not None and refusal.rule == "rm-recursive-root"


@pytest.mark.parametrize("text", ["trap - EXIT", "trap -p", "trap 'echo bye' EXIT", "coproc cat", "echo hi >&2",
                                  "echo hi >&out.log"])
def test_ordinary_traps_and_redirections_are_allowed(text):
    assert check("all", text=text) is None


@pytest.mark.parametrize("script", ["cat <<$'EOF'\n$EOF\n{cmd}\nEOF\n", 'cat <<$"EOF"\n$EOF\n{cmd}\nEOF\n',
                                    "echo $(cat <<$'EOF'\n$EOF\n{cmd}\nEOF\n)"])
def test_what_dash_runs_after_a_heredoc_it_ends_elsewhere_is_refused(tmp_path, script):
    """dash has no ``$'…'`` nor ``$"…"``: a heredoc's word keeps its ``$`` there, so its body ends at ``$EOF``,
    not at bash's ``EOF``, and what follows runs (checked with dash).  Both readings are walked."""
    subprocess.run(["dash", "-c", script.format(cmd="touch marker")], capture_output=True, cwd=tmp_path, timeout=10)
    assert (tmp_path / "marker").exists()
    refusal = check("catastrophic", text=script.format(cmd="rm -rf /"))
    assert refusal is not None and refusal.rule == "rm-recursive-root"
    assert check("all", text="cat <<$'EOF'\nrm -rf /\nEOF\n") is None  # a body in both readings stays data


@pytest.mark.parametrize(("text", "rule"), [
    ("cd /etc; printf x > passwd", "clobber-system-file"),        # "/etc" with no "/" after it
    ("cd /; cd etc; printf x > passwd", "clobber-system-file"),   # no path in the text at all
    ("X=/e; printf x > ${X}tc/passwd", "clobber-system-file"),    # the path built from a variable
    ("cd / && cd dev && cat x > sda", "redirect-device"),
    ("X=/d; cat x > ${X}ev/sda", "redirect-device"),
])
def test_a_write_to_a_path_the_text_never_spells_is_judged(text, rule):
    """The check passes text with no word a rule needs unread; a redirection's target the text builds (a variable, a
    ``cd`` before a relative name) spelled no such word, and the write was never judged."""
    refusal = check("all", text=text)
    assert refusal is not None and refusal.rule == rule
    assert check("all", text=text.replace("passwd", "notes").replace("sda", "out")) is None
