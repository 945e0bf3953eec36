"""What the first command needs is imported on a thread once the magics are registered, and nothing more
happens there: no engine is made, no process starts (see ``FIRST_RUN_MODULES`` in ``magics/__init__.py``)."""

from __future__ import annotations

import subprocess
import sys

#: Run in a fresh interpreter: the test process has imported everything long ago.
PROBE = """
import sys, threading
import psutil
from IPython.core.interactiveshell import InteractiveShell
from execmagic.magics import FIRST_RUN_MODULES
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "execmagic")
(ahead,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
ahead.join(60)
assert not ahead.is_alive()
assert all(name in sys.modules for name in FIRST_RUN_MODULES), [n for n in FIRST_RUN_MODULES if n not in sys.modules]
from execmagic.engine.default import current_default_engine
assert current_default_engine() is None  # imports only: the engine is made by the first command
assert psutil.Process().children(recursive=True) == []  # and no process started
print("ok")
"""


def test_the_load_imports_ahead_on_a_thread_and_starts_nothing():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


#: The load in a cell, as a notebook does it: the thread waits for the cell to end, then imports with a short
#: switch interval (the kernel's threads get the GIL at once), puts the interval back, and builds %exec's parser.
IN_A_CELL = """
import sys, threading
from IPython.core.interactiveshell import InteractiveShell
from execmagic.magics import FIRST_RUN_MODULES
sys.setswitchinterval(0.002)  # the user's own: put back as it was
ip = InteractiveShell.instance()
callbacks = list(ip.events.callbacks["post_run_cell"])
ip.run_cell("%load_ext execmagic\\nimport sys\\nduring = sys.getswitchinterval()")
assert ip.user_ns["during"] == 0.002, ip.user_ns["during"]  # nothing ahead of the end of the cell
(ahead,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
ahead.join(60)
assert all(name in sys.modules for name in FIRST_RUN_MODULES)
assert sys.getswitchinterval() == 0.002, sys.getswitchinterval()
assert ip.events.callbacks["post_run_cell"] == callbacks  # its one-off hook is gone
from execmagic.magics.exec_magics import ExecMagics
assert ExecMagics.__dict__["exec_line"]._parser is not None  # the first %exec finds its parser built
print("ok")
"""


def test_in_a_cell_the_imports_wait_for_its_end_and_leave_the_switch_interval_as_it_was():
    done = subprocess.run([sys.executable, "-c", IN_A_CELL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


#: What loading the extension imports, seen from the loading cell itself (the import-ahead waits for its end).
LOAD_IMPORTS = """
import sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_cell("pass")
before = set(sys.modules)
import execmagic.magics
execmagic.magics.AHEAD_WAIT = 60.0  # however slow the machine: nothing ahead before the cell ends
ip.run_cell("%load_ext execmagic\\nimport sys\\nloaded = set(sys.modules)")
print(" ".join(sorted(ip.user_ns["loaded"] - before)))
"""

#: Modules the load has no use for: what runs a command (the engine, the processes' specs, the sandbox, the
#: guard's tables, psutil), the backends' implementations and job states, the MCP server, a typo's suggester.
NOT_AT_LOAD = ("execmagic.engine.engine", "execmagic.process.spec", "execmagic.process.stop_report",
               "execmagic.process.sandbox_spec", "execmagic.process.foreground", "execmagic.guard.policy",
               "execmagic.background.backends.status", "execmagic.background.backends.local",
               "execmagic.background.backends.slurm.backend", "execmagic.mcp", "psutil", "difflib")


def test_the_load_imports_none_of_what_only_a_command_needs():
    done = subprocess.run([sys.executable, "-c", LOAD_IMPORTS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "execmagic.magics.exec_magics" in loaded
    assert not loaded & set(NOT_AT_LOAD), sorted(loaded & set(NOT_AT_LOAD))
