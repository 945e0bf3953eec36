"""Commands the walk can pass at once: what each is told by its words as written, before any is expanded.

Most commands of a script run a program no rule judges, change no name and no directory, and hand nothing on:
the walk (:mod:`.walk`) passes them once the code in their words is walked, and judges only where a redirection
writes.  A command of plain assignments (``N=5``, ``OUT="out/x.csv"``) only gives names values.  Each is asked of
every command of a long script, so each is a few looks at the words, and a command word's answer is kept.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..shell.words import Word
from .commands import ASSIGNMENT, DECLARES, WRAPPERS, Command, assigns_only, program
from .globs import named_by, runs_glob
from .options import DOWNLOADERS, INTERPRETER, SHELLS, SOURCES
from .rules import JUDGED_NAMES
from .subscripts import bracketed

if TYPE_CHECKING:
    from .names import Names

__all__ = ["ACTIVE", "CHANGERS", "HANDING", "assigns_plainly", "glob_variants", "hands_on", "has_code", "inert",
           "inert_word", "looked_at", "only_changes", "variants"]

#: Programs the walk looks at by name for code they hand on (``walk._handed_on``), but for interpreters
#: (:data:`.options.INTERPRETER`): shells, ``source``, ``eval``, ``su -c``, ``find -exec``, ...
HANDING = frozenset({*SHELLS, *SOURCES, "eval", "watch", "trap", "alias", "su", "runuser", "sg", "script", "flock",
                     "find", "tmux"})
#: Programs that only change names or the directory: no rule judges them, they hand nothing on, download nothing
#: and run no other command.
CHANGERS = frozenset({*DECLARES, "cd", "pushd", "chdir", "popd", "for", "select", "read", "mapfile", "readarray",
                      "printf", "getopts", "let", "unset", "set"})
#: Programs the walk or a rule does something with, by name: a rule judges them, they run code handed to them
#: (shells, ``eval``, ``find -exec``, wrappers), download, move the directory, or give names values.
ACTIVE = frozenset({*JUDGED_NAMES, *HANDING, *DOWNLOADERS, *WRAPPERS, *CHANGERS})


def inert(command: Command) -> bool:
    """Whether ``command`` is what it reads as and nothing more: no assignment, a program named as written that is
    not :data:`ACTIVE` -- no rule judges it by name, it changes no name, no directory and hands nothing on (its
    redirections only feed it or take what it writes), so it is yielded as it stands once the code in its words is
    walked, and judged only where a redirection writes (a walk of each took fifteen times its reading; ``cat <<EOF``
    is how scripts write files, ``> out.txt`` how they keep what a command prints)."""
    words = command.words
    if not words:  # ">& out" alone: no program runs, only its redirections
        return bool(command.redirects)
    first = words[0]
    if first.live != () or first.code:  # the name as written (<(…) has code, no live text)
        return False
    return _inert_name(first) if len(first) <= _NAME_KEPT and "=" not in first else _judged_name(first)  # (inert_word)


def inert_word(word: Word) -> bool:  # (of a plain word: no expansion in it)
    # an assignment (N=5) is read, not kept: a script's many would push the programs' names out
    return _inert_name(word) if len(word) <= _NAME_KEPT and "=" not in word else _judged_name(word)


#: Command words up to this length have their answer kept (a script names a few programs again and again).
_NAME_KEPT = 64


@functools.lru_cache(maxsize=4096)
def _inert_name(word: str) -> bool:
    return _judged_name(word)


def _judged_name(word: str) -> bool:
    """Whether a command word, as written, is no assignment and names a program not :data:`ACTIVE` (a path that is a
    glob: may name none, :func:`glob_variants`)."""
    if ASSIGNMENT.match(word):
        return False
    name = program(word)
    return not (name in ACTIVE or name.startswith("mkfs") or INTERPRETER.fullmatch(name) or (
        "/" in word and _globbed(name)))


#: What a glob standing for a program is matched against (:mod:`.globs`): every program the walk or a rule acts on by
#: name, and the interpreters' common names.
_NAMED = tuple(sorted({*ACTIVE, "mkfs", "python", "python3", "perl", "ruby", "node", "php", "lua", "julia", "Rscript"}))


def _globbed(name: str) -> tuple[str, ...]:
    return named_by(name, _NAMED)


def glob_variants(command: Command) -> list[Command]:
    """``command`` once for each program its command word may name when it is a path that is a glob (``/bin/r? -rf
    /``: bash runs ``/bin/rm`` when that is the file it finds): each, judged as the command it runs.  Empty: no such
    word.  (A glob with no ``/`` runs a file of the directory it runs in, which a script makes first, if at all: and
    a case's patterns, ``*)`` and ``r*)``, read as commands here, would each be every program.)"""
    words = command.unwrapped[0]
    named = _globbed(program(words[0])) if runs_glob(command) else ()  # (quoted too: "/bin/"r? is a glob)
    at = next((i for i, word in enumerate(command.words) if word is words[0]), None) if named else None
    if at is None:
        return []
    word = words[0]
    folder = word[:word.rfind("/") + 1]
    return [Command([*command.words[:at], Word(folder + each, shown=word.shown), *command.words[at + 1:]],
                    command.redirects) for each in named]


def variants(pipeline: list[Command], expanded: list[Command], names: Names) -> list[tuple[int, Command]]:
    """Each command of ``pipeline`` as each other thing it may run, and its index: ``for X in cd rm; do $X -rf /`` runs
    cd, then rm, not "cd rm -rf /" (``Names.variants``); ``/bin/r? -rf /`` runs rm (:func:`glob_variants`)."""
    if not names.several and not any(map(runs_glob, expanded)):  # (most pipelines: one look)
        return []
    return [(index, each) for index, command in enumerate(pipeline)
            for made in [names.variants(command) if names.several else []]
            for each in [*made, *(glob for one in made or expanded[index:index + 1] for glob in glob_variants(one))]]


def only_changes(command: Command) -> bool:
    """Whether ``command`` (expanded) only gives names values or moves the directory: its command word a plain
    :data:`CHANGERS`, or only assignments, no subscript anywhere."""
    words = command.words
    if not words:
        return False
    first = words[0]
    if first.live != () or first.code:
        return False
    if ASSIGNMENT.match(first):
        if not all(ASSIGNMENT.match(w) for w in words):
            return False
    elif program(first) not in CHANGERS:
        return False
    return not bracketed(command)


@functools.lru_cache(maxsize=1024)
def hands_on(name: str) -> bool:
    """Whether the walk may find code that a command of program ``name`` hands on (one with code in its command word
    aside): :data:`HANDING` or an interpreter (the rest make no generator of ``walk._handed_on``)."""
    return name in HANDING or INTERPRETER.fullmatch(name) is not None


@functools.lru_cache(maxsize=1024)
def looked_at(name: str) -> bool:
    """Whether a simple command of program ``name`` with no redirection is looked at when a check's walk yields it: a
    rule judges it by name, or the walk of a ``$(…)`` looks for a download in it (else it is not yielded)."""
    return name in JUDGED_NAMES or name.startswith("mkfs") or name in DOWNLOADERS


def has_code(command: Command) -> bool:
    """Whether the shell runs code while expanding ``command`` (asked before a walk of its bodies is begun)."""
    for word in command.words:
        if word.code:
            return True
    return bool(command.redirects) and any(target.code for _, target in command.redirects)


def assigns_plainly(command: Command) -> bool:
    """Whether ``command`` only gives names values spelled out as written (``N=5``, ``OUT="out/x.csv"``): no
    expansion, no code, no redirection, no subscript (``a[$(…)]=1`` runs code), no array's values.

    Such a command runs no program and hands nothing on: all it does is what :meth:`.names.Names.remember` keeps
    (walked as any other, each was a pipeline of its own, one simple command with no words judged by every rule)."""
    return not command.redirects and not command.values and bool(command.words) and assigns_only(command.words)
