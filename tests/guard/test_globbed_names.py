"""A command word that is a glob runs whatever file it matches: ``/bin/r? -rf /`` is ``rm -rf /`` where ``/bin/rm`` is.

The check cannot know which files a glob finds, so it walks the command once for each program some rule or the
walk acts on that the glob's last part may name (:func:`execmagic.guard.inert.glob_variants`), and the quick look
that passes a text with no word a rule needs (``/bin/r? -rf /`` spells none) reads such a glob as each word it may
be.  Only a path (a word with a ``/``): a bare ``r?`` matches a file of the directory the command runs in, and a
case's patterns (``*)``, ``r*)``) are read as commands too.
"""

from __future__ import annotations

import fnmatch
import random
import warnings

import pytest

from execmagic.guard.check import check
from execmagic.guard.commands import Command
from execmagic.guard.globs import GLOB, named_by
from execmagic.guard.inert import inert
from execmagic.guard.readings import Readings
from guard_rows import ENV, assert_allowed, assert_refused

REFUSED = [
    "/bin/r? -rf /",
    "/usr/bin/r[m] -rf /",
    "/usr/bin/r[^x] -rf ~",
    "/usr/bin/r[!x] -rf ~",
    "/bin/?m -rf /",
    "./r? -rf /",
    "/bin/?? -rf /",
    "sudo /bin/r* -rf /",
    "x=$(/bin/r* -rf /)",
    "echo ok && /bin/r? -rf ~",
    "/sbin/mkfs.ex?4 /dev/sda1",
    "/bin/d? if=/dev/zero of=/dev/sda",
    '"/bin/"r? -rf /',  # (partly quoted: bash globs the rest)
    '/bin/"r"? -rf /',
    '"/bin/r"* -rf /',
    "/bin/\\r? -rf /",
    "'/bin/r?' -rf /",  # (all quoted: no glob, but the check does not tell a quoted part: refused all the same)
    "/bin/[[:alpha:]]m -rf /",  # (classes, collating symbols, escapes in brackets: may be any name)
    "/bin/r[[.m.]] -rf /",
    "/bin/r[[=m=]] -rf /",
    "for X in cd r?; do /bin/$X -rf /; done",
]
ALLOWED = [
    "ls /bin/r?",
    "ls *.csv",
    "./run_*.sh -rf /",
    '"r?" -rf /',
    "if [ -s data.csv ]; then wc -l data.csv; fi",
    "[[ -f x ]] && echo yes",
    "echo [a]",
    "cat data/*.gz | zcat | head",
    "/usr/bin/python3* --version",
    'case "$x" in r*) echo r ;; *) echo other ;; esac',
    'case "$f" in\n  *.gz) zcat "$f" | head -3 ;;\n  *) head -3 "$f" ;;\nesac',
    'case "$1" in\n  [yY]*) echo yes ;;\n  re*) echo again ;;\n  *) exit 1 ;;\nesac',
]


@pytest.mark.parametrize("command", REFUSED)
def test_a_glob_is_each_program_it_may_name(command):
    assert_refused(command, "catastrophic")


@pytest.mark.parametrize("command", ALLOWED)
def test_globs_in_ordinary_work(command):
    assert_allowed(command)


def test_the_refusal_quotes_the_glob():
    refusal = check("all", "/bin/r? -rf /", env=ENV)
    assert refusal is not None and refusal.command == "/bin/r? -rf /"


def test_only_globs_that_may_name_an_acted_on_program_are_walked():
    def first(text: str) -> Command:
        readings = Readings()
        command = readings.items(readings.read(text))[0]
        assert isinstance(command, Command)
        return command

    assert inert(first("/usr/bin/x?z --help"))  # (names nothing a rule or the walk acts on: passed at once)
    assert not inert(first("/usr/bin/r? --help"))


@pytest.mark.parametrize("seed", range(4))
def test_a_glob_names_at_least_what_fnmatch_matches(seed):
    """Never fewer names than fnmatch finds (more only where a range is backwards or of "-": then all of them)."""
    names = ("rm", "dd", "rsync", "mkfs", "systemctl", "cp", "[x]", "a-b", "r]m", "r^m", "r!m")
    rng = random.Random(seed)
    for _ in range(2000):
        glob = "".join(rng.choice("rmsdc*?[]!^y-x\\.") for _ in range(rng.randrange(1, 10)))
        if GLOB.search(glob) is None:  # (a word of no glob: named as it is, not here)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (fnmatch's "possible set difference")
            matched = {name for name in names if fnmatch.fnmatchcase(name, glob.replace("[^", "[!"))}
        named = set(named_by(glob, names))
        assert matched <= named, glob
        assert named == matched or named == set(names), glob


def test_a_glob_longer_than_any_name_names_none():
    assert named_by("r" + "?" * 40, ("rm", "rsync")) == ()
    assert named_by("r" + "*" * 40_000 + "m", ("rm", "rsync")) == ("rm",)
