"""Shell words: shell text split into words and operators as a POSIX shell splits it.

The rules judge commands, not text, so the text is first split the way a shell would: quotes
removed (what was quoted is remembered -- quoted text is data), ``$(…)``, backticks and ``<(…)``
kept as written but their bodies noted (the shell runs them), heredoc bodies attached to the word
that was their delimiter.  Nothing is expanded: ``$VAR`` and ``~`` stay as written, and each word
remembers where in it the shell would expand something (a ``$`` or backtick outside single quotes), so that
``:mod:`.names``` expands ``"$D"`` but leaves ``'$D'`` -- and ``awk '{print $NF}'`` -- alone.

This is a lexer for judging, not for running: odd text (an unclosed quote, an unbalanced
parenthesis) is split as far as it goes, never raised on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["REDIRECTS", "STDIN_REDIRECTS", "WRITES", "Op", "Word", "backtick_end", "live_substitutions", "paren_end",
           "tokenize", "unescape"]


class Word(str):
    """A shell word after quote removal (``$VAR``, ``~`` and ``$(…)`` are left as written).

    ``code``: the bodies of the ``$(…)``, backticks and ``<(…)`` in it that the shell runs (not those
    in single quotes); ``feed``: the body when the word is a process substitution ``<(…)``;
    ``quoted``: some of it was quoted; ``shown``: how it is shown (a heredoc shows its delimiter);
    ``live``: where in the text each ``$`` or backtick the shell expands starts (``None``: not known, all count).
    """

    code: tuple[str, ...]
    feed: str | None
    quoted: bool
    shown: str
    live: tuple[int, ...] | None

    def __new__(cls, text: str, code: Iterable[str] = (), feed: str | None = None, quoted: bool = False,
                shown: str | None = None, live: Iterable[int] | None = None) -> Self:
        word = super().__new__(cls, text)
        word.code, word.feed, word.quoted = tuple(code), feed, quoted
        word.shown = text if shown is None else shown
        word.live = None if live is None else tuple(live)
        return word


class Op(str):
    """An operator token: ``;`` (also for a newline), ``&&``, ``|``, ``(``, ``>``, ``<<<``, …"""


_OPERATORS = ("<<<", "<<-", "&>>", ";;&", "<<", ">>", "&&", "||", ";;", ";&", "|&", "&>", ">|", ">&", "<&", "<>",
              "<", ">", ";", "&", "|", "(", ")")
REDIRECTS = frozenset({"<<<", "<<-", "&>>", "<<", ">>", "&>", ">|", ">&", "<&", "<>", "<", ">"})
STDIN_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_PLAIN = re.compile(r"[^\s'\"\\$`;&|()<>#]+")
_DQ_PLAIN = re.compile(r'[^"\\$`]+')
_PAREN_PLAIN = re.compile(r"[^()'\"\\`]+")
_LIVE = re.compile(r"\\.|\$\(|`", re.DOTALL)
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_ANSI_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
               "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def unescape(text: str) -> str:
    """``$'…'`` (and ``echo -e``/``printf``) escapes: ``\\n`` is a newline, ``\\x41`` an A."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _ANSI_CHARS.get(code, "\\" + code)

    return _ANSI_ESCAPE.sub(one, text) if "\\" in text else text


def _backtick(text: str, start: int) -> tuple[str, int]:
    """The body of the backticks opened just before ``start``, and the index after the closing one."""
    i = start
    while i < len(text) and text[i] != "`":
        i += 2 if text[i] == "\\" else 1
    return re.sub(r"\\([`$\\])", r"\1", text[start:i]), i + 1


def _dquote_end(text: str, start: int) -> int:
    """The index after the ``"`` that closes the double quotes opened just before ``start``."""
    i = start
    while i < len(text):
        run = _DQ_PLAIN.match(text, i)
        if run:
            i = run.end()
            continue
        if text[i] == '"':
            return i + 1
        if text[i] == "\\":
            i += 2
        elif text.startswith("$(", i):
            i = _paren_end(text, i + 2) + 1
        elif text[i] == "`":
            i = _backtick(text, i + 1)[1]
        else:
            i += 1
    return len(text)


def _paren_end(text: str, start: int) -> int:
    """The index of the ``)`` that closes the ``(`` just before ``start`` (quotes respected), or the end."""
    depth, i = 1, start
    while i < len(text):
        run = _PAREN_PLAIN.match(text, i)
        if run:
            i = run.end()
            continue
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "'":
            close = text.find("'", i + 1)
            i = len(text) if close < 0 else close + 1
        elif char == '"':
            i = _dquote_end(text, i + 1)
        elif char == "`":
            i = _backtick(text, i + 1)[1]
        else:
            depth += 1 if char == "(" else -1
            if depth == 0:
                return i
            i += 1
    return len(text)


def live_substitutions(text: str) -> Iterator[str]:
    """The ``$(…)`` and backtick bodies a shell runs when it expands ``text`` (an unquoted heredoc, ``${…}``)."""
    i = 0
    while True:
        match = _LIVE.search(text, i)
        if match is None:
            return
        if match.group() == "$(":
            end = _paren_end(text, match.end())
            if not text.startswith("(", match.end()):  # $((…)) is arithmetic
                yield text[match.end():end]
            i = end + 1
        elif match.group() == "`":
            body, i = _backtick(text, match.end())
            yield body
        else:
            i = match.end()


def paren_end(text: str, start: int) -> int:
    """The index of the ``)`` closing the ``(`` just before ``start`` (quotes respected), or the end of ``text``."""
    return _paren_end(text, start)


def backtick_end(text: str, start: int) -> int:
    """The index after the backtick closing the one just before ``start``."""
    return _backtick(text, start)[1]


class _Lexer:
    """Shell text → words and operators, as a POSIX shell splits it.

    It keeps what the rules need: which text was quoted (data), which was live code
    (``$(…)``, backticks, ``<(…)``), heredoc bodies (each found with one regex search,
    so a long heredoc costs little), and a skeleton of the text with quoted parts blanked
    -- what the fork-bomb pattern reads, so ``echo ':(){ :|:& };:'`` is not one.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.tokens: list[Word | Op] = []
        self.skeleton: list[str] = []
        self.heredocs: list[tuple[int, str, bool, bool]] = []  # token index, delimiter, strip tabs, quoted
        self.delimiter_next: str | None = None
        self._new_word()

    def _new_word(self) -> None:
        self.parts: list[str] = []
        self.code: list[str] = []
        self.feed: str | None = None
        self.quoted = False
        self.started = False
        self.live: list[int] = []
        self.length = 0

    def _add(self, piece: str, quoted: bool = False, skeleton: str | None = None) -> None:
        self.parts.append(piece)
        self.length += len(piece)
        self.started = True
        self.quoted |= quoted
        self.skeleton.append(piece if skeleton is None else skeleton)

    def _end_word(self) -> None:
        if not self.started:
            return
        word = Word("".join(self.parts), self.code, self.feed, self.quoted, live=self.live)
        if self.delimiter_next is not None:
            self.heredocs.append((len(self.tokens), word, self.delimiter_next == "<<-", word.quoted))
            self.delimiter_next = None
        self.tokens.append(word)
        self._new_word()

    def _operator(self, op: str) -> None:
        self.tokens.append(Op(op))
        self.skeleton.append(op)

    def run(self) -> list[Word | Op]:
        text = self.text
        while self.i < len(text):
            plain = _PLAIN.match(text, self.i)
            if plain:
                self._add(plain.group())
                self.i = plain.end()
                continue
            self._step(text[self.i])
        self._end_word()
        self._read_heredocs()
        return self.tokens

    def _step(self, char: str) -> None:
        text, i = self.text, self.i
        if char == "\n":
            self._end_word()
            self._operator(";")
            self.i += 1
            self._read_heredocs()
        elif char.isspace():
            self._end_word()
            self.skeleton.append(char)
            self.i += 1
        elif char == "#" and not self.started:  # a comment, to the end of the line
            end = text.find("\n", i)
            self.i = len(text) if end < 0 else end
        elif char == "#":
            self._add("#")
            self.i += 1
        elif char == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            self._add(text[i + 1:end], quoted=True, skeleton="''")
            self.i = end + 1
        elif char == '"':
            self._double_quoted()
        elif char == "\\":
            if text.startswith("\\\n", i):  # a line continuation
                self.i += 2
            else:
                self._add(text[i + 1:i + 2], quoted=True, skeleton="''")
                self.i += 2
        elif char == "$":
            self._dollar()
        elif char == "`":
            body, self.i = _backtick(text, i + 1)
            self.code.append(body)
            self.live.append(self.length)
            self._add(f"`{body}`", skeleton="``")
        elif char in "<>" and text.startswith("(", i + 1):
            self._process_substitution()
        else:
            self._redirect_or_operator()

    def _double_quoted(self) -> None:
        text, i, parts = self.text, self.i + 1, []
        while i < len(text) and text[i] != '"':
            run = _DQ_PLAIN.match(text, i)
            if run:
                parts.append(run.group())
                i = run.end()
            elif text[i] == "\\":
                after = text[i + 1:i + 2]
                parts.append(after if after in '$`"\\' else ("" if after == "\n" else "\\" + after))
                i += 2
            elif text[i] == "$":
                self.live.append(self.length + sum(map(len, parts)))
                i = self._expansion(i, parts)
            else:
                body, i = _backtick(text, i + 1)
                self.code.append(body)
                self.live.append(self.length + sum(map(len, parts)))
                parts.append(f"`{body}`")
        self._add("".join(parts), quoted=True, skeleton='""')
        self.i = i + 1

    def _expansion(self, i: int, parts: list[str]) -> int:
        """``$(…)``, ``$((…))``, ``${…}`` or a plain ``$`` at ``i``: add it to ``parts``; the index after it."""
        text = self.text
        if text.startswith("$(", i):
            end = _paren_end(text, i + 2)
            if text.startswith("$((", i):  # arithmetic: only the substitutions inside it run
                self.code.extend(live_substitutions(text[i + 3:end]))
            else:
                self.code.append(text[i + 2:end])
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("${", i):
            end = text.find("}", i)
            end = len(text) if end < 0 else end
            self.code.extend(live_substitutions(text[i + 2:end]))
            parts.append(text[i:end + 1])
            return end + 1
        parts.append("$")
        return i + 1

    def _dollar(self) -> None:
        text, i = self.text, self.i
        if text.startswith("$'", i):  # ANSI-C quoting
            end = i + 2
            while end < len(text) and text[end] != "'":
                end += 2 if text[end] == "\\" else 1
            self._add(unescape(text[i + 2:end]), quoted=True, skeleton="''")
            self.i = end + 1
            return
        parts: list[str] = []
        self.live.append(self.length)
        self.i = self._expansion(i, parts)
        self._add("".join(parts), skeleton="$" if parts == ["$"] else "$()")

    def _process_substitution(self) -> None:
        text, i = self.text, self.i
        end = _paren_end(text, i + 2)
        body = text[i + 2:end]
        self.code.append(body)
        if not self.started and text[i] == "<":
            self.feed = body
        self._add(text[i:end + 1], skeleton="<()")
        self.i = end + 1

    def _redirect_or_operator(self) -> None:
        text, i = self.text, self.i
        if text[i] in "<>" and self.started and not self.quoted and "".join(self.parts).isdigit():
            self._new_word()  # "2>": the digits name a file descriptor, they are not a word
        else:
            self._end_word()
        op = next(o for o in _OPERATORS if text.startswith(o, i))
        self._operator(op)
        self.i += len(op)
        if op in ("<<", "<<-"):
            self.delimiter_next = op

    def _read_heredocs(self) -> None:
        """Heredoc bodies start on the line after their ``<<``: each becomes the word its delimiter was."""
        text = self.text
        for index, delimiter, strip_tabs, quoted in self.heredocs:
            end_line = re.compile("^" + ("\t*" if strip_tabs else "") + re.escape(delimiter) + "$", re.MULTILINE)
            found = end_line.search(text, self.i)
            end, resume = (found.start(), found.end() + 1) if found else (len(text), len(text))
            body = text[self.i:end]
            live = () if quoted else tuple(live_substitutions(body))
            dollars = () if quoted else (m.start() for m in re.finditer(r"\$", body))
            self.tokens[index] = Word(body, live, quoted=quoted, shown=delimiter, live=dollars)
            self.i = resume
        self.heredocs = []



def tokenize(text: str) -> tuple[list[Word | Op], str]:
    """The words and operators of shell ``text``, and its skeleton: the text with quoted parts blanked.

    The skeleton is what text-shaped rules read (the fork-bomb pattern), so that
    ``echo ':(){ :|:& };:'`` -- data -- is not taken for one.
    """
    lexer = _Lexer(text)
    tokens = lexer.run()
    return tokens, "".join(lexer.skeleton)
