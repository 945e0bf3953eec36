"""``python -m execmagic.mcp``: the same as the ``execmagic-mcp`` command."""

import sys

from . import main

__all__: list[str] = []

sys.exit(main())
