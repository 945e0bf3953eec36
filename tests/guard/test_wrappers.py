"""Wrappers: what runs behind ``sudo -iu root``, ``eatmydata``, ``valgrind``, ``srun``, ``screen -dm`` and ``tmux new``
is judged as itself; an ordinary use of each is not refused."""

from __future__ import annotations

import getopt
import random

import pytest

from execmagic.guard.check import check
from execmagic.guard.commands import unwrap
from execmagic.guard.wrapped import _OPERANDS, _WRAPPERS
from execmagic.shell.words import Word


@pytest.mark.parametrize("text", [
    "sudo -iu root rm -rf ~",  # a cluster of short options: -u's value is the next word
    "sudo -u root -i rm -rf ~",
    "sudo -Hiu root rm -rf /",
    "strace -fo trace.log rm -rf /",
    "valgrind -q rm -rf ~",
    "valgrind --tool=memcheck -q rm -rf ~",
    "eatmydata rm -rf ~",
    "srun rm -rf ~",
    "srun -p gpu -n 2 --time 5 rm -rf ~",
    "srun --partition=gpu rm -rf ~",
    "screen -dm rm -rf ~",
    "screen -dmS job rm -rf ~",
    "tmux new -d 'rm -rf ~'",
    "tmux new-session -d -s work 'rm -rf ~'",
    "tmux -L other new -d rm -rf ~",
    "tmux new -d -- rm -rf /",
    "tmux run-shell 'rm -rf ~'",
    "tmux split-window -h 'rm -rf /'",
    "sudo eatmydata srun rm -rf ~",
])
def test_what_a_wrapper_runs_is_judged(text):
    refusal = check("catastrophic", text)
    assert refusal is not None and refusal.rule == "rm-recursive-root", text


@pytest.mark.parametrize("text", [
    "sudo -iu me make test", "sudo -u me ls", "nice -n5 make", "strace -fo trace.log ls", "valgrind -q ./a.out",
    "eatmydata apt-get install -y jq", "srun hostname", "srun -p gpu -n 2 python3 train.py", "screen -r",
    "screen -dmS job python3 train.py", "tmux ls", "tmux new -s work", "tmux new -d 'python3 train.py'",
    "tmux send-keys 'rm -rf build' Enter", "timeout -sKILL 5 make"])
def test_an_ordinary_use_is_not_refused(text):
    assert check("all", text) is None, text


@pytest.mark.parametrize(("words", "runs"), [
    (["sudo", "-iu", "root", "rm", "x"], ["rm", "x"]),
    (["nice", "-n5", "rm", "x"], ["rm", "x"]),  # the value in the cluster itself
    (["timeout", "-sKILL", "5", "rm", "x"], ["rm", "x"]),
    (["xargs", "-0I{}", "rm", "{}"], ["rm", "{}"]),
    (["sudo", "-E", "rm", "x"], ["rm", "x"]),  # a flag: the next word is the command
    (["env", "-iu", "X", "rm", "x"], ["rm", "x"]),
    (["xargs", "N=$HOME", "rm", "x"], ["rm", "x"]),  # an assignment is no cluster (its E is not xargs's -E)
])
def test_short_options_are_read_as_getopt_reads_them(words, runs):
    assert unwrap([Word(w) for w in words])[0] == runs


@pytest.mark.parametrize("text", ["rm x; sudo -u", "rm x; nice -n", "rm x; timeout -s", "rm x; sudo -iu",
                                  "rm x; env -u", "rm x; xargs -I"])
def test_an_option_whose_value_is_missing_runs_nothing(text):
    """The line ends where the value should be (once an IndexError out of the check)."""
    assert check("all", text) is None


@pytest.mark.parametrize("seed", range(300))
def test_a_wrappers_options_end_where_getopt_ends_them(seed):
    """Random clusters of a wrapper's short options, some taking a value (in the cluster or the next word), then a
    command: what is left is what Python's getopt (GNU's short-option rules, stopping at the first operand) leaves."""
    rng = random.Random(seed)
    name = rng.choice(sorted(n for n, values in _WRAPPERS.items() if any(len(v) == 2 for v in values)
                             and n not in ("env", "parallel", "nice", "runuser", "flock") and n not in _OPERANDS))
    valued = sorted(v[1] for v in _WRAPPERS[name] if len(v) == 2 and v[1].isalpha())
    flags = [c for c in "qvxzQVWZ" if "-" + c not in _WRAPPERS[name]]
    words = [name]
    for _ in range(rng.randrange(0, 4)):
        cluster = "-" + "".join(rng.choice(flags) for _ in range(rng.randrange(0, 3)))
        if rng.random() < 0.7:
            cluster += rng.choice(valued)
            if rng.random() < 0.5:
                cluster += "val"  # the value in the cluster itself
            else:
                words.append(cluster)
                cluster = "val"
        words.append(cluster if cluster != "-" else "-" + rng.choice(flags))
    words += ["rm", "-rf", "x"]
    shortopts = "".join(flags) + "".join(c + ":" for c in valued)
    _, left = getopt.getopt(words[1:], shortopts)
    assert unwrap([Word(w) for w in words])[0] == left, words


def test_watch_with_its_interval_missing_runs_nothing_and_a_cluster_is_read_through():
    """``watch`` skips its options by the same reading as a wrapper's (``-n`` at the line's end raised IndexError)."""
    assert check("all", "rm x; watch -n") is None
    assert check("catastrophic", "watch -dn1 rm -rf /").rule == "rm-recursive-root"
    assert check("catastrophic", "watch -dn 1 rm -rf /").rule == "rm-recursive-root"
