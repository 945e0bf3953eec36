"""Heredoc words spelled as dash reads them: where bash and dash disagree on where a heredoc ends.

The walk (:mod:`.walk`) walks such text twice, once as each shell reads it, so that a line that is code to one
of them is judged as code.
"""

from __future__ import annotations

import re

__all__ = ["as_dash_reads"]

#: A heredoc's operator and word (as the shell reader's walk reads it), and in the word what is quoted and a ``$``
#: before a quote (see :func:`as_dash_reads`).
_HEREDOC_WORD = re.compile(r"(<<-?[ \t]*)((?:[^\s;&|<>()'\"\\]|'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.)+)")
_DOLLAR_QUOTE = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.|\$(?=['\"])")


def as_dash_reads(text: str) -> str | None:
    """``text`` with each heredoc's word spelled so that bash reads it as dash does, or ``None`` when none differs.

    Dash has no ``$'…'`` nor ``$"…"``: there the word keeps its ``$`` (``<<$'EOF'`` ends at a line ``$EOF``, where
    bash's ends at ``EOF``), so a line between them is code to one shell and the body to the other.  Spelled
    ``\\$'EOF'``, bash reads it as dash does; both spellings are walked.
    """
    if "<<" not in text or ("$'" not in text and '$"' not in text):
        return None
    variant = _HEREDOC_WORD.sub(lambda m: m.group(1) + _DOLLAR_QUOTE.sub(_as_dash, m.group(2)), text)
    return None if variant == text else variant


def _as_dash(match: re.Match[str]) -> str:
    return "\\$" if match.group() == "$" else match.group()
