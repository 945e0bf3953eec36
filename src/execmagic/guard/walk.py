"""The walk: every simple command shell text runs, nested code included, and what is refused on the way.

Quoted text is data until it reaches a shell.  The walk follows it there: the argument of
``sh -c``/``su -c``/``eval``/``watch``, text piped into ``| sh`` (from ``echo``, ``printf`` or
``cat <<EOF``), a here-string or heredoc fed to a shell, the commands ``find -exec`` and
``xargs`` run, and the bodies of ``$(…)``, backticks and ``<(…)``.  Such text is walked as code,
in the directory a ``cd`` moved to, with the plain values assigned earlier in the same text
(``X=/; rm -rf $X``), and so are the commands python/perl/node/ruby code runs (:mod:`.scripts`).
Two rules are about this structure rather than one command -- downloaded code run unseen (piped,
substituted, or saved and then run: ``curl -o f URL && sh f``), and fork bombs -- so the walk
yields their refusals itself; every other rule is applied to the simple commands it yields
(:func:`.rules.match`).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Sequence

from ..shell.words import WRITES, Subshells, Word
from .commands import ASSIGNMENT, Assignments, Command, Simple, command_name
from .dash_words import as_dash_reads
from .downloads import downloaded, runs_download
from .inert import assigns_plainly, hands_on, has_code, inert, inert_word, looked_at, only_changes, variants
from .names import Names
from .options import (
    DOWNLOADERS,
    INTERPRETER,
    SHELLS,
    SOURCES,
    after_options,
    find_exec,
    interpreter_args,
    kept_code,
    su_command,
)
from .paths import Path, after_cd, path_text
from .printers import emitted
from .quiet import quiet_text
from .readings import Reading
from .rules import Refusal, judged_writes, refuse
from .subscripts import bracketed, subscript_bodies, tests
from .vanishing import unvanished
from .written import FILERS, note_written, script_args, stdin_script, written_code

_inert, _inert_word, _has_code, _only_changes, _hands_on, _looked_at, _quiet = (  # (one name each, for the tests)
    inert, inert_word, has_code, only_changes, hands_on, looked_at, quiet_text)

__all__ = ["Walk", "walk", "walk_argv"]

#: How deep code inside code (``bash -c "eval '…'"``) is followed; deeper text is refused (rule too-deep):
#: what the check cannot follow is not run.
_MAX_DEPTH = 8
Walk = Generator["Simple | Refusal", None, "Path | None"]
"""A walk yields simple commands and refusals, in the order a shell gets to them; it returns the directory after it."""


def walk(text: str, cwd: Path | None, depth: int, names: Names | None = None) -> Walk:
    """Every simple command shell ``text`` runs (nested code included), and what is refused on the way.

    ``cwd`` is the directory the text starts in when known; a ``cd`` moves it, a subshell keeps its own.
    ``names``: the variables known where the text starts (:mod:`.names`); the text's own assignments
    are added as the walk passes them (``X=/; rm -rf $X``).
    """
    if depth > _MAX_DEPTH:
        yield refuse("too-deep", text[:200])
        return cwd
    if names is not None and not names.readings.every and _quiet(text, names.readings):
        return cwd  # a text read before that a check's walk finds nothing in, whatever the names: $(date +%F)
    names, reading = yield from _read(text, cwd, depth, Names() if names is None else names.copy())
    # what each open "(" restores at its ")": the same pair while nothing changes, not one per "(" (names kept)
    scopes: list[tuple[Path | None, Names]] = []
    state = (cwd, names)
    pipeline: list[Command] = []
    downloads: set[str] = set()  # curl -o f URL earlier in the text: sh f runs what was downloaded
    every = names.readings.every
    passed: set[str] = set()  # ((WORD)) found to do nothing
    for item in names.readings.items(reading):  # (every command and operator of a long script goes through: lean)
        if type(item) is Command:
            pipeline.append(item)
            continue
        if not pipeline:
            pass
        elif item == "|" or item == "|&":
            continue
        elif not downloads and (_inert(pipeline[0]) if len(pipeline) == 1 else all(map(_inert, pipeline))):
            for command in pipeline:  # most commands of a long script (a pipeline of them changes nothing either)
                if tests(command):  # [[ 'a[$(…)]' -eq 1 ]], arr['$(…)']=1, x=('a[$(…)]'): it may run
                    yield from _walk_all(subscript_bodies(command), cwd, depth + 1, names)
                code = _has_code(command)  # (walked as written: a word that expands to nothing runs its code too)
                if code and not _all_quiet(command, cwd, depth, names):
                    yield from _bodies(command, cwd, depth, names)
                writes = command.redirects and not WRITES.isdisjoint([op for op, _ in command.redirects])
                if writes or (command.words and "/" in command.words[0]):  # > s.sh kept, ./s.sh run (.written)
                    yield from _scripts(command, cwd, depth, names)
                # else nothing is yielded: a check asks where one writes (its redirections alone expanded first)
                if every or (writes and judged_writes(names.redirects(command, code), cwd)):
                    command = names.expand(command, code)
                    yield Simple(tuple(command.words), tuple(command.redirects), cwd)
            pipeline = []
        else:
            cwd, names = yield from _walked(pipeline, cwd, depth, names, downloads)
            state, pipeline = (cwd, names), []
        if item == "(":
            scopes.append(state)
            state[1].kept = True
        elif item == ")" and scopes:
            cwd, names = state = scopes.pop()
        elif type(item) is Subshells and (every or downloads or item not in passed):
            if every or downloads or not _inert_word(item.word):
                yield from _subshells(Command([item.word]), cwd, depth, names, downloads)
            else:  # it does nothing: nor does the next one spelled alike
                passed.add(item)
        elif type(item) is Assignments:  # N=5; M=6 (no pipeline open): what they do, all of it (no program runs)
            cwd, names = state = (cwd, names.assign(item.pairs)) if not downloads else (
                yield from _walked_apart(item, cwd, depth, names, downloads))
    return cwd


def _walked(pipeline: list[Command], cwd: Path | None, depth: int, names: Names, downloads: set[str]) -> Generator[
        Simple | Refusal, None, tuple[Path | None, Names]]:
    """A pipeline the loop of :func:`walk` does not pass at once, walked: the directory and the names after it."""
    expanded = [names.expand(command) for command in pipeline]
    for index, variant in variants(pipeline, expanded, names):
        yield from _expanded(pipeline, [*expanded[:index], variant, *expanded[index + 1:]], cwd, depth, names,
                             downloads)
    after = yield from _expanded(pipeline, expanded, cwd, depth, names, downloads)
    names = names.remember(expanded)  # cd /: $PWD is / (unknown where the directory is)
    return after, names if after == cwd else names.assign([("PWD", None if after is None else (path_text(after),))])


def _expanded(pipeline: list[Command], expanded: list[Command], cwd: Path | None, depth: int, names: Names,
              downloads: set[str]) -> Walk:
    """What :func:`_walked` walks of ``pipeline`` once its words are ``expanded``: the directory after it."""
    if len(pipeline) == 1 and not downloads and _only_changes(expanded[0]):  # read -r line, cd out, n=$((n + 1))
        return after_cd((yield from _changes(pipeline[0], expanded[0], cwd, depth, names)), cwd)
    for command in filter(bracketed, expanded):  # x='a[$(…)]': it runs where bash reads x as a number
        yield from _walk_all(subscript_bodies(command), cwd, depth + 1, names)  # (.subscripts)
    yield from runs_download(expanded, downloads)
    return (yield from _walk_pipeline(expanded, cwd, depth, names, written=pipeline))


def _changes(written: Command, command: Command, cwd: Path | None, depth: int, names: Names) -> Generator[
        Simple | Refusal, None, list[Word]]:
    """What :func:`_walk_pipeline` yields of ``command`` (expanded from ``written``) when it only changes names or the
    directory (:func:`.inert.only_changes`: no rule judges it by name, it hands nothing on and downloads nothing): the
    code in its words walked, and the command where a rule may judge it, by what it writes; its words, unwrapped."""
    if _has_code(written):
        yield from _bodies(written, cwd, depth, names)
    if written.redirects:  # printf 'rm -rf /' > s.sh
        note_written(written, cwd, names)
    words = command.unwrapped[0]
    if names.readings.every or command.redirects:
        yield Simple(tuple(words), tuple(command.redirects), cwd)
    return words


def _walked_apart(run: Assignments, cwd: Path | None, depth: int, names: Names, downloads: set[str]) -> Generator[
        Simple | Refusal, None, tuple[Path | None, Names]]:
    """Plain assignments after a download, each walked as a pipeline of its own (as any command is then)."""
    for words in run.commands:
        cwd, names = yield from _walked([Command(words)], cwd, depth, names, downloads)
    return cwd, names


def _scripts(command: Command, cwd: Path | None, depth: int, names: Names) -> Walk:
    """What ``command`` writes kept (``echo 'rm -rf /' > s.sh``: :mod:`.written`); what it runs that was, walked."""
    if command.redirects:
        note_written(command, cwd, names)
    if command.words and (ran := written_code(command.words, cwd, names)) is not None:
        yield from walk(ran, cwd, depth + 1, names.positional(command.words) if "$" in ran else names)
    return cwd


def _walk_all(bodies: Iterable[str], cwd: Path | None, depth: int, names: Names) -> Walk:
    for body in bodies:  # (each walked as code run in cwd)
        yield from walk(body, cwd, depth, names)
    return cwd


def _read(text: str, cwd: Path | None, depth: int, names: Names) -> Generator[Refusal | Simple, None,
                                                                             tuple[Names, Reading]]:
    """What :func:`walk` walks first: ``text`` as dash reads its heredocs when that differs, and a fork bomb; the names
    it starts with (``names``, changed) and the reading of ``text``."""
    names.printing = depth  # a $(…) in this code is one level deeper (see Names.printed)
    dash_text = None if names.as_dash else as_dash_reads(text)
    if dash_text is not None:  # a heredoc ends elsewhere in dash: what runs there is walked too
        dash_names = names.copy()
        dash_names.as_dash = True  # (its heredoc words are spelled as dash reads them already: the code in it too,
        yield from walk(dash_text, cwd, depth, dash_names)  # and one walked so at each level of nesting
    reading = names.readings.read(text)
    if reading.bomb:
        yield refuse("fork-bomb", reading.bomb)
    if reading.defines:  # a function body runs later, when names may hold other values
        names.make_opaque()
    return names, reading


def _subshells(command: Command, cwd: Path | None, depth: int, names: Names, downloads: set[str]) -> Walk:
    """``((WORD))`` read as one (:class:`~..shell.words.Subshells`): ``command`` walked as the loop of :func:`walk`
    walks ``( ( WORD ) )`` -- in a subshell: what it changes is undone at its ``)``, but for the files it downloads."""
    if not downloads and _inert(command):
        if names.readings.every:
            command = names.expand(command, False)
            yield Simple(tuple(command.words), (), cwd)
        return cwd
    if not downloads and not names.readings.every and assigns_plainly(command):
        return cwd  # ((N=5)): names given in a subshell, and forgotten at its end
    expanded = [names.expand(command)]
    for each in [expanded[0], *(variant for _, variant in variants([command], expanded, names))]:
        yield from _expanded([command], [each], cwd, depth, names, downloads)  # ((cd)), ((x=$y)): as any pipeline
    return cwd


def _all_quiet(command: Command, cwd: Path | None, depth: int, names: Names) -> bool:
    """Whether :func:`_bodies` of ``command`` would walk nothing (each body blank or passed as quiet): asked first, so
    that the command of a script that writes the same heredoc again and again makes no walk of it at all."""
    quiet = names.readings.quiet
    for body in command.code():
        if (body.strip() or depth >= _MAX_DEPTH) and (body, cwd, depth, id(names)) not in quiet and not _passes(
                body, depth, names):
            return False
    return True


def _passes(body: str, depth: int, names: Names) -> bool:
    """Whether ``body`` is passed whatever the names (:func:`_quiet`), not kept quiet under these (nor they kept)."""
    return depth < _MAX_DEPTH and not names.readings.every and _quiet(body, names.readings)


def _bodies(command: Command, cwd: Path | None, depth: int, names: Names) -> Walk:
    """The code the shell runs while expanding ``command`` (its ``$(…)``, backticks, ``<(…)``), each walked.

    A body walked before in the same place (directory, depth, names) that gave nothing to judge is passed: a script
    of 45,000 heredocs each with the same ``$(…)`` in it walked it 45,000 times (names once passed on are never
    changed, so the same names are the same object)."""
    quiet = names.readings.quiet
    for body in command.code():
        if body.strip() or depth >= _MAX_DEPTH:  # `` and $( ) run nothing: a word of 100,000 was 50,000 walks
            key = (body, cwd, depth, id(names))
            if key in quiet or _passes(body, depth, names):
                continue
            said = False
            for item in walk(body, cwd, depth + 1, names):
                said = True
                yield item
            if not said and not names.readings.every:
                quiet[key] = names  # (kept: an id is another object's once this one is gone)
                names.kept = True
    return cwd


def _walk_pipeline(commands: list[Command], cwd: Path | None, depth: int, names: Names, bodies: bool = True,
                   written: Sequence[Command] | None = None) -> Walk:
    """The simple commands of one pipeline, with the code each hands on; the directory afterwards.

    ``bodies``: walk the code its words run as well (not when judging a command again: walked once per level
    again, code nested eight deep was walked 256 times); ``written``: the commands before their words were
    expanded, whose code that is (a word that expands to nothing -- ``$(cat <<E)`` -- runs its code all the same).
    """
    simple = None
    for index, command in enumerate(commands):
        if bodies and _has_code(command if written is None else written[index]):  # (most have none)
            yield from _bodies(command if written is None else written[index], cwd, depth, names)
        before = commands[:index]
        words, wrappers = command.unwrapped
        if wrappers and ("xargs" in wrappers or "parallel" in wrappers):  # echo / | xargs rm -rf: items as arguments
            items = emitted(before[-1]) if before else command.stdin()  # or xargs rm -rf <<< /
            words = [*words, *(Word(item, live=()) for item in re.split(r"[\s\0]+", items or "") if item)]  # -0: NUL
        simple = Simple(tuple(words), tuple(command.redirects), cwd)
        if names.readings.every or command.redirects or _looked_at(simple.name):  # (else none asks: see looked_at)
            yield simple
        if command.redirects or simple.name in FILERS:  # > s.sh, tee s.sh, cp s.sh t.sh: what a file holds (.written)
            note_written(command, cwd, names, before)
        if names.readings.scripts and words and (_hands_on(simple.name) or "/" in words[0]) and (
                ran := written_code(words, cwd, names)) is not None:  # sh s.sh a, ./s.sh, python3 s.py: as written
            given = _given(command, words, wrappers, names)  # ($1… only where the script may read them)
            yield from _code(simple, ran, not INTERPRETER.fullmatch(simple.name), depth,
                             given.positional(script_args(words)) if "$" in ran else given)
        if (words and words[0].code) or _hands_on(simple.name):  # (most hand nothing on: no generator for them)
            yield from _handed_on(simple, command, before, depth, _given(command, words, wrappers, names))
        rest = unvanished(words)
        if rest:  # $() rm -rf /: an expansion that may be empty leaves the next word the command (judged once more)
            yield from _walk_pipeline([Command(rest, list(command.redirects))], cwd, depth, names, bodies=False)
    return after_cd(simple.words, cwd) if simple is not None and len(commands) == 1 else cwd


def _given(command: Command, words: list[Word], wrappers: list[str], names: Names) -> Names:
    """The names code ``command`` runs sees: X=/ sh -c '…' has X / (X=/ alone hands nothing on: no copy for it)."""
    return names.given(command.handed) if words and (wrappers or ASSIGNMENT.match(command.words[0])) else names


def _handed_on(simple: Simple, command: Command, before: list[Command], depth: int, names: Names) -> Walk:
    """Code that ``simple`` hands to a shell: walked as code (it is no longer data); downloads run unseen refused."""
    name, words = simple.name, simple.words
    if words and words[0].code and downloaded(words[0].code, depth, names, walk):  # `curl …` run as the command itself
        yield refuse("pipe-to-shell", simple.display)
    if name in SHELLS or name in SOURCES or INTERPRETER.fullmatch(name):
        yield from _interpreted(simple, command, before, depth, names)
    elif name in ("eval", "watch"):  # both run their arguments, joined, as shell code
        args = list(words[1:]) if name == "eval" else after_options(words[1:], {"-n", "--interval"})
        joined = Word(" ".join(args), [c for w in args for c in w.code])
        yield from _as_code(simple, joined, simple.cwd, depth, names)
    elif name in ("trap", "alias"):  # code kept to run later: trap 'CMD' EXIT, alias x='CMD'
        for kept in kept_code(name, words):
            yield from _as_code(simple, kept, simple.cwd, depth, names)
    elif name in ("su", "runuser", "sg", "script", "flock", "tmux"):  # su -c CMD, flock F -c CMD, tmux new CMD
        code = su_command(words)
        if code is not None:
            login = any(w in ("-", "-l", "--login") for w in words)
            yield from _as_code(simple, code, None if login else simple.cwd, depth, names)
    elif name == "find":
        for run in find_exec(words):
            yield from _walk_pipeline([Command([Word(w) for w in run])], simple.cwd, depth + 1, names)
    return simple.cwd


def _as_code(simple: Simple, code: Word, cwd: Path | None, depth: int, names: Names) -> Walk:
    """``code`` that ``simple`` hands to a shell, walked in ``cwd``; a download substituted into it is refused."""
    if downloaded(code.code, depth, names, walk):
        yield refuse("pipe-to-shell", simple.display)
    yield from walk(code, cwd, depth + 1, names)
    return cwd


def _interpreted(simple: Simple, command: Command, before: list[Command], depth: int, names: Names) -> Walk:
    """A shell, ``source`` or an interpreter: its code from ``-c``, a ``<(…)`` file, a heredoc or a pipe."""
    shell = simple.name in SHELLS or simple.name in SOURCES
    code, operands, reads_stdin = interpreter_args(simple.words)
    fed = next((t.feed for op, t in command.redirects if op == "<" and t.feed is not None), None) if (
        command.redirects) else None
    if code is not None:  # sh -c CODE a b: $0 is a, $1 b, "$@" all but $0
        yield from _code(simple, code, shell, depth, names.positional(operands) if shell and operands else names)
    elif operands and operands[0].feed is not None:  # bash <(curl …), source <(echo '…')
        yield from _fed(simple, operands[0].feed, shell, depth, names)
    elif reads_stdin and (stdin := command.stdin()) is not None:  # bash <<< '…', bash <<EOF
        yield from _code(simple, stdin, shell, depth, names)
    elif reads_stdin and fed is not None:  # bash < <(echo '…')
        yield from _fed(simple, fed, shell, depth, names)
    elif reads_stdin and before:  # … | sh
        fetched = next((i for i, c in enumerate(before) if command_name(c) in DOWNLOADERS), None)
        if fetched is not None:
            yield refuse("pipe-to-shell", " | ".join(c.shown() for c in [*before[fetched:], command]))
        elif (text := emitted(before[-1])) is not None:
            yield from _code(simple, Word(text), shell, depth, names)
        elif command_name(before[-1]) == "cat" and (fed := before[-1].words[-1].feed) is not None:  # cat <(…) | sh
            yield from _fed(simple, fed, shell, depth, names)
    if reads_stdin and (text := stdin_script(command, before, simple.cwd, names)) is not None:  # sh < s.sh, cat s | sh
        yield from _code(simple, text, shell, depth, names.positional([simple.words[0], *operands]) if shell and (
            "$" in text) else names)  # (bash -s / < s.sh: $1 is /)
    return simple.cwd


def _code(simple: Simple, code: Word, shell: bool, depth: int, names: Names) -> Walk:
    """``code`` run by ``simple``: shell code walked, other languages searched (:func:`_scripted`)."""
    if shell:
        yield from _as_code(simple, code, simple.cwd, depth, names)
    else:
        yield from _scripted(simple, code, depth, names)
    return simple.cwd


def _fed(simple: Simple, body: str, shell: bool, depth: int, names: Names) -> Walk:
    """The code a ``<(body)`` file gives ``simple``: a download refused, printed text (``echo '…'``) run."""
    if downloaded([body], depth, names, walk):
        yield refuse("pipe-to-shell", simple.display)
    elif (text := names.printed(body)) is not None:
        yield from _code(simple, Word(text), shell, depth, names)
    return simple.cwd


def _scripted(simple: Simple, code: Word, depth: int, names: Names) -> Walk:
    """Python/perl/node/ruby ``code``: a download run, a fork bomb, a tree deleted, the commands it runs."""
    from .scripts import analysed  # (when first asked: its patterns cost 5 ms, not for every check)

    forks, where, calls = analysed(code, simple.cwd, simple.name)
    if downloaded(code.code, depth, names, walk):
        yield refuse("pipe-to-shell", simple.display)
    elif forks:
        yield refuse("fork-bomb", simple.display)
    if where:
        yield refuse("rm-recursive-root", simple.display, where=where)
    for call in calls:
        if isinstance(call, str):
            yield from walk(call, simple.cwd, depth + 1, names)
        elif call and depth < _MAX_DEPTH:
            yield from _walk_pipeline([Command([Word(w) for w in call])], simple.cwd, depth + 1, names)
    return simple.cwd


def walk_argv(argv: Sequence[str], names: Names | None = None) -> Walk:
    """The walk of an argv: words already (no quotes to remove), but ``bash -c CODE`` in it is code."""
    return _walk_pipeline([Command([Word(w, live=()) for w in argv])], None, 0, names or Names())
