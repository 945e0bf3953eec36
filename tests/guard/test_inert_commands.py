"""The commands the walk passes at once (a program no rule judges, alone or in a pipeline of such, what its code runs
walked) give the refusals and the commands that a walk of each as any other gives."""

from __future__ import annotations

import random

import pytest

from execmagic.guard import walk as guard_walk
from execmagic.guard.check import check, find_danger
from execmagic.guard.listed import simple_commands
from execmagic.guard.names import Names
from execmagic.guard.rules import Refusal
from execmagic.guard.walk import walk

_PIECES = ["cat ", "w1 ", "w2 ", "echo / ", "| ", "|& ", "; ", "&& ", "|| ", "& ", "\n", "> /etc/passwd ", ">& ", "&> ",
           ">> /dev/sda ", "2> x ", "< /etc/x ", "<<EOF\n$(rm -rf /)\nEOF\n", "<<EOF\nx\nEOF\n", "$(rm -rf /) ",
           "$(echo /) ", "`reboot` ", "<(rm -rf ~) ", "rm -rf ", "/ ", "cd / ", "X=/ ", "$X ", "curl -o f u ", "sh f ",
           "./f ", "( ", ") ", "((1)) ", "((w1)) ", "((reboot)) ", "sudo ", "xargs ", "sh ", "{ ", "} ", "~ ", "'", '"']


def _judged(text: str) -> tuple[object, ...]:
    names = Names()
    names.readings.every = False
    refusals = [item for item in walk(text, None, 0, names) if isinstance(item, Refusal)]
    return refusals, list(simple_commands(text)), find_danger(text), check("all", text), check("catastrophic", text)


@pytest.mark.parametrize("seed", range(300))
def test_commands_passed_at_once_are_judged_as_those_walked_one_by_one(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 30)))
    at_once = _judged(text)
    monkeypatch.setattr(guard_walk, "_inert", lambda command: False)
    assert at_once == _judged(text), text


def test_a_pipeline_of_commands_no_rule_judges_still_has_its_writes_and_code_judged():
    assert check("all", "cat a | w1 > /etc/passwd").rule == "clobber-system-file"
    assert check("all", "cat a | w1 $(rm -rf /)").rule == "rm-recursive-root"
    assert check("all", "cat a | w1 | w2") is None
