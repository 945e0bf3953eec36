"""What a wrapper runs: the words after its options and operands (``sudo -u root rm``, ``timeout 5 rm``), ``env -S``'s
string split into words, and ``parallel``'s command with its arguments put in (:func:`.commands.unwrap` takes the
wrappers off, one after another)."""

from __future__ import annotations

import re
from collections.abc import Container, Sequence

from ..shell.lexer import tokenize
from ..shell.words import Word

__all__ = ["ASSIGNMENT", "WRAPPERS", "parallel", "split_string", "takes_next", "unwrapped", "wraps"]

_PARALLEL_ARGS = (":::", "::::", ":::+", "::::+")


def _split(text: str) -> list[Word]:
    """The words of ``text`` (``env -S 'rm -rf /'``, ``parallel 'rm -rf {}'``), as a shell splits them."""
    return [token for token in tokenize(text)[0] if isinstance(token, Word)]


def split_string(word: str, following: Sequence[Word]) -> list[Word] | None:
    """``env -S STR``, ``-iSSTR``, ``--split-string=STR``: STR's words, then ``following`` (less the value)."""
    if word.startswith("--split-string="):
        return [*_split(word.split("=", 1)[1]), *following]
    short = re.fullmatch(r"-[iv0]*S(.*)", word, re.DOTALL)  # -i, -v, -0 take no value
    if word == "--split-string" or (short and not short.group(1)):
        return [*_split(following[0]), *following[1:]] if following else []
    return [*_split(short.group(1)), *following] if short else None


def parallel(words: list[Word]) -> list[Word]:
    """``parallel rm -rf ::: / ~`` → ``rm -rf / ~`` (the arguments replace ``{}``, else are appended)."""
    cut = next((i for i, w in enumerate(words) if w in _PARALLEL_ARGS), len(words))
    command, args = words[:cut], [w for w in words[cut + 1:] if w not in _PARALLEL_ARGS]
    if len(command) == 1 and " " in command[0]:  # parallel 'rm -rf {}' ::: /
        command = _split(command[0])
    if "{}" not in command:
        return command + args
    return [a for w in command for a in (args if w == "{}" else [w])]


_WRAPPERS: dict[str, set[str]] = {  # wrapper → its options that take a value (a cluster -iu: see takes_next)
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"},
    "doas": {"-u", "-C"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir", "--split-string"},
    "nohup": set(), "time": set(), "command": set(), "exec": {"-a"}, "builtin": set(), "coproc": set(),
    "setsid": set(), "stdbuf": {"-i", "-o", "-e"}, "unbuffer": set(), "pkexec": {"--user"},
    "nice": {"-n", "--adjustment"}, "ionice": {"-c", "-n", "-p", "-t"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "xargs": {"-n", "-I", "-d", "-P", "-L", "-s", "-E", "-a"},
    "strace": {"-o", "-e", "-p"}, "chronic": set(), "busybox": set(), "toybox": set(),
    "chroot": {"--userspec", "--groups"}, "flock": {"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"},
    "taskset": set(), "chrt": {"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"},
    "unshare": {"-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd", "--propagation", "--setgroups"},
    "runuser": {"-u", "-g", "-G", "-w", "-s", "--user", "--group", "--supp-group", "--whitelist-environment",
                "--shell"},
    "systemd-run": {"-u", "-p", "-E", "-M", "-H", "--unit", "--property", "--description", "--slice", "--setenv",
                    "--machine", "--host", "--uid", "--gid", "--nice", "--working-directory", "--service-type",
                    "--on-active", "--on-boot", "--on-calendar", "--on-startup", "--on-unit-active"},
    "parallel": {"-j", "-S", "-a", "-d", "-I", "-N", "-n", "-L", "-C", "--jobs", "--sshlogin", "--arg-file",
                 "--delimiter", "--colsep", "--tmpdir", "--joblog", "--results", "--timeout", "--env", "--workdir"},
    "fakeroot": set(), "nsenter": {"-t", "-S", "-G", "--target", "--setuid", "--setgid"},
    "cgexec": {"-g"}, "numactl": {"-C", "-N", "-m", "-p", "-i"}, "setpriv": set(), "prlimit": {"-p", "--pid"},
    "eatmydata": set(), "valgrind": set(),  # (valgrind's options are --name=value: one word each)
    "srun": {"-n", "-N", "-c", "-p", "-t", "-J", "-w", "-x", "-o", "-e", "-i", "-A", "-D", "-C", "-d", "-m", "-q",
             "-G", "-W", "--ntasks", "--nodes", "--cpus-per-task", "--partition", "--time", "--job-name",
             "--nodelist", "--exclude", "--output", "--error", "--input", "--account", "--chdir", "--constraint",
             "--dependency", "--distribution", "--mem", "--gres", "--qos", "--export"},
    "screen": {"-S", "-c", "-e", "-h", "-p", "-s", "-T", "-t"},  # (screen -dm CMD runs CMD, not a shell)
}
WRAPPERS = frozenset(_WRAPPERS)
#: Wrappers with operands before the command: ``timeout 5 CMD``, ``chroot DIR CMD``, ``taskset MASK CMD``, …
_OPERANDS = {"timeout": 1, "chroot": 1, "flock": 1, "taskset": 1, "chrt": 1}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def wraps(name: str, words: Sequence[Word]) -> bool:
    """Whether ``name`` runs the rest as a command: ``runuser`` only with ``-u``; ``flock`` not with ``-c`` (code)."""
    if name == "runuser":
        return any(w in ("-u", "--user") or w.startswith("--user=") for w in words[1:])
    if name == "flock":
        return not any(w in ("-c", "--command") or w.startswith("--command=") for w in words[1:])
    return name in _WRAPPERS


def unwrapped(name: str, words: list[Word], handed: list[Word] | None) -> list[Word]:
    """The command wrapper ``name`` (``words[0]``) runs: its options and operands taken off (its assignments put in
    ``handed``, if given)."""
    takes_value, i = _WRAPPERS[name], 1
    while i < len(words) and (words[i].startswith("-") or ASSIGNMENT.match(words[i])):
        split = split_string(words[i], words[i + 1:]) if name == "env" else None
        if split is not None:  # env -S 'rm -rf /': the string's words are env's arguments now
            words = [*words[:i], *split]
            continue
        if handed is not None and not words[i].startswith("-"):
            handed.append(words[i])
        option = words[i]
        i += 1 + takes_next(option, takes_value)  # (past the end when its value is missing: nothing runs)
        if option == "--":
            break
    i += _OPERANDS.get(name, 0)  # the duration, the new root, the lock file, the CPU mask, the priority
    if name == "nice" and i < len(words) and words[i].lstrip("-").isdigit():
        i += 1
    return parallel(words[i:]) if name == "parallel" else words[i:]




def takes_next(word: str, takes_value: Container[str]) -> int:
    """Whether the word after option ``word`` is its value (1) or not (0), as getopt reads it: ``-u root``, and in a
    cluster of short options the one that takes a value ends it -- its value the rest of the word (``-n5``,
    ``-iuroot``) or, at its end, the next word (``sudo -iu root rm``: root is ``-u``'s)."""
    if word in takes_value:
        return 1
    if word[:1] != "-" or word.startswith("--") or len(word) < 3:  # (an assignment, NAME=$HOME, is no option)
        return 0
    for j in range(1, len(word)):
        if "-" + word[j] in takes_value:
            return 1 if j == len(word) - 1 else 0
    return 0
