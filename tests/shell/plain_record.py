"""A seeded corpus of scripts, and the standby check's answer to each: to compare checks.

The standby's check (:func:`~execmagic.shell.plain_syntax.surely_parses`) decides what a persistent shell may run:
a *yes* to a script bash would not parse can hang a cell, a *no* to one it would costs a new bash.  A check made
faster must answer every script as the one before did.  :func:`texts` makes the same few thousand scripts on every
run -- the pieces that decide the answer (words of every kind a token can be: options, assignments, subscripts,
reserved words, quotes, ``$NAME``; every operator; blanks, newlines, comments, control characters, the words that
turn aliases on), lines of an ordinary script, and long scripts (past what the check reads first alone, with a
refusal early, late or nowhere); :func:`answers` spells their answers, recorded in ``plain_recorded.txt`` by the
check these were checked against (one line per hundred scripts, ``y`` or ``n`` each).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from execmagic.shell.plain_syntax import surely_parses

__all__ = ["COUNT", "PER_LINE", "answers", "texts"]

#: Words of each kind the check tells apart, and words nearly so.
_WORDS = ["ls", "-la", "-", "--", "-x=1", "x=1", "A+=2", "_a=", "a==b", "1a=x", "a=[x]", "a[1]=x", "a[", "a+b=1",
          "a=-x", "=x", "'q q'", "'it''s'", '"d $HOME ${X}"', '"\\""', '"$"', '"$1$#"', "\\;", "\\\\", "$1", "$?",
          "${#}", "${X}", "${X:-y}", "$$", "$#a", "$AB", "$A_b9", '$"x"', "$'x'", "a#b", "#c", "if", "then", "fi",
          "done", "in", "time", "!", "[[", "]]", "{", "}", "case", "function", "coproc", "[", "]", "*", "~", "é",
          "✓", "a{b", "a}b", "x=$Y", "x=\"$Y\"", "x='y'", "alias", "unalias", "expand_aliases", "BASH_ALIASES",
          "posix", "al''ias", "a\rb", "a\x01b", "a\x7fb", "a\u00a0b", "a\u2028b", "a`b`", "$(x)", "a(b", "a)b"]
_OPERATORS = [";", "&&", "||", "|", "&", ">", ">>", "2>&1", "<", "&>", ">&", "<&", "&>>", "2>", "1>", ">|", "<>",
              ";;", ";&", "|&", "<<", "<<<", "<<-", "(", ")", ">&-", "<&-", ">& -", "99999999999999999999>"]
_BLANKS = [" ", " ", " ", "\t", "\n", "\n", "", "  # a comment\n", "\\\n", "\r\n", "\v"]
_LINES = ['IN="data/raw.csv"  # where it goes', "sort data/raw.csv | uniq -c | sort -rn > out/counts.txt",
          'echo "rows: $N in ${N}" >> log.txt', "mkdir -p out/3 && cd out || exit 1",
          'python3 prep.py --in "$IN" --out results.tsv --limit=3 2> err.log &', "# step 4: sort the N file",
          'export PATH="$HOME/bin:$PATH"; ls -la *.csv data/*.gz 2>/dev/null', "grep -c 'ERROR' log.txt || true",
          "wait; test -s out.txt && wc -l < out.txt", "v1=x", "N=123", "A=1 B=2 env"]
#: What a long script may hold somewhere: each a refusal (or, the last ones, nothing to refuse).
_HOSTILE = ["|| x", "a ;; b", "if true", "echo $(date)", "echo `id`", "cat <<EOF", "a |", "x=(1 2)", "echo 'open",
            'echo "open', "shopt -s expand_aliases", "a[1]=x", "echo a\rb", "> ", "{ ls; }", "done", "ls", "x=1",
            "# done", "N=2 cmd", "ls -la", "cd out"]
#: How many scripts :func:`texts` makes, and how many answers a line of the record holds.
COUNT = 6000
PER_LINE = 100


def texts() -> Iterator[str]:
    """The corpus, the same on every run."""
    rng = random.Random(20261128)
    for index in range(COUNT):
        kind = index % 5
        if kind == 0:  # words and operators at random, blanks between them or not
            pieces = _WORDS + _OPERATORS
            yield "".join(rng.choice(pieces) + rng.choice(_BLANKS) for _ in range(rng.randrange(1, 12)))
        elif kind == 1:  # characters at random
            yield "".join(rng.choice("aZ_1=+-[]#$'\" \t\n;&|<>\\{}!?@*`()é\r\x00.,/~")
                          for _ in range(rng.randrange(1, 40)))
        elif kind == 2:  # lines of an ordinary script, now and then a word or an operator among them
            yield "".join(rng.choice(_LINES) + rng.choice(["\n", "\n", "; ", " && ", " | ", " ", rng.choice(_WORDS),
                                                           rng.choice(_OPERATORS)]) for _ in range(rng.randrange(1, 8)))
        elif kind == 3:  # commands of plain words: the scripts the check takes, and the same with one word changed
            words = [rng.choice(_WORDS[:16] + ["cmd", "x", "a=b"]) for _ in range(rng.randrange(1, 6))]
            if rng.random() < 0.5:
                words[rng.randrange(len(words))] = rng.choice(_WORDS)
            yield " ".join(words) + rng.choice(["", "\n", " > out", " | wc -l", "; ls", " &"])
        elif index % 25 == 4:  # long, past what is read first alone: a refusal early, late, or none
            yield _long(rng)
        else:  # an assignment or an option at a command's start or after a join, and the words after it
            yield "".join(rng.choice(["x=1 ", "-x ", "a[1]=2 ", "A=", "if ", "ls ", ""]) + rng.choice(_WORDS)
                          + rng.choice(_OPERATORS + _BLANKS) for _ in range(rng.randrange(1, 6)))


def _long(rng: random.Random) -> str:
    """Lines of an ordinary script past 8 KB, one hostile piece among them at a place at random."""
    lines = [rng.choice(_LINES) for _ in range(rng.randrange(200, 600))]
    lines.insert(rng.choice([rng.randrange(0, 60), rng.randrange(len(lines) + 1)]), rng.choice(_HOSTILE))
    return "\n".join(lines) + rng.choice(["", "\n", "\n", " |", " \\"])


def answers() -> str:
    """The check's answer to every script of :func:`texts`, as the record spells them."""
    marks = "".join("y" if surely_parses(text) else "n" for text in texts())
    return "\n".join(marks[start:start + PER_LINE] for start in range(0, len(marks), PER_LINE))


if __name__ == "__main__":  # the record: python tests/shell/plain_record.py > tests/shell/plain_recorded.txt
    print(answers())
