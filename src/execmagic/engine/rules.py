"""Guardrails (design §3.7): the dangerous-command rules and the shell parsing they need.

These are guardrails against accidents -- an agent's or a tired human's -- not
a sandbox.  A determined program gets past any pattern list; untrusted code
belongs in an OS sandbox (a container, a VM, a separate user).

The command check parses shell text into simple commands, looking through
``;``, ``&&``, ``||``, ``|``, ``&``, newlines, ``bash -c '…'``/``sh -c``,
``eval``, ``$(…)``, backticks, ``find -exec`` and wrappers such as ``sudo``,
``env``, ``nohup``, ``timeout`` and ``xargs``, then applies rules to each simple
command's words -- so ``echo "rm -rf /"`` and ``grep -r "rm -rf /" docs`` are
fine while ``bash -c 'rm -rf /'`` is not.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Literal

from .errors import ExecError

Guard = Literal["none", "catastrophic", "all"]
"""How much to refuse: nothing, only what destroys a system or data, or also risky commands."""
GUARDS: tuple[str, ...] = ("none", "catastrophic", "all")


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


# -- parsing shell text into simple commands ---------------------------------------------
_SEPARATORS = {";", "&&", "||", "|", "|&", "&", "(", ")", "{", "}", ";;", "!", "then", "do", "else",
               "elif", "if", "while", "until", "fi", "done", "esac", "in"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"}
_WRAPPERS: dict[str, set[str]] = {  # wrapper → its options that take a value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir"},
    "nohup": set(), "time": set(), "command": set(), "exec": {"-a"}, "builtin": set(),
    "setsid": set(), "stdbuf": {"-i", "-o", "-e"}, "unbuffer": set(),
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p", "-t"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-n", "-I", "-i", "-d", "-P", "-L", "-l", "-s", "-E", "-e", "-a"},
    "watch": {"-n", "-d"}, "strace": {"-o", "-e", "-p"}, "chronic": set(),
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SUBST_START = re.compile(r"\$\(|<\(|>\(|`")


def _substitutions(word: str) -> Iterator[str]:
    """The bodies of ``$(…)``, ``<(…)``, ``>(…)`` and backticks inside one word (nesting handled)."""
    i = 0
    while True:
        match = _SUBST_START.search(word, i)
        if match is None:
            return
        if match.group(0) == "`":
            end = word.find("`", match.end())
            end = len(word) if end < 0 else end
            yield word[match.end():end]
            i = end + 1
            continue
        depth, j = 1, match.end()
        while j < len(word) and depth:
            depth += {"(": 1, ")": -1}.get(word[j], 0)
            j += 1
        yield word[match.end():j - 1 if depth == 0 else j]
        i = j


def _tokens(text: str) -> list[str]:
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain words, still checked
        return text.replace(";", " ; ").replace("|", " | ").replace("&", " & ").split()


def _strip_wrappers(words: list[str]) -> list[str]:
    """``sudo -u root FOO=1 timeout 5 rm -rf /`` → ``rm -rf /``."""
    while words:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words:
            return words
        name = os.path.basename(words[0])
        if name not in _WRAPPERS:
            return words
        takes_value = _WRAPPERS[name]
        i = 1
        while i < len(words) and (words[i].startswith("-") or _ASSIGNMENT.match(words[i])):
            i += 2 if words[i] in takes_value else 1
        if name == "timeout" and i < len(words):
            i += 1  # the duration
        if name in ("nice", "watch") and i < len(words) and words[i].lstrip("-").isdigit():
            i += 1
        words = words[i:]
    return words


def simple_commands(text: str, depth: int = 0) -> Iterator[list[str]]:
    """Every simple command ``text`` would run, as word lists, including nested ones."""
    if depth > 8:
        return
    for body in _substitutions(text):  # $(…) and `…` anywhere, before quoting is resolved
        yield from simple_commands(body, depth + 1)
    current: list[str] = []
    for token in _tokens(text) + [";"]:
        if token in _SEPARATORS or (token and set(token) <= set(";&|()")):
            if current:
                yield from _expand(current, depth)
            current = []
        else:
            current.append(token)


def argv_commands(argv: Sequence[str]) -> Iterator[list[str]]:
    """The simple commands an argv would run (itself, and what a ``bash -c`` inside it runs)."""
    yield from _expand(list(argv), 0)


def _expand(words: list[str], depth: int) -> Iterator[list[str]]:
    for word in words:
        for body in _substitutions(word):
            yield from simple_commands(body, depth + 1)
    words = _strip_wrappers(words)
    if not words:
        return
    yield words
    name = os.path.basename(words[0])
    if name in _SHELLS:
        for i, word in enumerate(words[1:], 1):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and i + 1 < len(words):
                yield from simple_commands(words[i + 1], depth + 1)
                break
    elif name == "eval":
        yield from simple_commands(" ".join(words[1:]), depth + 1)
    elif name == "find":
        for i, word in enumerate(words):
            if word in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "\\;", "+")), len(words))
                yield from _expand(words[i + 1:end], depth + 1)


# -- the rules ----------------------------------------------------------------------------
_SYSTEM_DIRS = {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root", "sbin",
                "srv", "sys", "usr", "var", "snap", "Users", "System", "Library", "Applications"}
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|mapper/|loop|mem$|kmem$|port$|sg)")
_HARMLESS_DEVICE = re.compile(r"^/dev/(null|zero|stdout|stderr|stdin|tty|fd/|full$|random$|urandom$)")


def _is_root_or_home(path: str) -> str | None:
    """``'the root directory'`` / ``'your home directory'`` / ``'a system directory'`` or ``None``."""
    raw = path.strip()
    p = re.sub(r"(/\.?\*?)+$", "", raw)  # "/usr/" "/usr/*" "/usr/." → "/usr"; "/" "/*" → ""
    if p == "" and raw.startswith("/"):
        return "the root directory"
    if p in ("~", "$HOME", "${HOME}") or re.fullmatch(r"~[A-Za-z0-9_.-]*", p):
        return "a home directory"
    if p.startswith("/") and p.count("/") == 1 and p[1:] in _SYSTEM_DIRS:
        return f"the system directory {p}"
    return None


def _short_flags(words: Iterable[str]) -> set[str]:
    flags: set[str] = set()
    for word in words:
        if word.startswith("--"):
            flags.add(word)
        elif word.startswith("-") and len(word) > 1:
            flags.update("-" + c for c in word[1:])
    return flags


Rule = Callable[[str, list[str]], "tuple[str, str, bool] | None"]
"""(command name, words) → (rule id, reason, catastrophic) when the rule matches."""


def _rm(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name != "rm":
        return None
    flags = _short_flags(words[1:])
    if "--no-preserve-root" in flags:
        return "rm-no-preserve-root", "deletes everything under / (--no-preserve-root)", True
    if not flags & {"-r", "-R", "--recursive"}:
        return None
    for target in (w for w in words[1:] if not w.startswith("-")):
        where = _is_root_or_home(target)
        if where:
            return "rm-recursive-root", f"recursively deletes {where}", True
    return None


def _mkfs(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if (name.startswith("mkfs") or name in ("mke2fs", "mkswap", "mkdosfs", "mkntfs")) and any(
            w.startswith("/dev/") for w in words[1:]):
        return "mkfs-device", "formats a disk device, erasing it", True
    return None


def _dd(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name == "dd":
        for word in words[1:]:
            if word.startswith("of=") and _DEVICE.match(word[3:]):
                return "dd-device", f"writes raw data onto the disk device {word[3:]}", True
    return None


def _device_write(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    for i, word in enumerate(words):
        if word.endswith(">") and i + 1 < len(words) and _DEVICE.match(words[i + 1]):
            return "redirect-device", f"overwrites the disk device {words[i + 1]}", True
    targets = [w for w in words[1:] if not w.startswith("-")]
    if (name == "tee" and any(_DEVICE.match(w) for w in targets)) or (
            name == "cp" and targets and _DEVICE.match(targets[-1])):
        return "write-device", f"{name} writes onto a disk device", True
    if name in ("shred", "wipefs", "blkdiscard") and any(_DEVICE.match(w) for w in words[1:]):
        return "wipe-device", f"{name} erases a disk device", True
    if name in ("fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk") and any(
            _DEVICE.match(w) for w in words[1:]) and not _short_flags(words[1:]) & {"-l", "--list", "-p", "--print"} \
            and "print" not in words:
        return "partition-device", "rewrites a disk's partition table", True
    return None


def _chmod_root(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name not in ("chmod", "chown", "chgrp"):
        return None
    if not _short_flags(words[1:]) & {"-R", "--recursive"}:
        return None
    for target in (w for w in words[1:] if not w.startswith("-")):
        where = _is_root_or_home(target)
        if where:
            return f"{name}-recursive-root", f"recursively changes permissions or owners of {where}", True
    return None


def _find_delete(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name != "find" or len(words) < 2:
        return None
    starts = [w for w in words[1:] if not w.startswith("-")][:1]
    if starts and _is_root_or_home(starts[0]) and ("-delete" in words or any(
            w in ("-exec", "-execdir") and i + 1 < len(words) and os.path.basename(words[i + 1]) in ("rm", "shred")
            for i, w in enumerate(words))):
        return "find-delete-root", f"deletes files throughout {_is_root_or_home(starts[0])}", True
    return None


def _kill_all(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name == "kill" and "-1" in [w for w in words[1:] if not re.fullmatch(r"-(9|KILL|SIGKILL|TERM|15|s)", w)]:
        return "kill-all", "signals every process you may signal (pid -1)", False
    return None


def _power(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name in ("shutdown", "reboot", "halt", "poweroff") and "--help" not in words:
        return "power", f"{name} stops the machine", False
    if name == "init" and words[1:2] in (["0"], ["6"]):
        return "power", "init 0/6 stops the machine", False
    if name == "systemctl" and any(w in ("poweroff", "reboot", "halt", "kexec") for w in words[1:]):
        return "power", "systemctl stops the machine", False
    return None


def _move_home(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name == "mv":
        sources = [w for w in words[1:] if not w.startswith("-")][:-1]
        for source in sources:
            where = _is_root_or_home(source)
            if where:
                return "mv-root", f"moves {where} away", True
    return None


def _crontab(name: str, words: list[str]) -> tuple[str, str, bool] | None:
    if name == "crontab" and "-r" in _short_flags(words[1:]):
        return "crontab-remove", "removes every scheduled job of the user", False
    return None


_RULES: tuple[Rule, ...] = (_rm, _mkfs, _dd, _device_write, _chmod_root, _find_delete, _kill_all, _power,
                            _move_home, _crontab)
_FORK_BOMB = re.compile(r"([A-Za-z_:][\w:]*)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&[^}]*\}\s*;?\s*\1")
_DOWNLOADERS = {"curl", "wget", "fetch"}
_INTERPRETERS = _SHELLS | {"python", "python3", "perl", "ruby", "node"}


def _pipe_to_shell(text: str) -> Refusal | None:
    """``curl … | sh``: running code fetched from the network unseen."""
    stages: list[list[str]] = []
    current: list[str] = []
    for token in _tokens(text) + [";"]:
        if token in ("|", "|&"):
            stages.append(current)
            current = []
        elif token in _SEPARATORS or (token and set(token) <= set(";&|()")):
            stages.append(current)
            fetched_at = None
            for i, stage in enumerate(stages):
                words = _strip_wrappers(stage)
                if not words:
                    continue
                name = os.path.basename(words[0])
                if name in _DOWNLOADERS and fetched_at is None:
                    fetched_at = i
                elif fetched_at is not None and name in _INTERPRETERS and not [
                        w for w in words[1:] if not w.startswith("-")]:
                    pipeline = " | ".join(" ".join(s) for s in stages[fetched_at:i + 1])
                    return Refusal("pipe-to-shell", "runs code downloaded from the network without looking at it",
                                   pipeline, catastrophic=False)
            stages, current = [], []
        else:
            current.append(token)
    return None


#: Every rule needs one of these words (or a device path, or a function definition) in the text,
#: so text without any -- a long heredoc of data, most scripts -- is passed without parsing it.
_TRIGGERS = re.compile(
    r"\b(rm|mkfs\S*|mke2fs|mkswap|mkdosfs|mkntfs|dd|chmod|chown|chgrp|shred|wipefs|blkdiscard|fdisk|sfdisk|parted"
    r"|sgdisk|gdisk|cfdisk|find|kill|shutdown|reboot|halt|poweroff|init|systemctl|mv|crontab|curl|wget|fetch|tee|cp)\b"
    r"|/dev/|\(\)\s*\{"
)


def find_danger(text: str | None = None, argv: Sequence[str] | None = None) -> Refusal | None:
    """The first rule that shell ``text`` (or an ``argv``) breaks, or ``None``."""
    if text is not None:
        # quotes and backslashes out first, so that r\m or "r"m cannot slip past the quick look
        if not _TRIGGERS.search(text.replace("\\", "").replace('"', "").replace("'", "")):
            return None
        bomb = _FORK_BOMB.search(text)
        if bomb:
            return Refusal("fork-bomb", "a fork bomb: it multiplies processes until the machine stalls", bomb.group(0))
        commands: Iterable[list[str]] = simple_commands(text)
    else:
        commands = argv_commands(argv or ())
    nested_texts: list[str] = []
    for words in commands:
        name = os.path.basename(words[0])
        for rule in _RULES:
            found = rule(name, words)
            if found:
                return Refusal(found[0], found[1], " ".join(words), catastrophic=found[2])
        if name in _SHELLS or name == "eval":
            nested_texts.extend(w for w in words[1:] if " " in w)
    for candidate in ([text] if text is not None else []) + nested_texts:
        refusal = _pipe_to_shell(candidate)
        if refusal:
            return refusal
    return None


def check(guard: str, text: str | None = None, argv: Sequence[str] | None = None) -> Refusal | None:
    """Apply ``guard`` (``none``, ``catastrophic`` or ``all``) to a command; the refusal, if any."""
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {', '.join(GUARDS)}, not {guard!r}")
    if guard == "none":
        return None
    refusal = find_danger(text, argv)
    if refusal is None or (guard == "catastrophic" and not refusal.catastrophic):
        return None
    return refusal
