"""The guard levels, apart from the checks that apply them.

The magics' ``guard`` trait lists the levels when the extension loads; the lexers and the
rule table behind them are imported when the first command is checked.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["GUARDS", "Guard"]

GUARDS: tuple[str, ...] = ("none", "catastrophic", "all")
Guard = Literal["none", "catastrophic", "all"]
"""How much to refuse: nothing, only what destroys a system or data, or also risky commands."""
