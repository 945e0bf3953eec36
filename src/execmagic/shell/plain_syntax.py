"""Scripts whose syntax bash surely accepts, told without asking bash.

A standby runs its script with ``eval``, whose syntax errors read ``bash: eval: line N``
where ``bash -c`` says ``bash: -c: line N``; so it takes only a script that surely parses
(see :mod:`.standby`).  Most short commands are plain -- ``ls -la``, ``cd data && wc -l
*.csv > counts``, ``echo "$HOME"`` -- and for those the answer is known without asking.

The script is split by the one shell reader (:func:`.sources.source_spellings`); this module is
the small part of bash's grammar checked over those tokens: simple commands of plain words
(quotes, ``$NAME``, no substitution), redirections to a word, joined by ``;`` ``&`` ``&&`` ``||``
``|``, each line complete in itself, comments.  Its *yes* is always right; its *no* only means
"not known here" (the script runs in a new bash).  Whatever it does not know -- reserved words,
brackets of any kind, ``$(…)``, backticks, heredocs, a line continued on the next, characters
bash and the reader might split differently, ``alias``, ``expand_aliases`` or ``posix`` (an
alias could change how a later line parses) -- is a no.
"""

from __future__ import annotations

import copy

from .patterns import lazy_pattern
from .sources import source_spellings
from .words import OPS, Op
from .work import ShellTooComplex, uncollected

__all__ = ["surely_parses"]

#: Words bash reads as grammar at the start of a command (``!`` and ``[[`` included).
_RESERVED = frozenset(["!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi",
                       "for", "function", "if", "in", "select", "then", "time", "until", "while"])
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: ``$NAME`` takes its whole name, and a comment its whole line (the ``(?!…)`` below): read shorter, the rest of either
#: is read the same way anyway, but each is then a second way to read the text -- and a regex asked about text it
#: does not match tries every way, 2**n of them for n such names (``"$AB" * 40 + '$"x"'`` took hours).
_PARAM = rf"\$(?:{_NAME}(?![A-Za-z0-9_])|[0-9?#@*$!-]|\{{(?:{_NAME}|[0-9]+|[?#@*$!-])\}})"
#: How a plain word is spelled: plain characters (none with a meaning to the parser: no quotes, brackets
#: of any kind, ``$``, ``#`` at its start, ``;&|<>``, blanks or control characters), quotes whose
#: insides hold no substitution but ``$NAME``, a backslash and the character after it, ``$NAME``.
#: (Written as the characters it excludes: listing the included ones takes the range ``\u0080-\U0010ffff``,
#: which ``re`` compiles by walking 64k code points -- 8 ms at every import, on the first command's path.)
_PLAIN = r"""[^\x00-\x20"#$&'();<>\\`{|}\x7f]"""
#: A run of plain characters, whole: matched at once (a character a turn of the regex's loop cost most of its time), and
#: never shorter (the ``(?!…)``: taken shorter, the rest of the run is a second way to read the text -- see above).
_PLAINS = rf"{_PLAIN}+(?!{_PLAIN})"
_PIECE = rf"(?:{_PLAINS}|'[^'\n]*'|\"(?:[^\"\\$`\n]|\\[^\n]|{_PARAM})*\"|\\[^\n]|{_PARAM})"
_WORD = lazy_pattern(rf"{_PIECE}(?:{_PIECE}|#)*", often=True)
#: What a plain script is made of, read by one regex before any token: pieces of words, blanks, the
#: operators' characters and comments.  Text with anything else (a bracket, a ``$(``, a backtick) is a
#: no at C speed, however long or deeply nested it is; text made of these is then split and checked.
_PLAIN_TEXT = lazy_pattern(rf"(?:{_PLAINS}|'[^'\n]*'|\"(?:[^\"\\$`\n]|\\[^\n]|{_PARAM})*\"|\\[^\n]|{_PARAM}"
                           r"|\$(?=\")|[ \t\n;&|<>]|#[^\n]*(?![^\n]))*",  # $"…": a locale string, read as "…"
                           often=True)
_ASSIGNMENT = lazy_pattern(rf"{_NAME}\+?=", often=True)
#: ``NAME[`` at a word's start opens a subscript, which bash reads up to its ``]`` across blanks and quotes
#: (``a[1 + 2]=x``).
_SUBSCRIPT = lazy_pattern(rf"{_NAME}\[", often=True)
_REDIRECTS = frozenset({">", ">>", ">&", "<", "<&", "&>", "&>>"})
_JOINS = frozenset({";", "&", "&&", "||", "|"})  # ;; ;& |& and the rest: refused
#: Words that can turn alias expansion on or define an alias while the script runs: a later line could then
#: parse otherwise (even ``bash -n`` would not see it).  Spelled with quotes (``al''ias``) they get by.
_ALIAS = lazy_pattern(r"\balias\b|expand_aliases|BASH_ALIASES|posix")
#: What this check does not vouch for: control characters and blanks other than space, tab and newline
#: (letters to bash, but easy to misjudge), and a line continued on the next.
_UNSURE = lazy_pattern(r"[^\S \t\n]|[\x00-\x08\x0e-\x1f\x7f]|\\\n", often=True)


#: How much of a long script is read first, alone: most refusals come early (a pipe with no command before it, a
#: ``;;``), and a no there is the whole script's no, found without reading all of it (see :func:`_start_refused`).
_FIRST = 4096


def surely_parses(script: str) -> bool:
    """Whether ``bash -c script`` is sure to parse: ``True`` only for scripts in the plain subset above.

    The cycle collector waits until it answers (:func:`~.work.uncollected`): the reading's tokens, a word each, were
    all walked by the collections the check's own look-ups set off after it (a sixth of the check, in a script of
    assignments); the check makes no cycle, and its tokens are freed as it returns."""
    with uncollected():
        if len(script) > 2 * _FIRST and _start_refused(script, _FIRST):
            return False
        return _whole_parses(script)


def _may_alias(script: str) -> bool:
    """Whether :data:`_ALIAS` is in ``script``: looked for only where a word it needs is (found at once, at C speed)."""
    return ("alias" in script or "ALIASES" in script or "posix" in script) and _ALIAS.search(script) is not None


def _start_refused(script: str, first: int) -> bool:
    """Whether the plain start of ``script`` (at most ``first`` characters) holds a token the check refuses.

    Its tokens are the whole script's, all but the last (which the rest may lengthen: ``;`` of ``;;``, part of a
    word), when the whole is plain: the reader looks back, never ahead, in text with no bracket, substitution or
    backtick (a heredoc's ``<<``, which reads ahead, is refused before its body counts).  When the whole is not
    plain its answer is no anyway.  So a refusal here is the whole's; no refusal here tells nothing.
    """
    plain = _PLAIN_TEXT.match(script, 0, first)  # (a star: it always matches, if only nothing)
    try:
        sources = source_spellings(script[:plain.end() if plain else 0])
    except ShellTooComplex:
        return False
    return _last_state(sources[:-1]) == _REFUSED


def _whole_parses(script: str) -> bool:
    """:func:`surely_parses`, reading the whole script."""
    if _may_alias(script) or _UNSURE.search(script) or not _PLAIN_TEXT.fullmatch(script):
        return False
    try:
        sources = source_spellings(script)
    except ShellTooComplex:  # nested in itself past what one reading follows: not known here
        return False
    return _COMPLETE[_last_state(sources)]


def _last_state(sources: list[str]) -> int:
    """The state of :data:`_TABLE` after the tokens spelled ``sources`` (:data:`_REFUSED`: one was refused).

    One look-up a token: a script of 1 MB has some 160,000 tokens, each of which took four calls of :class:`_Line`
    (0.3 s).  A token's kind is known by its spelling alone (no word is spelled as an operator is: the reader
    splits every operator off), found once per spelling.
    """
    kinds, table, state = dict(_OPERATOR_KINDS), _TABLE, 0
    for source in sources:
        kind = kinds.get(source)
        if kind is None:
            kind = kinds[source] = _word_kind(source)
        state = table[state][kind]
    return state


class _Line:
    """The simple commands of one line so far, fed one token at a time."""

    def __init__(self) -> None:
        self._start()

    def _start(self) -> None:
        self.words = 0             # words and redirections of the command being read
        self.leading = True        # nothing but assignments in it yet: its next word is its name
        self.need_command = False  # after | && ||: a command must follow on this line
        self.redirect = ""         # a redirection waiting for its target word

    def complete(self) -> bool:
        return not (self.need_command or self.redirect)

    def takes(self, token: Op | str, source: str) -> bool:
        """Whether ``token`` (read from ``source``) keeps the line plain."""
        return self._operator(token, source) if isinstance(token, Op) else self._word(source)

    def _operator(self, op: str, source: str) -> bool:
        if self.redirect:
            return False
        if source == "\n":  # the line ends: it must be complete, and the next starts afresh
            complete = self.complete()
            self._start()
            return complete
        if op in _REDIRECTS:
            self.redirect = op
            return True
        if op not in _JOINS or not self.words:
            return False
        self.words, self.leading, self.need_command = 0, True, op in ("|", "&&", "||")
        return True

    def _word(self, source: str) -> bool:
        if not _WORD.fullmatch(source) or _SUBSCRIPT.match(source):
            return False
        if self.redirect.endswith("&") and source.startswith("-") and source != "-":
            return False  # after >& or <&, bash takes "-" alone (close) and reads what follows as a new word
        if self.redirect and _ASSIGNMENT.match(source):
            return False  # bash may take an assignment-shaped target for an assignment (">a &>>x=1" is an error)
        if self.leading and not self.redirect and _ASSIGNMENT.match(source) is None:  # the command's name
            if source in _RESERVED:
                return False
            self.leading = False
        self.words, self.need_command, self.redirect = self.words + 1, False, ""
        return True


#: The kinds of token :class:`_Line` tells apart, each with one token of it (an operator, or ``None`` for a word; and
#: its source): the answer to every token of a kind is the answer to that one.
_KINDS: list[tuple[str | None, str]] = [
    (None, "'"),     # a word it refuses: not plainly spelled, or a subscript
    (None, "-x"),    # a word that starts with "-" (not "-" alone)
    (None, "A=1"),   # an assignment
    (None, "if"),    # a reserved word
    (None, "ls"),    # any other word
    (";", "\n"),     # a newline
    (";", ";"), ("&&", "&&"), (">", ">"), (">&", ">&"),  # a join; one that needs a command after it; redirections
    ("<<", "<<"),    # any other operator: refused
]
_WORD_KINDS = range(5)


#: A word's kind, told by one match (a script of assignments has a word of its own on every line: four looks at each
#: took a fifth of the check): a subscript's start, or the whole word plainly spelled (as :data:`_WORD`) and, before
#: the rest of it, the ``-`` of an option or an assignment's ``NAME=`` (plain characters: the rest is then a word's
#: rest, pieces or ``#``, as the whole would be read) or a first character that starts a piece (no ``#``).  No match:
#: a word not plainly spelled.
_KIND = lazy_pattern(rf"(?P<subscript>{_NAME}\[)|(?:(?P<option>-)(?=[\s\S])|(?P<assignment>{_NAME}\+?=)|(?=[^#]))"
                     rf"(?:{_PIECE}|#)*\Z", often=True)
_GROUP_KINDS = {"subscript": 0, "option": 1, "assignment": 2}


def _word_kind(source: str) -> int:
    """The kind of the word spelled ``source`` (an index of :data:`_KINDS`): refused (not plainly spelled, or a
    subscript), an option (``-`` and more), an assignment, a reserved word, any other."""
    found = _KIND.match(source)
    if found is None:
        return 0
    group = found.lastgroup
    return _GROUP_KINDS[group] if group is not None else 3 if source in _RESERVED else 4


def _operator_kind(op: str) -> int:
    """The kind of the operator ``op`` (an index of :data:`_KINDS`)."""
    if op in _REDIRECTS:
        return 9 if op.endswith("&") else 8
    return (7 if op in ("|", "&&", "||") else 6) if op in _JOINS else 10


#: Each operator's kind by its spelling (a newline's ``;`` is spelled ``"\n"``).
_OPERATOR_KINDS = {**{op: _operator_kind(op) for op in OPS}, "\n": 5}


def _state(line: _Line) -> tuple[bool, bool, bool, str]:
    """What of a :class:`_Line` decides its answers to the tokens still to come."""
    return bool(line.words), line.leading, line.need_command, line.redirect


def _table() -> tuple[list[list[int]], list[bool]]:
    """The states a :class:`_Line` goes through, and to which one each kind of token takes it from each (the last
    state: refused, whatever follows); and whether the line is complete in each."""
    lines, states = [_Line()], {_state(_Line()): 0}
    table: list[list[int]] = []
    while len(table) < len(lines):
        row = []
        for op, source in _KINDS:
            line = copy.copy(lines[len(table)])
            if not line.takes(OPS[op] if op else source, source):
                row.append(-1)
                continue
            row.append(states.setdefault(_state(line), len(lines)))
            if row[-1] == len(lines):
                lines.append(line)
        table.append(row)
    refused = len(lines)
    table = [[refused if to < 0 else to for to in row] for row in table] + [[refused] * len(_KINDS)]
    return table, [line.complete() for line in lines] + [False]


_TABLE, _COMPLETE = _table()
_REFUSED = len(_TABLE) - 1
