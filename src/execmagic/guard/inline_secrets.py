"""Secrets given inline, and placeholders that only look like them: what redaction hides, exactly.

Two ways redaction misled an agent.  A placeholder after a secret-like label was hidden -- ``api_key:
none`` became ``api_key: [REDACTED]``, ``secret=[]`` became ``secret=[REDACTED]]`` -- so the agent
"saw" a key that is not set.  And a password handed to a tool's option passed untouched: ``mysql
-phunter2``, ``curl -u admin:hunter2``, ``sshpass -p …``, a netrc ``password …`` line, a Kaggle
``"key"``.  The rule: a value after a label is no secret when it is a placeholder (empty, ``none``,
``null``, ``(unset)``, ``[]``, a bare number, a word in brackets, the start of an error message);
a value given to a password option is one, whatever it looks like.  Only the secret is replaced,
never the brackets or quotes around it.

Each pattern has a fixed start (an option, a tool's name, a line's start) and bounded repetition, so
redaction stays linear in the text's length.
"""

from __future__ import annotations

from ..shell.patterns import lazy_pattern

__all__ = ["is_placeholder", "option_secrets"]

#: Words that stand for "no value": a placeholder, or the first word of an error message where a value would be.
_NO_VALUE = frozenset({
    "", "none", "null", "nil", "undefined", "unset", "notset", "not_set", "empty", "n/a", "na", "-", "--", "missing",
    "no", "not", "is", "was", "permission", "cannot", "can't", "could", "failed", "error", "denied", "invalid",
    "unknown", "redacted", "hidden", "***", "xxx", "...", "…",
})
_NUMBER = lazy_pattern(r"[-+]?[0-9]+(?:\.[0-9]+)?")
_BRACKETED_WORD = lazy_pattern(r"[A-Za-z_ .-]*")
_OPENING = "([{<"
_CLOSING = ")]}>"


def is_placeholder(value: str) -> bool:
    """Whether ``value``, after a secret-like label, holds no secret (``none``, ``(unset)``, ``[]``, ``42``)."""
    inner = value.strip(_OPENING + _CLOSING + "\"'")
    bracketed = value[:1] in _OPENING
    return (inner.lower() in _NO_VALUE or _NUMBER.fullmatch(inner) is not None
            or (bracketed and _BRACKETED_WORD.fullmatch(inner) is not None))


#: A value given to a password option, or in a place that holds only a password; group ``secret`` is it.
_OPTIONS = lazy_pattern(
    # mysql/mariadb -pPASSWORD (glued: "-p PASSWORD" would be a database name)
    r"(?<![\w.-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n|;&]{0,300}?[ \t]-p"
    r"(?P<secret>[^\s'\"-][^\s'\"]{0,255}|'[^'\n]{1,256}'|\"[^\"\n]{1,256}\")"
    # curl/wget -u USER:PASSWORD, --user USER:PASSWORD, --user=USER:PASSWORD
    r"|(?<![\w.-])(?:-u|--user|--proxy-user)(?:[ \t]+|=)['\"]?[^\s:'\"]{0,256}:(?P<user_secret>[^\s'\"@]{1,256})"
    # sshpass -p PASSWORD
    r"|(?<![\w.-])sshpass[ \t]+(?:-[a-oq-zA-Z]+[ \t]+)*-p[ \t]*(?P<pass_secret>[^\s'\"]{1,256}|'[^'\n]{1,256}')"
    # a netrc line: [machine HOST] [login USER] password PASSWORD
    r"|(?m:^)[ \t]*(?:(?:machine|default)[ \t]*\S{0,256}[ \t]+)?(?:login[ \t]+\S{1,256}[ \t]+)?password[ \t]+"
    r"(?P<netrc_secret>[^\s=:]\S{0,255})"
    # a Kaggle API key: "key": "<32 hex>"
    r"|\"key\"[ \t]*:[ \t]*\"(?P<hex_secret>[0-9a-f]{32})\"",
    often=True,
)
_GROUPS = ("secret", "user_secret", "pass_secret", "netrc_secret", "hex_secret")


def option_secrets(text: str) -> list[tuple[int, int]]:
    """Where the passwords given to options (``-phunter2``, ``-u admin:hunter2``) stand in ``text``."""
    spans: list[tuple[int, int]] = []
    for match in _OPTIONS.finditer(text):
        group = next(name for name in _GROUPS if match.group(name) is not None)
        start, end = match.span(group)
        value = match.group(group)
        if value[:1] in "'\"" and len(value) > 1:  # quoted: the quotes stay
            start, end = start + 1, end - 1
        if group == "netrc_secret" and is_placeholder(value):
            continue
        if not value.startswith("[REDACTED"):
            spans.append((start, end))
    return spans
