"""What a walk only passes is passed at once, and text a walk read to its end is not read to its end again.

Every ``%exec`` reads its cell, so the reader's cost per substitution counts: a notebook's ``"$(basename "$f")"``,
``"${N:-none}"`` or ``$((N + 1))`` each made a walk of its own (a scanner, its frames, a step or three) where a
match finds the same end.  And in random text an unclosed ``$[`` (no arithmetic: read on) walked to the end of the
text, then a ``$(`` after it walked there again.  Counted in work, not seconds (``tests/work_count.py``); that each
is read as before is ``test_reading_recorded.py``'s.
"""

from __future__ import annotations

import tracemalloc

import pytest

from execmagic.shell.lexer import tokenize
from execmagic.shell.work import counted
from work_count import work


def _steps(text: str) -> int:
    with counted() as steps:
        tokenize(text)
    return steps.taken


def _work_of(substitution: str) -> int:
    """The work of reading ``substitution`` in a command, less that of the command with a plain word there."""
    def read(word: str) -> int:
        work(lambda: tokenize(f"echo {word} x"))  # (the first reading compiles what it needs: not the text's work)
        return work(lambda: tokenize(f"echo {word} x"))
    return read(substitution) - read("plain")


@pytest.mark.parametrize("substitution", ['"out/$(basename "$f" .csv).txt"', '"${N:-none}"', "$((N + 1))",
                                          "$(wc -l < f)", "$(grep -c 'a b' f)", "$[x+1]", '"$(cut -d, -f2 "$IN")"'])
def test_a_body_a_walk_only_passes_costs_what_a_plain_one_does(substitution):
    """``$(date +%F)`` was passed at once already: one whose walk would do no more than pass it costs about the same
    (a walk made for it cost half as much again and more)."""
    assert _work_of(substitution) <= 1.4 * _work_of("$(date +%F)")


@pytest.mark.parametrize("before", ["echo $[x ", "$[ a ", 'echo "$[ x" '])
def test_a_walk_begun_inside_one_that_ran_out_of_text_stops_where_it_did(before):
    """``$[`` never closed: no arithmetic, the reading goes on -- to a ``$(`` that the ``$[``'s walk found never
    closes either, whose own walk read the rest of the text again (two quotes a step, a thousand times)."""
    rest = "$(y " + "'a' " * 1000 + "')'"
    tokens = tokenize(before + rest)[0]
    assert tokens[-1].endswith(rest)  # (the unclosed $( takes the rest of the text)
    assert _steps(before + rest) <= _steps(rest) + 20


def test_a_long_body_is_walked_in_bounded_memory():
    """The match that passes a body at once keeps a place to go back to for each character (a MB of ``'a' `` took
    80 MB): it is tried on the body's start alone, and a longer body is walked as ever."""
    text = "echo $(" + "'a' " * 50_000 + "x)"
    tracemalloc.start()
    try:
        tokens = tokenize(text)[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tokens[-1].code == (text[7:-1],)
    assert peak < 20 * len(text)
