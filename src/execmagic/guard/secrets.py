"""Secrets (design §3.7): which variables look like credentials, holding them back, redacting them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["DEFAULT_ENV_ALLOW", "SECRET_NAME", "SECRET_VALUE", "Masked", "looks_secret", "redact",
           "sanitize_env", "secret_env"]

# -- environment sanitising and redaction ---------------------------------------------------
SECRET_NAME = re.compile(
    r"(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|SIGNING_?KEY|CREDENTIAL"
    r"|AUTH|COOKIE|_DSN$|^DSN$|_PAT$)"
)
#: Credential-shaped text.  A private key is its header, the base64 lines (and ``Proc-Type:``-style
#: headers) that follow it and its end line -- not whatever text comes after a lone header.
#: Every branch starts at a fixed prefix or has bounded repetition before
#: its anchor, so a match attempt costs O(1) at most positions and redaction stays linear in the
#: text's length (a 30,000-character line redacts in a few milliseconds; see the benchmarks).
SECRET_VALUE = re.compile(
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|sk-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|A[KS]IA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:\r?\n(?:(?:Proc-Type|DEK-Info|Comment):[^\n]{0,200}"
    r"|[ \t]{0,8}[A-Za-z0-9+/=]{1,200}[ \t]{0,8}(?=\r?\n|$)|[ \t]{0,8}(?=\r?\n))){0,400}"
    r"(?:\r?\n-----END [A-Z ]{0,40}PRIVATE KEY-----)?"
    r"|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r"|(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^/\s:@]{1,256}:[^/\s@]{1,256}@"
)
# NAME=value where NAME says it is a credential (DB_PASSWORD=…, GITHUB_TOKEN="…"); the name is bounded
# (at most 40 characters each side of the keyword), so a long word costs O(1) per position
_SECRET_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_])([A-Za-z0-9_]{0,40}?(?i:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY"
    r"|PRIVATE_?KEY)[A-Za-z0-9_]{0,40})=(?!\[REDACTED)('[^'\n]*'|\"[^\"\n]*\"|[^\s;&|'\"]+)"
)
_GENERIC_TOKEN = re.compile(r"[A-Za-z0-9_+/=-]{32,}")
#: Names passed on whatever their name or value looks like.
DEFAULT_ENV_ALLOW = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "PWD", "OLDPWD", "TMPDIR",
    "SSH_AUTH_SOCK", "XAUTHORITY", "DISPLAY", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "HOSTNAME", "SHLVL",
    "COLUMNS", "LINES", "EDITOR", "PAGER", "MPLBACKEND",
})


def looks_secret(name: str, value: str) -> bool:
    """A variable named like a credential, or holding a value shaped like one."""
    if SECRET_NAME.search(name) or SECRET_VALUE.search(value):
        return True
    generic = _GENERIC_TOKEN.fullmatch(value)
    return bool(generic and re.search(r"[a-z]", value) and re.search(r"[A-Z]", value) and re.search(r"\d", value)
                and "/" not in value[:1])


def sanitize_env(env: Mapping[str, str], allow: Iterable[str] = ()) -> tuple[dict[str, str], dict[str, str]]:
    """Split ``env`` into (what may be passed on, what looks secret and is held back)."""
    allowed = DEFAULT_ENV_ALLOW | set(allow)
    kept: dict[str, str] = {}
    held: dict[str, str] = {}
    for name, value in env.items():
        if name in allowed or name.startswith(("LC_", "EXECMAGIC_")) or not looks_secret(name, value):
            kept[name] = value
        else:
            held[name] = value
    return kept, held


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """Hide known secret values (``[REDACTED:NAME]``) and anything shaped like a credential (``[REDACTED]``).

    Linear in ``len(text)`` per known value: ``str.replace`` and one pass of :data:`SECRET_VALUE`.
    """
    for name, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
        if len(value) >= 6:
            text = text.replace(value, f"[REDACTED:{name}]")
    text = _SECRET_ASSIGNMENT.sub(r"\1=[REDACTED]", text)
    return SECRET_VALUE.sub("[REDACTED]", text)


def secret_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` whose *names* say they hold a credential (values of 6+ characters)."""
    return {name: value for name, value in env.items()
            if len(value) >= 6 and SECRET_NAME.search(name) and name not in DEFAULT_ENV_ALLOW}


class Masked:
    """Stands in for a secret template value when the command is *shown*: any attribute or item of
    it is itself, and its text is ``[REDACTED:ref]``, so ``{creds.token}`` shows as that."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Masked:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self

    def __getitem__(self, key: object) -> Masked:
        return self

    def __str__(self) -> str:
        return f"[REDACTED:{self._name}]"
