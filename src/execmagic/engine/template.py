"""``${VAR:-default}`` and ``{name}`` expansion (design §3.3).

Two kinds, applied in this order, as the SubprocessPrimitive seed does:

1. ``${VAR}`` / ``${VAR:-default}`` from the merged environment.  Used for argv
   words, cwd, env values and input -- never for shell script bodies, where bash
   expands them itself with the environment we pass.
2. ``{name}`` from caller-supplied params (then, in a notebook, its namespace).
   In shell text the value is shell-quoted, so ``x; rm -rf ~`` stays one harmless
   word; ``{name!raw}`` inserts it as written.  ``{{name}}`` is the literal text
   ``{name}``.  A ``{word}`` with no such name is left as written, so awk's
   ``{print $1}``, ``find -exec {}`` and bash's ``${HOME}`` survive untouched.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import TemplateError

_ENV_REF = re.compile(r"\$\{(?P<body>[^}]*)\}|\$\{(?P<open>[^}]*)$")
_ENV_BODY = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>.*))?", re.S)
# "{{...}}" escapes, or "{name}" / "{name!raw}" not preceded by "$" (bash's ${name}).
_PARAM_REF = re.compile(
    r"\{\{(?P<escaped>[^{}]*)\}\}"
    r"|(?<!\$)\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<raw>!raw)?\}"
)


def expand_env(text: str, env: Mapping[str, str]) -> str:
    """Replace ``${VAR}`` and ``${VAR:-default}`` from ``env``.

    An unset variable without a default expands to the empty string, as in a
    shell; ``:-`` also applies when the variable is set but empty.
    """

    def replace(match: re.Match[str]) -> str:
        if match.group("open") is not None:
            raise TemplateError(f"unclosed '${{' in {text!r}")
        body = match.group("body")
        parsed = _ENV_BODY.fullmatch(body)
        if parsed is None:
            raise TemplateError(f"malformed '${{{body}}}' in {text!r}: expected ${{NAME}} or ${{NAME:-default}}")
        value = env.get(parsed.group("name"), "")
        default = parsed.group("default")
        if default is not None and value == "":
            return default
        return value

    if "${" not in text:
        return text
    return _ENV_REF.sub(replace, text)


def _render(value: Any, quote: bool) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(_render(item, quote) for item in value)
    text = value if isinstance(value, str) else str(value)
    return shlex.quote(text) if quote else text


def expand_params(text: str, params: Mapping[str, Any], *, quote: bool = True) -> str:
    """Replace ``{name}`` from ``params``; shell-quote the value unless ``quote`` is false or ``!raw`` is given.

    A list or tuple value becomes its items, each quoted, separated by spaces.
    """

    def replace(match: re.Match[str]) -> str:
        escaped = match.group("escaped")
        if escaped is not None:
            return "{" + escaped + "}"
        name = match.group("name")
        if name not in params:
            return match.group(0)
        return _render(params[name], quote and not match.group("raw"))

    if "{" not in text:
        return text
    return _PARAM_REF.sub(replace, text)


def expand_argv(words: Sequence[str], env: Mapping[str, str], params: Mapping[str, Any]) -> list[str]:
    """Expand each argv word: env first, then params without quoting (no shell is involved).

    A word that is exactly ``{name}`` whose value is a list or tuple becomes one
    argument per item, so ``%spawn ls {files}`` passes every file name intact.
    """
    out: list[str] = []
    for word in words:
        word = expand_env(word, env)
        whole = _PARAM_REF.fullmatch(word)
        if whole and whole.group("name") in params and isinstance(params[whole.group("name")], (list, tuple)):
            out.extend(str(item) for item in params[whole.group("name")])
            continue
        out.append(expand_params(word, params, quote=False))
    return out


def expand_value(text: str, env: Mapping[str, str], params: Mapping[str, Any]) -> str:
    """Both kinds, unquoted: for cwd, env values and input, which never pass through a shell."""
    return expand_params(expand_env(text, env), params, quote=False)
