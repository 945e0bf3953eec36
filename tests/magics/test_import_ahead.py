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
