"""Every reading of shell text does work linear in its length, whatever the text: nesting included.

The standby's check (:func:`surely_parses`) runs on every ``%exec``; ``echo`` and 4,000 ``(`` took
11.8 s there, as the reader looked through every open frame at every step.  The work is counted,
not timed (``tests/work_count.py``): twice the text must cost about twice the work.
"""

from __future__ import annotations

import random

import pytest

from execmagic.engine.contexts import contexts_at
from execmagic.shell.lexer import tokenize
from execmagic.shell.plain_syntax import surely_parses
from work_count import growth

#: Linear work doubles with the text; quadratic work quadruples.  Between, room for a constant's share.
LINEAR = 2.6


def _random(alphabet: str, n: int) -> list[str]:
    """Eight random texts of ``n`` characters: the work of one depends on its luck, of eight on its length."""
    rngs = [random.Random(n * 8 + k) for k in range(8)]
    return ["".join(rng.choice(alphabet) for _ in range(n)) for rng in rngs]


def _repeat(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


#: Text read as deeply nested, or read again from inside itself, by the readings before: each a generator
#: of ``n`` characters or so.
NESTED = {
    "echo then ( alone": lambda n: "echo " + "(" * n,
    "$( unclosed": lambda n: "echo " + "$(" * (n // 2),
    "$( closed": lambda n: "echo " + "$(" * (n // 4) + ")" * (n // 4),
    "$(( unclosed": lambda n: "echo " + "$((" * (n // 3),
    "$(( closed": lambda n: "echo " + "$((" * (n // 6) + "))" * (n // 6),
    "${ unclosed": lambda n: "echo " + "${" * (n // 2),
    '"$( unclosed': lambda n: "echo " + '"$(' * (n // 3),
    "( closed": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "NAME=( unclosed": lambda n: "x=" + "(" * n,
    "for ((": lambda n: _repeat("for ((", n),
    "heredoc of $(": lambda n: "cat <<EOF\n" + _repeat("$(a\n", n),
    "heredocs nested": lambda n: _repeat("cat <<EOF\n$(", n),
    "backticks": lambda n: "echo " + "`" * n,
    "brackets at random": lambda n: _random("()[]{}$`'\" ", n),
    "shell at random": lambda n: _random("()[]{}'\"`$;|&<>#\\\n \t=:-/*!?~abcrmEOF01", n),
    "$ in one quote": lambda n: '"' + "$a" * (n // 2) + '"',
    "<< on one line": lambda n: "cat" + " <<A" * (n // 4) + "\n",
    "a plain script": lambda n: _repeat('IN="data/$N.csv"  # in\ncut -d, -f2 "$IN" | sort > "${OUT}" && echo ok\n', n),
    "a notebook's script": lambda n: _repeat('for f in *.csv; do\n  wc -l < "$f" > "out/$(basename "$f")"\ndone\n', n),
}
PASSES = {
    "tokenize": tokenize,
    "surely_parses": surely_parses,
    "templating (bash)": lambda text: contexts_at(text + "{x}", [(len(text), len(text) + 3)], "bash"),
}


@pytest.mark.parametrize("reading", PASSES)
@pytest.mark.parametrize("corpus", NESTED)
def test_twice_the_text_is_twice_the_work(corpus, reading):
    assert growth(NESTED[corpus], PASSES[reading], 600) < LINEAR


def test_four_thousand_open_parentheses_are_read_at_once():
    """The case that froze the kernel: the standby's check says "not known here" (a new bash runs it)."""
    assert not surely_parses("echo " + "(" * 4000)
    assert not surely_parses("echo " + "$(" * 4000)


def test_what_bash_runs_in_arithmetic_is_still_seen():
    """Read once, a ``$((`` inside ``$((`` still shows what runs in it; ``$((a); b)`` runs ``a`` and ``b``."""
    words = tokenize("echo $(( 1 + $(( 2 * $(touch marker) )) ))")[0]
    assert any("touch marker" in body for word in words for body in getattr(word, "code", ()))
    words = tokenize("echo $((touch marker); true)")[0]
    assert any("touch marker" in body for word in words for body in getattr(word, "code", ()))


def test_a_substitution_with_no_closer_after_it_is_not_walked():
    """A ``$(`` or ``${`` with no ``)`` or ``}`` anywhere after it cannot close: every short heredoc body with an
    open ``$(`` (or a long tail after an open ``${``) was walked to its end, about 510 lines of Python per
    heredoc, then about 260, now about 150 (read at once, see ``test_plain_heredoc.py``)."""
    from work_count import work

    heredocs = "cat <<EOF\n$(a\n'b\"\nEOF\n" * 200
    assert work(lambda: tokenize(heredocs)) < 200 * 200
    tail = "echo ${a" + " x" * 400
    assert work(lambda: tokenize(tail)) < 1000
    assert [w.code for w in tokenize("cat <<EOF\n$(a\n'b\nEOF\n")[0][:3] if hasattr(w, "code")][-1] == ("a\n'b\n",)


def test_walks_that_run_out_read_the_text_after_them_once():
    """A run of ``((`` at a command's start asks a walk for each whether it is arithmetic; where each runs out of
    text it read the same tail again (ten steps a character here, twenty a character for forty ``(``; in 1 MB of
    random brackets some ten walks to the end).  A walk that opens a substitution another walk found never ends
    runs out there too: the tail is read once."""
    from execmagic.shell.work import counted

    text = "(" * 20 + " $( " + "'a' " * 2000 + "'))'"
    with counted() as steps:
        tokenize(text, noted=True)
    assert steps.taken < 2 * len(text)


def test_runs_of_empty_backticks_and_plain_heredocs_are_read_at_once():
    """``````…`` (each pair an empty substitution) was thirteen lines of Python a pair, a ``cat <<EOF`` line four
    turns of the reader's loop: both are read in one step now (the readings themselves are compared with the
    piece-by-piece ones in ``test_plain_heredoc.py`` and ``test_shell_lex.py``)."""
    from work_count import work

    assert work(lambda: tokenize("echo " + "`" * 2000)) < 2000
    assert work(lambda: tokenize("cat <<EOF\nx\nEOF\n" * 200)) < 150 * 200


def test_a_plain_script_is_read_a_word_at_a_time():
    """A script the standby takes, 1 MB of it, took 0.64-0.78 s in its check: each quoted word was read a piece at a
    time (a turn of the reader's loop each), each word made anew, and the grammar fed each token through four
    calls.  Now about 780 lines of Python for these two lines, where it took about 1,800."""
    from work_count import work

    script = 'IN="data/$N.csv"  # where\ngrep -v \'^#\' "$IN" | cut -d, -f2 > "out/${N}.txt" && echo "done: $N" >> log\n' * 200
    assert surely_parses(script)
    assert work(lambda: surely_parses(script)) < 1000 * 200
