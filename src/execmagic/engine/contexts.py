"""Where a ``{name}`` stands in a script: the lexical context that decides how its value is written.

A value is only safe as a literal *of the place it lands in*: one shell word
where words are split, escaped text inside ``"…"``, the ``'\\''`` form inside
``'…'``, and so on.  These scanners walk a script once, in the order a shell
(or Python, or JavaScript) would read it, and report the context at each
template's offset.  They are not full parsers; they track exactly what changes
how a character is read: quotes, escapes, substitutions, heredocs, comments.

Each scanner takes the sorted offsets it must report and stops after the
last one, and jumps between interesting characters with one regex search, so
a 10 MB heredoc with a template on its first line costs almost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..shell.scanning import Context, Scanner
from ..shell.walk import ShellScanner, ansi_c_quoting

__all__ = ["NODE_LANGUAGES", "PYTHON_LANGUAGES", "SHELL_LANGUAGES", "Context", "ansi_c_quoting", "contexts_at",
           "expands_variables"]

#: Languages whose scripts are read by a POSIX-style shell (and are quoted like one).
SHELL_LANGUAGES = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
PYTHON_LANGUAGES = frozenset({"python", "python3"})
NODE_LANGUAGES = frozenset({"node", "javascript", "js"})


#: Where a shell expands ``$VAR``: words, ``"…"`` (``"${…}"`` too), unquoted heredoc bodies, ``$(( ))``.
#: Not ``'…'``, ``$'…'``, quoted heredocs or comments -- nor text after a syntax error, whose reading is unknown.
_EXPANDING = frozenset({"code", "dquote", "heredoc", "arith"})


def expands_variables(context: Context) -> bool:
    """Whether a shell would expand ``$VAR`` at this place: where a notebook variable may fill a ``{name}``.

    (Every other place of a shell script, and all of a Python, JavaScript or other interpreter's code, is
    text the user wrote as it must run: awk, jq and sed programs, f-strings, dicts.)
    """
    return context.kind in _EXPANDING


def contexts_at(text: str, spans: Iterable[tuple[int, int]], language: str,
                replaced: Callable[[int, Context], bool] | None = None) -> dict[int, Context]:
    """The context at the start of each template span ``(start, end)`` in ``text`` written in ``language``.

    The spans' own text (``{cfg['k']}``) is skipped: it is replaced, never read as code.  ``replaced``
    (see :meth:`~execmagic.shell.scanning.Scanner.run`) decides that span by span, from its context.
    """
    wanted = sorted(spans)
    scanner: Scanner
    if language in SHELL_LANGUAGES:
        scanner = ShellScanner(text, wanted, ansi_c_quoting(language))
    elif language in PYTHON_LANGUAGES | NODE_LANGUAGES:
        # imported here: most templates are in shell scripts, and the code scanners' regexes and frames
        # cost 3 ms to import ahead of a first command that has none
        from .code_scan import NodeScanner, PythonScanner

        scanner = PythonScanner(text, wanted) if language in PYTHON_LANGUAGES else NodeScanner(text, wanted)
    else:
        found = {start: Context("plain") for start, _ in wanted}
        if replaced is not None:
            for start, context in found.items():
                replaced(start, context)
        return found
    return scanner.run(replaced)
