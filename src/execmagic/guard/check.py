"""The check: apply a guard level to a command and say what, if anything, refuses it.

Callers (the engine, and through it the magics and the agent tools) ask :func:`check`; a refused
command is a :class:`~.rules.Refusal` value, which the engine raises as :class:`CommandRefused`
with a hint that callers replace with their own for their audience.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ..process.errors import ExecError
from ..process.lazy import lazy_exports
from ..shell.patterns import lazy_pattern
from ..shell.work import ShellTooComplex, uncollected
from .armed import reached
from .forks import ENDLESS
from .globs import GLOB, named_by
from .levels import GUARDS, Guard
from .word_starts import at_word_start

if TYPE_CHECKING:
    from .commands import Simple
    from .rules import Refusal

__all__ = ["GUARDS", "CommandRefused", "Guard", "Refusal", "check", "find_danger"]

# the walk and the rules (some twenty modules, 10 ms to import) are imported by the first text past the quick look:
# most commands never get there, and the first command of a notebook should not wait for them
__getattr__, __dir__ = lazy_exports(__package__, {"Refusal": "rules"}, globals(), module=__name__)



class CommandRefused(ExecError):
    """A guardrail refused the command; nothing was started.

    ``refusal`` says which rule refused what and why; ``hint`` what the caller can do about it
    ("run it with guard='none' if you really mean it").  The message is built from these fields;
    a layer that speaks to someone else (a notebook user, a model) words its own from
    ``refusal`` and its own hint rather than editing this text.
    """

    def __init__(self, refusal: Refusal, hint: str) -> None:
        self.refusal = refusal
        self.hint = hint
        super().__init__(refusal, hint)

    def __str__(self) -> str:
        return f"{self.refusal.describe()}; {self.hint}"


#: Every rule needs one of these words (or a path under ``/dev``, ``/etc``, …, or a function definition) in the text,
#: or a redirection whose target the text builds (:data:`_BUILT_TARGET`), so text without any -- a long heredoc of
#: data, most scripts -- is passed without parsing it.  (The words, whole; :data:`_TRIGGERS` spells them so that the
#: search of a script without one takes 6 ms a MB, not 60: :mod:`.word_starts`.)
_TRIGGER_WORDS = [
    r"rm\w*", r"remove_\w+", r"mkfs\S*", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "dd", "chmod", "chown", "chgrp",
    "shred", "wipefs", "blkdiscard", "truncate", "fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk", "cryptsetup",
    "badblocks", "nvme", "find", "kill", "pkill", "killall5?", "shutdown", "reboot", "halt", "poweroff", "init",
    "telinit", "systemctl", "mv", "rsync", "crontab", "curl", "wget", "fetch", "tee", "cp", "function", "fork",
    "env",  # env: env -S'rm …' glues rm on
    "unlink", r"remove\w*", "dir_delete", "ddrescue", "dcfldd", "dc3dd", "clean", "tar", "zip", "7za?", "ln", "install",
    "wipe", "srm", "sed", "for"]
_TRIGGER_PLACES = (r"/(?:dev|proc|etc|boot|s?bin)\b|/lib|\.\w*(?:rc|profile|login|logout|env|environment)\b"
                   r"|config\.fish|\(\s*\)\s*[{(]")
_TRIGGERS = lazy_pattern(at_word_start(_TRIGGER_WORDS, after=r"\b") + "|" + _TRIGGER_PLACES, often=True)
_NAMED = lazy_pattern(r"\$\{?([A-Za-z_]\w*)", often=True)
#: A brace expression may be in the text (``r{m,}``, ``{q..s}m``): what it makes is not spelled there, so it is read.
#: (Each try reads from a ``{`` to the next brace or blank at most, and no further back: no text is read twice.)
_BRACES = lazy_pattern(r"(?<!\$)\{[^{}\s]*?(?:,|\.\.)")  # (${x,,} is no brace expression)
#: Where a command's name may stand: a line's or a list's start, a keyword, a wrapper, ``eval``, an assignment before
#: it, a word that may make no word (``$(true) $(printf …)``, ``X="a b" $(…)``: after a bracket or a quote).
_COMMAND_AT = (r"(?:^|[;&|()\n`{!\"']|\b(?:then|do|else|if|elif|while|until|time|sudo|doas|env|exec|eval"
               r"|command|builtin|nohup|nice|setsid|xargs|coproc|chronic|fakeroot|unbuffer|pkexec|ionice|strace"
               r"|busybox|toybox|unshare|systemd-run|nsenter|numactl|setpriv|eatmydata|valgrind|srun|screen)\b"
               r"|\b[A-Za-z_]\w*=[^\s=]*)[ \t]*[\"']?")
#: What a substitution's body starts with when the walk may know what it prints (``$(echo r)m``, ``$(sudo printf
#: …)``): a printer, a wrapper, anything but a plain name (a path, a quote, an expansion, an assignment, a group).
_PRINTERS = ("echo|printf|cat|eval|sudo|doas|env|nohup|time|command|exec|builtin|coproc|setsid|stdbuf|unbuffer|pkexec"
             "|nice|ionice|timeout|xargs|strace|chronic|busybox|toybox|chroot|flock|taskset|chrt|unshare|runuser"
             "|systemd-run|parallel|fakeroot|nsenter|cgexec|numactl|setpriv|prlimit|eatmydata|valgrind|srun|screen")
#: A command word the text does not spell: ``$'\x72m'`` (ANSI-C quoting spells anything), an expansion where a
#: command's name stands (``$x$y -rf /`` with ``x=r; y=m``; after a keyword or a wrapper too), or a substitution there
#: whose body may print a name (``$(printf '\x72m') -rf /``): the text is read.  A substitution whose body runs a
#: plain name (``$(a)``, a heredoc's line ``$(a``), is empty or starts with another expansion (``$($(…))``: that one
#: is judged where it stands) prints nothing the walk could know, and ``$((…))`` makes a number: not read for them.
_NOT_PRINTING = rf"(?![ \t\n]*(?:[)`$]|\Z|(?!(?:{_PRINTERS})(?![\w.+-]))[\w.+-]+(?:[\s;&|)<>]|\Z)))"
_UNSPELLED = lazy_pattern(rf"\$'|{_COMMAND_AT}(?:\$(?![(\s]|\Z)|(?:\$\((?!\()|`){_NOT_PRINTING})")
#: Such a word anywhere, where a command's name stands or not: looked for first, as a pattern that starts with one of
#: two characters is (``$(`` nested a MB deep has none, and the search for a command's place tried every offset).
#: Substitutions opened one in another are taken as one run, whole, from its first: only the last may print.  (The
#: run is taken whole as a lookahead takes it, and then matched: what ``++`` says from Python 3.11 on, which 3.10
#: reads as an error.)
_ANY_UNSPELLED = lazy_pattern(
    rf"\$'|\$(?![(\s]|\Z)|(?<!\$\()(?<!`)(?=(?P<run>(?:\$\((?!\()|`)+))(?P=run){_NOT_PRINTING}")
#: What makes a redirection write where the text does not spell it: a target built from a variable or a
#: substitution (``X=/e; > ${X}tc/passwd``), or a relative one after a ``cd`` (``cd /; cd etc; > passwd``).
_BUILT_TARGET = lazy_pattern(r"\$|`|" + at_word_start(["cd", "pushd"], after=r"\b"))


#: Where a word a glob is in ends (see :func:`_globbed_trigger`), and the characters before its start.
_WORD_END = lazy_pattern(r"[^\s;&|()<>]*")
_WORD_STARTS = frozenset(" \t\n;&|()<>")


def _globbed_trigger(text: str) -> bool:
    """Whether a word of ``text`` (quotes out) is a path that is a glob whose last part may be one of the words some
    rule needs (``/bin/r? -rf /``: bash runs the ``rm`` it finds; :mod:`.globs`, :func:`.inert.glob_variants`)."""
    pos = 0
    while (found := GLOB.search(text, pos)) is not None:
        start = found.start()
        while start > pos and text[start - 1] not in _WORD_STARTS:
            start -= 1
        pos = _WORD_END.match(text, found.end()).end()  # type: ignore[union-attr]  # (it matches empty text too)
        if "/" in (word := text[start:pos]) and named_by(word.rsplit("/", 1)[-1], _TRIGGER_NAMES):
            return True
    return False


#: The words some rule needs, spelled out (``rm\w*`` is ``rm``): what a glob is matched against.
_TRIGGER_NAMES = tuple("".join(itertools.takewhile(lambda c: c.isalnum() or c == "_", word)) for word in _TRIGGER_WORDS)


def _quick_look(text: str, env: Mapping[str, str] | None) -> bool:
    """Whether ``text`` (with the values of the variables it names) has a word some rule needs."""
    written = text
    # quotes and backslashes out first, so that r\m or "r"m cannot slip past the quick look
    if env and "$" in text:  # X=rm exported: $X -rf ~ needs rm's rule
        text += " " + " ".join(env.get(m.group(1), "") for m in _NAMED.finditer(text))
    # a backslash-newline first: bash drops the pair (r\⏎m is rm), where the backslash alone out leaves r⏎m
    text = text.replace("\\\n", "").replace("\\", "").replace('"', "").replace("'", "")
    return bool(_TRIGGERS.search(text)) or (">" in text and bool(_BUILT_TARGET.search(text))) or (
        "{" in text and bool(_BRACES.search(text))) or ("do" in text and bool(ENDLESS.search(text))) or (
        ("$" in written or "`" in written) and bool(_ANY_UNSPELLED.search(written)) and bool(
            _UNSPELLED.search(written))) or _globbed_trigger(text)


def _refusals(text: str | None, argv: Sequence[str] | None, env: Mapping[str, str] | None) -> Iterator[Refusal]:
    """Every rule that shell ``text`` (or an ``argv``) breaks, in the order the shell would get there."""
    values: list[str] = []
    if text is not None:
        if env:
            values = reached(text, env)  # a session's x='a[$(…)]' that ((x)) runs
        if not values and not _quick_look(text, env):
            return
    from .names import Names
    from .rules import Refusal
    from .walk import walk, walk_argv
    from .writes import judged

    if text is not None:
        names = Names.of(env)
        names.readings.every = False  # a command no rule judges and that hands nothing on need not be yielded
        found: Iterable[Simple | Refusal] = walk(text, None, 0, names)
        if values:  # the code in their subscripts, walked first
            from .subscripts import subscript_code

            found = itertools.chain(*(walk(body, None, 1, names) for value in values for body in subscript_code(value)),
                                    found)
    else:
        names = Names.of(env)
        found = walk_argv(argv or (), names)
    try:
        for item in found:
            refusal = item if isinstance(item, Refusal) else judged(item)
            if refusal is not None:
                yield refusal
    finally:  # what was read, let go at once: the bodies passed keep the names that keep them (a cycle), and the
        names.readings.quiet.clear()  # collector's next pass went through every word of a long script's reading


def find_danger(text: str | None = None, argv: Sequence[str] | None = None,
                env: Mapping[str, str] | None = None) -> Refusal | None:
    """The first rule that shell ``text`` (or an ``argv``) breaks, or ``None``."""
    try:
        with uncollected():  # (see check)
            return next(_refusals(text, argv, env), None)
    except (RecursionError, ShellTooComplex):  # what cannot be judged is refused (see check)
        return _too_deep(text, argv)


def _too_deep(text: str | None, argv: Sequence[str] | None) -> Refusal:
    from .rules import refuse

    return refuse("too-deep", (text if text is not None else " ".join(argv or ()))[:200])


def check(guard: str, text: str | None = None, argv: Sequence[str] | None = None,
          env: Mapping[str, str] | None = None) -> Refusal | None:
    """Apply ``guard`` (``none``, ``catastrophic`` or ``all``) to a command; the refusal, if any.

    ``env``: the variables the command starts with (a session's exports).  With it ``$D`` is what
    ``D`` holds, and a name neither in it nor assigned in the text is empty (:mod:`.names`);
    without it only the text's own assignments are known.
    Under ``catastrophic`` a risky command earlier in the text (``curl … | sh``) does not hide a
    catastrophic one later (``rm -rf /``).
    """
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {', '.join(GUARDS)}, not {guard!r}")
    if guard == "none":
        return None
    try:
        # the cycle collector paused: the walk makes no cycles, and each of its passes went through every token
        # of the text again (a third of a long script's check)
        with uncollected():
            return next((r for r in _refusals(text, argv, env) if guard == "all" or r.catastrophic), None)
    except (RecursionError, ShellTooComplex):  # a walk deeper than Python's stack, or text nested in itself
        # past what a reading linear in its length can follow: refused as what cannot be judged
        return _too_deep(text, argv)
