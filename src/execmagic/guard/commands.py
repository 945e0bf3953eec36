"""Simple commands: tokens grouped into commands, and each command as the rules see it.

A rule is about one program and its arguments (``rm -rf /``), so the tokens are grouped into
simple commands with their redirections, reserved words (``if``, ``{``) dropped, and wrappers
that run the real command (``sudo``, ``env``, ``timeout``, ``xargs``, ``busybox``) taken off --
``sudo -u root FOO=1 timeout 5 rm -rf /`` is judged as ``rm -rf /``, ``env -S 'rm -rf /'`` and
``parallel rm -rf ::: /`` too.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, cast

from ..shell.braces import Allowance, brace_words
from ..shell.words import OPS, REDIRECTS, STDIN_REDIRECTS, Op, Subshells, Word
from .paths import Path
from .wrapped import ASSIGNMENT, WRAPPERS, unwrapped, wraps

__all__ = ["ASSIGNMENT", "DECLARES", "WRAPPERS", "Assignments", "Command", "Simple", "assigned", "assigns_only",
           "command_name", "grouped", "literal", "parse", "program", "unwrap"]


def _quoted_command(words: Sequence[Word], redirects: Sequence[tuple[str, Word]]) -> str:
    """A command as a refusal quotes it: its words, then its redirections (a heredoc by its delimiter).

    A word as written, not as expanded (``rm -rf $D``, not the value of ``D``: it may be anything), once (a word of
    several values is shown by the first it makes: ``> $f`` judged for each value of a loop's ``f``).
    """
    return " ".join([*(w.shown for w in words if w.shown or not w),
                     *(f"{op} {t.shown}" for op, t in redirects if t.shown or not t)])


if TYPE_CHECKING:
    _kept = functools.cached_property
else:
    class _kept:
        """``functools.cached_property`` without its lock (3.11 takes one on every first look, and every command of
        a long script is looked at: a tenth of a check of 36,000 commands went there).  A walk is one thread."""

        def __init__(self, func):
            self.func, self.name = func, func.__name__

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = instance.__dict__[self.name] = self.func(instance)  # (a frozen dataclass's too, as cached_property)
            return value


def program(word: str) -> str:
    """The program a command word names: ``/usr/bin/rm`` → ``rm`` (``os.path.basename``, asked of every command)."""
    return word[word.rfind("/") + 1:]


@dataclasses.dataclass
class Command:
    """One simple command as written: its words and its redirections (heredocs hold their body)."""

    words: list[Word] = dataclasses.field(default_factory=list)
    redirects: list[tuple[str, Word]] = dataclasses.field(default_factory=list)
    #: The words are the values of an array: ``x=( … )`` (read as ``x=``, ``(``, this command, ``)``).
    values: bool = False

    def fed(self) -> tuple[str, Word] | None:
        """The last redirection of the command's stdin (``<``, ``<&``, ``<>``, a heredoc, a here-string): the one
        it reads."""
        return next(((op, target) for op, target in reversed(self.redirects) if op.startswith("<")), None)

    def stdin(self) -> Word | None:
        """The text a heredoc or here-string gives the command on stdin."""
        fed = self.fed() if self.redirects else None
        return fed[1] if fed is not None and fed[0] in STDIN_REDIRECTS else None

    def code(self) -> Iterator[str]:
        """What the shell runs while expanding this command: its ``$(…)``, backticks and ``<(…)``."""
        for word in self.words:
            yield from word.code
        for _, target in self.redirects:
            yield from target.code

    def shown(self) -> str:
        return _quoted_command(self.words, self.redirects)

    @_kept
    def unwrapped(self) -> tuple[list[Word], list[str]]:
        """:func:`unwrap` of the words, found once: the walk, the names and the downloads each ask it.  Read only."""
        self.handed = []  # (in the same pass)
        return unwrap(self.words, self.handed)

    @_kept
    def program(self) -> str:
        """The program it runs, wrappers taken off (``sudo curl …``: ``curl``): the walk, the names, the downloads and
        the printers each ask it of a command walked.  Read only."""
        words = self.unwrapped[0]
        return program(words[0]) if words else ""

    @_kept
    def handed(self) -> list[Word]:
        """The assignments the command it runs is handed: bash's (``X=/ sh -c …``) and its wrappers' (``env X=/``,
        ``env -S 'X=/ sh -c …'``) -- not the words before it, which ``env -S`` splits into more.  Read only."""
        _ = self.unwrapped  # which finds it (an instance's own value: this is not asked again)
        return self.handed


@dataclasses.dataclass(frozen=True)
class Simple:
    """A simple command as the rules see it: wrappers removed, and the directory it runs in, if known."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...]
    cwd: Path | None

    @_kept
    def name(self) -> str:
        return program(self.words[0]) if self.words else ""

    @property
    def display(self) -> str:
        return _quoted_command(self.words, self.redirects)

_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"})


def parse(tokens: list[Word | Op], allowance: Allowance | None = None) -> list[Command | str]:
    """Tokens → simple commands and the operators between them (a :class:`~..shell.words.Subshells` token stays one
    item: what ``(`` ``(`` ``WORD`` ``)`` ``)`` give, the walk knows).

    A command's words are brace-expanded as bash expands them (``{rm,-rf,/}`` is ``rm -rf /``), but for the
    assignments before its name (``X={a,b} cmd`` sets ``X`` to ``{a,b}``); ``allowance``: what that may make in the
    check (:class:`~..shell.braces.Allowance`; one for these tokens alone when not given).
    """
    return cast("list[Command | str]", grouped(tokens, allowance)[0])  # (no runs: no Assignments)


def grouped(tokens: list[Word | Op], allowance: Allowance | None = None, runs: bool = False) -> tuple[
        list[Command | str | Assignments], bool]:
    """:func:`parse`, and whether a word was put to brace expansion: else the commands are the same whenever these
    tokens are parsed, and made at no cost to the ``allowance`` (a reading keeps them: ``readings.Readings``).

    ``runs``: commands that only assign plainly, one after another, are one :class:`Assignments` (for a check's walk,
    which knows it), none a stage of a pipeline; an operator between two that ends a command and does nothing more
    (:data:`_BETWEEN`) is left out."""
    items: list[Command | str | Assignments] = []
    braced = False
    words: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    redirect = None
    assigning, joined = 0, False  # (see _braces; whether items end with a run of assignments)
    at_once = _AT_ONCE
    for token in tokens:  # (every token of a long script: kept lean; an operator is kept as its Op)
        if type(token) is Op:
            if token in REDIRECTS:
                redirect = str(token)
                continue
            redirect = None
            if joined and at_once and len(words) == 1 and not redirects and token in _BETWEEN:
                name, equals, value = words[0].partition("=")  # one more of a run (N=5): what _pairs finds, at once
                if equals and name.isidentifier() and name.isascii() and words[0].live == () and not words[0].code and (
                        "$" not in value and "`" not in value and "[" not in value):  # (else _ended looks again)
                    run: Assignments = items[-1]  # type: ignore[assignment]
                    run.commands.append(words)
                    run.pairs.append((name, (value,) if value else None))
                    words, assigning = [], 0
                    continue
            if words or redirects:
                joined = _ended(items, words, redirects, token == ")" and _array(items), runs and token not in _PIPES)
                words, redirects, assigning = [], [], 0
            if not joined or token not in _BETWEEN:  # (an operator that ends a run goes without it: it does nothing)
                items.append(token)
                joined = False
        elif type(token) is Subshells:  # as "(" ends a command (and a redirection waiting for its word), then itself
            redirect, joined = None, False
            if words or redirects:
                _ended(items, words, redirects, False, runs)
                words, redirects, assigning = [], [], 0
            items.extend((OPS["("], OPS["("], OPS[")"], OPS[")"]) if token.word in _RESERVED else (token,))
        elif redirect is not None:
            redirects.append((redirect, token))  # type: ignore[arg-type]
            redirect = None
        elif not words and not token.quoted and token in _RESERVED:  # type: ignore[union-attr]
            continue
        elif token == "{" and len(words) == 2 and words[0] == "function" and not token.quoted:  # type: ignore[union-attr]
            _ended(items, words, redirects, False, runs)  # function f { …; }: the body is commands, not f's words
            words, redirects, assigning = [], [], 0
        elif "{" in token and _may_brace(token):  # (${x} in most: it makes no other word, as bash would tell)
            assigning, made = _braces(token, words, assigning, allowance)  # type: ignore[arg-type]
            words.extend(made)
            braced = True
        else:
            words.append(token)  # type: ignore[arg-type]
    if words or redirects:
        _ended(items, words, redirects, False, runs)
    return items, braced


#: Operators that end a command and do nothing more where no pipeline is open: a run of assignments goes on past them.
_BETWEEN = frozenset({";", "&&", "||", "&", ";;", ";&", ";;&"})
_PIPES = ("|", "|&")  # (compared, not hashed: an item before may be an Assignments)
#: A run's next plain assignment told by a few looks at its word, in line (a script of them has little else: the
#: call to :func:`_ended` and its regex were half the grouping's time); ``False``: each through :func:`_ended`.
_AT_ONCE = True


def assigns_only(words: Sequence[Word]) -> bool:
    """Whether each of ``words`` gives a name a value spelled out as written (``N=5``, ``OUT="out/x.csv"``): no
    expansion, no code, no subscript (``a[$(…)]=1`` runs code)."""
    return _pairs(words) is not None


def _pairs(words: Sequence[Word]) -> list[tuple[str, tuple[str] | None]] | None:
    """What ``words`` give when each :func:`assigns_only`: each name and its value (``None``: not literal)."""
    pairs = []
    for word in words:
        if word.live != () or word.code or "[" in word or not ASSIGNMENT.match(word):
            return None
        name, value = word.split("=", 1)
        pairs.append((name, (value,) if value and literal(value) else None))
    return pairs


class Assignments:
    """Commands one after another that only give names values spelled out (``N=5; OUT="x.csv"``: each
    :func:`assigns_only`, with no redirection), as one item of a check's reading (:func:`grouped`).

    All such a command does is give names values: no program runs, nothing is handed on.  ``commands``: the words of
    each; ``pairs``: each name and its value (``None``: not literal), in order (what :meth:`.names.Names.remember`
    makes of them).  A script of them was a command each, made, walked as a pipeline and looked at three ways."""

    __slots__ = ("commands", "pairs")

    def __init__(self) -> None:
        self.commands: list[list[Word]] = []
        self.pairs: list[tuple[str, tuple[str] | None]] = []


def _ended(items: list[Command | str | Assignments], words: list[Word], redirects: list[tuple[str, Word]],
           values: bool, runs: bool) -> bool:
    """The command of ``words`` and ``redirects`` put after ``items``; with ``runs``, one that only assigns plainly
    put in the run of them that ends ``items`` (or a new one; not one of a pipeline): whether it was."""
    if runs and not redirects and not values and "=" in words[0] and (not items or items[-1] not in _PIPES) and (
            pairs := _pairs(words)) is not None:
        if not items or type(items[-1]) is not Assignments:
            items.append(Assignments())
        run: Assignments = items[-1]  # type: ignore[assignment]
        run.commands.append(words)
        run.pairs += pairs
        return True
    items.append(Command(words, redirects, values))
    return False


def _may_brace(token: str) -> bool:
    """Whether a word may be one brace expansion makes other words of: a ``{``, a ``}`` and a ``,`` or ``..`` in it
    -- what :func:`~..shell.braces.brace_words` needs, wherever they stand (``${x}``, ``{}``, ``a{b}`` make none)."""
    return "}" in token and ("," in token or ".." in token)


#: What brace expansion may make in one reading of tokens when no check's allowance is given: as much as a name's
#: value may hold (see ``names._MAX_TEXT``).
_BRACE_ALLOWANCE = 64 * 1024


def _array(items: list[Command | str | Assignments]) -> bool:
    """Whether the command a ``)`` ends after ``items`` holds an array's values: ``x=(`` just before it."""
    if len(items) < 2 or items[-1] != "(":
        return False
    before = items[-2]
    if type(before) is Assignments:  # (x= is a plain assignment, ended by the "(")
        return before.commands[-1][-1].endswith("=")
    return isinstance(before, Command) and bool(before.words) and before.words[-1].endswith("=")


def _braces(word: Word, words: list[Word], assigning: int, allowance: Allowance | None) -> tuple[int, list[Word]]:
    """The words brace expansion makes of ``word`` after ``words`` in a command, but for an assignment before the
    command's name (``X=1 Y={a,b} cmd``: ``Y`` is ``{a,b}``).  ``assigning``: how many of ``words`` were found to be
    assignments, all of them (-1: not all) -- looked at once each, however many such words a command has."""
    while 0 <= assigning < len(words):
        assigning = assigning + 1 if ASSIGNMENT.match(words[assigning]) else -1
    if assigning >= 0 and ASSIGNMENT.match(word):
        return assigning, [word]
    made = brace_words(word, allowance or Allowance(_BRACE_ALLOWANCE))
    if made is None:
        return assigning, [word]
    if assigning >= 0 and len(made) > 1 and not made[0]:  # where the name stands, empty first words bash may drop
        first = made[0]  # ({,"rm"} -rf / runs rm: the text keeps no trace of which quotes were empty)
        made = made[next((i for i, w in enumerate(made) if w), len(made) - 1):]
        made[0].code, made[0].shown = first.code, first.shown
    return assigning, made


def unwrap(words: Sequence[Word], handed: list[Word] | None = None) -> tuple[list[Word], list[str]]:
    """``sudo -u root FOO=1 timeout 5 rm -rf /`` → ``rm -rf /``, and the wrappers removed (``handed``: where to put
    the assignments taken off, see :meth:`Command.handed`)."""
    if words and "=" not in words[0] and program(words[0]) not in WRAPPERS:  # (most commands: one look)
        return list(words), []
    words, wrappers = list(words), []
    while words:
        skip = 0  # (the assignments before the name, taken off at once: one at a time, 40,000 of them took seconds)
        while skip < len(words) and ASSIGNMENT.match(words[skip]):
            skip += 1
        if handed is not None:
            handed += words[:skip]
        words = words[skip:]
        name = program(words[0]) if words else ""
        if not wraps(name, words):
            break
        words = unwrapped(name, words, handed)
        wrappers.append(name)
    return words, wrappers


def command_name(command: Command) -> str:
    """The program a command runs, wrappers taken off: ``sudo curl …`` → ``curl``."""
    return command.program


DECLARES = {"export", "readonly", "local", "declare", "typeset"}
_LITERAL = re.compile(r"(?:\$HOME\b|\$\{HOME\}|[^$`])*")  # no expansion but $HOME's
#: A ``$`` that is not ``$HOME``'s: what :data:`_LITERAL` cannot match (nor a backtick), found by a search -- the
#: pattern tried three ways at every character of a value (``PATH=…:$PATH`` again and again grows it to 64 KB).
_NOT_LITERAL = re.compile(r"\$(?!HOME\b|\{HOME\})")


def literal(value: str) -> bool:
    """Whether ``_LITERAL`` matches all of ``value``: no expansion in it but ``$HOME``'s."""
    return "`" not in value and ("$" not in value or _NOT_LITERAL.search(value) is None)


def assigned(command: Command) -> dict[str, str | None]:
    """What a command that only assigns (``X=/``, ``export X=~``) sets: each name's value, ``None`` if not literal."""
    words = command.words
    if words and words[0] in DECLARES:
        words = [w for w in words[1:] if not w.startswith("-")]
    elif not words or "=" not in words[0] or not all(ASSIGNMENT.match(w) for w in words):  # (most: one look)
        return {}
    pairs = [w.split("=", 1) for w in words if ASSIGNMENT.match(w)]
    return {name: value if literal(value) else None for name, value in pairs}

