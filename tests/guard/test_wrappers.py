"""Wrappers: what runs behind ``sudo -iu root``, ``eatmydata``, ``valgrind``, ``srun``, ``screen -dm`` and ``tmux new``
is judged as itself; an ordinary use of each is not refused."""

from __future__ import annotations

import pytest

from execmagic.guard.check import check
from execmagic.guard.commands import unwrap
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
