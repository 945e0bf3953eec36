"""Secrets: which variables look like credentials, holding them back, redacting them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..shell.patterns import lazy_pattern
from .inline_secrets import is_placeholder, option_secrets
from .secret_names import secret_name

__all__ = ["DEFAULT_ENV_ALLOW", "HOLD_LIMIT", "SECRET_NAME", "SECRET_VALUE", "Masked", "looks_secret", "redact",
           "sanitize_env", "secret_env", "secret_tail"]

# -- environment sanitising and redaction ---------------------------------------------------
class _NameRule:
    """:func:`~.secret_names.secret_name` with a compiled pattern's face: ``SECRET_NAME.search(name)`` is
    true for a name that holds a secret, so it reads like :data:`SECRET_VALUE` beside it."""

    def search(self, name: str) -> bool:
        return secret_name(name)

    __call__ = search

    def __repr__(self) -> str:
        return "SECRET_NAME (execmagic.guard.secret_names.secret_name)"


#: Whether a name holds a secret: one rule for every kind of name (see :mod:`.secret_names`).
SECRET_NAME = _NameRule()
#: Credential-shaped text, by the formats of the services that issue it (most have a fixed prefix: a
#: GitHub, Slack, Stripe, SendGrid, Databricks or PyPI token; an AWS key id) or a fixed frame (a
#: Telegram bot token, a JWT, a password in a URL).  A private key is its header, the base64 lines
#: (and ``Proc-Type:``-style headers) that follow it and its end line -- not whatever text comes after
#: a lone header -- and the same inside a JSON string, where its newlines are ``\\n``.  There is no
#: entropy rule: commit hashes, digests and uuids look as random as keys do.
#: Every branch but the URL's starts with a fixed character or class -- a lookbehind, where one is
#: needed, comes after it (a Telegram token is found at its colon) -- so the regex engine skips a
#: branch at a glance wherever its first character is wrong (twice as fast as lookbehinds first); and
#: each has a fixed prefix or bounded repetition before its anchor, so a match attempt costs O(1) at
#: most positions and redaction stays linear in the text's length (a 30,000-character line redacts in
#: a few milliseconds; see the benchmarks).  Compiled at import, unlike the module's other patterns
#: (``shell/patterns.py``): a public name the guard package exports, a compiled pattern wherever it is read.
SECRET_VALUE = re.compile(
    r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|sk-(?<![A-Za-z0-9_]sk-)[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|A[KS]IA(?<![A-Za-z0-9]A[KS]IA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"
    r"|sk_(?:live|test)_[0-9A-Za-z]{16,}|rk_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{24,}"
    r"|SG\.[0-9A-Za-z_-]{16,32}\.[0-9A-Za-z_-]{16,64}|SK(?<![0-9A-Za-z]SK)[0-9a-fA-F]{32}(?![0-9A-Za-z])"
    r"|dapi[0-9a-f]{32}(?:-[0-9]{1,3})?|:(?<=[0-9]{8}:)[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"
    r"|AccountKey=[A-Za-z0-9+/]{20,}={0,2}|SharedAccessKey=[A-Za-z0-9+/]{20,}={0,2}|sig=(?<=[?&]sig=)[A-Za-z0-9%+/]{20,}={0,2}"
    r"|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
    r"|AGE-SECRET-KEY-1[0-9A-Z]{58}"
    r"|https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:(?:\\r)?\\n(?:(?:Proc-Type|DEK-Info|Comment):[^\\\n\"]{0,200}"
    r"|[A-Za-z0-9+/=]{1,4096}|(?=(?:\\r)?\\n))){1,400}"
    r"(?:(?:\\r)?\\n-----END [A-Z ]{0,40}PRIVATE KEY-----)?(?:(?:\\r)?\\n)?"
    r"|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:\r?\n(?:(?:Proc-Type|DEK-Info|Comment):[^\n]{0,200}"
    r"|[ \t]{0,8}[A-Za-z0-9+/=]{1,200}[ \t]{0,8}(?=\r?\n|$)|[ \t]{0,8}(?=\r?\n))){0,400}"
    r"(?:\r?\n-----END [A-Z ]{0,40}PRIVATE KEY-----)?"
    r"|eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r"|(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^/\s:@]{0,256}:[^/\s@]{1,256}@"
    r"|(?:Bearer|bearer|BEARER)(?<![A-Za-z0-9_][Bb][Ee][Aa][Rr][Ee][Rr])[ \t]+[A-Za-z0-9._~+/-]{20,}=*"
)
_GENERIC_TOKEN = lazy_pattern(r"[A-Za-z0-9_+/=-]{32,}")
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


#: ``name=value``, ``name: value``, ``"name": "value"``, ``--name=value`` -- a name followed by its value in
#: shell, INI, YAML, JSON or a command line.  Whether the value is redacted is :func:`secret_name`'s to
#: say; the value is read only then (:data:`_VALUE`).  The name is bounded and starts only where a run
#: of name characters starts, so a match attempt costs O(1) at most positions.
_NAME_SEP = lazy_pattern(r"(?<![A-Za-z0-9_.-])-{0,2}([\"']?)([A-Za-z_][A-Za-z0-9_.-]{0,80})\1"
                         r"([ \t]{0,8}[:=](?!=)[ \t]{0,8})", often=True)
#: The value after a secret name: quoted (within the line, bounded), or a bare word up to a separator
#: of its syntax -- after ``=``, a shell word, a URL query's ``&``, a connection string's ``;``; after
#: ``:`` (YAML, a header), the next space or comma -- after an optional auth scheme (``Authorization:
#: Bearer …``).  Not a ``$VAR`` reference and not what was redacted already.
_VALUE_START = (r"(?!\[REDACTED|\$\{|\$[A-Za-z_])((?i:basic|bearer|token|digest)[ \t]+)?"
                r"(?:\"([^\"\n]{1,512})\"|'([^'\n]{1,512})'|")
_VALUE = {"=": lazy_pattern(_VALUE_START + r"([^\s;&|'\",)\]}]+))"),
          ":": lazy_pattern(_VALUE_START + r"([^\s'\",\]}]+))")}


#: A bare value that is code, not a secret: a type (``token: str | None``), a literal (``"password":
#: null``), a call or a subscript (``password = os.environ["DB_PASSWORD"]``, ``key = get_key()``) --
#: what an agent reading source code sees next to secret names all the time.
_CODE = lazy_pattern(r"[A-Za-z_][A-Za-z0-9_.]{0,80}[(\[].*|str|int|bytes|bool|None|null|nil|true|false|True|False"
                     r"|string|number|any|Any|undefined|object|SecretStr")


def _redact_assignments(text: str) -> str:
    """Every value whose name holds a secret as ``[REDACTED]`` (quotes and an auth scheme kept)."""
    out: list[str] = []
    done = 0
    for match in _NAME_SEP.finditer(text):
        if match.start() < done or not secret_name(match.group(2)):
            continue
        value = _VALUE[":" if ":" in match.group(3) else "="].match(text, match.end())
        if value is None or (value.group(2) or value.group(3) or "").startswith("[REDACTED"):
            continue
        inner = 2 if value.group(2) is not None else 3 if value.group(3) is not None else 4
        if (inner == 4 and _CODE.fullmatch(value.group(4))) or is_placeholder(value.group(inner)):
            continue  # code, or no value at all (none, (unset), [], 42, "No such file"): nothing to hide
        start, end = value.span(inner)
        found = value.group(inner)
        if found[0] in "([{<":  # (hunter2): the secret goes, the brackets around it stay
            start += len(found) - len(found.lstrip("([{<"))
            end -= len(found) - len(found.rstrip(")]}>"))
        out += [text[done:start], "[REDACTED]"]
        done = end
    return "".join(out) + text[done:] if out else text


def _redact_options(text: str) -> str:
    """The passwords given to options (``mysql -phunter2``, ``curl -u admin:hunter2``) as ``[REDACTED]``."""
    out: list[str] = []
    done = 0
    for start, end in option_secrets(text):
        if start >= done:
            out += [text[done:start], "[REDACTED]"]
            done = end
    return "".join(out) + text[done:] if out else text


def redact(text: str, secrets: Mapping[str, str]) -> str:
    """Hide known secret values (``[REDACTED:NAME]``), the values of secret names (``NAME=[REDACTED]``)
    and anything shaped like a credential (``[REDACTED]``).

    Linear in ``len(text)`` per known value: ``str.replace``, one scan for names and one pass of
    :data:`SECRET_VALUE`.
    """
    for name, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
        if len(value) >= 6:
            text = text.replace(value, f"[REDACTED:{name}]")
    return SECRET_VALUE.sub("[REDACTED]", _redact_options(_redact_assignments(text)))


#: The most of a read's end held back as a possible secret's start (a PEM block: the most it may grow to).
HOLD_LIMIT = 4_096
_PEM_HOLD_LIMIT = 65_536
#: What a credential can be made of: the run of these at the end of a read may be a secret cut short.
_CREDENTIAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=.~:@%-")


def secret_tail(text: str, secrets: Mapping[str, str] | None = None) -> int:
    """Where the end of ``text`` that may be the start of a secret begins (``len(text)``: nowhere).

    Output read a piece at a time (a background command's, read again and again) is redacted a piece
    at a time, so a token printed in two pieces would be shown in two harmless-looking halves.  What
    could be the first half is held back and redacted with the next piece: the run of credential
    characters at the very end (``ghp_12…``), the last line when it names a secret before its value
    (``password: `` with the value still to come), an open private-key block, and the start of a known
    secret value.  A line that is done (it ends in a newline) or ends in other characters (a progress
    bar's ``]``) holds nothing back.  At most :data:`HOLD_LIMIT` characters (a private key's block: more).
    """
    end = len(text)
    floor = max(0, end - HOLD_LIMIT)
    start = end
    while start > floor and text[start - 1] in _CREDENTIAL_CHARS:
        start -= 1
    line = max(text.rfind("\n", floor), text.rfind("\r", floor)) + 1
    line = max(line, floor)
    named = next((m.start() for m in _NAME_SEP.finditer(text, line) if secret_name(m.group(2))), end)
    start = min(start, named)
    for value in (secrets or {}).values():
        if len(value) >= 6:
            start = min(start, _prefix_at_end(text, value, floor))
    header = text.rfind("-----BEGIN ", max(0, end - _PEM_HOLD_LIMIT))
    if header >= 0 and "PRIVATE KEY-----" in text[header:header + 60] and "-----END " not in text[header:]:
        start = min(start, header)
    return start


def _prefix_at_end(text: str, value: str, floor: int) -> int:
    """Where a proper prefix of ``value`` ends ``text`` (the earliest such start), or ``len(text)``."""
    at = text.find(value[0], max(floor, len(text) - len(value) + 1))
    while at >= 0:
        if value.startswith(text[at:]):
            return at
        at = text.find(value[0], at + 1)
    return len(text)


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
