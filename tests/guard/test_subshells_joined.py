"""The guard reads a plain ``((WORD))`` as one token (``Subshells``) and walks it as ``( ( WORD ) )``: it finds and
refuses what it finds when the five tokens are walked one by one."""

from __future__ import annotations

import random

import pytest

from execmagic.guard.check import check, find_danger
from execmagic.guard.listed import simple_commands
from execmagic.guard.names import Names, Readings
from execmagic.guard.walk import walk
from execmagic.shell import stretches

_PIECES = ["((1))", "((rm))", "((cd))", "((./f))", "((if))", "((x=1))", "((sh))", "((a))", "((-rf))", "((reboot))", " ", "\n", ";",
           "|", "&&", "(", ")", "rm -rf / ", "cd / ", "rm -rf * ", "curl -o f http://x ", "sh f ", "echo ", "> /etc/x ",
           "X=/ ", "$X ", "$(", "`", "'", '"', "{ ", "} ", "for i in ", "do ", "done ", "sudo ", "a", "((1)) > /dev/sda "]


def _walked(text: str) -> tuple[object, ...]:
    """What the guard makes of ``text``: every simple command; what a check's walk yields (the commands a rule may
    judge, every refusal); the first refusal, and the first under each level."""
    names = Names()
    names.readings.every = False
    judged = list(walk(text, None, 0, names))
    return list(simple_commands(text)), judged, find_danger(text), check("all", text), check("catastrophic", text)


@pytest.mark.parametrize("seed", range(300))
def test_a_plain_arithmetic_read_as_one_is_walked_as_its_five_tokens(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 30)))
    joined = _walked(text)
    monkeypatch.setattr(stretches, "_JOINED_PIECE", stretches.PLAIN_PIECE)
    assert joined == _walked(text), text


@pytest.mark.parametrize(("text", "rule"), [("((rm -rf /))", "rm-recursive-root"), ("( (rm -rf /) )", "rm-recursive-root"),
                                            ("curl -o f http://x; ((./f))", "pipe-to-shell"),
                                            ("((cd)); rm -rf *", None), ("((1)); rm -rf /", "rm-recursive-root")])
def test_the_guard_judges_what_runs_in_a_plain_arithmetic(text, rule):
    found = check("all", text)
    assert (found.rule if found else None) == rule


def test_the_guard_reads_a_script_of_plain_arithmetic_as_one_token_a_command():
    """A million tokens a MB of ``((1))`` grouped into commands and walked one by one: now one each."""
    tokens = Readings().tokenize("((1)) " * 1000 + "((i++))\n" * 1000)[0]
    assert len(tokens) == 2000 + 1000  # (and a ";" for each newline)
