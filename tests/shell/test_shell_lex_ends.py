"""A substitution's body read through the ends its text's reading found is read as the body alone would be.

The guard reads each ``$(…)`` body again as code, at every level it follows; each body carries where it
stands in the text and the ends that reading found (:class:`~execmagic.shell.ends.Ends`), so a
nested reading looks them up instead of walking again.  That is only right if a walk begun inside a body
ends where the walk of the whole text did: checked here on random text, every body at every level.
"""

from __future__ import annotations

import random

import pytest

from execmagic.shell.ends import Body
from execmagic.shell.lexer import tokenize
from execmagic.shell.words import Op, Word

#: Characters that open and close what the walk follows, and a few words that change how it reads them.
_ALPHABET = ["(", ")", "$(", "$((", "))", "${", "}", "`", "\\`", "'", '"', "\\", " ", "\n", ";", "|", "<(", "<<E\n",
             "E\n", "case x in a) ", "esac", "#", "a", "echo ", "=(", "for ((", "$'", "\\\"", ">&"]


def _bodies(tokens: list[Word | Op]) -> list[str]:
    return [body for token in tokens if isinstance(token, Word) for body in token.code]


def _compare(body: str, depth: int) -> None:
    """``body`` read with its ends and read alone give the same words, down to every body inside it."""
    with_ends, alone = tokenize(body), tokenize(str(body))
    assert with_ends == alone
    assert [(t.code, t.live, t.quoted) for t in with_ends[0] if isinstance(t, Word)] == \
        [(t.code, t.live, t.quoted) for t in alone[0] if isinstance(t, Word)]
    if depth:
        for inner in _bodies(with_ends[0]):
            _compare(inner, depth - 1)


@pytest.mark.parametrize("seed", range(300))
def test_a_body_read_with_its_texts_ends_reads_as_the_body_alone(seed):
    rng = random.Random(seed)
    text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(5, 80)))
    for body in _bodies(tokenize(text, noted=True)[0]):
        _compare(body, 4)


@pytest.mark.parametrize("seed", range(300))
def test_a_walk_stopped_where_another_found_no_end_reads_as_one_to_the_end(seed):
    """Longer text, with ``$[ … ]`` and ``((``: many walks run out of text, and each stops where it opens what an
    earlier walk found never ends (what it would have read after that cannot change its answer)."""
    rng = random.Random(seed)
    alphabet = [*_ALPHABET, "$[", "]", "[", "((", '"$(', "(", "'"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 200)))
    for body in _bodies(tokenize(text, noted=True)[0]):
        _compare(body, 4)


def test_a_body_knows_where_it_stands():
    """Each level's body is cut from the one around it, and the ends found by the first reading are shared."""
    text = 'echo "$(a "$(b $(c) d)" e)" $(f'
    outer = _bodies(tokenize(text, noted=True)[0])
    assert outer == ['a "$(b $(c) d)" e', "f"]
    assert all(isinstance(body, Body) for body in outer)
    first = outer[0]
    assert first.ends is not None and text[first.ends.base:].startswith(first)
    inner = _bodies(tokenize(first)[0])
    assert inner == ["b $(c) d"] and inner[0].ends.found is first.ends.found
    assert text[inner[0].ends.base:].startswith("b $(c) d")
