"""``${VAR:-default}`` and ``{name}`` expansion (ARCHITECTURE.md, "The life of a cell").

Two kinds, applied in this order (the environment is the caller's setting, params the
run's values, so a param can never be read as a variable to expand again):

1. ``${VAR}`` / ``${VAR:-default}`` from the merged environment.  Used for argv
   words, cwd, env values and input -- never for shell script bodies, where bash
   expands them itself with the environment we pass.
2. ``{name}`` from caller-supplied params (then, in a notebook, its namespace),
   with ``{name.attr}`` and ``{name[key]}`` as in ``str.format`` (never calls).
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
   ``{name}``.  A ``{word}`` with no such name is left as written, so awk's
   ``{print $1}``, ``find -exec {}`` and bash's ``${HOME}`` survive untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..process.errors import TemplateError, shown_value
from .contexts import Context, contexts_at
from .literals import render, text_of

__all__ = ["expand_argv", "expand_env", "expand_params", "expand_value", "references", "resolve"]

_ENV_REF = re.compile(r"\$\{(?P<body>[^}]*)\}|\$\{(?P<open>[^}]*)$")
_ENV_BODY = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.DOTALL)
# "{{...}}" escapes, or "{name}", "{name.attr[key]}", "{…!raw}" not preceded by "$" (bash's ${name}).
_PARAM_REF = re.compile(
    r"\{\{(?P<escaped>[^{}]*)\}\}"
    r"|(?<!\$)\{(?P<ref>(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?P<access>(?:\.[A-Za-z][A-Za-z0-9_]*|\[[^\[\]{}\n]*\])*))(?P<raw>!raw)?\}"
)
_ACCESS = re.compile(r"\.(?P<attr>[A-Za-z][A-Za-z0-9_]*)|\[(?P<key>[^\]]*)\]")


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


def expand_params(text: str, params: Mapping[str, Any], *, language: str | None = "bash") -> str:
    """Replace ``{name}`` references from ``params``, each written as a literal of ``language`` where it stands.

    ``language=None`` inserts values as written (for cwd, env values and input, which never
    pass through an interpreter).  ``{name!raw}`` is always as written.
    """
    if "{" not in text:
        return text
    found: list[tuple[re.Match[str], Any]] = []
    for match in _PARAM_REF.finditer(text):
        if match.group("escaped") is not None:
            found.append((match, None))
        else:
            value = _lookup(match, params)
            if value is not _MISSING:
                found.append((match, value))
    if not found:
        return text
    quoted = [m.span() for m, _ in found if m.group("escaped") is None and not m.group("raw")]
    places = contexts_at(text, quoted, language) if language is not None and quoted else {}
    out: list[str] = []
    pos = 0
    for match, value in found:
        out.append(text[pos:match.start()])
        if match.group("escaped") is not None:
            out.append("{" + match.group("escaped") + "}")
        elif match.start() in places:
            _check_not_escaped(text, match.start(), places[match.start()], match.group("ref"))
            out.append(render(value, places[match.start()], match.group("ref")))
        else:
            items = value if isinstance(value, (list, tuple)) else [value]
            out.append(" ".join(text_of(item, match.group("ref")) for item in items))
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


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


def expand_argv(words: Sequence[str], env: Mapping[str, str], params: Mapping[str, Any]) -> list[str]:
    """Expand each argv word: env first, then params as written (no shell is involved).

    A word that is exactly ``{name}`` whose value is a list or tuple becomes one
    argument per item, so ``%spawn ls {files}`` passes every file name intact.
    """
    out: list[str] = []
    for word in words:
        word = expand_env(word, env)
        whole = _PARAM_REF.fullmatch(word)
        if whole and whole.group("ref"):
            value = _lookup(whole, params)
            if isinstance(value, (list, tuple)):
                out.extend(text_of(item, whole.group("ref")) for item in value)
                continue
        out.append(expand_params(word, params, language=None))
    return out


def expand_value(text: str, env: Mapping[str, str], params: Mapping[str, Any]) -> str:
    """Both kinds, as written: for cwd, env values and input, which never pass through a shell."""
    return expand_params(expand_env(text, env), params, language=None)


def references(text: str) -> list[tuple[str, str]]:
    """``(name, reference)`` of every ``{name…}`` in ``text`` (``{{…}}`` escapes excluded)."""
    return [(m.group("name"), m.group("ref")) for m in _PARAM_REF.finditer(text) if m.group("ref")]


def resolve(ref: str, params: Mapping[str, Any]) -> Any:
    """The value ``{ref}`` stands for (``None`` when its name is not a param)."""
    match = _PARAM_REF.fullmatch("{" + ref + "}")
    value = _lookup(match, params) if match is not None and match.group("ref") else _MISSING
    return None if value is _MISSING else value
