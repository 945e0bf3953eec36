"""Scripts a text writes and then runs: ``echo 'rm -rf /' > s.sh; sh s.sh``, ``cat > clean.sh <<EOF … EOF; ./clean.sh``.

An agent writes a script and runs it a line later: what runs is what was written, and the walk knows it when a printer
wrote it (``echo``, ``printf``, ``cat`` of a heredoc: :mod:`.printers`).  Each file a printer writes is kept for the
rest of the check (on disk, whatever subshell wrote it), as the command that wrote it, its words expanded then, by
where it is (``cd /tmp; … > s.sh; sh /tmp/s.sh``); the code is walked where a later command runs that file -- ``sh f``,
``bash f``, ``source f``, ``. f``, ``python3 f``, ``./f``.  A file written lets go of the ``$(…)`` bodies the check
found to give nothing (``walk._bodies``): one may run that file.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..shell.words import Word
from ..shell.work import ShellTooComplex
from .commands import Command
from .names import Names
from .options import SHELLS, SOURCES, interpreter_args, normal, ran_file
from .paths import Path, resolve
from .printers import emitted, may_emit

__all__ = ["note_written", "script_args", "written_code"]

#: How often, in all, what printers wrote may be walked as a script run (a script run ``_RUNS`` times over, or added
#: to and run again and again, quadratic in the text, some ten times: past it, the text is refused as too complex).
_RUNS = 4
#: The redirections that write a command's output to a file (``>>`` adds to what is there).
_WRITES = frozenset({">", ">|", ">>", "&>", "&>>"})


def note_written(command: Command, cwd: Path | None, names: Names) -> None:
    """Keep what ``command`` (as written) writes to a file it names plainly, when it may print what it was given."""
    targets = [(op, target) for op, target in command.redirects if op in _WRITES and target.live == () and
               not target.code]
    if not targets or not may_emit(command):
        return
    expanded = names.expand(command)  # (the names may change before the file runs)
    readings = names.readings
    readings.scripts_left += _RUNS * (sum(map(len, expanded.words)) + sum(len(t) for _, t in expanded.redirects))
    for op, target in targets:
        kept = readings.scripts.setdefault(_place(target, cwd), [])
        if not op.endswith(">>"):
            kept.clear()
        kept.append(expanded)
    readings.quiet.clear()  # a body found to give nothing may run this file (walk._bodies)


def written_code(words: Sequence[Word], cwd: Path | None, names: Names) -> str | None:
    """The code a command of ``words`` run in ``cwd`` runs from a file the text wrote before (``sh f``, ``./f``), as far
    as it is known (a part a printer did not spell is left out); ``None`` when it runs no such file."""
    scripts = names.readings.scripts
    file = ran_file(words) if scripts else None
    kept = scripts.get(_place(file, cwd)) if file is not None else None
    if kept is None:
        return None
    code = "".join(text for text in map(_line, kept) if text is not None)
    readings = names.readings  # a script added to and run again and again is walked whole each time: bounded
    if not getattr(readings.texts.get(code), "quiet", False):  # (one found to give nothing is passed at once)
        readings.scripts_left -= len(code)
        if readings.scripts_left < 0:
            raise ShellTooComplex(len(code))
    return code


def _line(command: Command) -> str | None:
    """What a printer wrote (``echo`` a line, ``echo -n`` and ``printf`` what they print)."""
    text = emitted(command)
    echo = command.program == "echo" and not any(word.startswith("-") and "n" in word
                                                  for word in command.unwrapped[0][1:2])  # (sudo echo -n …)
    return None if text is None else text + "\n" if echo else text


def _place(name: str, cwd: Path | None) -> tuple[str, ...]:
    """Where a file named ``name`` in ``cwd`` is: its path, or (a relative name where the directory is not known)
    ``("", name)``, the name normalised."""
    return resolve(name, cwd, globs=False) or ("", normal(name))


def script_args(words: Sequence[Word]) -> list[Word]:
    """What a script run by ``words`` has as ``$0``, ``$1``…: ``sh s.sh a`` gives ``s.sh a``, ``./s.sh a`` the same."""
    name = words[0][words[0].rfind("/") + 1:]
    return interpreter_args(words)[1] if name in SHELLS or name in SOURCES else list(words)
