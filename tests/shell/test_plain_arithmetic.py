"""A plain stretch and the ``((…))`` made of plain pieces in it, read at once, give what they give read one ``((`` at a
time."""

from __future__ import annotations

import random

import pytest

from execmagic.shell import stretches
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spans

_PIECES = ["((", "))", "(", ")", "1", "i++", "a", " ", "\t", "\n", ";", "&", "&&", "|", "||", ">", "<", "<<", "<<<",
           ">&", "&>", "]", "[", "$", "$((", "#", "'", '"', "\\", "`", "EOF\n", "x=", "((1)) ", "((a>b))", "((i<n))",
           "((a b))", "((a]))", "(((1)))",
           "((a<<b))", "((x&y))", "((n>0)) && ", "((1)) ", "((i++)); ", "((2))\n"]


def _read(text: str) -> tuple[object, ...]:
    tokens, skeleton = tokenize(text, noted=True)
    words = [(t, type(t).__name__, getattr(t, "code", ()), getattr(t, "live", ()), getattr(t, "quoted", False),
              getattr(t, "shown", t)) for t in tokens]
    return words, skeleton, source_spans(text), tokenize(text)[1]


@pytest.mark.parametrize("seed", range(300))
def test_plain_arithmetic_read_at_once_reads_as_one_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 40)))
    at_once = _read(text)
    monkeypatch.setattr(stretches, "_at_once", lambda text, i, arithmetic_end: (i, arithmetic_end, False))
    assert at_once == _read(text), text


def test_plain_arithmetic_read_at_once_keeps_its_tokens_and_what_follows_it():
    text = "((1)) ((i++)); ((a>b)) && echo x <<E\n$(rm -rf /)\nE\n"
    tokens = tokenize(text)[0]
    assert tokens[:15] == ["(", "(", "1", ")", ")", "(", "(", "i++", ")", ")", ";", "(", "(", "a", ">"]
    assert tokens[-2].code == ("rm -rf /",)  # the heredoc after it is read as ever
