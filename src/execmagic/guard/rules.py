"""Guardrails (design §3.7): the dangerous-command rules and the shell parsing they need.

These are guardrails against accidents -- an agent's or a tired human's -- not
a sandbox.  A determined program gets past any pattern list (``base64 -d | sh``
is not looked into); untrusted code belongs in an OS sandbox (a container, a VM,
a separate user).

How a command is judged: its shell text is split into words as a shell splits
it, into simple commands (through ``;``, ``&&``, ``||``, ``|``, ``&``, newlines,
subshells and wrappers such as ``sudo``, ``env``, ``nohup``, ``timeout``,
``xargs``, ``busybox``), and :data:`RULES` is applied to each one.  Text in
quotes is data -- ``echo 'rm -rf /'``, ``git commit -m '… `rm -rf /` …'`` and
``grep "curl .* | sh"`` are fine -- until it reaches a shell: the argument of
``sh -c``/``bash -c``/``su -c``/``eval``/``watch``, text piped into ``| sh``
(from ``echo``, ``printf`` or ``cat <<EOF``), a here-string or heredoc fed to a
shell, and the body of ``$(…)``, backticks and ``<(…)`` outside single quotes.
Such text is parsed as code, with the directory a ``cd`` moved to, so that
``cd / && rm -rf *`` is judged as ``rm -rf /*``.  ``ssh host 'cmd'`` runs
elsewhere and is not looked into.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Literal

from ..process.errors import ExecError

if TYPE_CHECKING:
    from typing_extensions import Self

Guard = Literal["none", "catastrophic", "all"]
"""How much to refuse: nothing, only what destroys a system or data, or also risky commands."""
GUARDS: tuple[str, ...] = ("none", "catastrophic", "all")


@dataclasses.dataclass(frozen=True)
class Rule:
    """One guardrail: its id, whether guard ``catastrophic`` refuses it (else only ``all``), why, and what it matches.

    ``reason`` may name ``{where}`` (e.g. "the root directory"), ``{device}`` or ``{name}``,
    filled in from the command that matched.
    """

    id: str
    catastrophic: bool
    reason: str
    matches: str


# -- the rules: what is refused, and why ------------------------------------------------------------
RULES: tuple[Rule, ...] = (
    Rule("rm-no-preserve-root", True, "deletes everything under / (--no-preserve-root)",
         "rm with --no-preserve-root"),
    Rule("rm-recursive-root", True, "recursively deletes {where}",
         "rm -r of /, ~, $HOME or a top-level system directory (/usr/.. is /; a trailing * or .* counts); "
         "rm -rf * or . after a cd to one of them"),
    Rule("mkfs-device", True, "formats a disk device, erasing it", "mkfs*, mke2fs, mkswap, mkdosfs, mkntfs of /dev/…"),
    Rule("dd-device", True, "writes raw data onto the disk device {device}", "dd of=/dev/sda"),
    Rule("redirect-device", True, "overwrites the disk device {device}", "> /dev/sda, cat x >> /dev/nvme0n1"),
    Rule("write-device", True, "{name} writes onto a disk device", "tee /dev/sda, cp disk.img /dev/sda"),
    Rule("wipe-device", True, "{name} erases a disk device", "shred, wipefs, blkdiscard of a disk device"),
    Rule("partition-device", True, "rewrites a disk's partition table",
         "fdisk, sfdisk, parted, sgdisk, gdisk, cfdisk of a disk device, unless only listing"),
    Rule("chmod-recursive-root", True, "recursively changes permissions or owners of {where}", "chmod -R 777 /"),
    Rule("chown-recursive-root", True, "recursively changes permissions or owners of {where}", "chown -R x /"),
    Rule("chgrp-recursive-root", True, "recursively changes permissions or owners of {where}", "chgrp -R x ~"),
    Rule("find-delete-root", True, "deletes files throughout {where}", "find / -delete, find ~ -exec rm …"),
    Rule("mv-root", True, "moves {where} away", "mv ~ /tmp/x, mv /usr /old"),
    Rule("fork-bomb", True, "a fork bomb: it multiplies processes until the machine stalls",
         ":(){ :|:& };:, f(){ f & f; }; f, function f { f|f& }; f, perl -e 'fork while fork'"),
    Rule("kill-all", False, "signals every process you may signal (pid -1)", "kill -9 -1, kill -- -1, kill -1"),
    Rule("power", False, "{name} stops the machine",
         "shutdown, reboot, halt, poweroff, init 0/6, systemctl reboot/poweroff/halt/kexec"),
    Rule("crontab-remove", False, "removes every scheduled job of the user", "crontab -r"),
    Rule("pipe-to-shell", False, "runs code downloaded from the network without looking at it",
         "curl/wget piped into a shell or interpreter, or substituted into one: curl … | sh, "
         "sh -c \"$(curl …)\", bash <(curl …), eval \"$(wget -O- …)\", bash <<< \"$(curl …)\""),
)
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Why a command was refused: the rule's id, its reason, and the simple command that matched."""

    rule: str
    reason: str
    command: str
    catastrophic: bool = True


class CommandRefused(ExecError):
    """A guardrail refused the command; nothing was started."""

    def __init__(self, refusal: Refusal, override: str) -> None:
        self.refusal = refusal
        super().__init__(
            f"refused: {refusal.command!r} — {refusal.reason} (rule {refusal.rule}); {override}"
        )


def _refusal(rule_id: str, command: str, **fields: str) -> Refusal:
    rule = RULES_BY_ID[rule_id]
    return Refusal(rule.id, rule.reason.format(**fields), command, rule.catastrophic)


#: Every rule needs one of these words (or a device path, or a function definition) in the text,
#: so text without any -- a long heredoc of data, most scripts -- is passed without parsing it.
_TRIGGERS = re.compile(
    r"\b(rm|mkfs\S*|mke2fs|mkswap|mkdosfs|mkntfs|dd|chmod|chown|chgrp|shred|wipefs|blkdiscard|fdisk|sfdisk|parted"
    r"|sgdisk|gdisk|cfdisk|find|kill|shutdown|reboot|halt|poweroff|init|systemctl|mv|crontab|curl|wget|fetch|tee|cp"
    r"|function|fork)\b"
    r"|/dev/|\(\)\s*\{"
)


# -- words: splitting shell text as a shell does -----------------------------------------------------
class _Word(str):
    """A shell word after quote removal (``$VAR``, ``~`` and ``$(…)`` are left as written).

    ``code``: the bodies of the ``$(…)``, backticks and ``<(…)`` in it that the shell runs (not those
    in single quotes); ``feed``: the body when the word is a process substitution ``<(…)``;
    ``quoted``: some of it was quoted; ``shown``: how it is shown (a heredoc shows its delimiter).
    """

    code: tuple[str, ...]
    feed: str | None
    quoted: bool
    shown: str

    def __new__(cls, text: str, code: Iterable[str] = (), feed: str | None = None, quoted: bool = False,
                shown: str | None = None) -> Self:
        word = super().__new__(cls, text)
        word.code, word.feed, word.quoted = tuple(code), feed, quoted
        word.shown = text if shown is None else shown
        return word


class _Op(str):
    """An operator token: ``;`` (also for a newline), ``&&``, ``|``, ``(``, ``>``, ``<<<``, …"""


_OPERATORS = ("<<<", "<<-", "&>>", ";;&", "<<", ">>", "&&", "||", ";;", ";&", "|&", "&>", ">|", ">&", "<&", "<>",
              "<", ">", ";", "&", "|", "(", ")")
_REDIRECTS = frozenset({"<<<", "<<-", "&>>", "<<", ">>", "&>", ">|", ">&", "<&", "<>", "<", ">"})
_STDIN_REDIRECTS = frozenset({"<<", "<<-", "<<<"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_PLAIN = re.compile(r"[^\s'\"\\$`;&|()<>#]+")
_DQ_PLAIN = re.compile(r'[^"\\$`]+')
_PAREN_PLAIN = re.compile(r"[^()'\"\\`]+")
_LIVE = re.compile(r"\\.|\$\(|`", re.DOTALL)
_ANSI_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_ANSI_CHARS = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
               "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def _unescape(text: str) -> str:
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


def _live_substitutions(text: str) -> Iterator[str]:
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
        self.tokens: list[_Word | _Op] = []
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

    def _add(self, piece: str, quoted: bool = False, skeleton: str | None = None) -> None:
        self.parts.append(piece)
        self.started = True
        self.quoted |= quoted
        self.skeleton.append(piece if skeleton is None else skeleton)

    def _end_word(self) -> None:
        if not self.started:
            return
        word = _Word("".join(self.parts), self.code, self.feed, self.quoted)
        if self.delimiter_next is not None:
            self.heredocs.append((len(self.tokens), word, self.delimiter_next == "<<-", word.quoted))
            self.delimiter_next = None
        self.tokens.append(word)
        self._new_word()

    def _operator(self, op: str) -> None:
        self.tokens.append(_Op(op))
        self.skeleton.append(op)

    def run(self) -> list[_Word | _Op]:
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
                i = self._expansion(i, parts)
            else:
                body, i = _backtick(text, i + 1)
                self.code.append(body)
                parts.append(f"`{body}`")
        self._add("".join(parts), quoted=True, skeleton='""')
        self.i = i + 1

    def _expansion(self, i: int, parts: list[str]) -> int:
        """``$(…)``, ``$((…))``, ``${…}`` or a plain ``$`` at ``i``: add it to ``parts``; the index after it."""
        text = self.text
        if text.startswith("$(", i):
            end = _paren_end(text, i + 2)
            if text.startswith("$((", i):  # arithmetic: only the substitutions inside it run
                self.code.extend(_live_substitutions(text[i + 3:end]))
            else:
                self.code.append(text[i + 2:end])
            parts.append(text[i:end + 1])
            return end + 1
        if text.startswith("${", i):
            end = text.find("}", i)
            end = len(text) if end < 0 else end
            self.code.extend(_live_substitutions(text[i + 2:end]))
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
            self._add(_unescape(text[i + 2:end]), quoted=True, skeleton="''")
            self.i = end + 1
            return
        parts: list[str] = []
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
            live = () if quoted else tuple(_live_substitutions(body))
            self.tokens[index] = _Word(body, live, quoted=quoted, shown=delimiter)
            self.i = resume
        self.heredocs = []


# -- simple commands ------------------------------------------------------------------------------
@dataclasses.dataclass
class _Command:
    """One simple command as written: its words and its redirections (heredocs hold their body)."""

    words: list[_Word] = dataclasses.field(default_factory=list)
    redirects: list[tuple[str, _Word]] = dataclasses.field(default_factory=list)

    def stdin(self) -> _Word | None:
        """The text a heredoc or here-string gives the command on stdin."""
        for op, target in reversed(self.redirects):
            if op in _STDIN_REDIRECTS:
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
        return " ".join([*self.words, *(f"{op} {target.shown}" for op, target in self.redirects)])


Path = tuple[str, ...]
"""An absolute path as its parts; ``("home", "~")`` stands for the home directory."""


@dataclasses.dataclass(frozen=True)
class _Simple:
    """A simple command as the rules see it: wrappers removed, and the directory it runs in, if known."""

    words: tuple[_Word, ...]
    redirects: tuple[tuple[str, _Word], ...]
    cwd: Path | None

    @functools.cached_property
    def name(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""

    @property
    def display(self) -> str:
        return " ".join([*self.words, *(f"{op} {target.shown}" for op, target in self.redirects)])


_RESERVED = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"})


def _parse(tokens: list[_Word | _Op]) -> list[_Command | str]:
    """Tokens → simple commands and the operators between them."""
    items: list[_Command | str] = []
    command, redirect = _Command(), None
    for token in tokens:
        if redirect is not None and isinstance(token, _Word):
            command.redirects.append((redirect, token))
            redirect = None
        elif isinstance(token, _Op) and token in _REDIRECTS:
            redirect = str(token)
        elif isinstance(token, _Op):
            redirect = None
            if command.words or command.redirects:
                items.append(command)
                command = _Command()
            items.append(str(token))
        elif not command.words and not token.quoted and token in _RESERVED:
            continue
        else:
            command.words.append(token)
    if command.words or command.redirects:
        items.append(command)
    return items


_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "fish", "csh", "tcsh"}
_INTERPRETER = re.compile(r"(python[0-9.]*|pypy[0-9.]*|perl|ruby|node|nodejs|php|lua)")
_DOWNLOADERS = {"curl", "wget", "fetch"}
_SOURCES = {".", "source"}
_STDIN_FILES = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}
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


def _unwrap(words: Sequence[_Word]) -> tuple[list[_Word], list[str]]:
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
            return _unescape("".join(out))


def _emitted(command: _Command) -> str | None:
    """What a pipeline stage prints when it only prints text it was given: echo, printf, cat of a heredoc."""
    words, _ = _unwrap(command.words)
    name, args = (os.path.basename(words[0]), list(words[1:])) if words else ("", [])
    if name == "echo":
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args.pop(0)
        return _unescape(" ".join(args))
    if name == "printf":
        args = args[1:] if args[:1] == ["--"] else args
        return _printf(args[0], args[1:]) if args and args[0] != "-v" else None
    if name == "cat" and not args:
        return command.stdin()
    return None


# -- walking shell text: every simple command it runs, nested code included ---------------------------
_MAX_DEPTH = 8
_Walk = Generator["_Simple | Refusal", None, "Path | None"]


def _walk(text: str, cwd: Path | None, depth: int) -> _Walk:
    """Every simple command shell ``text`` runs (nested code included), and what is refused on the way.

    ``cwd`` is the directory the text starts in when known; a ``cd`` moves it, a subshell keeps its own.
    """
    if depth > _MAX_DEPTH:
        return cwd
    lexer = _Lexer(text)
    tokens = lexer.run()
    bomb = _fork_bomb("".join(lexer.skeleton))
    if bomb:
        yield _refusal("fork-bomb", bomb)
    scopes: list[Path | None] = []
    pipeline: list[_Command] = []
    for item in [*_parse(tokens), ";"]:
        if isinstance(item, _Command):
            pipeline.append(item)
            continue
        if item in ("|", "|&"):
            continue
        if pipeline:
            cwd = yield from _pipeline(pipeline, cwd, depth)
        pipeline = []
        if item == "(":
            scopes.append(cwd)
        elif item == ")" and scopes:
            cwd = scopes.pop()
    return cwd


def _pipeline(commands: list[_Command], cwd: Path | None, depth: int) -> _Walk:
    """The simple commands of one pipeline, with the code each hands on; the directory afterwards."""
    simple = None
    for index, command in enumerate(commands):
        for body in command.code():
            yield from _walk(body, cwd, depth + 1)
        before = commands[:index]
        words, wrappers = _unwrap(command.words)
        if "xargs" in wrappers and before:  # echo / | xargs rm -rf: the items become arguments
            items = _emitted(before[-1])
            words += [_Word(item) for item in (items or "").split()]
        simple = _Simple(tuple(words), tuple(command.redirects), cwd)
        yield simple
        yield from _handed_on(simple, command, before, depth)
    return _cd(simple, cwd) if simple is not None and len(commands) == 1 else cwd


def _cd(simple: _Simple, cwd: Path | None) -> Path | None:
    """The directory after ``simple`` ran in ``cwd``: moved by ``cd``/``pushd``, unknown after ``popd``/``cd -``."""
    if simple.name in ("cd", "pushd", "chdir"):
        args = [w for w in simple.words[1:] if w not in ("-L", "-P", "-e", "-@", "--")]
        if not args:
            return _HOME
        return None if args[0] == "-" else _resolve(args[0], cwd, globs=False)
    return None if simple.name == "popd" else cwd


def _handed_on(simple: _Simple, command: _Command, before: list[_Command], depth: int) -> _Walk:
    """Code that ``simple`` hands to a shell: walked as code (it is no longer data); downloads run unseen refused."""
    name, words = simple.name, simple.words
    if words and words[0].code and _downloads(words[0].code, depth):  # `curl …` run as the command itself
        yield _refusal("pipe-to-shell", simple.display)
    if name in _SHELLS or name in _SOURCES or _INTERPRETER.fullmatch(name):
        yield from _interpreted(simple, command, before, depth)
    elif name in ("eval", "watch"):  # both run their arguments, joined, as shell code
        args = list(words[1:]) if name == "eval" else _after_options(words[1:], {"-n", "--interval"})
        yield from _as_code(simple, _Word(" ".join(args), [c for w in args for c in w.code]), simple.cwd, depth)
    elif name in ("su", "runuser"):
        code = _su_command(words)
        if code is not None:
            login = any(w in ("-", "-l", "--login") for w in words)
            yield from _as_code(simple, code, None if login else simple.cwd, depth)
    elif name == "find":
        for run in _find_exec(words):
            yield from _pipeline([_Command([_Word(w) for w in run])], simple.cwd, depth + 1)
    return simple.cwd


def _as_code(simple: _Simple, code: _Word, cwd: Path | None, depth: int) -> _Walk:
    if _downloads(code.code, depth):
        yield _refusal("pipe-to-shell", simple.display)
    yield from _walk(code, cwd, depth + 1)
    return cwd


def _interpreted(simple: _Simple, command: _Command, before: list[_Command], depth: int) -> _Walk:
    """A shell, ``source`` or an interpreter: its code from ``-c``, a ``<(…)`` file, a heredoc or a pipe."""
    shell = simple.name in _SHELLS or simple.name in _SOURCES
    code, operands, reads_stdin = _interpreter_args(simple.words)
    if code is not None:
        if shell:
            yield from _as_code(simple, code, simple.cwd, depth)
        elif _downloads(code.code, depth):
            yield _refusal("pipe-to-shell", simple.display)
        elif _FORK_CALLS.search(code):
            yield _refusal("fork-bomb", simple.display)
    elif operands and operands[0].feed is not None:  # bash <(curl …)
        if _downloads([operands[0].feed], depth):
            yield _refusal("pipe-to-shell", simple.display)
    elif reads_stdin and (stdin := command.stdin()) is not None:  # bash <<< '…', bash <<EOF
        if shell:
            yield from _as_code(simple, stdin, simple.cwd, depth)
        elif _downloads(stdin.code, depth):
            yield _refusal("pipe-to-shell", simple.display)
    elif reads_stdin and before:  # … | sh
        fetched = next((i for i, c in enumerate(before) if _command_name(c) in _DOWNLOADERS), None)
        if fetched is not None:
            yield _refusal("pipe-to-shell", " | ".join(c.shown() for c in [*before[fetched:], command]))
        elif shell and (text := _emitted(before[-1])) is not None:
            yield from _walk(text, simple.cwd, depth + 1)
    return simple.cwd


def _command_name(command: _Command) -> str:
    words, _ = _unwrap(command.words)
    return os.path.basename(words[0]) if words else ""


def _interpreter_args(words: Sequence[_Word]) -> tuple[_Word | None, list[_Word], bool]:
    """(the ``-c``/``-e`` code, the operands, whether it reads its program from stdin) of a shell or interpreter."""
    name = os.path.basename(words[0])
    if name in _SOURCES:
        return None, list(words[1:]), bool(words[1:]) and words[1] in _STDIN_FILES
    shell, i, command, from_stdin = name in _SHELLS, 1, False, False
    while i < len(words) and words[i] != "-" and len(words[i]) > 1 and words[i][0] in "-+":
        word = words[i]
        if word == "--":
            i += 1
            break
        if shell and word[0] in "-+" and word[1] != "-":
            command |= word[0] == "-" and "c" in word
            from_stdin |= word[0] == "-" and "s" in word
            i += 1 + (word[-1] in "oO")  # -o pipefail
            continue
        if not shell and word in ("-c", "-e", "-E", "--eval", "-r"):
            return (words[i + 1] if i + 1 < len(words) else None), list(words[i + 2:]), False
        if not shell and word == "-m":
            return None, [], False
        i += 1 + (word in ("--rcfile", "--init-file", "-W", "-X", "-I"))
    rest = list(words[i:])
    if command:
        return (rest[0] if rest else None), rest[1:], False
    return None, rest, from_stdin or not rest or rest[0] in _STDIN_FILES


def _su_command(words: Sequence[_Word]) -> _Word | None:
    """The command ``su … -c CMD`` (or ``--command=CMD``) runs, if any."""
    for i, word in enumerate(words[1:], 1):
        if word.startswith("--command="):
            return _Word(word.split("=", 1)[1], word.code)
        is_c = word in ("-c", "--command", "--session-command") or re.fullmatch(r"-[a-z]*c", word)
        if is_c and i + 1 < len(words):
            return words[i + 1]
    return None


def _find_exec(words: Sequence[str]) -> Iterator[list[str]]:
    """The commands ``find … -exec CMD {} ;`` runs."""
    for i, word in enumerate(words):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "+")), len(words))
            yield list(words[i + 1:end])


def _downloads(bodies: Iterable[str], depth: int) -> bool:
    """Whether code run in ``bodies`` (``$(…)``, ``<(…)``) downloads something (curl, wget)."""
    return any(isinstance(item, _Simple) and item.name in _DOWNLOADERS
               for body in bodies for item in _walk(body, None, depth + 1))


_FUNCTION = re.compile(r"(?:\bfunction\s+(?P<keyword>[^\s(){}|&;<>]+)\s*(?:\(\s*\))?|(?P<name>[^\s(){}|&;<>]+)"
                       r"\s*\(\s*\))\s*\{(?P<body>[^{}]*)\}")
_FORK_CALLS = re.compile(r"\bfork\s+while\s+fork\b|\bwhile\b.{0,20}\bfork\s*\(\s*\)", re.DOTALL)


def _fork_bomb(skeleton: str) -> str | None:
    """A function that runs itself twice at once (``f|f&``, ``f & f``), then is called: the text of it."""
    for match in _FUNCTION.finditer(skeleton):
        name = re.escape(match.group("keyword") or match.group("name"))
        twice = re.search(rf"(?<![\w:]){name}\s*(?:\|&?|&)\s*{name}(?![\w:])", match.group("body"))
        called = re.search(rf"(?:^|[\s;&|(]){name}(?:$|[\s;&|)])", skeleton[match.end():])
        if twice and called:
            return skeleton[match.start():match.end() + called.end()].strip()
    return None


# -- paths: normalised, and judged -------------------------------------------------------------------
_HOME: Path = ("home", "~")
_HOME_PREFIX = re.compile(r"(~[\w.-]*|\$HOME|\$\{HOME\})(?=/|$)")
_GLOBS = frozenset({"*", ".*", "{*,.*}", "{.*,*}"})
_SYSTEM_DIRS = {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root", "sbin",
                "srv", "sys", "usr", "var", "snap", "Users", "System", "Library", "Applications"}
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|mapper/|loop|mem$|kmem$|port$|sg)")


def _resolve(path: str, cwd: Path | None, *, globs: bool = True) -> Path | None:
    """``path`` as absolute parts, or ``None`` when unknown (relative to an unknown directory, a variable).

    ``/usr/..`` is ``/``; ``//``, ``/./`` and trailing slashes go; ``~``, ``$HOME`` and ``${HOME}`` are the
    home directory; with ``globs`` a trailing ``*`` or ``.*`` stands for its directory (it empties it).
    """
    home = _HOME_PREFIX.match(path)
    if home:
        parts, rest = ["home", home.group(1) if home.group(1).startswith("~") else "~"], path[home.end():]
    elif path.startswith("/"):
        parts, rest = [], path
    elif cwd is None:
        return None
    else:
        parts, rest = list(cwd), path
    for part in rest.split("/"):
        if "$" in part or "`" in part:
            return None
        if part == "..":
            del parts[-1:]
        elif part not in ("", "."):
            parts.append(part)
    while globs and parts and parts[-1] in _GLOBS:
        parts.pop()
    return tuple(parts)


def _where(path: Path | None) -> str | None:
    """``'the root directory'`` / ``'a home directory'`` / ``'the system directory /usr'`` or ``None``."""
    if path is None:
        return None
    if not path:
        return "the root directory"
    if len(path) == 2 and path[0] == "home" and path[1].startswith("~"):
        return "a home directory"
    if len(path) == 1 and path[0] in _SYSTEM_DIRS:
        return f"the system directory /{path[0]}"
    return None


def _device(word: str, cwd: Path | None, *, disks: bool = True) -> str | None:
    """The normalised path when ``word`` names a disk device (any ``/dev/`` path with ``disks=False``)."""
    path = _resolve(word, cwd, globs=False)
    if not path or path[0] != "dev":
        return None
    text = "/" + "/".join(path)
    return text if not disks or _DEVICE.match(text) else None


def _after_options(words: Sequence[_Word], takes_value: Iterable[str]) -> list[_Word]:
    """The words from the first one that is not an option (or its value) on."""
    i = 0
    while i < len(words) and words[i].startswith("-") and len(words[i]) > 1:
        i += 2 if words[i] in takes_value else 1
        if words[i - 1] == "--":
            break
    return list(words[i:])


def _operands(words: Sequence[str], takes_value: Iterable[str] = ()) -> list[str]:
    """The words that are not options (all after ``--``), skipping the values of ``takes_value`` options."""
    out, options, skip = [], True, False
    for word in words:
        if skip:
            skip = False
        elif options and word == "--":
            options = False
        elif options and word.startswith("-") and len(word) > 1:
            skip = word in takes_value
        else:
            out.append(word)
    return out


def _flags(words: Iterable[str]) -> set[str]:
    """The options before ``--``, short clusters split: ``-rf`` → ``{-r, -f}``."""
    flags: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word.startswith("--"):
            flags.add(word)
        elif word.startswith("-") and len(word) > 1:
            flags.update("-" + c for c in word[1:])
    return flags


# -- the rules' matchers: a simple command → (rule id, the reason's fields) -------------------------------
_Hit = tuple[str, dict[str, str]]


def _rm(s: _Simple) -> _Hit | None:
    if s.name != "rm":
        return None
    flags = _flags(s.words[1:])
    if "--no-preserve-root" in flags:
        return "rm-no-preserve-root", {}
    if not flags & {"-r", "-R", "--recursive"}:
        return None
    for target in _operands(s.words[1:]):
        where = _where(_resolve(target, s.cwd))
        if where:
            return "rm-recursive-root", {"where": where}
    return None


def _mkfs(s: _Simple) -> _Hit | None:
    if (s.name.startswith("mkfs") or s.name in ("mke2fs", "mkswap", "mkdosfs", "mkntfs")) and any(
            _device(w, s.cwd, disks=False) for w in s.words[1:]):
        return "mkfs-device", {}
    return None


def _dd(s: _Simple) -> _Hit | None:
    if s.name == "dd":
        for word in s.words[1:]:
            device = _device(word[3:], s.cwd) if word.startswith("of=") else None
            if device:
                return "dd-device", {"device": device}
    return None


def _device_write(s: _Simple) -> _Hit | None:
    for op, target in s.redirects:
        device = _device(target, s.cwd) if op in _WRITES else None
        if device:
            return "redirect-device", {"device": device}
    targets = _operands(s.words[1:])
    if (s.name == "tee" and any(_device(w, s.cwd) for w in targets)) or (
            s.name == "cp" and targets and _device(targets[-1], s.cwd)):
        return "write-device", {"name": s.name}
    if s.name in ("shred", "wipefs", "blkdiscard") and any(_device(w, s.cwd) for w in targets):
        return "wipe-device", {"name": s.name}
    listing = _flags(s.words[1:]) & {"-l", "--list", "-p", "--print"} or "print" in s.words
    if s.name in ("fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk") and not listing and any(
            _device(w, s.cwd) for w in targets):
        return "partition-device", {}
    return None


def _chmod_root(s: _Simple) -> _Hit | None:
    if s.name not in ("chmod", "chown", "chgrp") or not _flags(s.words[1:]) & {"-R", "--recursive"}:
        return None
    targets = _operands(s.words[1:])
    reference = any(w.startswith("--reference") for w in s.words)
    for target in targets if reference else targets[1:]:  # the first operand is the mode or the owner
        where = _where(_resolve(target, s.cwd))
        if where:
            return f"{s.name}-recursive-root", {"where": where}
    return None


def _find_delete(s: _Simple) -> _Hit | None:
    if s.name != "find":
        return None
    deletes = "-delete" in s.words or any(
        os.path.basename(run[0]) in ("rm", "shred") for run in _find_exec(s.words) if run)
    starts = []
    for word in s.words[1:]:
        if word.startswith(("-", "(", "!", ")")):
            break
        starts.append(word)
    for start in starts if deletes else ():
        where = _where(_resolve(start, s.cwd))
        if where:
            return "find-delete-root", {"where": where}
    return None


def _kill_all(s: _Simple) -> _Hit | None:
    """``kill -9 -1``, ``kill -- -1``, ``kill -1`` alone: pid -1.  In ``kill -1 12345`` -1 is the signal."""
    if s.name != "kill":
        return None
    args = list(s.words[1:])
    if args == ["-1"]:
        pids = args
    elif args[:1] and args[0] in ("-s", "-n", "--signal"):
        pids = args[2:]
    elif args[:1] and args[0].startswith("-") and args[0] != "--":
        pids = args[1:]
    else:
        pids = args
    pids = pids[1:] if pids[:1] == ["--"] else pids
    return ("kill-all", {}) if "-1" in pids else None


def _power(s: _Simple) -> _Hit | None:
    if s.name in ("shutdown", "reboot", "halt", "poweroff") and "--help" not in s.words:
        return "power", {"name": s.name}
    if s.name == "init" and s.words[1:2] in (("0",), ("6",)):
        return "power", {"name": "init 0/6"}
    if s.name == "systemctl" and any(w in ("poweroff", "reboot", "halt", "kexec") for w in s.words[1:]):
        return "power", {"name": "systemctl"}
    return None


def _move_home(s: _Simple) -> _Hit | None:
    if s.name != "mv":
        return None
    operands = _operands(s.words[1:], {"-t", "--target-directory", "-S", "--suffix"})
    targeted = any(w == "-t" or w.startswith("--target-directory") for w in s.words)
    for source in operands if targeted else operands[:-1]:  # mv ~/* ~/old/ tidies up; mv ~ /x does not
        where = _where(_resolve(source, s.cwd, globs=False))
        if where:
            return "mv-root", {"where": where}
    return None


def _crontab(s: _Simple) -> _Hit | None:
    if s.name == "crontab" and "-r" in _flags(s.words[1:]):
        return "crontab-remove", {}
    return None


_MATCHERS: tuple[Callable[[_Simple], _Hit | None], ...] = (
    _rm, _mkfs, _dd, _device_write, _chmod_root, _find_delete, _kill_all, _power, _move_home, _crontab)


# -- the check ------------------------------------------------------------------------------------------
def simple_commands(text: str) -> Iterator[list[str]]:
    """Every simple command shell ``text`` would run, as word lists (wrappers removed), nested ones included."""
    for item in _walk(text, None, 0):
        if isinstance(item, _Simple) and item.words:
            yield [str(word) for word in item.words]


def argv_commands(argv: Sequence[str]) -> Iterator[list[str]]:
    """The simple commands an argv would run (itself, and what a ``bash -c`` inside it runs)."""
    for item in _pipeline([_Command([_Word(w) for w in argv])], None, 0):
        if isinstance(item, _Simple) and item.words:
            yield [str(word) for word in item.words]


def _refusals(text: str | None, argv: Sequence[str] | None) -> Iterator[Refusal]:
    """Every rule that shell ``text`` (or an ``argv``) breaks, in the order the shell would get there."""
    if text is not None:
        # quotes and backslashes out first, so that r\m or "r"m cannot slip past the quick look
        if not _TRIGGERS.search(text.replace("\\", "").replace('"', "").replace("'", "")):
            return
        found: Iterable[_Simple | Refusal] = _walk(text, None, 0)
    else:
        found = _pipeline([_Command([_Word(w) for w in argv or ()])], None, 0)
    for item in found:
        if isinstance(item, Refusal):
            yield item
            continue
        for matcher in _MATCHERS:
            hit = matcher(item)
            if hit:
                yield _refusal(hit[0], item.display, **hit[1])
                break


def find_danger(text: str | None = None, argv: Sequence[str] | None = None) -> Refusal | None:
    """The first rule that shell ``text`` (or an ``argv``) breaks, or ``None``."""
    return next(_refusals(text, argv), None)


def check(guard: str, text: str | None = None, argv: Sequence[str] | None = None) -> Refusal | None:
    """Apply ``guard`` (``none``, ``catastrophic`` or ``all``) to a command; the refusal, if any.

    Under ``catastrophic`` a risky command earlier in the text (``curl … | sh``) does not hide a
    catastrophic one later (``rm -rf /``).
    """
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {', '.join(GUARDS)}, not {guard!r}")
    if guard == "none":
        return None
    return next((r for r in _refusals(text, argv) if guard == "all" or r.catastrophic), None)
