"""Which line of a multi-line bash script gave the status a session run ended with (``Result.failed_line``).

The session's prelude (:mod:`.session`) holds an ``ERR`` trap that notes each failure's line, status and
``$_``, and its ``EXIT`` trap writes what it knows first in the state file: the noted line when the shell
ended right on that failure, or that no failure of the status it ended with was noted.  An ``EXIT`` trap
set before the script has no line to read (``$LINENO`` starts again at 1, ``$BASH_COMMAND`` is put back as
it was before the script), so what the traps cannot tell apart is read from the script here, and a line is
named only where it is sure: a wrong line is worse than none.
"""

from __future__ import annotations

from ..shell.patterns import lazy_pattern
from .session import take_state_file

__all__ = ["failed_line", "failed_line_in", "names_lines"]

_TRAP_WORD = lazy_pattern(r"\btrap\b")
_ERR_WORD = lazy_pattern(r"\bERR\b")
#: What may stand just before a command on a line (its start aside), and just after it: blanks, operators,
#: a group's brackets, a negation; after it also a comment.  ``echo "exit 3"`` holds no command ``exit``.
_BEFORE = frozenset(" \t;&|(){}!")
_AFTER = frozenset(" \t;&|)}#")


def _holds_command(line: str, command: str) -> bool:
    """Whether ``command``'s text stands on ``line`` as a command (not inside a longer word or a string, not
    in a comment line)."""
    if line.lstrip().startswith("#"):
        return False
    at = line.find(command)
    while at >= 0:
        end = at + len(command)
        if (at == 0 or line[at - 1] in _BEFORE) and (end == len(line) or line[end] in _AFTER):
            return True
        at = line.find(command, at + 1)
    return False


#: ``exit`` as a command and its word (``exit``, ``exit 3``, ``exit $rc``); ``set -e`` and its other spellings.
_EXIT = lazy_pattern(r"(?:^|(?<=[ \t;&|(){}!]))exit(?:[ \t]+(?P<word>[^ \t;&|)}#]+))?(?=$|[ \t;&|)}#])")
_ERREXIT = lazy_pattern(r"\bset[ \t]+-[A-Za-z]*e|errexit")


def names_lines(script: str) -> bool:
    """Whether a failure of ``script`` can be put on one of its lines: it has more than one.  A run without a
    session notes nothing for one line (its line is the script), so that its shell still replaces itself by
    its one command: no process more than before (an EXIT trap would keep bash waiting for it)."""
    return "\n" in script.rstrip("\n")


def failed_line(failure: bytes, script: str, status: int) -> int | None:
    """The line of ``script`` that gave the ``status`` a session run ended with, from what the prelude's EXIT
    trap wrote: the line its ERR trap noted when the shell ended with that failure's status and ``$_``, and
    ``stop`` when ``--errexit``'s trap stopped the shell right there (:data:`.languages.ERREXIT_TRAP`), or
    ``runner`` when the command that ran the script (a standby's ``eval``, ``.`` of a big one) ended it with
    that status, and its own ``$_``; or ``unnoted`` when no failure of that status was noted: an ``exit``
    ended it (see :func:`_exit_line`), or a failure no ERR trap sees.

    ``None`` where it is not known for sure, rather than a wrong line: a one-line script (its line is the
    script); a noted failure in a script that may have ended by ``exit`` (an ``exit`` fires no ERR trap and
    leaves ``$_`` as it was, so ``false`` then ``exit 1`` would look like ``false`` ending it), unless
    --errexit stopped it; a script that sets its own ERR trap (it replaces the one that notes); one that may
    have ended on a failure no ERR trap sees, which only ``a && b`` and ``! a`` give, on a line after the
    noted one (one of them ran after it, its status the same, ``$_`` maybe the same too).  A sandboxed run
    can write its state file: only a number within the script is taken.
    """
    lines = script.rstrip("\n").split("\n")
    noted, _, how = failure.partition(b"\n")
    if not names_lines(script) or (_TRAP_WORD.search(script) and any(_ERR_WORD.search(text) for text in lines)):
        return None  # plain searches, each linear in the text, whatever it holds
    if how == b"unnoted" and not noted:
        return _exit_line(lines, status)
    line = int(noted) if noted.isdigit() and len(noted) < 10 else 0
    if not 1 <= line <= len(lines):
        return None
    if how == b"stop":
        return line
    if any(_EXIT.search(text) for text in lines if not text.lstrip().startswith("#")):
        return None
    if any("&&" in text or _holds_command(text, "!") for text in lines[line:]):
        return None
    return line


def failed_line_in(path: str, script: str, made: bool, status: int | None) -> int | None:
    """:func:`failed_line` of a run without a session (``--isolated``, a background shell), from what its
    prelude wrote to ``path`` (:attr:`.Plan.failure_path`), which is removed; ``status`` ``None`` (it was
    stopped, or never ran): only removed.  A run that succeeded wrote nothing: no file is looked for, unless one
    was ``made`` for it (a sandbox's, see :func:`.walls.inside`)."""
    if status == 0 and not made:
        return None
    failure = take_state_file(path, 64)  # a line number and a word: no more is read (a sandbox can write there)
    return failed_line(failure, script, status) if failure and status else None


def _exit_line(lines: list[str], status: int) -> int | None:
    """The line of the one ``exit N`` that gives ``status``, in a script whose status no ERR trap saw: only an
    exit or ``a && b``/``! a`` end a script so (bash keeps no line for an EXIT trap to read).  ``None`` when
    one of those may have given it instead: ``&&`` or ``!`` anywhere, an ``exit`` whose status is not
    written (``exit``, ``exit $rc``), a ``set -e`` of the script's (a function's failure ends the shell
    inside it, unseen), or no line or several that hold ``exit N``."""
    found = set()
    for number, text in enumerate(lines, 1):
        if text.lstrip().startswith("#"):
            continue
        if "&&" in text or _holds_command(text, "!") or _ERREXIT.search(text):
            return None
        for match in _EXIT.finditer(text):
            word = match.group("word") or ""
            if not word.isdigit() or len(word) > 9:
                return None
            if int(word) % 256 == status:
                found.add(number)
    return found.pop() if len(found) == 1 else None
