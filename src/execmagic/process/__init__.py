"""The lowest layer: starting, running and stopping processes (standard library and psutil only).

Modules, one job each: ``launch`` (the only ``Popen``), ``foreground`` (the run loop in the
caller's thread), ``capture`` (one stream: log, head and tail, decoding), ``stop`` (the one
routine that stops a tree), ``watchdog`` (stops what a dead owner left), ``retention`` (old log
folders), and the values they share: ``spec``, ``results``, ``errors``, ``checks``, ``clock``.

Nothing is re-exported here: importing one module (``python -m execmagic.process.watchdog``
starts with this file) should not import the others.  Import from the modules themselves.
"""

from __future__ import annotations

__all__: list[str] = []
