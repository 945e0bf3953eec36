"""Scripts a text writes and then runs: ``echo 'rm -rf /' > s.sh; sh s.sh``, ``cat > clean.sh <<EOF … EOF; ./clean.sh``.

An agent writes a script and runs it a line later: what runs is what was written, and the walk knows it when a printer
wrote it (``echo``, ``printf``, ``cat`` of a heredoc: :mod:`.printers`).  Each file a printer writes is kept for the
rest of the check (on disk, whatever subshell wrote it), as the command that wrote it, its words expanded then, by
where it is (``cd /tmp; … > s.sh; sh /tmp/s.sh``); the code is walked where a later command runs that file -- ``sh f``,
``bash f``, ``source f``, ``. f``, ``python3 f``, ``./f`` -- or reads it on stdin, ``sh < f``, ``cat f | sh``.  A file
written lets go of the ``$(…)`` bodies the check found to give nothing (``walk._bodies``): one may run that file.

What ``tee`` writes is kept too (its stdin: a heredoc, a here-string, a printer piped into it, a file kept), and
``cp``/``mv`` carry a kept file to another name (:func:`note_written`, given the stages before it).  A file is
named plainly, by a variable whose value is known (``f=s.sh; … > $f``), or as ``$PWD/f`` (the directory it runs in).
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

__all__ = ["FILERS", "note_written", "script_args", "stdin_script", "written_code"]

#: How often, in all, what printers wrote may be walked as a script run (a script run ``_RUNS`` times over, or added
#: to and run again and again, quadratic in the text, some ten times: past it, the text is refused as too complex).
_RUNS = 4
#: The redirections that write a command's output to a file (``>>`` adds to what is there).
_WRITES = frozenset({">", ">|", ">>", "&>", "&>>", ">&"})
#: Programs that write a file of what they read (``tee``), or carry a file to another name (``cp``, ``mv``).
FILERS = frozenset({"tee", "cp", "mv"})
#: How a word names a file in the directory it runs in (``$PWD/s.sh``) where that directory is not known.
_HERE = ("$PWD/", "${PWD}/")


def note_written(command: Command, cwd: Path | None, names: Names, before: Sequence[Command] | None = None) -> None:
    """Keep what ``command`` writes to a file it names, when it may print what it was given; ``before``: the stages
    of its pipeline before it, where it may be one of :data:`FILERS` (``echo 'rm -rf /' | tee s.sh``)."""
    if before is not None and command.program in FILERS:
        _filed(command, before, cwd, names)
        return
    if not any(op in _WRITES for op, _ in command.redirects) or not may_emit(command):
        return
    expanded = names.expand(command)  # (the names may change before the file runs; > $f where f is known)
    targets = [(op, file) for op, target in expanded.redirects if op in _WRITES and (file := _file(target)) and not (
        op == ">&" and (file.isdigit() or file == "-"))]  # (>&2 is a descriptor; >& f writes f, as &> f)
    if targets:
        _keep(targets, expanded, cwd, names)


def _keep(targets: Sequence[tuple[str, str]], wrote: Command, cwd: Path | None, names: Names) -> None:
    """``wrote`` (a printer, expanded) written to each file of ``targets`` (``>>``: added to what it holds)."""
    readings = names.readings
    readings.scripts_left += _RUNS * (sum(map(len, wrote.words)) + sum(len(t) for _, t in wrote.redirects))
    for op, file in targets:
        place = _place(file, cwd)
        readings.codes.pop(place, None)
        if op.endswith(">>"):
            readings.scripts.setdefault(place, []).append(wrote)
        else:
            readings.scripts[place] = [wrote]
    readings.quiet.clear()  # a body found to give nothing may run this file (walk._bodies)


def _filed(command: Command, before: Sequence[Command], cwd: Path | None, names: Names) -> None:
    """What ``tee`` writes of what it reads, kept at each file it names; the file ``cp``/``mv`` carries."""
    words = command.unwrapped[0]
    files = [_file(word) for word in words[1:] if not word.startswith("-")]
    if command.program != "tee":
        _carried(command.program, files, cwd, names)
        return
    text: str | None = command.stdin()
    if text is None and before:  # echo '…' | tee s.sh
        text = emitted(before[-1])
    if text is None:  # tee t.sh < s.sh, cat s.sh | tee t.sh
        text = stdin_script(command, before, cwd, names)
    if text is not None and any(files):
        append = any(w == "--append" or (w[:1] == "-" and w[1:2] != "-" and "a" in w) for w in words[1:])
        _keep([(">>" if append else ">", file) for file in files if file], _printed(text), cwd, names)


def _carried(program: str, files: Sequence[str | None], cwd: Path | None, names: Names) -> None:
    """``cp``/``mv`` of ``files`` (a source, a target): the target holds what the source holds, when that is kept,
    and is forgotten when it is not (what it held before is no longer there); ``mv`` forgets the source."""
    if len(files) != 2 or not (target := files[1]):
        return
    source = files[0]
    if source and target.endswith("/"):  # cp s.sh /tmp/
        target += source[source.rfind("/") + 1:]
    code = _run(source, cwd, names) if source else None  # (counted as a run: each copy may be walked)
    readings = names.readings
    for place in [_place(source, cwd)] if source and program == "mv" else []:
        readings.scripts.pop(place, None)
        readings.codes.pop(place, None)
    if code is None:
        readings.scripts.pop(_place(target, cwd), None)
        readings.codes.pop(_place(target, cwd), None)
    else:
        _keep([(">", target)], _printed(code), cwd, names)


def _printed(text: str) -> Command:
    """A printer of ``text`` (``cat`` of it as a heredoc), as a file's kept writes are (:func:`_line`)."""
    return Command([Word("cat")], [("<<", Word(text))])


def _file(word: Word) -> str | None:
    """The file ``word`` names as far as it is known: itself when plain, ``f`` for ``$PWD/f``; else ``None``."""
    if word.code:
        return None
    if word.live == ():
        return word
    return next((word[len(here):] for here in _HERE if word.startswith(here) and word.live == (0,)), None)


def stdin_script(command: Command, before: Sequence[Command], cwd: Path | None, names: Names) -> Word | None:
    """The code of a file the text wrote that ``command`` reads on stdin: ``sh < s.sh``, ``cat s.sh | sh``."""
    if not names.readings.scripts:
        return None
    fed = next((target for op, target in reversed(command.redirects) if op.startswith("<")), None)
    if fed is not None:
        file = _file(fed) if fed and not fed.feed and command.stdin() is None else None
        return _run(file, cwd, names) if file else None
    if before and before[-1].program == "cat" and len(words := before[-1].unwrapped[0]) > 1:
        found = [code for word in words[1:] if (file := _file(word)) and (code := _run(file, cwd, names)) is not None]
        if len(found) == 1 or not found:
            return found[0] if found else None
        names.readings.scripts_left -= sum(map(len, found))  # (joined anew at each run: bounded as a walk of it is)
        if names.readings.scripts_left < 0:
            raise ShellTooComplex(sum(map(len, found)))
        return Word("".join(found))
    return None


def written_code(words: Sequence[Word], cwd: Path | None, names: Names) -> Word | None:
    """The code a command of ``words`` run in ``cwd`` runs from a file the text wrote before (``sh f``, ``./f``), as far
    as it is known (a part a printer did not spell is left out); ``None`` when it runs no such file."""
    file = ran_file(words) if names.readings.scripts else None
    return _run(file, cwd, names) if file is not None else None


def _run(file: str, cwd: Path | None, names: Names) -> Word | None:
    """The code the file ``file`` holds, when the text wrote it, walked once more (bounded: see :data:`_RUNS`)."""
    readings, place = names.readings, _place(file, cwd)
    kept = readings.scripts.get(place)
    if kept is None:
        return None
    code = readings.codes.get(place)
    if code is None:  # (one word a write: a new one at every run copied, and hashed, the whole script again)
        code = readings.codes[place] = Word(_text(kept))
    # a script added to and run again and again is walked whole each time: bounded
    if not getattr(readings.texts.get(code), "quiet", False):  # (one found to give nothing is passed at once)
        readings.scripts_left -= len(code)
        if readings.scripts_left < 0:
            raise ShellTooComplex(len(code))
    return code


def _text(kept: Sequence[Command]) -> str:
    """What the commands that wrote a file wrote (a part a printer did not spell is left out)."""
    return "".join(text for text in map(_line, kept) if text is not None)


def _line(command: Command) -> str | None:
    """What a printer wrote (``echo`` a line, ``echo -n`` and ``printf`` what they print)."""
    text = emitted(command)
    echo = command.program == "echo" and not any(word.startswith("-") and "n" in word
                                                  for word in command.unwrapped[0][1:2])  # (sudo echo -n …)
    return None if text is None else text + "\n" if echo else text


def _place(name: str, cwd: Path | None) -> tuple[str, ...]:
    """Where a file named ``name`` in ``cwd`` is: its path, or (a relative name where the directory is not known)
    ``("", name)``, the name normalised."""
    name = next((name[len(here):] for here in _HERE if name.startswith(here)), name)  # ($PWD/s.sh: sh $PWD/s.sh)
    return resolve(name, cwd, globs=False) or ("", normal(name))


def script_args(words: Sequence[Word]) -> list[Word]:
    """What a script run by ``words`` has as ``$0``, ``$1``…: ``sh s.sh a`` gives ``s.sh a``, ``./s.sh a`` the same."""
    name = words[0][words[0].rfind("/") + 1:]
    return interpreter_args(words)[1] if name in SHELLS or name in SOURCES else list(words)
