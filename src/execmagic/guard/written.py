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
from .commands import Command
from .names import Names
from .options import normal, ran_file
from .paths import Path, resolve
from .printers import emitted, may_emit

__all__ = ["note_written", "written_code"]

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
    return "\n".join(text for text in map(emitted, kept) if text is not None)


def _place(name: str, cwd: Path | None) -> tuple[str, ...]:
    """Where a file named ``name`` in ``cwd`` is: its path, or (a relative name where the directory is not known)
    ``("", name)``, the name normalised."""
    return resolve(name, cwd, globs=False) or ("", normal(name))
