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

from ..shell.words import STDIN_REDIRECTS, Word
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
#: Programs that write a file of what they read (``tee``), or carry a file to another name (``cp``, ``mv``, ``ln``).
FILERS = frozenset({"tee", "cp", "mv", "ln"})
#: How a word names a file in the directory it runs in (``$PWD/s.sh``) where that directory is not known.
_HERE = ("$PWD/", "${PWD}/")


def note_written(command: Command, cwd: Path | None, names: Names, before: Sequence[Command] | None = None) -> None:
    """Keep what ``command`` writes to a file it names, when it may print what it was given; ``before``: the stages
    of its pipeline before it, where it may be one of :data:`FILERS` (``echo 'rm -rf /' | tee s.sh``)."""
    if before is not None and command.program in FILERS:
        (_teed if command.program == "tee" else _carried)(command, before, cwd, names)
        return
    if not any(op in _WRITES and not _descriptor(op, target) for op, target in command.redirects) or not may_emit(
            command):
        return
    expanded = names.expand(command)  # (the names may change before the file runs; > $f where f is known)
    targets = [(op, file) for op, target in expanded.redirects if op in _WRITES and (file := _file(target)) and not (
        _descriptor(op, file))]
    if not targets:
        return
    if expanded.program == "cat" and emitted(expanded) is None:  # cat a.sh b.sh > c.sh: what they hold
        if (code := _joined(expanded.unwrapped[0][1:], cwd, names)) is not None:
            _share(targets, code, cwd, names)
        return
    _keep(targets, expanded, cwd, names)


def _descriptor(op: str, target: str) -> bool:
    """Whether ``op target`` points the output at a descriptor (``>&2``, ``>&-``), not a file (``>& f`` is ``&> f``)."""
    return op == ">&" and (target.isdigit() or target == "-")


def _keep(targets: Sequence[tuple[str, str]], wrote: Command, cwd: Path | None, names: Names) -> None:
    """``wrote`` (a printer, expanded) written to each file of ``targets`` (``>>``: added to what it holds).  Its
    words are the checked text's: what they may make walked :data:`_RUNS` times is added to the budget."""
    names.readings.scripts_left += _RUNS * (sum(map(len, wrote.words)) + sum(len(t) for _, t in wrote.redirects))
    _share(targets, wrote, cwd, names)


def _share(targets: Sequence[tuple[str, str]], wrote: Command | Word, cwd: Path | None, names: Names) -> None:
    """``wrote`` -- a printer, or code a file held (a copy of it: the same word, nothing copied, nothing added to the
    budget, so that copies of copies cost nothing more) -- written to each file of ``targets``."""
    readings = names.readings
    for op, file in targets:
        place = _place(file, cwd)
        if op.endswith(">>"):
            readings.scripts.setdefault(place, []).append(wrote)
            readings.codes.pop(place, None)
        else:
            readings.scripts[place] = [wrote]
            if isinstance(wrote, Word):
                readings.codes[place] = wrote
            else:
                readings.codes.pop(place, None)
    readings.quiet.clear()  # a body found to give nothing may run this file (walk._bodies)


def _teed(command: Command, before: Sequence[Command], cwd: Path | None, names: Names) -> None:
    """What ``tee`` writes, kept at each file it names: its heredoc or here-string, the printer piped into it, or what
    a file the text wrote holds (``cat s.sh | tee t.sh``, ``tee t.sh < s.sh``); ``-a``/``--append`` adds to it."""
    words = command.unwrapped[0]
    files = [file for word in words[1:] if not word.startswith("-") and (file := _file(word))]
    if not files:
        return
    append = any((w[:3] == "--a" and "--append".startswith(w)) or (w[:1] == "-" and w[1:2] != "-" and "a" in w)
                 for w in words[1:])
    targets = [(">>" if append else ">", file) for file in files]
    stdin = command.fed()
    if stdin is not None and stdin[0] in ("<<", "<<-", "<<<"):  # (a here-string ends with a newline)
        _keep(targets, _printed(stdin[1] + "\n" if stdin[0] == "<<<" else stdin[1]), cwd, names)
    elif stdin is None and before and emitted(before[-1]) is not None:  # echo '…' | tee s.sh
        _keep(targets, before[-1], cwd, names)
    elif (code := _stdin_code(command, before, cwd, names)) is not None:
        _share(targets, code, cwd, names)


#: Options of ``cp``/``mv``/``ln`` that keep a target that is there (then it may hold either), and that name the
#: target first (then the walk does not follow).
_KEEPING = ("-n", "--no-clobber", "-u", "--update", "-i", "--interactive", "--backup")
_TARGET_FIRST = ("-t", "--target-directory")


def _carried(command: Command, before: Sequence[Command], cwd: Path | None, names: Names) -> None:
    """What ``cp``/``mv``/``ln`` make of a file the text wrote: the target holds it too -- the file named, or one of
    the same name in it where it is a directory (``cp s.sh /tmp``).  Where the source is not such a file the target
    is left as it was (the copy may fail), and a moved file is kept where it was too: a guard errs on that side."""
    words = command.unwrapped[0]
    options = [word for word in words[1:] if word.startswith("-")]
    if any(option.startswith(_TARGET_FIRST) or (option[1:2] != "-" and "t" in option) for option in options):
        return
    operands = [word for word in words[1:] if not word.startswith("-")]
    if len(operands) < 2 or not (target := _file(operands[-1])):
        return
    keeps = any(o.startswith(_KEEPING) or (o[1:2] != "-" and any(flag in o for flag in "nui")) for o in options)
    for source in map(_file, operands[:-1]):
        code = _kept_code(source, cwd, names) if source else None
        if source is None or code is None:
            continue
        name = source[source.rfind("/") + 1:]
        places = [target + name] if target.endswith("/") else [f"{target}/{name}"] if len(operands) > 2 else [
            target, f"{target}/{name}"]  # (a target that may be a directory: both)
        _share([(">>" if keeps else ">", place) for place in places], code, cwd, names)


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
    """The code of a file the text wrote that ``command`` reads on stdin and runs: ``sh < s.sh``, ``cat s.sh | sh``
    (counted against the budget as a run by name is: :func:`written_code`)."""
    return _counted(_stdin_code(command, before, cwd, names), names)


def _stdin_code(command: Command, before: Sequence[Command], cwd: Path | None, names: Names) -> Word | None:
    """What a file the text wrote holds that ``command`` reads on stdin (``< s.sh``, ``cat s.sh |``)."""
    if not names.readings.scripts:
        return None
    if (redirected := command.fed()) is not None:
        op, fed = redirected
        file = _file(fed) if fed and not fed.feed and op not in STDIN_REDIRECTS else None
        return _kept_code(file, cwd, names) if file else None
    if before and before[-1].program == "cat" and len(words := before[-1].unwrapped[0]) > 1:
        return _joined(words[1:], cwd, names)
    return None


def _joined(words: Sequence[Word], cwd: Path | None, names: Names) -> Word | None:
    """What the files ``cat`` reads hold (``cat a.sh b.sh``), where the text wrote one of them: the parts it did not
    left out.  Several joined are counted against the budget (a join of the whole each time: ``cat a a | tee a``)."""
    found = [code for word in words if (file := _file(word)) and (code := _kept_code(file, cwd, names)) is not None]
    if len(found) < 2:
        return found[0] if found else None
    readings = names.readings
    readings.scripts_left -= sum(map(len, found))
    if readings.scripts_left < 0:
        raise ShellTooComplex(sum(map(len, found)))
    return Word("".join(found))


def written_code(words: Sequence[Word], cwd: Path | None, names: Names) -> Word | None:
    """The code a command of ``words`` run in ``cwd`` runs from a file the text wrote before (``sh f``, ``./f``), as far
    as it is known (a part a printer did not spell is left out); ``None`` when it runs no such file."""
    file = ran_file(words) if names.readings.scripts else None
    return _counted(_kept_code(file, cwd, names) if file is not None else None, names)


def _counted(code: Word | None, names: Names) -> Word | None:
    """``code``, a script run, counted against the budget: one added to and run again and again is walked whole each
    time (one found to give nothing is passed at once, and not counted)."""
    readings = names.readings
    if code is not None and not getattr(readings.texts.get(code), "quiet", False):
        readings.scripts_left -= len(code)
        if readings.scripts_left < 0:
            raise ShellTooComplex(len(code))
    return code


def _kept_code(file: str, cwd: Path | None, names: Names) -> Word | None:
    """What the file ``file`` holds, when the text wrote it: one word for all its writes, made once a write (a new
    one at every run copied, and hashed, the whole script again)."""
    readings, place = names.readings, _place(file, cwd)
    kept = readings.scripts.get(place)
    if kept is None:
        return None
    code = readings.codes.get(place)
    if code is None:
        code = readings.codes[place] = Word("".join(text for text in map(_line, kept) if text is not None))
    return code


def _line(wrote: Command | Word) -> str | None:
    """What a printer wrote (``echo`` a line, ``echo -n`` and ``printf`` what they print), or code a copy holds."""
    if isinstance(wrote, Word):
        return wrote
    text = emitted(wrote)
    echo = wrote.program == "echo" and not any(word.startswith("-") and "n" in word
                                                for word in wrote.unwrapped[0][1:2])  # (sudo echo -n …)
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
