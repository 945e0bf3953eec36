"""The standby's check answers a few thousand seeded scripts exactly as the check they were recorded by did.

Its *yes* lets the persistent shell run a script (a wrong one can hang a cell), its *no* sends it to a new bash: a
check changed for speed must change no answer (``plain_record.py``: the scripts and how the answers are spelled;
``plain_recorded.txt``: the answers of the check before its words were told apart by one match and its reading made
no words it does not read).
"""

from __future__ import annotations

from pathlib import Path

from plain_record import COUNT, PER_LINE, answers, texts

_RECORDED = (Path(__file__).parent / "plain_recorded.txt").read_text().split()


def test_the_record_holds_one_answer_per_script():
    assert sum(map(len, _RECORDED)) == COUNT
    assert all(len(line) == PER_LINE for line in _RECORDED[:-1])


def test_each_script_is_answered_as_recorded():
    corpus, recorded = list(texts()), "".join(_RECORDED)
    changed = [(index, corpus[index], mark) for index, mark in enumerate("".join(answers().split()))
               if mark != recorded[index]]
    assert not changed, "answered otherwise than recorded:\n" + "\n".join(map(repr, changed[:5]))
