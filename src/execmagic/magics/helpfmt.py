"""How the magics' ``%name?`` help is laid out."""

from __future__ import annotations

from typing import Any

from IPython.core.magic_arguments import MagicHelpFormatter

__all__ = ["HELP_WIDTH", "FixedWidthHelp"]

#: Help text width: fixed, so the reference reads the same whatever terminal built it.
HELP_WIDTH = 100


class FixedWidthHelp(MagicHelpFormatter):
    """IPython's magic help formatter at a fixed width (argparse otherwise follows the terminal)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: Any = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width=HELP_WIDTH)
