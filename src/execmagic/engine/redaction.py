"""What a run shows with its secrets hidden, remembered for the short texts every run shows again.

A plan hides its secrets and anything shaped like a credential wherever the run is shown or recorded
(:meth:`.plans.Plan.hide`): the command in its summary, its cwd in the result.  A notebook's runs show the same
cwd, and often the same command, over and over, and a redaction read cold (a pass of the guard's patterns after
a pause between cells) costs 20-45 µs of a short run's cell, which makes two.  The answer depends on the text and
the secrets alone -- :func:`~execmagic.guard.secrets.redact`'s patterns are constants -- so the last few are kept
by both: a text never gets another's answer, nor one made with other secrets.  A long text is redacted anew (its
key would keep a cell's worth of text alive for a saving of nothing).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..guard.secrets import redact

__all__ = ["redacted"]

#: Texts redacted lately, by (text, secrets), and what they became.
_DONE: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
#: How many are kept (all are dropped at once when full); the longest text kept.
KEPT, LONGEST = 64, 4096


def redacted(text: str, secrets: Mapping[str, str]) -> str:
    """``redact(text, secrets)``; from what was kept when it was asked lately."""
    if len(text) > LONGEST:
        return redact(text, secrets)
    key = (text, tuple(secrets.items()))
    done = _DONE.get(key)
    if done is None:
        if len(_DONE) >= KEPT:
            _DONE.clear()
        done = _DONE[key] = redact(text, secrets)
    return done
