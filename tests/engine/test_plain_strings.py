"""Plain strings passed at once by the Python template scanner give every template the context one at a time gives."""

from __future__ import annotations

import random
import re

import pytest

from execmagic.engine import code_scan
from execmagic.engine.contexts import contexts_at

_PIECES = ['"', "'", '"""', "'''", '""', "''", '"$("', "$(", "'a b'", '"it\'s"', "f", "r", "b", "x", "_", "1", " ", "\n",
           "\r", "\\", "#", "{v}", "{", "}", "(", ")", ":", "é", '"{v}"', "f'{x}'", "'\\n'"]


def _contexts(text: str) -> dict[int, object]:
    spans = [(found.start(), found.end()) for found in re.finditer(r"\{v\}", text)]
    return contexts_at(text, spans, "python")


@pytest.mark.parametrize("seed", range(400))
def test_plain_strings_passed_at_once_give_the_contexts_of_one_at_a_time(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 40)))
    at_once = _contexts(text)
    monkeypatch.setattr(code_scan.PythonScanner, "_plain_strings", lambda self, i: i)
    assert at_once == _contexts(text), text


def test_a_run_of_plain_strings_is_one_step():
    """``"$("`` again and again was a step of the scanner each: passed at once, short of the template after them."""
    from work_count import work

    text = "echo " + '"$(' * 2000 + " {v}"
    assert work(lambda: _contexts(text)) < 2000
    assert _contexts(text)[len(text) - 3].kind == "py-code"


def test_plain_strings_are_matched_no_further_than_the_next_template(monkeypatch):
    """A run of plain strings is matched no further than the next template: matched past it, each string before a
    template had the regex read the rest of the text, only to be cut back (random brackets took three times as long;
    the work is the regex's own, which no count of Python lines sees)."""
    text = '"a" {} "b" "c" {} ' * 50
    starts = [found.start() for found in re.finditer(r"\{\}", text)]
    looked: list[tuple[int, int]] = []

    class Watched:
        def match(self, text: str, pos: int, endpos: int = len(text)) -> re.Match[str] | None:
            looked.append((pos, endpos))
            return code_scan_regex.match(text, pos, endpos)

    code_scan_regex = code_scan._PLAIN_STRINGS
    monkeypatch.setattr(code_scan, "_PLAIN_STRINGS", Watched())
    contexts_at(text, [(start, start + 2) for start in starts], "python")
    assert looked
    assert all(endpos <= min([start for start in starts if start >= pos] or [len(text)]) for pos, endpos in looked)
