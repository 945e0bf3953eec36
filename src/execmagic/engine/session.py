"""Persistent shell state (ARCHITECTURE.md, "The session"): ``cd`` and ``export``/``unset`` carry over between runs.

Each command is a fresh ``bash`` started with the session's cwd and environment.
An ``EXIT`` trap writes ``$PWD`` and ``export -p`` (both builtins: no extra
process) to a state file that the engine reads back after a normal end.  The
trap is set by a small prelude that bash reads through ``BASH_ENV`` before
the user's script, so the script bash runs is exactly the user's: its line
numbers and bash's own syntax-error messages are the user's, and no wrapper or
state path ever shows.  The prelude is a sealed memory file that bash opens as
``/dev/fd/N`` (:func:`prelude_fd`): no path in a folder that another user could
swap between a check and bash's read, and nothing a run could rewrite.  The
prelude restores a ``BASH_ENV`` the user had.  Exit codes and kills stay real;
there are no end-of-output markers to parse and no long-lived shell to wedge.  A run that was
stopped (timeout, interrupt, kill) or replaced its shell with ``exec`` leaves
the state as it was.  Non-exported shell variables do not persist.

The state also says which line of a multi-line script its failure came from (:mod:`.failure_line`): an
``ERR`` trap of the prelude notes each failure's line, silently, and the ``EXIT`` trap writes the one the
shell ended on, where bash lets that be known for sure.  A script's own ``ERR`` trap replaces it (its own
runs, and no line is named), as its own ``EXIT`` trap replaces the one that saves the state.  A bash run without
a session (``--isolated``, a local background shell) gets the same prelude told another file (:data:`FAILURE_VAR`):
it writes only the failed line there, and only when the shell failed, so the session is neither read nor written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
from collections.abc import Mapping

from ..process.environ import environ_copy
from ..process.launch import MARKER_VAR
from ..process.private import open_own_file, sealed_memory_file, write_file
from ..process.records import record
from ..shell.patterns import lazy_pattern

__all__ = [
    "FAILURE_VAR",
    "NOTE_FAILURE",
    "STATE_VAR",
    "USER_BASH_ENV_VAR",
    "Delta",
    "ShellSession",
    "handed_fds",
    "parse_export_listing",
    "prelude_fd",
    "prelude_path",
    "session_env",
    "take_state_file",
    "why_no_state",
    "write_prelude",
]

#: Variables bash maintains itself; they are not part of what a user exported.
_BASH_OWN = frozenset({"SHLVL", "_", "PWD", MARKER_VAR})
#: Where the prelude finds the state file, and the user's own ``BASH_ENV`` while ours is in its place.
STATE_VAR = "EXECMAGIC_STATE"
#: Where the prelude of a run without a session writes only which line failed (see :func:`failure_env`).
FAILURE_VAR = "EXECMAGIC_FAILED"
USER_BASH_ENV_VAR = "EXECMAGIC_BASH_ENV"
#: What an ERR trap does to note a failure (shell text, in single quotes), in one statement, so that ``$?`` and
#: ``$_`` are still the failure's: ``"LINE STATUS $_"`` into ``__execmagic_e``, and the one before it into
#: ``__execmagic_p`` (when the command that runs the whole script -- the ``eval`` of a standby or a boot, the
#: ``.`` of a ``.script`` file -- fails last, its line is no line of the user's: the one before is the
#: script's).  The trap gives ``$_`` back from ``__execmagic_e`` as it ends.  Short on purpose: bash parses
#: a trap's text each time it runs, and a loop of failing builtins runs it each time round.
NOTE_FAILURE = '''__execmagic_p=${__execmagic_e-} __execmagic_e="$LINENO $? $_";'''
#: ``$_`` when the command that runs the whole script failed (see :data:`NOTE_FAILURE`): the script (the ``eval``
#: of a standby or a boot), or the path of a ``.script`` file (a run's label and ``.script``, see ``plans.py``).
RUNNER = '''"$BASH_EXECUTION_STRING"|/*/[0-9][0-9][0-9][0-9]*.script'''
_PRELUDE = f"""\
# execmagic: save this shell's cwd and exports for the next run when it exits
# (without the run's own marker, so that a run that exported nothing leaves the same listing as the last;
# the script's xtrace and DEBUG trap switched off first, silently: neither may write into the state file;
# umask 077 as it ends, so the state -- every exported value -- is 0600 wherever the log folder is;
# appended to, never truncated: the file is new and empty, and a truncating open of a file on ext4 makes
# its close start writing it to disk, which the engine's unlink then waits for, a millisecond or more),
# and, when it ended with a failure, which line gave it (see failure_line.py): the ERR trap notes each failure
# (NOTE_FAILURE); the EXIT trap names its line when the shell ended with that status and $_ (bash keeps no
# $BASH_COMMAND nor $LINENO for an EXIT trap set here), and whether an --errexit trap stopped the shell there
# or the script's runner (eval, .) ended it, which leaves its own $_; or that no failure of that status was
# noted (an exit ended it, or a failure no ERR trap sees)
trap '{{ {NOTE_FAILURE} builtin : "${{__execmagic_e#* * }}"; }} 2>&-' ERR
# (a run without a session -- --isolated, a background shell -- names {FAILURE_VAR} instead: only a failure's line
# is written, and only when it failed, so that a run that succeeds leaves no file)
if [ -n "${{{STATE_VAR}+set}}" ]; then
  printf -v __execmagic_q %q "${STATE_VAR}"
  __execmagic_w=' {{ builtin printf "\\0%s\\0" "$PWD"; builtin unset {MARKER_VAR}; builtin export -p; }} >> '
  __execmagic_w+=$__execmagic_q
else
  printf -v __execmagic_q %q "${FAILURE_VAR}"; __execmagic_w=
fi
trap '{{ __execmagic_end="$? $_"; builtin set +x; builtin trap - DEBUG; builtin umask 077; }} >/dev/null 2>&1; \
if [[ ${{__execmagic_end%% *}} != 0 ]]; then {{ __execmagic_h= __execmagic_e=${{__execmagic_e-}}; \
case ${{__execmagic_e#* * }} in {RUNNER}) __execmagic_e=${{__execmagic_p-}} __execmagic_h=runner;; esac; \
__execmagic_x=${{__execmagic_e#* }}; \
if [[ -n $__execmagic_e && ${{__execmagic_x%% *}} == "${{__execmagic_end%% *}}" ]]; then \
if [[ $__execmagic_x == "$__execmagic_end" || -n ${{__execmagic_s-}}$__execmagic_h ]]; then \
builtin printf "%s\\n%s" "${{__execmagic_e%% *}}" "${{__execmagic_s-}}$__execmagic_h"; fi; \
elif [[ -z $__execmagic_h ]]; then builtin printf "\\nunnoted"; fi; }} >> '"$__execmagic_q"'; fi;'"$__execmagic_w" EXIT
unset __execmagic_q __execmagic_w {STATE_VAR} {FAILURE_VAR} BASH_ENV
{{close}}if [ -n "${{{USER_BASH_ENV_VAR}+set}}" ]; then
  export BASH_ENV="${USER_BASH_ENV_VAR}"; unset {USER_BASH_ENV_VAR}; . "$BASH_ENV"
else
  : "$BASH"  # $_ as bash -c starts with it (not this file's last word)
fi
"""
#: The prelude as a file holds it (a memory file's also closes the shell's copy of its descriptor, first, so
#: that ``$_`` is still what the prelude's end leaves it: by ``command exec``, which no exported function
#: named ``exec`` takes over, and whose redirection stays, where ``builtin exec``'s would be undone).
_PRELUDE, _PRELUDE_TEMPLATE = _PRELUDE.replace("{close}", ""), _PRELUDE
_PRELUDE_HASH = hashlib.sha256(_PRELUDE.encode()).hexdigest()[:8]
# One entry of `export -p`: the name, then a "double-quoted" or $'ANSI-C' value, or nothing (exported, unset).
_ENTRY = lazy_pattern(
    rb"(?:declare -[A-Za-z-]+|export) ([A-Za-z_][A-Za-z0-9_]*)"
    rb"(?:=(?:\"((?:[^\"\\]|\\.)*)\"|\$'((?:[^'\\]|\\.)*)'))?\n",
    re.S,
    often=True,
)
_DQ_ESCAPE = lazy_pattern(rb'\\([\\"$`])', often=True)
_ANSI_SIMPLE = {
    ord("a"): b"\a", ord("b"): b"\b", ord("e"): b"\x1b", ord("E"): b"\x1b", ord("f"): b"\f",
    ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("v"): b"\v",
    ord("\\"): b"\\", ord("'"): b"'", ord('"'): b'"', ord("?"): b"?",
}


def _unquote_ansi_c(data: bytes) -> bytes:
    """The body of ``$'...'`` ANSI-C quoting (bash uses it when a value holds control characters)."""
    out = bytearray()
    i = 0
    data += b"'"  # sentinel
    while data[i] != ord("'"):
        if data[i] != ord("\\"):
            out.append(data[i])
            i += 1
            continue
        esc = data[i + 1]
        if esc in _ANSI_SIMPLE:
            out += _ANSI_SIMPLE[esc]
            i += 2
        elif 0x30 <= esc <= 0x37:  # \NNN octal, up to three digits
            j = i + 1
            while j < i + 4 and 0x30 <= data[j] <= 0x37:
                j += 1
            out.append(int(data[i + 1 : j], 8) & 0xFF)
            i = j
        elif esc == ord("x"):
            j = i + 2
            while j < i + 4 and chr(data[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(data[i + 2 : j], 16))
            i = j
        elif esc == ord("c"):
            out.append(data[i + 2] & 0x1F)
            i += 3
        else:
            out += data[i : i + 2]
            i += 2
    return bytes(out)


def parse_export_listing(data: bytes) -> dict[str, str]:
    """Parse bash's ``export -p`` output into ``{name: value}`` (exported-but-unset names are skipped)."""
    env: dict[str, str] = {}
    pos = 0
    while pos < len(data):
        match = _ENTRY.match(data, pos)
        if match is None:
            raise ValueError(f"unexpected export listing at byte {pos}: {data[pos:pos + 40]!r}")
        name, double, ansi = match.groups()
        if double is not None:
            env[name.decode()] = _DQ_ESCAPE.sub(rb"\1", double).decode("utf-8", "surrogateescape")
        elif ansi is not None:
            env[name.decode()] = _unquote_ansi_c(ansi).decode("utf-8", "surrogateescape")
        pos = match.end()
    return env


# `exec` at a command's start and what follows it up to the command's end
_EXEC = lazy_pattern(r"(?:^|[;&|({\n]|\b(?:then|do|else))[ \t]*exec(?:[ \t]+(?P<rest>[^;&|\n]*))?", re.M)
_REDIRECTION = lazy_pattern(r"[0-9]*(?:[<>]&?|&>|>>|<<<?)[ \t]*[^ \t<>]*")
_EXIT_TRAP = lazy_pattern(r"\btrap\b[^\n]*\b(?:EXIT|0)\b")


def why_no_state(script: str) -> str:
    """Why a bash run that ended by itself left no state file, judged from its script.

    ``exec CMD`` replaces the shell (its EXIT trap never runs); ``exec >log`` only
    redirects and does not; a script's own EXIT trap replaces ours.
    """
    for match in _EXEC.finditer(script):
        rest = _REDIRECTION.sub(" ", match.group("rest") or "").strip()
        if rest:
            return "the shell replaced itself (exec)"
    if _EXIT_TRAP.search(script):
        return "the script set its own EXIT trap"
    return "the shell ended without saving it"


def write_prelude(directory: str) -> str:
    """Write a new prelude file into ``directory`` and return its path.

    Always a new file (``O_EXCL``, an unguessable name, mode 0600): bash sources it, so a file that
    was already there -- left by another version, or planted -- is never what runs.
    """
    path = os.path.join(directory, f"session-prelude-{_PRELUDE_HASH}-{secrets.token_hex(6)}.bash")
    return write_file(path, _PRELUDE.encode())


_prelude_lock = threading.Lock()
_NOT_YET = -2
_prelude_fd: int | None = _NOT_YET


def prelude_fd() -> int | None:
    """This process's prelude as a sealed memory file (see :func:`.private.sealed_memory_file`), made once
    and kept open for the process's life: a run is handed it and bash reads ``/dev/fd/N``, so one number
    serves every run (a standby started with it fits the next run).  ``None`` where there is no such file:
    the caller writes one (:func:`write_prelude`).  The prelude closes its copy in each shell as it ends,
    so the script and its children never hold it."""
    global _prelude_fd
    with _prelude_lock:
        if _prelude_fd == _NOT_YET:
            fd = sealed_memory_file("execmagic-prelude",
                                    lambda fd: _PRELUDE_TEMPLATE.replace("{close}", f"command exec {fd}<&-\n").encode())
            if fd is not None and fd <= 2:  # the process had a standard stream closed: the prelude would close it
                os.close(fd)
                fd = None
            _prelude_fd = fd
        return _prelude_fd


def prelude_path(folder: str) -> str:
    """What ``BASH_ENV`` names for the prelude: ``/dev/fd/N`` of :func:`prelude_fd`, else a new private file
    written into ``folder`` (:func:`write_prelude`; ``OSError``: it cannot be)."""
    fd = prelude_fd()
    return f"/dev/fd/{fd}" if fd is not None else write_prelude(folder)


def handed_fds(env: Mapping[str, str]) -> tuple[int, ...]:
    """The descriptors a run with ``env`` must be handed: the prelude's, when its ``BASH_ENV`` names it."""
    fd = _prelude_fd
    return (fd,) if fd is not None and fd >= 0 and env.get("BASH_ENV") == f"/dev/fd/{fd}" else ()


def session_env(env: Mapping[str, str], state_path: str, prelude_path: str, *,
                failure_only: bool = False) -> dict[str, str]:
    """``env`` plus what makes bash save its state to ``state_path`` (the prelude removes it all again).

    ``failure_only``: a run outside the session (``--isolated``, a background shell) writes there only which
    line of it failed, and only when it failed (nothing of its cwd or exports: it reads and writes no session)."""
    out = dict(env)
    if "BASH_ENV" in out:
        out[USER_BASH_ENV_VAR] = out["BASH_ENV"]
    out["BASH_ENV"] = prelude_path
    out.pop(STATE_VAR if failure_only else FAILURE_VAR, None)  # one of ours from an outer run: never both
    out[FAILURE_VAR if failure_only else STATE_VAR] = state_path
    return out


def take_state_file(path: str, limit: int) -> bytes | None:
    """What a run's prelude wrote to ``path`` (at most ``limit`` + 1 bytes: a sandboxed run can reach the file),
    the file removed; ``None`` when there is none, or something not of ours stood there (never read through a
    link, never a fifo)."""
    try:
        fd = open_own_file(path)
        try:
            state = _read_at_most(fd, limit + 1)
        finally:
            os.close(fd)
        os.unlink(path)
        return state
    except FileNotFoundError:
        return None
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return None


def _read_at_most(fd: int, size: int) -> bytes:
    """What ``fd`` holds, ``size`` bytes at most, read a piece at a time (a buffered ``read(size)`` first sets
    aside all of ``size``: 16 MB for every run's state file of a few KB, a sixth of reading it back)."""
    pieces: list[bytes] = []
    got = 0
    while got < size:
        piece = os.read(fd, min(size - got, 1 << 16))
        if not piece:
            break
        pieces.append(piece)
        got += len(piece)
    return b"".join(pieces)


@record
class Delta:
    """What one run changed: exports set or changed, names unset, and the new cwd (``None``: not changed)."""

    set: Mapping[str, str]
    unset: frozenset[str]
    cwd: str | None


class ShellSession:
    """The state that makes separate runs feel like one terminal.

    ``cwd`` is ``None`` until a run changes directory: until then the session
    follows the kernel's working directory.  The environment is kept as changes
    (``set``/``unset``) over the kernel's live ``os.environ``, so a variable set
    from Python later is still seen by the shell.

    Runs may overlap (threads, asyncio, an agent beside a notebook): each run
    writes back only what *it* changed relative to what it started from, under
    a lock, in the order runs end -- so a ``cd`` in one run is never undone by
    an unrelated run that started before it and ended after it.
    """

    def __init__(self, parent: ShellSession | None = None) -> None:
        #: A session this one starts from and follows where it changed nothing itself, never writing back
        #: to it: sandboxed runs see the notebook's ``cd`` and exports, and theirs never reach it.
        self.parent = parent
        self.cwd: str | None = None
        self.set: dict[str, str] = {}
        self.unset: set[str] = set()
        self._lock = threading.Lock()
        # the last export listing and the environment it came from, with the changes they made:
        # most runs export nothing new, and then the listing need not be parsed again
        self._last_seen: tuple[bytes, dict[str, str], Delta] | None = None

    def current_cwd(self) -> str:
        cwd = self.cwd
        if cwd is not None and os.path.isdir(cwd):
            return cwd
        return self.parent.current_cwd() if self.parent is not None else os.getcwd()

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        if self.parent is not None:
            base = self.parent.environment(base)
        env = environ_copy() if base is None else dict(base)
        with self._lock:
            for name in self.unset:
                env.pop(name, None)
            env.update(self.set)
        return env

    def delta(self, state: bytes, env_passed: Mapping[str, str], cwd_before: str) -> Delta:
        """What a run changed, from its state file's content and what it started from (``ValueError``: the
        content is not what the prelude writes)."""
        pwd, _, listing = state.partition(b"\0")
        if not pwd.startswith(b"/"):
            raise ValueError(f"no working directory in the state: {pwd[:40]!r}")
        new_cwd = pwd.decode("utf-8", "surrogateescape")
        seen = self._last_seen
        if seen is not None and seen[0] == listing and seen[1] == env_passed:
            exports = seen[2]
        else:
            exports = _export_changes(parse_export_listing(listing), env_passed)
            self._last_seen = (listing, dict(env_passed), exports)
        return Delta(exports.set, exports.unset, new_cwd if new_cwd != cwd_before else None)

    def apply(self, delta: Delta) -> None:
        """Write one run's changes back (the caller decides first whether the new cwd is allowed)."""
        with self._lock:
            for name, value in delta.set.items():
                self.set[name] = value
                self.unset.discard(name)
            for name in delta.unset:
                self.set.pop(name, None)
                self.unset.add(name)
            if delta.cwd is not None:
                self.cwd = delta.cwd

    def reset(self) -> None:
        with self._lock:
            self._last_seen = None
            self.cwd = None
            self.set.clear()
            self.unset.clear()


def _export_changes(exported: Mapping[str, str], env_passed: Mapping[str, str]) -> Delta:
    passed = {k: v for k, v in env_passed.items() if k not in _BASH_OWN}
    changed = {name: value for name, value in exported.items()
               if name not in _BASH_OWN and passed.get(name) != value}
    gone = frozenset(name for name in passed if name not in exported)
    return Delta(changed, gone, None)
