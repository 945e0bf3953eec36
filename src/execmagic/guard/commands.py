"""Simple commands: tokens grouped into commands, and each command as the rules see it.

A rule is about one program and its arguments (``rm -rf /``), so the tokens are grouped into
simple commands with their redirections, reserved words (``if``, ``{``) dropped, and wrappers
that run the real command (``sudo``, ``env``, ``timeout``, ``xargs``, ``busybox``) taken off --
``sudo -u root FOO=1 timeout 5 rm -rf /`` is judged as ``rm -rf /``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Iterator, Sequence

from .paths import Path
from .words import REDIRECTS, STDIN_REDIRECTS, Op, Word, unescape

__all__ = ["Command", "Simple", "command_name", "emitted", "parse", "unwrap"]


def _shown(words: Sequence[str], redirects: Sequence[tuple[str, Word]]) -> str:
    """A command as a refusal quotes it: its words, then its redirections (a heredoc by its delimiter)."""
    return " ".join([*words, *(f"{op} {target.shown}" for op, target in redirects)])


@dataclasses.dataclass
class Command:
    """One simple command as written: its words and its redirections (heredocs hold their body)."""

    words: list[Word] = dataclasses.field(default_factory=list)
    redirects: list[tuple[str, Word]] = dataclasses.field(default_factory=list)

    def stdin(self) -> Word | None:
        """The text a heredoc or here-string gives the command on stdin."""
        for op, target in reversed(self.redirects):
            if op in STDIN_REDIRECTS:
                return target
            if op in ("<", "<&", "<>"):
                return None
        return None

    def code(self) -> Iterator[str]:
        """What the shell runs while expanding this command: its ``$(…)``, backticks and ``<(…)``."""
        for word in self.words:
            yield from word.code
        for _, target in self.redirects:
            yield from target.code

    def shown(self) -> str:
        return _shown(self.words, self.redirects)


@dataclasses.dataclass(frozen=True)
class Simple:
    """A simple command as the rules see it: wrappers removed, and the directory it runs in, if known."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...]
    cwd: Path | None

    @functools.cached_property
    def name(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""

    @property
    def display(self) -> str:
        return _shown(self.words, self.redirects)

_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"})


def parse(tokens: list[Word | Op]) -> list[Command | str]:
    """Tokens → simple commands and the operators between them."""
    items: list[Command | str] = []
    command, redirect = Command(), None
    for token in tokens:
        if redirect is not None and isinstance(token, Word):
            command.redirects.append((redirect, token))
            redirect = None
        elif isinstance(token, Op) and token in REDIRECTS:
            redirect = str(token)
        elif isinstance(token, Op):
            redirect = None
            if command.words or command.redirects:
                items.append(command)
                command = Command()
            items.append(str(token))
        elif not command.words and not token.quoted and token in _RESERVED:
            continue
        else:
            command.words.append(token)
    if command.words or command.redirects:
        items.append(command)
    return items


_WRAPPERS: dict[str, set[str]] = {  # wrapper → its options that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir"},
    "nohup": set(), "time": set(), "command": set(), "exec": {"-a"}, "builtin": set(),
    "setsid": set(), "stdbuf": {"-i", "-o", "-e"}, "unbuffer": set(), "pkexec": {"--user"},
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p", "-t"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-n", "-I", "-d", "-P", "-L", "-s", "-E", "-a"},
    "strace": {"-o", "-e", "-p"}, "chronic": set(), "busybox": set(), "toybox": set(),
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def unwrap(words: Sequence[Word]) -> tuple[list[Word], list[str]]:
    """``sudo -u root FOO=1 timeout 5 rm -rf /`` → ``rm -rf /``, and the wrappers removed."""
    words, wrappers = list(words), []
    while words:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words or os.path.basename(words[0]) not in _WRAPPERS:
            break
        name = os.path.basename(words[0])
        takes_value, i = _WRAPPERS[name], 1
        while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i])):
            i += 2 if words[i] in takes_value else 1
        if name == "timeout" and i < len(words):
            i += 1  # the duration
        if name == "nice" and i < len(words) and words[i].lstrip("-").isdigit():
            i += 1
        wrappers.append(name)
        words = words[i:]
    return words, wrappers


def _printf(fmt: str, args: Sequence[str]) -> str:
    """What ``printf FMT ARGS…`` prints (the format reused while arguments remain, as printf does)."""
    pending, out = list(args), []
    while True:
        used, pos = 0, 0
        for match in re.finditer(r"%(?:%|[-+ #0-9.]*[a-zA-Z])", fmt):
            out.append(fmt[pos:match.start()])
            if match.group() == "%%":
                out.append("%")
            else:
                used += 1
                out.append(pending.pop(0) if pending else "")
            pos = match.end()
        out.append(fmt[pos:])
        if not pending or not used:
            return unescape("".join(out))


def emitted(command: Command) -> str | None:
    """What a pipeline stage prints when it only prints text it was given: echo, printf, cat of a heredoc."""
    words, _ = unwrap(command.words)
    name, args = (os.path.basename(words[0]), list(words[1:])) if words else ("", [])
    if name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args.pop(0)
        return unescape(" ".join(args))
    if name == "printf":
        args = args[1:] if args[:1] == ["--"] else args
        return _printf(args[0], args[1:]) if args and args[0] != "-v" else None
    if name == "cat" and not args:
        return command.stdin()
    return None



def command_name(command: Command) -> str:
    """The program a command runs, wrappers taken off: ``sudo curl …`` → ``curl``."""
    words, _ = unwrap(command.words)
    return os.path.basename(words[0]) if words else ""
