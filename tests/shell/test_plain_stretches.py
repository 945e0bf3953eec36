"""A plain stretch read again from what its text gave before reads as one split anew; one whose safe run is passed
at once ends where one matched a piece at a time ends."""

from __future__ import annotations

import random
import re

import pytest
from reading_record import spelled

from execmagic.shell import lexer, stretches
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spellings

_PIECES = ["echo ", "a ", "| ", "> ", "done\n", "fi\n", ";; ", "*) ", "((1)) ", "((a))", "(x) ", "{a,b} ", "a#b ", "2>&1 ",
           ">&", "\n", " ", "\t", ";", "&&", "<<E\n", "E\n", "cat <<'E' | x\n", "'q' ", '"$f" ', "$(a) ", "((", "))",
           "$((", "${", "}", "`", "\\", "#c\n", "<(", ">(", "<<<", "x=(", ")", "\r", "|&", "&>", ">", "<", ";;&", "&&",
           "||", ";&", "&", "|", ";;", "a#", "x=1\n", "é", " |&>(x) ", ";&>", "&&>", "||>"]


class _Forgetful(dict):
    """Keeps nothing: each stretch is split anew."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def _read(text: str) -> tuple[object, ...]:
    return spelled(text), source_spellings(text)


@pytest.mark.parametrize("seed", range(300))
def test_a_stretch_read_again_reads_as_one_split_anew(seed, monkeypatch):
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 60)))
    kept = _read(text)
    init = lexer._Lexer.__init__

    def forgetful(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.stretches = _Forgetful()

    monkeypatch.setattr(lexer._Lexer, "__init__", forgetful)
    assert kept == _read(text), text
    monkeypatch.undo()
    monkeypatch.setattr(lexer, "_KEPT_STRETCHES", seed % 4)  # (some kept, then no more: the memory a reading takes)
    assert kept == _read(text), text


def test_a_stretch_written_again_is_split_once(monkeypatch):
    """A script writes the same `` | ``, ``done\\n``, ``;; *) `` again and again: each is split once a reading."""
    split = []
    plain_tokens = lexer.plain_tokens
    monkeypatch.setattr(lexer, "plain_tokens", lambda text, start, end, *rest: split.append(text[start:end])
                        or plain_tokens(text, start, end, *rest))
    tokens = tokenize('grep "$a" f | sort | uniq -c\n' * 50)[0]
    assert sorted(split) == [" f | sort | uniq -c\n", " f | sort | uniq -c\ngrep ", "grep "] and len(tokens) == 50 * 9


@pytest.mark.parametrize("seed", range(300))
def test_a_stretch_whose_safe_run_is_passed_at_once_ends_where_it_ends_matched_a_piece_at_a_time(seed, monkeypatch):
    """``a |&>(b)``: the run of ``a |&`` ends at its last blank (the ``|&`` an operator, not ``|`` and ``&>``)."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 60)))
    at_once = _read(text)
    monkeypatch.setattr(stretches, "_SAFE_RUN", re.compile("(?!)"))  # (no run: every piece matched by the stretch's)
    assert at_once == _read(text), text


@pytest.mark.parametrize("seed", range(100))
def test_a_safe_run_read_a_window_at_a_time_ends_where_it_ends_matched_a_piece_at_a_time(seed, monkeypatch):
    """A run is matched a window at a time (a long word with no blank after it is gone back over to its start): each
    window's run ends where a piece does, so the stretch ends where one matched a piece at a time ends."""
    rng = random.Random(seed)
    text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(2, 80)))
    monkeypatch.setattr(stretches, "_RUN_WINDOW", rng.choice([2, 5, 8, 16]))
    in_windows = _read(text)
    monkeypatch.setattr(stretches, "_SAFE_RUN", re.compile("(?!)"))
    assert in_windows == _read(text), text
