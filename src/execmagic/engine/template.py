"""``${VAR:-default}`` and ``{name}`` expansion (ARCHITECTURE.md, "The life of a cell").

Two kinds, applied in this order (the environment is the caller's setting, params the
run's values, so a param can never be read as a variable to expand again):

1. ``${VAR}`` / ``${VAR:-default}`` from the merged environment.  Used for argv
   words, cwd, env values and input -- never for shell script bodies, where bash
   expands them itself with the environment we pass.
2. ``{name}`` from caller-supplied params, everywhere; then from ``variables`` (a notebook's
   namespace) only where a shell would expand ``$VAR`` -- unquoted words, ``"…"``, unquoted
   heredoc bodies, values that pass through no interpreter -- never in ``'…'``, a quoted
   heredoc, or a Python/JavaScript/other interpreter's code.  Notebooks are full of ``i``, ``n``,
   ``x``: a variable silently written into an f-string or an awk program is a wrong result
   nobody notices, so only names the user passed fill code.  ``{name.attr}`` and
   ``{name[key]}`` work as in ``str.format`` (never calls).
   In a script the value is written as a literal *of the place it stands in*
   (:mod:`.contexts` finds the place, :mod:`.literals` writes the literal): one
   shell word unquoted, escaped inside ``"…"``/``'…'``/``$'…'``/heredocs, a Python
   or JSON literal in Python and JavaScript code -- so ``x; rm -rf ~`` or
   ``$(touch pwned)`` stays one harmless value whatever quotes surround it.
   Where no literal can hold a value safely, the expansion is refused with one line: an
   integer-only arithmetic place, a line that would end an enclosing heredoc, right after
   a backslash that would escape the literal, the word after ``>&`` (bash expands it twice),
   after a syntax error bash skips inside ``NAME=( … )``.
   ``{name!raw}`` inserts it as written.  ``{{name}}`` is the literal text
   ``{name}`` where a ``{name}`` would fill; elsewhere braces stay exactly as written
   (``docker inspect -f '{{.State.Running}}'``).  A ``{word}`` with no such name is left as
   written, so awk's ``{print $1}``, ``find -exec {}`` and bash's ``${HOME}`` survive untouched;
   one close to a known name is a note (a typo), and ``{name!r}``, ``{name.upper()}`` or
   ``{name:>8}`` where ``{name}`` would fill are refused (they would otherwise run as text).
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Collection, Mapping, MutableMapping, Sequence
from typing import Any, cast

from ..process.errors import TemplateError, shown_value
from ..process.records import record
from ..shell.patterns import lazy_pattern
from .contexts import SHELL_LANGUAGES, Context, contexts_at, expands_variables
from .literals import render, text_of

__all__ = ["Fill", "Filled", "expand_argv", "expand_env", "expand_params", "expand_value", "fill", "hold",
           "references", "resolve"]

_ENV_REF = lazy_pattern(r"\$\{(?P<body>[^}]*)\}|\$\{(?P<open>[^}]*)$")
_ENV_BODY = lazy_pattern(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.DOTALL)
# "{{...}}" escapes, or "{name}", "{name.attr[key]}", "{…!raw}" not preceded by "$" (bash's ${name}).
_PARAM_REF = lazy_pattern(
    r"\{\{(?P<escaped>[^{}]*)\}\}"
    r"|(?<!\$)\{(?P<ref>(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?P<access>(?:\.[A-Za-z][A-Za-z0-9_]*|\[[^\[\]{}\n]*\])*))(?P<raw>!raw)?\}",
    often=True,
)
_ACCESS = lazy_pattern(r"\.(?P<attr>[A-Za-z][A-Za-z0-9_]*)|\[(?P<key>[^\]]*)\]")
# What a text's templates are: _PARAM_REF's two kinds, then "{name…}" in a form that is not filled (a call,
# a conversion other than !raw, a format spec), which is told rather than left to run as literal text.
_TEMPLATE = lazy_pattern(
    _PARAM_REF.pattern
    + r"|(?<!\$)\{(?P<odd_name>[A-Za-z_][A-Za-z0-9_]*)(?P<odd>(?:\.[A-Za-z][A-Za-z0-9_]*|\[[^\[\]{}\n]*\])*"
      r"(?:!(?!raw\})[A-Za-z][A-Za-z0-9_]*|:[^{}\n]*|\([^{}\n]*))\}"
)
_FIRST_NAME = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_]*")


def expand_env(text: str, env: Mapping[str, str]) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}`` from ``env``.

    An unset variable without a default expands to the empty string, as in a
    shell; ``:-`` also applies when the variable is set but empty.
    """

    def replace(match: re.Match[str]) -> str:
        if match.group("open") is not None:
            raise TemplateError(f"unclosed '${{' in {shown_value(text)}")
        body = match.group("body")
        parsed = _ENV_BODY.fullmatch(body)
        if parsed is None:
            raise TemplateError(f"malformed {shown_value('${' + body + '}')} in {shown_value(text)}:"
                                " expected ${NAME} or ${NAME:-default}")
        value = env.get(parsed.group("name"), "")
        default = parsed.group("default")
        if default is not None and value == "":
            return default
        return value

    if "${" not in text:
        return text
    return _ENV_REF.sub(replace, text)


_MISSING = object()


def _lookup(match: re.Match[str], params: Mapping[str, Any]) -> Any:
    """The value a reference names, or ``_MISSING`` when its first name is not a param.

    ``.attr`` and ``[key]`` work like ``str.format`` (a key of digits is an index; quotes
    around a key are allowed and dropped); nothing is ever called.
    """
    name = match.group("name")
    if name not in params:
        return _MISSING
    value = params[name]
    for step in _ACCESS.finditer(match.group("access")):
        try:
            if step.group("attr") is not None:
                value = getattr(value, step.group("attr"))
            else:
                key: Any = step.group("key").strip()
                if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
                    key = key[1:-1]
                elif key.lstrip("-").isdigit():
                    key = int(key)
                value = value[key]
        except Exception as exc:
            raise TemplateError(f"{{{match.group('ref')}}}: {type(exc).__name__}: {exc}") from None
    return value


@record
class Fill:
    """One ``{ref}`` that was filled: its value, and whether it came from a param or the notebook's variables."""

    ref: str
    value: Any
    from_variables: bool


@record
class Filled:
    """A text with its templates filled, what filled them, and what to tell the user about the others."""

    text: str
    fills: tuple[Fill, ...] = ()
    notes: tuple[str, ...] = ()


def expand_params(text: str, params: Mapping[str, Any], *, language: str | None = "bash",
                  variables: Mapping[str, Any] | None = None) -> str:
    """Replace ``{name}`` references, each written as a literal of ``language`` where it stands (see :func:`fill`)."""
    return fill(text, params, language=language, variables=variables).text


def fill(text: str, params: Mapping[str, Any], *, language: str | None = "bash",
         variables: Mapping[str, Any] | None = None) -> Filled:
    """Fill ``{name}`` references: a name of ``params`` everywhere, a name of ``variables`` (the notebook's)
    only where a shell would expand ``$VAR`` (never in a Python, JavaScript or other interpreter's code).

    ``language=None`` is for cwd, env values, input and argv words, which never pass through an
    interpreter: every name fills there, as written.  ``{name!raw}`` is always as written; ``{{…}}`` is a
    brace only where a ``{…}`` would fill, and stays as written elsewhere.
    """
    if "{" not in text:
        return Filled(text)
    walk = _Walk(text, params, {} if variables is None else variables, language)  # a namespace is never counted
    return walk.run()


#: Distinct unknown names checked for a typo per text: each check reads every known name, and a text with
#: thousands of distinct ``{word}``\ s (a JSON template, generated code) must cost what its length costs.
_TYPO_CHECKS = 20
_SHELL_PLACES = {"squote": "in single quotes", "ansi": "in $'…'", "ansi-unknown": "in $'…'",
                 "heredoc-quoted": "in a quoted heredoc"}


class _Walk:
    """One pass of :func:`fill`: which templates fill (by name and place), their literals, and the notes."""

    def __init__(self, text: str, params: Mapping[str, Any], variables: Mapping[str, Any],
                 language: str | None) -> None:
        self.text, self.params, self.variables, self.language = text, params, variables, language
        self.matches = {m.start(): m for m in _TEMPLATE.finditer(text)}
        self.chosen: dict[int, Any] = {}   # start -> value (an escape's: its text)
        self.places: dict[int, Context] = {}
        self.typos: dict[str, str] = {}
        self.asked: set[tuple[str, bool]] = set()  # names checked for a typo (and whether variables counted)
        self.left: dict[str, str] = {}    # a notebook variable left as written -> where

    def run(self) -> Filled:
        if not self.matches:
            return Filled(self.text)
        if self.language is None:  # a value: every place is one where a variable fills
            for start in self.matches:
                self._decide(start, None, True)
        else:
            spans = [m.span() for m in self.matches.values()]
            self.places = contexts_at(self.text, spans, self.language, self._decide)
        return Filled(self._text(), self._fills(), self._notes())

    def _decide(self, start: int, context: Context | None, fills_here: bool = False) -> bool:
        """Whether the template at ``start`` fills; for the shell walk, whether its text is skipped."""
        match = self.matches[start]
        if context is not None:
            fills_here = expands_variables(context)
        if match.group("escaped") is not None:
            first = _FIRST_NAME.match(match.group("escaped"))
            if fills_here or (first is not None and first.group(0) in self.params):
                self.chosen[start] = "{" + match.group("escaped") + "}"
            return False  # read as written: its text is the user's, braces aside
        name = match.group("name") or match.group("odd_name")
        known = name in self.params or (fills_here and name in self.variables)
        if match.group("odd_name"):
            if known:
                raise TemplateError(f"{{{name}{match.group('odd')}}} is a form that is not filled: only {{{name}}},"
                                    f" {{{name}.attr}}, {{{name}[key]}} and {{{name}!raw}} are (no calls,"
                                    f" conversions or format specs); write {{{{{name}{match.group('odd')}}}}}"
                                    " to keep it as written")
            return False
        if known:
            self.chosen[start] = _lookup(match, self.params if name in self.params else self.variables)
            return not match.group("raw")
        where = _left_place(context, match) if name in self.variables and context is not None else None
        if where is not None:
            self.left.setdefault(name, where)
        elif name not in self.variables and (name, fills_here) not in self.asked and len(self.asked) < _TYPO_CHECKS:
            self.asked.add((name, fills_here))
            self._typo(name, fills_here)
        return False

    def _typo(self, name: str, fills_here: bool) -> None:
        import difflib

        names = [*self.params, *(self.variables if fills_here else ())]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.8) if names else []
        if close:
            self.typos[name] = close[0]

    def _text(self) -> str:
        out: list[str] = []
        pos = 0
        for start, value in sorted(self.chosen.items()):
            match = self.matches[start]
            out.append(self.text[pos:start])
            if match.group("escaped") is not None:
                out.append(value)
            elif start in self.places and _quoted(match):
                _check_not_escaped(self.text, start, self.places[start], match.group("ref"))
                out.append(render(value, self.places[start], match.group("ref")))
            else:
                items = value if isinstance(value, (list, tuple)) else [value]
                out.append(" ".join(text_of(item, match.group("ref")) for item in items))
            pos = match.end()
        out.append(self.text[pos:])
        return "".join(out)

    def _fills(self) -> tuple[Fill, ...]:
        return tuple(Fill(m.group("ref"), value, m.group("name") not in self.params)
                     for m, value in ((self.matches[s], v) for s, v in sorted(self.chosen.items()))
                     if m.group("escaped") is None)

    def _notes(self) -> tuple[str, ...]:
        notes = [f"{{{name}}} names no variable and was left as written; did you mean {{{close}}}?"
                 for name, close in self.typos.items()]
        if self.left:
            names = list(self.left)
            where = self.left[names[0]]
            shown = ", ".join(f"{{{n}}}" for n in names[:3]) + (", …" if len(names) > 3 else "")
            rule = ("the shell expands $VAR" if self.language in SHELL_LANGUAGES
                    else "a shell would expand $VAR, never in a python or node cell's code")
            notes.append(f"{shown} {where} {'is' if len(names) == 1 else 'are'} left as written: notebook variables"
                         f" fill only where {rule}; "
                         + " ".join(f"--param {n}" for n in names[:3])
                         + (" fills it there too" if len(names) == 1 else " fill them there too"))
        return tuple(notes)


def _left_place(context: Context, match: re.Match[str]) -> str | None:
    """Where a notebook variable left as written may be one an older notebook meant to fill: text in quotes,
    and a bare ``{name}`` in a Python or JavaScript cell's code, which runs as a set or an object of a name
    the cell never defined (a NameError with no hint).  Comments, f-strings and other forms in code
    (``{n[0]}``, ``{n: 1}``) are the language's own, and say nothing."""
    if context.kind in _SHELL_PLACES:
        return _SHELL_PLACES[context.kind]
    if context.kind == "py-string" and "f" not in context.prefix:
        return "in a Python string"
    if context.kind in ("py-code", "js-code") and not match.group("access") and not match.group("raw"):
        return "in Python code" if context.kind == "py-code" else "in JavaScript code"
    return "in a JavaScript string" if context.kind == "js-string" else None


def _quoted(match: re.Match[str]) -> bool:
    """Whether a filled template is written as a literal of its place (not ``{name!raw}``, not an escape)."""
    return match.group("escaped") is None and not match.group("raw")


#: Places where a backslash is an ordinary character, so it cannot escape what follows it.
_BACKSLASH_LITERAL = frozenset({"squote", "heredoc-quoted", "comment", "py-comment", "js-comment",
                                "js-block-comment", "plain"})


def _check_not_escaped(text: str, start: int, context: Context, ref: str) -> None:
    """Refuse a template right after a backslash that would escape its literal's first character.

    ``echo \\{v}`` would give ``echo \\'…'``: the backslash makes the opening quote an ordinary
    character, and the value is code.  Inside backticks any backslash counts (their level removes
    one, so ``\\\\`` still escapes).
    """
    if context.kind in _BACKSLASH_LITERAL and not context.backticks:
        return
    before = start
    while before and text[before - 1] == "\\":
        before -= 1
    if (start - before) % 2 or (start > before and context.backticks):
        raise TemplateError(f"{{{ref}}} follows a backslash, which would escape the first character of its"
                            f" literal; remove the backslash (write {{{{{ref}}}}} for literal braces)")


def expand_argv(words: Sequence[str], env: Mapping[str, str], params: Mapping[str, Any],
                variables: Mapping[str, Any] | None = None, report: list[Filled] | None = None) -> list[str]:
    """Expand each argv word: env first, then params and variables as written (no shell is involved).

    A word that is exactly ``{name}`` whose value is a list or tuple becomes one
    argument per item, so ``%spawn ls {files}`` passes every file name intact.
    ``report`` collects what filled each word (for the notes and ``--dry-run``).
    """
    out: list[str] = []
    # the notebook's namespace looked up, never counted nor copied (a walk of every name it holds, per run);
    # a ChainMap that is only read here
    names = ChainMap(dict(params), cast("MutableMapping[str, Any]", variables)) if variables is not None else params
    for word in words:
        word = expand_env(word, env)
        whole = _PARAM_REF.fullmatch(word)
        if whole and whole.group("ref"):
            value = _lookup(whole, names)
            if isinstance(value, (list, tuple)):
                out.extend(text_of(item, whole.group("ref")) for item in value)
                if report is not None:
                    report.append(Filled(word, (Fill(whole.group("ref"), value, whole.group("name") not in params),)))
                continue
        out.append(_reported(fill(word, params, language=None, variables=variables), report))
    return out


def expand_value(text: str, env: Mapping[str, str], params: Mapping[str, Any],
                 variables: Mapping[str, Any] | None = None, report: list[Filled] | None = None) -> str:
    """Both kinds, as written: for cwd, env values and input, which never pass through a shell."""
    return _reported(fill(expand_env(text, env), params, language=None, variables=variables), report)


def _reported(filled: Filled, report: list[Filled] | None) -> str:
    if report is not None and (filled.fills or filled.notes):
        report.append(filled)
    return filled.text


def hold(text: str, params: Collection[str]) -> str:
    """``text`` with every template that is not one of ``params`` written so that filling it as a value
    gives back exactly ``text``'s braces: for ``'…'`` of a line that is split into words before it is
    filled (``%spawn``), where a notebook variable must not fill, as in a shell's ``'…'``.

    ``{n}`` and ``{n!r}`` become ``{{n}}`` and ``{{n!r}}`` (escapes); an escape ``{{n}}`` becomes
    ``{{{n}}}``, which an escape inside braces fills back to ``{{n}}``.
    """
    def held(match: re.Match[str]) -> str:
        escaped = match.group("escaped")
        if escaped is not None:
            first = _FIRST_NAME.match(escaped)
            return match.group(0) if first is not None and first.group(0) in params else "{" + match.group(0) + "}"
        name = match.group("name") or match.group("odd_name")
        return match.group(0) if name in params else "{" + match.group(0) + "}"

    return _TEMPLATE.sub(held, text) if "{" in text else text


def references(text: str) -> list[tuple[str, str]]:
    """``(name, reference)`` of every ``{name…}`` in ``text`` (``{{…}}`` escapes excluded)."""
    return [(m.group("name"), m.group("ref")) for m in _PARAM_REF.finditer(text) if m.group("ref")]


def resolve(ref: str, params: Mapping[str, Any]) -> Any:
    """The value ``{ref}`` stands for (``None`` when its name is not a param)."""
    match = _PARAM_REF.fullmatch("{" + ref + "}")
    value = _lookup(match, params) if match is not None and match.group("ref") else _MISSING
    return None if value is _MISSING else value
