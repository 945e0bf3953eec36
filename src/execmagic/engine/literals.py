"""A value written as a literal of the place it stands in (design §3.3).

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

from .contexts import Context
from ..process.errors import TemplateError

__all__ = ["render", "text_of"]

_INTEGER = re.compile(r"[+-]?[0-9]+")


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
    if not isinstance(value, str):
        try:
            value = str(value)
        except Exception as exc:  # noqa: BLE001 -- any failure of a user's __str__ is one line
            raise TemplateError(f"{{{ref}}}: str() of its {type(value).__name__} value failed: "
                                f"{type(exc).__name__}: {exc}") from None
    if "\0" in value and not escaped:
        raise TemplateError(f"{{{ref}}} holds a NUL byte, which no command line, file name or variable can carry")
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
    return text


# -- shells ------------------------------------------------------------------------------------
def _shell(value: Any, context: Context, ref: str) -> str:
    kind = context.kind
    if kind == "code":
        return " ".join(shlex.quote(text_of(item, ref)) for item in _items(value))
    text = " ".join(text_of(item, ref) for item in _items(value))
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
        _check_heredoc(text, context, ref)
        return re.sub(r"([\\$`])", r"\\\1", text) if kind == "heredoc" else text
    if kind == "arith":
        if not _INTEGER.fullmatch(text):
            raise TemplateError(f"{{{ref}}} stands in an arithmetic expression, where only an integer is safe;"
                                f" got {text[:40]!r}")
        return text
    if kind == "comment":
        return text.replace("\n", "\n# ")
    raise AssertionError(kind)


def _check_heredoc(text: str, context: Context, ref: str) -> None:
    for line in text.split("\n"):
        if (line.lstrip("\t") if context.strip_tabs else line) == context.delimiter:
            raise TemplateError(f"{{{ref}}} holds a line {context.delimiter!r}, which would end the heredoc early")


def _comment_text(value: Any, ref: str) -> str:
    """Text for a comment: never read, so NULs go and undecodable bytes show as U+FFFD (an interpreter
    that reads its program as UTF-8 would refuse the file otherwise)."""
    text = text_of(value, ref, escaped=True).replace("\0", "")
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# -- Python ------------------------------------------------------------------------------------
def _python(value: Any, context: Context, ref: str) -> str:
    if context.kind == "py-comment":
        return _comment_text(value, ref).replace("\n", "\n# ")
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
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
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
    body = json.dumps(text)[1:-1]  # escapes \ " and control characters, lone surrogates as \uXXXX
    if kind == "js-template":
        return body.replace("`", "\\`").replace("${", "\\${")
    return body.replace("'", "\\'")


def _js_text(value: Any, ref: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise TemplateError(f"{{{ref}}} is bytes that are not UTF-8 text; JavaScript strings cannot hold them")
    return text_of(value, ref, escaped=True)


def _js_literal(value: Any, ref: str, depth: int) -> str:
    if depth > 50:
        raise TemplateError(f"{{{ref}}} is nested too deeply to write as a JavaScript literal")
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("NaN" if math.isnan(value) else
                                                         ("Infinity" if value > 0 else "-Infinity"))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_js_literal(item, ref, depth + 1) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(_js_text(k, ref))}: {_js_literal(v, ref, depth + 1)}"
                               for k, v in value.items()) + "}"
    return json.dumps(_js_text(value, ref))
