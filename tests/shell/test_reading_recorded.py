"""The reader reads a few thousand random and adversarial texts exactly as the reader they were recorded by did.

The guard and the standby's check take the reader's words as they are: a word, a body or a quote read otherwise than
before can let a command through.  A reader changed for speed (what is passed at once, what one walk notes for the
next) must change none of it: every field of every token, the skeleton, every body as the guard reads it again, and
where each token stands (``reading_record.py``: the texts and how a reading is spelled; ``reading_recorded.txt``: one
digest per text, by the reader before the walks passed plain bodies at once and shared what runs out of text).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from reading_record import COUNT, digest, spelled, texts

from execmagic.shell.sources import source_spellings, source_texts
from execmagic.shell.work import ShellTooComplex

_RECORDED = (Path(__file__).parent / "reading_recorded.txt").read_text().split()
_CHUNK = 500


def test_the_record_holds_one_digest_per_text():
    assert len(_RECORDED) == COUNT


@pytest.mark.parametrize("chunk", range(0, COUNT, _CHUNK))
def test_each_text_is_read_as_recorded(chunk):
    corpus = list(texts())[chunk:chunk + _CHUNK]
    changed = [(chunk + at, text) for at, text in enumerate(corpus) if digest(text) != _RECORDED[chunk + at]]
    assert not changed, "read otherwise than recorded:\n" + "\n\n".join(
        f"#{index} {text!r}\n{spelled(text)}" for index, text in changed[:3])


def _spellings(read: Callable[[str], list[str]], text: str) -> list[str] | str:
    try:
        return read(text)
    except ShellTooComplex:
        return "too complex"


def test_the_spellings_read_alone_are_the_sources_texts():
    """The standby's reading (no token made for a plain piece) spells every text's tokens as the full reading does."""
    changed = [text for text in texts()
               if _spellings(source_spellings, text) != _spellings(lambda t: source_texts(t)[1], text)]
    assert not changed, changed[:3]
