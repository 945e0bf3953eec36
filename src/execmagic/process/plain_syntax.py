"""Scripts whose syntax bash surely accepts, told without asking bash.

A standby runs its script with ``eval``, whose syntax errors read ``bash: eval: line N``
where ``bash -c`` says ``bash: -c: line N``; so it takes only a script that surely parses
(see :mod:`.standby`).  Most short commands are plain -- ``ls -la``, ``cd data && wc -l
*.csv > counts``, ``echo "$HOME"`` -- and for those the answer is known without asking: this
module recognises a small part of bash's grammar (simple commands of words, quotes,
``$NAME``, redirections to a word, joined by ``;`` ``&`` ``&&`` ``||`` ``|``, one line at a
time, comments).  Its *yes* is always right; its *no* only means "not known here" (the script
runs in a new bash).  Whatever it does not know -- reserved words, brackets of any kind,
``$(…)``, backticks, heredocs, a line continued on the next, ``alias``, ``expand_aliases`` or
``posix`` (an alias could change how a later line parses) -- is a no.
"""

from __future__ import annotations

import re

__all__ = ["surely_parses"]

#: Words bash reads as grammar at the start of a command (``!`` and ``[[`` included).
_RESERVED = frozenset(["!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi",
                       "for", "function", "if", "in", "select", "then", "time", "until", "while"])
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PARAM = rf"\$(?:{_NAME}|[0-9?#@*$!-]|\{{(?:{_NAME}|[0-9]+|[?#@*$!-])\}})"
#: What a word is made of: plain characters (none with a meaning to the parser: no quotes, brackets
#: of any kind, ``$``, ``#`` at its start, ``;&|<>``, blanks or control characters), quotes whose
#: insides hold no substitution but ``$NAME``, a backslash and the character after it, ``$NAME``.
_PLAIN = r"[A-Za-z0-9_./:,+=%@^~!?*\[\]\-\u0080-\U0010ffff]"
_PIECE = rf"(?:{_PLAIN}|'[^']*'|\"(?:[^\"\\$`\n]|\\[^\n]|{_PARAM})*\"|\\[^\n]|{_PARAM})"
_WORD = re.compile(rf"{_PIECE}(?:{_PIECE}|#)*")
_ASSIGNMENT = re.compile(rf"{_NAME}\+?=")
_REDIRECT = re.compile(r"[0-9]*(?:>>|>&|>|<&|<|&>>|&>)[ \t]*")
_JOIN = re.compile(r";;|;&|&&|\|\||[;&|]")  # ;; and ;& (a case's) are bash's tokens too: refused below
_BLANKS = re.compile(r"[ \t]*")
#: Words that can turn alias expansion on or define an alias while the script runs: a later line could then
#: parse otherwise (even ``bash -n`` would not see it).  Spelled with quotes (``al''ias``) they get by.
_ALIAS = re.compile(r"\balias\b|expand_aliases|BASH_ALIASES|posix")
#: ``NAME[`` at a word's start opens a subscript, which bash reads up to its ``]`` across blanks and quotes
#: (``a[1 + 2]=x``).
_SUBSCRIPT = re.compile(rf"{_NAME}\[")
#: Digits right before ``<`` or ``>`` are a redirection's descriptor (``2>&1``), not a word.
_DESCRIPTOR = re.compile(r"[0-9]+[<>]")


def surely_parses(script: str) -> bool:
    """Whether ``bash -c script`` is sure to parse: ``True`` only for scripts in the plain subset above."""
    if _ALIAS.search(script):
        return False
    return all(_line_parses(line) for line in script.split("\n"))


def _line_parses(line: str) -> bool:
    """One line of simple commands, complete in itself (no quote or ``&&`` left open for the next)."""
    at, end = 0, len(line)
    words = 0             # words and redirections of the command being read
    leading = True        # nothing but assignments in it yet: its next word is its name
    need_command = False  # after | && ||: a command must follow on this line
    while True:
        at = _BLANKS.match(line, at).end()  # type: ignore[union-attr]  # matches the empty string too
        if at >= end or line[at] == "#":
            return not need_command
        redirect = _REDIRECT.match(line, at)
        if redirect is not None:
            target = _word(line, redirect.end())
            if target is None:
                return False
            closes = redirect.group().rstrip(" \t").endswith("&") and target.group().startswith("-")
            if closes and target.group() != "-":
                return False  # after >& or <&, bash takes "-" alone (close) and reads what follows as a new word
            at, words, need_command = target.end(), words + 1, False
            continue
        join = _JOIN.match(line, at)
        if join is not None:
            if not words or join.group() in (";;", ";&"):
                return False
            at, words, leading = join.end(), 0, True
            need_command = join.group() in ("|", "&&", "||")
            continue
        word = _word(line, at)
        if word is None:
            return False
        text = word.group()
        if leading and _ASSIGNMENT.match(text) is None:  # the command's name
            if text in _RESERVED:
                return False
            leading = False
        at, words, need_command = word.end(), words + 1, False


def _word(line: str, at: int) -> re.Match[str] | None:
    """The plain word at ``at``, or ``None``: none there, or one bash does not read as the plain word it looks."""
    if _DESCRIPTOR.match(line, at):
        return None
    word = _WORD.match(line, at)
    return None if word is None or _SUBSCRIPT.match(word.group()) else word
