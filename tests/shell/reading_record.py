"""A seeded corpus of shell texts, and everything the reader makes of each, spelled out whole: to compare readers.

The guard and the standby's check rely on the reader's words to the last field (a word read otherwise can hide a
command), so a reader made faster must read every text as the one before did.  :func:`texts` makes the same few
thousand texts on every run (random pieces of what the walks follow: brackets, quotes, ``$(``, ``${``, ``$((``,
``$[``, backticks, heredocs, escapes, newlines -- and bodies built to sit on each side of what a walk can pass at
once); :func:`spelled` gives every reading of one text (:func:`~execmagic.shell.lexer.tokenize` plain, as the guard
reads it with every body read again as it reads them, and with where each token stands) as text, and
:func:`digest` a short hash of it, recorded in ``reading_recorded.txt`` by the reader these were checked against.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator

from execmagic.shell.ends import Body
from execmagic.shell.lexer import tokenize
from execmagic.shell.sources import source_spans, source_texts
from execmagic.shell.words import Subshells, Word
from execmagic.shell.work import ShellTooComplex

__all__ = ["COUNT", "digest", "spelled", "texts"]

#: What the walks follow, and words that change how they read it.
_PIECES = ["(", ")", "$(", "$((", "))", "${", "}", "`", "\\`", "'", '"', "\\", " ", "\n", ";", "|", "&", "<(", ">(",
           "<<E\n", "<<'E'\n", "<<-E\n", "E\n", "\tE\n", "E)", "case x in a) ", "esac", "#", "a", "x", "1", "echo ",
           "=(", "x=(", "for ((", "$'", '$"', '\\"', ">&", "1>&", "2>&1", "<", ">", "<<<", "$[", "]", "[", "((",
           '"$(', "$x", "$1", "$$", "${x:-y}", "$((x+1))", "$(a)", ":", "-", "{", ",", "..", "*", "cat <<EOF\n",
           "EOF\n", "<<", "'a b'", '"$f"', "$#"]
_CHARS = "()[]{}$`'\" \n;<>&|#\\ax-"
#: What may stand in a body: plain, quoted, a ``$`` of each kind, redirections, and what ends or opens something.
_BODY = ["a", " ", "x", '"$f"', '"a b"', "'q'", "'", '"', "<", ">", ">>", ">&", "<<", "<(", "$", "$x", "$1", "$(",
         "$((", "${", "$[", "$'", '$"', "$$", ")", "(", "#", "\n", "case ", "esac", "\\", "`", ";", "}", "]", "))",
         "+", "-", "*", "&", "|", ":-", "/", ".", '"$"', '"$(x)"', '"${y}"', "'$('"]
_PASSED = ["a", " ", "x", '"$f"', '"a b"', "'q'", "< ", ">", ">>", "$x", "$1", "-", "/", "."]  # (of _BODY, what a walk passes)
_OPENERS = ["$(", '"$(', "$((", "${", '"${', "$[", "((", "`", "<(", "echo $(", "x=$((", 'echo "${']
_LINES = ['for f in data/*.csv; do\n  sort "$f" > "out/$(basename "$f" .csv).txt"\ndone\n',
          'if [ -s a.csv ]; then\n  echo "$(wc -l < a.csv) rows"\nelse\n  echo "empty" >&2\nfi\n',
          'case "$day" in\n  *.gz) zcat "$day" | head -3 ;;\n  *) head -3 "$day" ;;\nesac\n',
          'count() {\n  grep -c "$1" x.csv || true\n}\ncount ERROR\n',
          "cat > out.txt <<EOF\nname: $N\ndate: $(date +%F)\nEOF\n", "cat <<'EOF' | python3 -\nimport sys\nEOF\n",
          'n=$((N + 1)); echo "${N:-none} $n"\n', 'while read -r line; do echo "$line"; done < log.txt\n',
          'export PATH="$HOME/bin:$PATH"; ls -la *.csv 2>/dev/null\n', "grep -c 'ERROR' a.csv || true\n",
          'x=$(( (a + 1) * 2 )); y=$[x + 1]; ((x++)); echo `date` $(echo $(echo "$(id -u)"))\n']
#: How many texts :func:`texts` makes.
COUNT = 6000


def texts() -> Iterator[str]:
    """The corpus, the same on every run."""
    rng = random.Random(20261128)
    for index in range(COUNT):
        kind = index % 6
        if kind == 0:  # pieces at random
            yield "".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 40)))
        elif kind == 1:  # characters at random
            yield "".join(rng.choice(_CHARS) for _ in range(rng.randrange(1, 60)))
        elif kind in (2, 3):  # an opener, a body of what may or may not be passed at once, a closer, more
            body = "".join(rng.choice(_BODY) for _ in range(rng.randrange(0, 8)))
            closer = rng.choice([")", "}", "))", "]", "`", ")", ") ", '"', ""])
            rest = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 6)))
            yield rng.choice(["", "echo ", "a ", "\n"]) + rng.choice(_OPENERS) + body + closer + rest
        elif kind == 4:  # lines of a notebook's script, a piece or two of random text between them
            yield "".join(rng.choice(_LINES) + rng.choice(["", "", *_PIECES]) for _ in range(rng.randrange(1, 6)))
        elif index % 60 == 35:  # a long body of what a walk only passes, longer than a match is tried on or not
            body = "".join(rng.choice(_PASSED if rng.random() > 0.0005 else _BODY) for _ in range(rng.randrange(300, 1500)))
            yield rng.choice(["echo $(", 'echo "$(', "x=$("]) + body + rng.choice([")", ') "', "`)", "$()", ""]) + " y"
        elif index % 60 == 5:  # long: walks that run out of text, and later ones begun inside what they passed
            yield "".join(rng.choice(_PIECES if index % 120 == 5 else _CHARS) for _ in range(rng.randrange(500, 3000)))
        else:  # pieces at random, each maybe doubled
            yield "".join(rng.choice(_PIECES) * rng.choice([1, 1, 2]) for _ in range(rng.randrange(1, 25)))


def _word(token: object) -> str:
    """One token, every field of it (a body's type too: a :class:`Body` is read again through its ends)."""
    if not isinstance(token, Word):
        if isinstance(token, Subshells):
            return f"Subshells {token!r} {_word(token.word)}"
        return f"{type(token).__name__} {token!r}"
    fields = {"code": [(type(body).__name__, str(body)) for body in token.code], "feed": token.feed,
              "quoted": token.quoted, "shown": str(token.shown), "live": token.live, "plain": token.plain,
              "subs": None if token.subs is None else sorted((at, end, type(body).__name__, str(body))
                                                               for at, (end, body) in token.subs.items())}
    return f"{type(token).__name__} {str(token)!r} {fields!r}"


def _reading(text: str, depth: int, **options: bool) -> list[str]:
    """A reading of ``text``, and (to ``depth``) of every body it read as one the guard reads again."""
    try:
        tokens, skeleton = tokenize(text, **options)
    except ShellTooComplex:
        return ["too complex"]
    lines = [*map(_word, tokens), f"skeleton {skeleton!r}"]
    for token in tokens if depth else ():
        for body in getattr(token, "code", ()):
            if isinstance(body, Body):
                lines += ["body {", *_reading(body, depth - 1, **options), "}"]
    return lines


def spelled(text: str) -> str:
    """Every reading of ``text``, as text."""
    lines = ["plain", *_reading(text, 0), "guard", *_reading(text, 3, noted=True, joined=True)]
    try:
        lines += ["spans", repr(source_spans(text)[1]), "texts", repr(source_texts(text)[1])]
    except ShellTooComplex:
        lines.append("sources too complex")
    return "\n".join(lines)


def digest(text: str) -> str:
    return hashlib.sha256(spelled(text).encode("utf-8", "surrogatepass")).hexdigest()[:8]


if __name__ == "__main__":  # the record: python tests/shell/reading_record.py > tests/shell/reading_recorded.txt
    for text in texts():
        print(digest(text))
