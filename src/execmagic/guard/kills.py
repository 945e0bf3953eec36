"""The rules about signals: ``kill`` of pid -1 (every process the caller may signal) or of init, and ``pkill`` or
``killall`` of every process of a user or of every name.

As bash's ``kill`` reads them: a pid is a number (``-01``, `` -1`` and ``-1`` are one pid), and in ``kill -1 12345``
the -1 is the signal.  ``pkill`` searches a pattern in each name: one that matches the empty text (``.``, ``x*``,
``a|``), or any pattern with ``-v``, matches every process.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .commands import Simple
from .options import operands_of

if TYPE_CHECKING:
    from .rules import Hit

__all__ = ["kill_all", "kill_init", "kill_user"]


def kill_init(s: Simple) -> Hit | None:
    """Any signal but 0 to pid 1 (``kill -9 1``, ``kill 1``); ``pkill``/``killall`` of init or systemd by name."""
    if s.name in ("pkill", "killall") and {"init", "systemd"} & set(operands_of(s.words[1:], _PKILL_VALUES)):
        return "kill-init", {}
    args = list(s.words[1:])
    if s.name != "kill" or args[:1] == ["-0"] or (args[:1] in (["-s"], ["-n"], ["--signal"]) and args[1:2] == ["0"]):
        return None  # signal 0 only asks whether it is there
    return ("kill-init", {}) if 1 in _kill_pids(args) else None


def kill_all(s: Simple) -> Hit | None:
    """``kill -9 -1``, ``kill -- -1``, ``kill -1`` alone: pid -1.  In ``kill -1 12345`` -1 is the signal."""
    if s.name != "kill":
        return None
    return ("kill-all", {}) if -1 in _kill_pids(list(s.words[1:])) else None


#: A pid as bash's ``kill`` reads one: blanks around, a sign, decimal digits (``-01`` and `` -1`` are -1); more
#: digits than a 64-bit number holds, past the zeros before them, are no pid to bash (and no int to Python).
_PID = re.compile(r"\s*([+-]?)0*([0-9]{1,19})\s*")


def _kill_pids(words: Sequence[str]) -> list[int]:
    """The pids a ``kill`` command line names, as numbers (in ``kill -1 12345`` -1 is the signal; ``kill -1``
    alone is pid -1)."""
    args = list(words)
    if len(args) == 1 and args[0].startswith("-") and _PID.fullmatch(args[0]):
        pids = args
    elif args[:1] and args[0] in ("-s", "-n", "--signal"):
        pids = args[2:]
    elif args[:1] and args[0].startswith("-") and args[0] != "--":
        pids = args[1:]
    else:
        pids = args
    pids = pids[1:] if pids[:1] == ["--"] else pids
    return [int(found.group(1) + found.group(2)) for found in map(_PID.fullmatch, pids) if found]


_PKILL_VALUES = {"-u", "-U", "--euid", "--uid", "--user", "-g", "-G", "--pgroup", "--group", "-P", "--parent", "-s",
                 "--session", "-t", "--terminal", "-F", "--pidfile", "--signal", "--ns", "--nslist"}
_KILLALL_VALUES = {"-u", "--user", "-s", "--signal", "-o", "--older-than", "-y", "--younger-than", "-n", "--ns"}
_MATCH_ALL = {"", ".", ".*", "^", "$", "^.*", ".*$", "^.*$"}
#: The longest ``pkill`` pattern compiled to see whether it matches every name (a name is at most 15 characters;
#: a pattern to pick processes is short).
_PATTERN_READ = 200


def kill_user(s: Simple) -> Hit | None:
    """``pkill -9 -u root`` (no name: all of root's processes), ``pkill .``, ``killall5``; not ``pkill -f myserver``."""
    if s.name == "killall5":
        return "kill-user", {"name": s.name, "whose": "outside its session"}
    if s.name not in ("pkill", "killall"):
        return None
    args = s.words[1:]
    users: list[str] = [args[i + 1] for i, w in enumerate(args[:-1]) if w in ("-u", "-U", "--euid", "--uid", "--user")]
    users += [w.split("=", 1)[1] for w in args if w.startswith(("--euid=", "--uid=", "--user="))]
    users += [w[2:] for w in args if w[:2] in ("-u", "-U") and len(w) > 2]  # glued: -uroot
    names = operands_of(args, _PKILL_VALUES if s.name == "pkill" else _KILLALL_VALUES)
    if users and not names:
        return "kill-user", {"name": s.name, "whose": f"of user {users[0]}"}
    patterns = s.name == "pkill" or any(w in ("-r", "--regexp") for w in args)  # killall -r: patterns too
    inverse = s.name == "pkill" and any(w in ("-v", "--inverse") for w in args)
    if patterns and names and (inverse or all(_matches_every_name(n) for n in names)):
        return "kill-user", {"name": s.name, "whose": "(its pattern matches every name)"}
    return None


def _matches_every_name(pattern: str) -> bool:
    """Whether a ``pkill`` pattern (searched for in each name) matches every name: one that matches the empty
    text does (``.``, ``x*``, ``^``).  One Python cannot read, or a long one (compiling it would cost more than a
    command's check may), is judged by the known list alone."""
    if pattern in _MATCH_ALL:
        return True
    if len(pattern) > _PATTERN_READ:
        return False
    try:
        return re.search(pattern, "") is not None or re.fullmatch(r"\.[*+]?|\^?\.[*+]?\$?", pattern) is not None
    except (re.error, RecursionError, OverflowError):
        return False
