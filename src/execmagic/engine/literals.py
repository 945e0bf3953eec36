"""A value written as a literal of the place it stands in (see :mod:`.template` for the why).

Given a :class:`~.contexts.Context`, each function here turns a Python value
into text that the shell, Python or JavaScript reads back as exactly that value:
no quote can end early, no substitution can start, no word can be added.
Where no literal can carry the value (a line equal to a heredoc's delimiter,
text in ``$(( ))``), the answer is a :class:`TemplateError`, never a guess.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ..process.errors import TemplateError
from ..shell.patterns import lazy_pattern
from .contexts import Context

__all__ = ["render", "text_of"]

_INTEGER = lazy_pattern(r"[+-]?[0-9]+")
# name[ … $( / ` / ${ / $[ … ]: bash expands a subscript when it evaluates a value as a number
_SUBSCRIPT_CODE = lazy_pattern(r"\[.*?(?:\$\(|`|\$\{|\$\[)", re.DOTALL)  # any "[" before: a[b[0]+$(…)]


def text_of(value: Any, ref: str, *, escaped: bool = False) -> str:
    """The text of one value: ``str``, numbers, paths, ``bytes`` (UTF-8, undecodable bytes kept as
    surrogate escapes so a process receives them unchanged), anything else by ``str()``.

    ``None``, NUL bytes (unless the caller writes an ``escaped`` literal, where ``\\0`` is fine)
    and a ``__str__`` that raises are one-line :class:`TemplateError`\\ s.
    """
    if value is None:
        raise TemplateError(f"{{{ref}}} is None: give it a value, or write {{{{{ref}}}}} for literal braces")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8", "surrogateescape")
    if isinstance(value, str):
        value = str.__str__(value)  # a str subclass's own __str__/__repr__ never speaks for it
    else:
        try:
            value = str(value)
        except Exception as exc:
            raise TemplateError(f"{{{ref}}}: str() of its {type(value).__name__} value failed: "
                                f"{type(exc).__name__}: {exc}") from None
    if escaped:  # written as an escaped literal: NULs and lone surrogates are escapes there
        return value
    if "\0" in value:
        raise TemplateError(f"{{{ref}}} holds a NUL byte, which no command line, file name or variable can carry")
    try:
        value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise TemplateError(f"{{{ref}}} holds a lone surrogate ({value[exc.start]!r}) that is not text and no"
                            " program can receive; pass bytes instead") from None
    return value


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def render(value: Any, context: Context, ref: str) -> str:
    """``value`` as a literal for ``context`` (see :mod:`.contexts` for the kinds)."""
    kind = context.kind
    if kind.startswith("py-"):
        return _python(value, context, ref)
    if kind.startswith("js-"):
        return _javascript(value, context, ref)
    if kind == "plain":
        return " ".join(text_of(item, ref) for item in _items(value))
    text = _shell(value, context, ref)
    for in_dquote in context.backticks:  # each old-style `…` level reads one layer of backslashes
        text = re.sub(r'([\\`$"])' if in_dquote else r"([\\`$])", r"\\\1", text)
    _check_heredoc(text, context, ref)
    return text


# -- shells ------------------------------------------------------------------------------------
#: What a second expansion leaves as it is: no $, `, quote, backslash, blank, glob or brace.
_ONCE_SAFE = lazy_pattern(r"[A-Za-z0-9_./+,:=@%^-]*")


def _shell(value: Any, context: Context, ref: str) -> str:
    kind = context.kind
    items = [text_of(item, ref) for item in _items(value)]
    if kind not in ("comment", "heredoc", "heredoc-quoted") and any(_SUBSCRIPT_CODE.search(t) for t in items):
        raise TemplateError(f"{{{ref}}} holds an array subscript with a substitution (like a[$(…)]), which bash"
                            " runs wherever it reads the value as a number ([[ -eq ]], let, declare -i, $(( )));"
                            " refused in shell code")
    if context.expanded_twice and not all(_ONCE_SAFE.fullmatch(t) for t in items):
        raise TemplateError(f"{{{ref}}} is in the word after >&, which bash expands a second time when it is not"
                            " a number (a $ or ` in the value would run); write &> for a file, or use a value of"
                            " letters, digits and ._/+,:=@%^-")
    if kind == "unparsed" and context.why == "heredoc-in-parens":
        raise TemplateError(f"{{{ref}}} stands after a heredoc opened inside ( … ) or $( … ), whose body dash and bash"
                            " read at different places (dash ends it at the closing parenthesis of $( … )), where a"
                            " value could run as a command; open the heredoc outside the parentheses, or use bash")
    if kind == "unparsed":
        raise TemplateError(f"{{{ref}}} stands after a syntax error in an array assignment (NAME=( … )), after"
                            " which bash goes on at a later line, where a value could run as a command;"
                            " fix the script before it")
    if kind == "code":
        return " ".join(shlex.quote(t) for t in items)
    text = " ".join(items)
    if context.in_param and "'" in text:
        raise TemplateError(f"{{{ref}}} holds a single quote and stands inside \"${{…}}\", where bash pairs"
                            " single quotes; put it in a variable first")
    if kind == "ansi-unknown":
        raise TemplateError(f"{{{ref}}} stands inside $'…', which this shell may not read as bash does;"
                            " use '…' or \"…\" around it")
    if kind == "dquote":
        return re.sub(r'([\\$`"])', r"\\\1", text)
    if kind == "squote":
        return text.replace("'", "'\\''")
    if kind == "ansi":
        return text.replace("\\", "\\\\").replace("'", "\\'")
    if kind in ("heredoc", "heredoc-quoted"):
        return re.sub(r"([\\$`])", r"\\\1", text) if kind == "heredoc" else text
    if kind == "arith":
        if not _INTEGER.fullmatch(text):
            raise TemplateError(f"{{{ref}}} stands in an arithmetic expression, where only an integer is safe;"
                                f" its value is not one")
        return text
    if kind == "comment":
        return text.replace("\n", "\n# ")
    raise AssertionError(kind)


def _check_heredoc(text: str, context: Context, ref: str) -> None:
    """No line of the literal may end a heredoc whose body holds it (nested in a substitution there too).

    A line that starts with the delimiter and ``)`` is refused too: inside ``$( … )`` it ends the body.
    """
    ends = context.heredoc_ends
    if not ends and context.kind in ("heredoc", "heredoc-quoted"):
        ends = ((context.delimiter, context.strip_tabs),)
    for delimiter, strip_tabs in ends:
        for line in text.split("\n"):
            line = line.lstrip("\t") if strip_tabs else line
            # inside $( … ) bash also ends the body at a line "EOF)" (the ")" ends the substitution)
            if line == delimiter or line.startswith(delimiter + ")"):
                raise TemplateError(f"{{{ref}}} holds a line {line!r}, which would end the heredoc early")


def _comment_text(value: Any, ref: str) -> str:
    """Text for a comment: never read, so NULs go and undecodable bytes show as U+FFFD (an interpreter
    that reads its program as UTF-8 would refuse the file otherwise)."""
    text = text_of(value, ref, escaped=True).replace("\0", "")
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# -- Python ------------------------------------------------------------------------------------
def _python(value: Any, context: Context, ref: str) -> str:
    if context.kind == "py-fspec":
        raise TemplateError(f"{{{ref}}} stands in an f-string's format spec, where braces start code;"
                            " put it in a variable and write {{x:{{spec}}}} yourself")
    if context.kind == "py-comment":
        return re.sub(r"\r\n|\r|\n", "\n# ", _comment_text(value, ref))  # Python ends lines at each of them
    if context.kind == "py-code":
        return _py_literal(value, ref, 0)
    prefix, quote = context.prefix, context.quote
    if "r" in prefix:  # nothing can be escaped in a raw string: close it, add a literal, reopen it
        plain = prefix.replace("r", "").replace("f", "")
        return f"{quote} {plain}{quote}{_py_string_body(value, ref, 'b' in prefix, quote)}{quote} {prefix}{quote}"
    body = _py_string_body(value, ref, "b" in prefix, quote)
    return body.replace("{", "{{").replace("}", "}}") if "f" in prefix else body


def _py_string_body(value: Any, ref: str, as_bytes: bool, quote: str) -> str:
    if as_bytes:
        raw = value if isinstance(value, (bytes, bytearray)) else \
            text_of(value, ref, escaped=True).encode("utf-8", "surrogateescape")
        body = repr(bytes(raw))[2:-1]
    else:
        body = repr(text_of(value, ref, escaped=True))[1:-1]
    # repr escapes the quote it chose; escape both so any enclosing quote is safe
    return re.sub(r"(?<!\\)((?:\\\\)*)(['\"])", r"\1\\\2", body)


def _py_literal(value: Any, ref: str, depth: int) -> str:
    if depth > 50:
        raise TemplateError(f"{{{ref}}} is nested too deeply to write as a Python literal")
    # a subclass's own __repr__ never speaks for a value: plain int/float/bytes are written instead
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int.__int__(value))
    if isinstance(value, float):
        number = float.__float__(value)
        return repr(number) if math.isfinite(number) else f"float({str(number)!r})"
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_py_literal(item, ref, depth + 1) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_py_literal(k, ref, depth + 1)}: {_py_literal(v, ref, depth + 1)}"
                               for k, v in value.items()) + "}"
    return repr(text_of(value, ref, escaped=True))


# -- JavaScript --------------------------------------------------------------------------------
def _javascript(value: Any, context: Context, ref: str) -> str:
    kind = context.kind
    if kind == "js-code":
        return _js_literal(value, ref, 0)
    text = _comment_text(value, ref) if "comment" in kind else _js_text(value, ref)
    if kind == "js-comment":
        return text.replace("\n", "\n// ").replace("\r", " ").replace("\u2028", " ").replace("\u2029", " ")
    if kind == "js-block-comment":
        return text.replace("*/", "* /")
    if kind == "js-regex":  # every character matched as itself; "/" and line ends cannot end the literal
        escaped = re.sub(r"([\\^$.|?*+()\[\]{}/-])", r"\\\1", text)
        return json.dumps(escaped)[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    body = json.dumps(text)[1:-1]  # escapes \ " and control characters, lone surrogates as \uXXXX
    if kind == "js-template":  # every "$": a value ending in "$" next to one starting with "{" is no ${…}
        return body.replace("`", "\\`").replace("$", "\\$")
    return body.replace("'", "\\'")


def _js_text(value: Any, ref: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise TemplateError(f"{{{ref}}} is bytes that are not UTF-8 text; JavaScript strings cannot hold them"
                                ) from None
    return text_of(value, ref, escaped=True)


def _js_literal(value: Any, ref: str, depth: int) -> str:
    if depth > 50:
        raise TemplateError(f"{{{ref}}} is nested too deeply to write as a JavaScript literal")
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return repr(int.__int__(value))
    if isinstance(value, float):
        number = float.__float__(value)
        return repr(number) if math.isfinite(number) else ("NaN" if math.isnan(number) else
                                                           ("Infinity" if number > 0 else "-Infinity"))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_js_literal(item, ref, depth + 1) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(_js_text(k, ref))}: {_js_literal(v, ref, depth + 1)}"
                               for k, v in value.items()) + "}"
    return json.dumps(_js_text(value, ref))
