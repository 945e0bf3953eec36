"""Moved to :mod:`execmagic.process.watchdog`; ``python -m execmagic.engine.watchdog`` still runs it."""

import sys
import warnings

from ..process.watchdog import WATCHDOG_VAR, main, start_watchdog, watch

__all__ = ["WATCHDOG_VAR", "main", "start_watchdog", "watch"]

if __name__ == "__main__":
    sys.exit(main(sys.argv))
else:
    warnings.warn("execmagic.engine.watchdog moved to execmagic.process.watchdog", DeprecationWarning, stacklevel=2)
