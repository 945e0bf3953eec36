"""Argument handling shared by the magics.

Every magic reads its line through :func:`parse_line`, so an option value is
split the same way everywhere: as shell words, quotes removed
(``--cwd 'my data'``, ``--env MSG="hi there"``, ``--filter "loss|error"``).
``%exec``, ``%spawn`` and ``%bg`` take options *then* a command line that must
reach the engine exactly as typed (its quotes, ``-la`` flags and all), so their
leading options are split off by position and only they go through the magic's
argparse parser.  ``{name}`` lookups see ``--param`` values, then the notebook's namespace without
IPython's own hidden names (``exit``, ``In``, ``Out``…), so awk's ``{exit}`` survives.
"""

from __future__ import annotations

import argparse
import re
import shlex
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from IPython.core.error import UsageError

from ..process.errors import UsageProblem, shown_value

__all__ = ["NotebookVariables", "parse_line", "parse_pairs", "shell_words", "split_leading_options", "split_words",
           "template_params", "unknown_option"]

#: What shlex reads as quoting in a word (without any, a word is itself).
_QUOTING = re.compile(r"""['"\\]""")
# One shell word: unquoted runs, '…', "…" (with escapes), or a backslash escape.
_WORD = re.compile(r"""(?:[^\s'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+""", re.DOTALL)


def parse_line(line: str, parser: argparse.ArgumentParser, *,
               command_follows: bool = False) -> tuple[argparse.Namespace, str]:
    """The one way a magic reads its line: shell words, quotes removed, parsed by the magic's parser.

    ``command_follows=True`` (``%exec``, ``%spawn``, ``%bg``): only the leading options are
    parsed and the rest comes back as typed.  Otherwise the whole line is options and
    positionals, and the rest is ``""``.  Every mistake is a one-line ``UsageError``.
    """
    if command_follows:
        words, rest = split_leading_options(line, parser)
    else:
        words, rest = shell_words(line, "the line"), ""
    if not words:
        return _defaults(parser), rest
    kept = _PARSED.setdefault(parser, {})
    key = (command_follows, *words)
    parsed = kept.get(key)
    if parsed is None:
        words = [_Word(word) for word in words]
        if not command_follows:
            _, unknown = parser.parse_known_args(words)
            for word in unknown:
                if word.startswith("-") and word != "-":
                    raise UsageError(unknown_option(word.split("=", 1)[0], parser, before_command=False))
        parsed = _plain(parser.parse_args(words))
        if len(kept) >= _PARSED_KEPT:  # a notebook's option lines are few; a loop making new ones is bounded
            kept.clear()
        kept[key] = parsed
    return _copy(parsed), rest


#: What each parser makes of a line with no words (see :func:`_defaults`).
_NO_WORDS: weakref.WeakKeyDictionary[argparse.ArgumentParser, argparse.Namespace] = weakref.WeakKeyDictionary()
#: What each parser made of the option words it was given: a notebook runs the same option lines again and again
#: (``%exec --sandbox-mode workspace …`` in every cell), and argparse took a third of a millisecond for each.
_PARSED: weakref.WeakKeyDictionary[argparse.ArgumentParser, dict[tuple[Any, ...], argparse.Namespace]] = (
    weakref.WeakKeyDictionary())
#: How many option lines are kept per parser.
_PARSED_KEPT = 256


def _defaults(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``parser.parse_args([])``, worked out once per parser: most lines give no options (``%exec ls``), and
    argparse walks every action of the parser to say so, a tenth of a short command's time in the kernel."""
    kept = _NO_WORDS.get(parser)
    if kept is None:
        kept = _NO_WORDS[parser] = _plain(parser.parse_args([]))
    return _copy(kept)


def _copy(kept: argparse.Namespace) -> argparse.Namespace:
    """A namespace of its own, with lists of its own (a magic may set a value on what it got)."""
    args = argparse.Namespace()
    args.__dict__.update(kept.__dict__)
    for name, value in kept.__dict__.items():
        if isinstance(value, list):
            args.__dict__[name] = list(value)
    return args


class _Word(str):
    """A word of the line while argparse reads it: argparse quotes a value it refuses with ``%r``
    (``invalid float value: …``, ``invalid choice: …``), and through this ``repr`` a long value is
    quoted the way every other message quotes one (:func:`~execmagic.process.errors.shown_value`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return shown_value(str(self))


def _plain(args: argparse.Namespace) -> argparse.Namespace:
    """The parsed values as plain ``str`` again: what a magic passes on is never a :class:`_Word`."""
    for name, value in vars(args).items():
        if isinstance(value, _Word):
            setattr(args, name, str(value))
        elif isinstance(value, list):
            setattr(args, name, [str(item) if isinstance(item, _Word) else item for item in value])
    return args


def unknown_option(name: str, parser: argparse.ArgumentParser, before_command: bool = True) -> str:
    """The one line for an option the magic does not have, with the nearest one it does have."""
    import difflib

    known = [o for o in parser._option_string_actions if o.startswith("--")]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
    hint = f"; did you mean {close[0]}?" if close else ""
    where = "options go before the command; " if before_command else ""
    return f"unknown option {shown_value(name)}{hint} ({where}see %{parser.prog}?)"


def shell_words(text: str, what: str = "the command line") -> list[str]:
    """Split ``text`` into words as a shell does (quotes removed); an unclosed quote is a ``UsageError``."""
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"cannot split {what}: {str(exc).lower()} in {shown_value(text.strip())}") from None


def split_leading_options(line: str, parser: argparse.ArgumentParser) -> tuple[list[str], str]:
    """Split ``line`` into (option words, the raw rest) at the first word that is not an option.

    ``--`` ends the options explicitly.  An unknown option, or an option value with an
    unclosed quote, is a one-line ``UsageError``.
    """
    words: list[str] = []
    pos = 0
    expecting_value = False
    for match in _WORD.finditer(line):
        word = match.group(0)
        if line[pos:match.start()].strip():  # something unparseable (an unclosed quote) ends the options
            if expecting_value:
                raise UsageError(f"option {shown_value(words[-1])} has a value with an unclosed quote:"
                                 f" {shown_value(line[pos:].strip())}")
            break
        if expecting_value:
            words.append(_unquote(word))
            expecting_value = False
            pos = match.end()
            continue
        if word == "--":
            return words, line[match.end():].strip()
        if not word.startswith("-") or word == "-":
            break
        name = word.split("=", 1)[0]
        action = parser._option_string_actions.get(name)
        if action is None:
            raise UsageError(unknown_option(name, parser))
        words.append(_unquote(word))
        expecting_value = action.nargs != 0 and "=" not in word
        pos = match.end()
    if expecting_value:
        if line[pos:].strip():
            raise UsageError(f"option {shown_value(words[-1])} has a value with an unclosed quote:"
                             f" {shown_value(line[pos:].strip())}")
        raise UsageError(f"option {shown_value(words[-1])} needs a value")
    return words, line[pos:].strip()


def _unquote(word: str) -> str:
    """One matched word without its quotes (``'my data'`` → ``my data``)."""
    if not _QUOTING.search(word):  # most option words: themselves
        return word
    parts = shell_words(word, "an option")
    return parts[0] if parts else ""


def split_words(text: str, in_single_quotes: Callable[[str], str] | None = None) -> list[str]:
    """Split a command line into words the way a shell does (quotes respected), nothing more.

    ``in_single_quotes`` rewrites the text of each ``'…'`` first (``%spawn`` keeps a notebook
    variable out of it there, as a shell keeps ``$VAR`` out)."""
    if in_single_quotes is not None:
        text = _single_quoted(text, in_single_quotes)
    return shell_words(text, "the command line")


def _single_quoted(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with the inside of each ``'…'`` rewritten, quotes found as :func:`shlex.split` finds them."""
    out: list[str] = []
    pos, i, quote = 0, 0, ""
    while i < len(text):
        ch = text[i]
        if quote == "'":
            if ch == "'":
                out.append(rewrite(text[pos:i]))
                pos, quote = i, ""
        elif ch == "\\" and (not quote or text[i + 1:i + 2] in ('"', "\\")):
            i += 1  # an escaped character (in "…" only \" and \\ are escapes)
        elif ch == '"':
            quote = "" if quote else '"'
        elif ch == "'" and not quote:
            out.append(text[pos:i + 1])
            pos, quote = i + 1, "'"
        i += 1
    out.append(text[pos:])  # an unclosed quote is shlex's to refuse
    return "".join(out)


def parse_pairs(entries: list[str] | None, what: str) -> dict[str, str]:
    """``["K=V", …]`` → dict; a malformed entry is a ``UsageError`` naming it."""
    pairs: dict[str, str] = {}
    for entry in entries or []:
        try:
            from ..process.launch import parse_env_entry  # at the first K=V, not at %load_ext

            name, value = parse_env_entry(entry, what)
        except UsageProblem as exc:
            from .people import usage_words

            raise UsageError(usage_words(exc)) from None
        pairs[name] = value
    return pairs


def template_params(entries: list[str] | None, variables: Mapping[str, Any]) -> dict[str, Any]:
    """The ``--param`` values: ``K=V`` is the text ``V`` as typed (so ``n=5`` is ``'5'`` in a Python cell, as
    ``--env`` and a shell give text); a bare ``NAME`` is the notebook's ``NAME`` with its type (a list, an
    int), for a value that must land as what it is.  A bare name the notebook lacks is a ``UsageError``."""
    named = [entry for entry in entries or [] if "=" not in entry]
    params: dict[str, Any] = parse_pairs([entry for entry in entries or [] if "=" in entry], "param")
    for name in named:
        if not name.isidentifier():
            raise UsageError(f"--param needs NAME=VALUE or the name of a notebook variable, not {shown_value(name)}")
        if name not in variables:
            import difflib  # for a mistake only: imported at every command, it cost the first one 5 ms

            close = difflib.get_close_matches(name, list(variables), n=1, cutoff=0.8)
            hint = f"; did you mean {close[0]}?" if close else "; define it first, or give --param NAME=VALUE"
            raise UsageError(f"--param {name}: the notebook has no variable {name!r}{hint}")
        params[name] = variables[name]
    return params


class NotebookVariables(Mapping[str, Any]):
    """The user's namespace minus IPython's hidden and private names: what ``{name}`` may fill from where a
    shell would expand ``$VAR`` (``exit``, ``In``, ``Out``… are IPython's, so awk's ``{exit}`` survives)."""

    def __init__(self, user_ns: Mapping[str, Any], hidden: Mapping[str, Any]) -> None:
        self._ns = user_ns
        self._hidden = hidden

    def _visible(self, name: str) -> bool:
        if name.startswith("_") or name not in self._ns:
            return False
        return not (name in self._hidden and self._hidden[name] is self._ns[name])

    def __getitem__(self, name: str) -> Any:
        if self._visible(name):
            return self._ns[name]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._visible(name)

    def __iter__(self) -> Iterator[str]:
        return (n for n in list(self._ns) if self._visible(n))

    def __len__(self) -> int:
        return sum(1 for _ in self)
