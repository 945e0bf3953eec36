"""Guardrails: dangerous commands refused, secrets held back, directories and an audit log
(ARCHITECTURE.md, "Trust boundaries").

These are guardrails against accidents -- an agent's or a tired human's -- not a sandbox.  A
determined program gets past any pattern list (``base64 -d | sh`` is not looked into); untrusted
code belongs in an OS sandbox (a container, a VM, a separate user).

How a command is judged: its shell text is split into words as a shell splits it
(:mod:`execmagic.shell.lexer` in the one reader of shell text, which templating and the standby
use too), into simple commands through ``;``, ``&&``, ``||``, ``|``, ``&``, newlines, subshells and
wrappers such as ``sudo``, ``env`` (``-S`` too), ``nohup``, ``timeout``, ``chroot``, ``flock``,
``xargs``, ``parallel``, ``busybox`` (:mod:`.commands`, :mod:`.options`), and the rule table
(:mod:`.rules`) is applied to each one.  A command's words are brace-expanded first, as bash does
(``{rm,-rf,/}`` is ``rm -rf /``; :mod:`..shell.braces`), and a value whose array subscript holds code
(``x='a[$(…)]'``, which ``((x))`` runs) has that code walked where the value is given (:mod:`.subscripts`).
Before a command is judged its variables are expanded (:mod:`.names`): with the session's exported
values when the engine passes them, and what the text assigned before (an unset name is empty, as in
the shell; a value known only at run time is not guessed).
Text in quotes is data -- ``echo 'rm -rf /'``, ``git commit -m '… `rm -rf /` …'`` and
``grep "curl .* | sh"`` are fine -- until it reaches a shell (:mod:`.walk`): then it is walked
as code, in the directory a ``cd`` moved to (:mod:`.paths`), so that ``cd / && rm -rf *`` is
judged as ``rm -rf /*``.  Python/perl/node/ruby/lua/julia/R/deno ``-c``/``-e`` code and awk
programs are searched for the commands they run and the trees they delete (:mod:`.scripts`); rules
about a place rather than a program (``/etc/passwd``, ``~/.bashrc``) ask :mod:`.targets` what a
command writes.  ``ssh host 'cmd'`` runs elsewhere and is not looked into.

The modules, lowest first: ``paths`` → ``commands`` → ``options`` → ``values`` → ``names`` →
``targets`` → ``rules`` → ``forks`` → ``scripts`` → ``subscripts`` → ``walk`` → ``check``; ``secrets`` and ``policy``
(allowed directories, the audit log) stand apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..process.lazy import lazy_exports

__all__ = [
    "DEFAULT_ENV_ALLOW", "GUARDS", "SECRET_NAME", "SECRET_VALUE", "AuditUnavailable", "CommandRefused", "Guard",
    "Masked", "Policy", "Refusal", "check", "find_danger", "looks_secret", "redact", "sanitize_env", "secret_env",
]

# imported on first use: the lexers and the rule table are not needed to read the audit settings
_WHERE = {
    **dict.fromkeys(("GUARDS", "CommandRefused", "Guard", "Refusal", "check", "find_danger"), "check"),
    **dict.fromkeys(("AuditUnavailable", "Policy"), "policy"),
    **dict.fromkeys(("DEFAULT_ENV_ALLOW", "SECRET_NAME", "SECRET_VALUE", "Masked", "looks_secret", "redact",
                     "sanitize_env", "secret_env"), "secrets"),
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())

if TYPE_CHECKING:
    from .check import GUARDS, CommandRefused, Guard, Refusal, check, find_danger
    from .policy import AuditUnavailable, Policy
    from .secrets import (
        DEFAULT_ENV_ALLOW,
        SECRET_NAME,
        SECRET_VALUE,
        Masked,
        looks_secret,
        redact,
        sanitize_env,
        secret_env,
    )
