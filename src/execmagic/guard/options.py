"""What a command's arguments mean: options and operands, and which of them is code for a shell.

The rules need to know that in ``rm -rf -- -x /`` the flags are ``-r`` and ``-f`` and the
operands ``-x`` and ``/``; that ``bash -o pipefail -c CODE`` runs CODE; that ``su -c CMD`` and
``find … -exec CMD ;`` run CMD.  Each program's option syntax is read only as far as that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Container, Iterable, Iterator, Sequence

from ..shell.words import Word
from .wrapped import takes_next

__all__ = ["AWKS", "DOWNLOADERS", "INTERPRETER", "SHELLS", "SOURCES", "after_options", "find_exec", "flags_of",
           "interpreter_args", "kept_code", "operands_of", "ran_file", "saved_files", "su_command"]

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "fish", "csh", "tcsh"}
INTERPRETER = re.compile(r"(python[0-9.]*|pypy[0-9.]*|perl|ruby|node|nodejs|php[0-9.]*|lua[0-9.]*|luajit|julia"
                         r"|Rscript|R|deno|bun|tclsh|osascript|[gmn]?awk)")
#: awk runs its first operand as its program (``awk 'BEGIN{system("…")}'``), not a file.
AWKS = {"awk", "gawk", "mawk", "nawk"}
#: A cluster of flags ending in the one that takes code: perl -pe, ruby -ne, python -Bc.
_CODE_CLUSTER = re.compile(r"-[lnpaiwsBbdOqSuvx0]*[ceE]")
_AWK_VALUES = {"-F", "-v", "--field-separator", "--assign"}
DOWNLOADERS = {"curl", "wget", "fetch"}
SOURCES = {".", "source"}
STDIN_FILES = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}


def interpreter_args(words: Sequence[Word]) -> tuple[Word | None, list[Word], bool]:
    """(the ``-c``/``-e`` code, the operands, whether it reads its program from stdin) of a shell or interpreter."""
    name = words[0][words[0].rfind("/") + 1:]  # (its basename)
    if name in SOURCES:
        return None, list(words[1:]), bool(words[1:]) and words[1] in STDIN_FILES
    if name in AWKS or (name == "deno" and len(words) > 1 and words[1] == "eval"):
        return _program_operand(words[1 + (name == "deno"):])
    shell, i, command, from_stdin = name in SHELLS, 1, False, False
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
        prints = word in ("-p", "--print") and name in ("node", "nodejs", "bun")  # node -p CODE evaluates CODE
        if not shell and (word in ("-c", "-e", "-E", "--eval", "-r") or prints or _CODE_CLUSTER.fullmatch(word)):
            return (words[i + 1] if i + 1 < len(words) else None), list(words[i + 2:]), False
        if not shell and word == "-m":
            return None, [], False
        i += 1 + (word in ("--rcfile", "--init-file", "-W", "-X", "-I"))
    rest = list(words[i:])
    if command:
        return (rest[0] if rest else None), rest[1:], False
    return None, rest, from_stdin or not rest or rest[0] in STDIN_FILES


def _program_operand(words: Sequence[Word]) -> tuple[Word | None, list[Word], bool]:
    """awk's (or ``deno eval``'s) program: ``-e``/``--source`` code, else the first operand; none with ``-f``."""
    i = 0
    while i < len(words) and words[i].startswith("-") and len(words[i]) > 1:
        word = words[i]
        if word in ("-e", "--source", "--eval"):
            return (words[i + 1] if i + 1 < len(words) else None), list(words[i + 2:]), False
        if word in ("-f", "--file") or word.startswith(("-f", "--file=")):
            return None, [], False
        i += 2 if word in _AWK_VALUES else 1
        if word == "--":
            break
    return (words[i] if i < len(words) else None), list(words[i + 1:]), False


def su_command(words: Sequence[Word]) -> Word | None:
    """The command ``su … -c CMD`` (or ``--command=CMD``) runs, if any; or the one ``tmux new -d CMD`` hands a shell."""
    if words and words[0] == "tmux":
        return _tmux_command(words)
    for i, word in enumerate(words[1:], 1):
        if word.startswith("--command="):
            return Word(word.split("=", 1)[1], word.code)
        is_c = word in ("-c", "--command", "--session-command") or re.fullmatch(r"-[a-z]*c", word)
        if is_c and i + 1 < len(words):
            return words[i + 1]
    return None


#: tmux's commands that run a shell command (its words after the options, joined), and their options that take a value.
_TMUX_RUNS = {"new", "new-session", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
              "respawn-window", "respawnw", "run-shell", "run", "display-popup", "popup"}
_TMUX_VALUES = {"-c", "-e", "-F", "-n", "-s", "-t", "-x", "-y", "-f", "-l", "-T", "-w"}


def _tmux_command(words: Sequence[Word]) -> Word | None:
    """What ``tmux [-L s] new -d 'rm -rf ~'`` has its shell run: the words after the command's options, joined."""
    command = after_options(words[1:], ("-L", "-S", "-f", "-c", "-T"))  # tmux's own: -L NAME, -S PATH, -f FILE
    if not command or command[0] not in _TMUX_RUNS:
        return None
    rest = after_options(command[1:], _TMUX_VALUES)
    return Word(" ".join(rest), [code for word in rest for code in word.code]) if rest else None


def kept_code(name: str, words: Sequence[Word]) -> list[Word]:
    """The code ``trap`` or ``alias`` keeps to run later: ``trap 'CMD' EXIT`` runs CMD when EXIT comes, ``alias
    x='CMD'`` runs it where ``x`` stands as a command (a script's bash after ``shopt -s expand_aliases``, an
    interactive one always) -- walked where it is kept, as the name it is kept under is not followed."""
    if name == "trap":
        args = list(words[2:] if len(words) > 1 and words[1] == "--" else words[1:])
        return [args[0]] if len(args) > 1 and not args[0].startswith("-") else []
    return [Word(w.split("=", 1)[1], w.code) for w in words[1:] if "=" in w and not w.startswith("-")]


def find_exec(words: Sequence[str]) -> Iterator[list[str]]:
    """The commands ``find … -exec CMD {} ;`` runs."""
    for i, word in enumerate(words):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "+")), len(words))
            yield list(words[i + 1:end])


def after_options(words: Sequence[Word], takes_value: Container[str]) -> list[Word]:
    """The words from the first one that is not an option (or its value) on."""
    i = 0
    while i < len(words) and words[i].startswith("-") and len(words[i]) > 1:
        option = words[i]
        i += 1 + takes_next(option, takes_value)  # (a cluster as getopt reads it; past the end: no words left)
        if option == "--":
            break
    return list(words[i:])


def operands_of(words: Sequence[str], takes_value: Iterable[str] = ()) -> list[str]:
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


def flags_of(words: Iterable[str]) -> set[str]:
    """The options before ``--``, short clusters split: ``-rf`` → ``{-r, -f}``; a long option cut short, as GNU
    programs take one (``rm --r``, ``chmod --rec``), is ``--recursive`` too."""
    flags: set[str] = set()
    for word in words:
        if word == "--":
            break
        if word.startswith("--"):
            flags.add(word)
            if len(word) >= 3 and "--recursive".startswith(word):
                flags.add("--recursive")
        elif word.startswith("-") and len(word) > 1:
            flags.update("-" + c for c in word[1:])
    return flags



def _url_name(words: Sequence[str]) -> list[str]:
    """The file a download of the URLs in ``words`` is saved as by default: the last part of the URL's path."""
    urls = [w for w in words if "://" in w]
    return [os.path.basename(url.split("?")[0].split("#")[0].rstrip("/")) or "index.html" for url in urls[:1]]


def saved_files(words: Sequence[str]) -> list[str]:
    """The files ``curl -o F``/``-O``, ``wget [-O F]`` or ``fetch -o F`` saves (``-`` is stdout, not a file)."""
    name, out = os.path.basename(words[0]), []
    output, remote = ("O", None) if name == "wget" else ("o", "O")
    for i, word in enumerate(words[1:], 1):
        value = words[i + 1] if i + 1 < len(words) else ""
        if word in ("--output", "--output-document"):
            out.append(value)
        elif word.startswith(("--output=", "--output-document=")):
            out.append(word.split("=", 1)[1])
        elif word in ("--remote-name", "--remote-name-all") or (
                remote and re.fullmatch(rf"-[a-zA-Z]*{remote}[a-zA-Z]*", word) and output not in word):
            out += _url_name(words)
        elif (cluster := re.fullmatch(rf"-[a-zA-Z]*?{output}(.*)", word)) and not word.startswith("--"):
            out.append(cluster.group(1) or value)  # -o F, -oF, -fsSLo F
    if name == "wget" and not out:
        out = _url_name(words)
    return [os.path.normpath(f) for f in out if f and f != "-"]


def ran_file(words: Sequence[Word]) -> str | None:
    """The file a command runs as a program or script: ``./f``, ``sh f``, ``python3 f``, ``. f`` (normalised)."""
    name = words[0][words[0].rfind("/") + 1:] if words else ""  # (its basename)
    if name in SHELLS or name in SOURCES or INTERPRETER.fullmatch(name):
        code, operands, _ = interpreter_args(words)
        return normal(operands[0]) if code is None and operands and operands[0] else None
    return normal(words[0]) if words and "/" in words[0] else None


def normal(path: str) -> str:
    """``os.path.normpath`` of ``path``, asked only where it may change it (a name with no ``/`` is itself)."""
    return os.path.normpath(path) if "/" in path or not path else path
