"""Starting, running and stopping processes (above ``shell``, which reads the shell text they run).

Modules, one job each:

- starting and running: ``launch`` (the only ``Popen``), ``foreground`` (the run loop in the
  caller's thread), ``pump`` (one run's pipes), ``capture`` (one stream: log, head and tail,
  decoding), ``standby`` (a bash started before it is needed; it asks ``shell.plain_syntax``
  whether a script surely parses), ``inherit`` (what a new process would inherit), ``sandbox``
  (bubblewrap around one argv), ``sandbox_scan`` (what the sandbox protects inside its roots, found
  on disk);
- stopping and cleaning up: ``stop`` (the one routine that stops a tree), ``leftovers`` (what a
  finished command left running), ``watchdog`` (stops what a dead owner left), ``retention`` (old
  log folders);
- files and the system: ``logdir`` (where one engine's files go), ``private`` (files nobody else
  reads or plants), ``system`` (what this OS offers, decided once);
- values and helpers they share: ``spec``, ``results``, ``errors``, ``plural``, ``checks``, ``clock``,
  ``lazy`` (names a package exports on first use).

Nothing is re-exported here: importing one module (``python -m execmagic.process.watchdog``
starts with this file) should not import the others.  Import from the modules themselves.
"""

from __future__ import annotations

__all__: list[str] = []
