"""What the first command would pay once is done on a thread after the load (see ``magics/ahead.py``): the
imports always; the engine and its standby only when the extension was loaded in a cell.  Loaded outside a
cell (a profile, a script) nothing starts; whatever started is gone when the interpreter or kernel is."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from kernel_client import KERNEL_TOKEN_VAR, Kernel
from processes import assert_none_left
from waiting import wait_until


def _probe(code: str, standby: str | None = None) -> str:
    """Run ``code`` in a fresh interpreter (the test process imported everything long ago); its last line.
    ``standby``: ``EXECMAGIC_STANDBY`` for it (else the run's own, which a standby-off run sets to 0)."""
    env = dict(os.environ, **({"EXECMAGIC_STANDBY": standby} if standby is not None else {}))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


#: Loaded outside a cell, as a profile's ``extensions`` loads it into every kernel.
OUTSIDE_A_CELL = """
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


def test_loaded_outside_a_cell_it_imports_ahead_and_starts_nothing():
    assert _probe(OUTSIDE_A_CELL) == "ok"


#: Loaded by a profile, and the notebook's first cell (no command in it) comes at once, as a notebook run by
#: nbclient or papermill sends it: the end of that cell is not the end of a loading cell.
FIRST_CELL_AT_ONCE = """
import threading
import psutil
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
pre, post = list(ip.events.callbacks["pre_run_cell"]), list(ip.events.callbacks["post_run_cell"])
ip.extension_manager.load_extension("execmagic")
assert ip.run_cell("x = 1", store_history=True).success
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
from execmagic.engine.default import current_default_engine
assert current_default_engine() is None
assert psutil.Process().children(recursive=True) == []
assert (ip.events.callbacks["pre_run_cell"], ip.events.callbacks["post_run_cell"]) == (pre, post)  # hooks gone
print("ok")
"""


@pytest.mark.parametrize("load", ['ip.extension_manager.load_extension("execmagic")',  # c.…extensions
                                  'ip.run_cell("%load_ext execmagic", store_history=False)'])  # c.…exec_lines
def test_loaded_by_a_profile_the_first_cell_coming_at_once_starts_nothing(load):
    code = FIRST_CELL_AT_ONCE.replace('ip.extension_manager.load_extension("execmagic")', load)
    assert _probe(code, standby="1") == "ok"


#: The load in a cell, as a notebook does it: the thread waits for the cell to end, then imports with a short
#: switch interval (the kernel's threads get the GIL at once), builds %exec's parser, makes the engine and has
#: its standby started; the interval is put back.  Then the interpreter exits with them running.
#: (``store_history=True``: a notebook's or a terminal's cell is kept in the history; a profile's exec_lines are not.)
IN_A_CELL = """
import sys, threading
from IPython.core.interactiveshell import InteractiveShell
from execmagic.magics import FIRST_RUN_MODULES
sys.setswitchinterval(0.002)  # the user's own: put back as it was
ip = InteractiveShell.instance()
callbacks = list(ip.events.callbacks["post_run_cell"])
pre_callbacks = list(ip.events.callbacks["pre_run_cell"])
ip.run_cell("%load_ext execmagic\\nimport sys\\nduring = sys.getswitchinterval()", store_history=True)
assert ip.user_ns["during"] == 0.002, ip.user_ns["during"]  # nothing ahead of the end of the cell
(ahead,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
ahead.join(60)
assert all(name in sys.modules for name in FIRST_RUN_MODULES)
assert sys.getswitchinterval() == 0.002, sys.getswitchinterval()
assert ip.events.callbacks["post_run_cell"] == callbacks  # its one-off hooks are gone
assert ip.events.callbacks["pre_run_cell"] == pre_callbacks
from execmagic.magics.exec_magics import ExecMagics
assert ExecMagics.__dict__["exec_line"]._parser is not None  # the first %exec finds its parser built
from execmagic.engine.default import current_default_engine
engine = current_default_engine()
standby = engine.warm.wait_ready(30)
assert standby is not None and engine.shells.watchdog_pid is not None
ip.run_line_magic("exec", "--capture true")
assert engine.warm.wait_ready(30) is not standby  # the first command took it: the next one is another
print(standby.runner.pid, engine.shells.watchdog_pid)
"""


def _gone(*pids: int) -> bool:
    def alive(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    return not any(alive(pid) for pid in pids)


def test_loaded_in_a_cell_the_engine_and_its_standby_are_ready_for_the_first_command_and_go_with_it():
    standby, watchdog = map(int, _probe(IN_A_CELL, standby="1").split())
    wait_until(lambda: _gone(standby, watchdog), 10, "the standby and the watchdog to be gone with the interpreter")


#: The loading cell over, the kernel still busy (its reply, its idle status; here a spinning main thread): the
#: thread imports nothing until every other thread sleeps.  The limits are long: a slow machine does not reach
#: them, and the thread's start is seen by the modules it imports.
BUSY_AFTER_THE_CELL = """
import sys, threading, time
import execmagic.magics.ahead as ahead
from execmagic.magics import FIRST_RUN_MODULES
ahead.QUIET_LIMIT = 60.0
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
end = time.monotonic() + 0.1
while time.monotonic() < end:
    pass
during = [name for name in FIRST_RUN_MODULES if name in sys.modules]
(thread,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
thread.join(60)
assert all(name in sys.modules for name in FIRST_RUN_MODULES)  # once the main thread slept
print(during)
"""


def test_the_work_ahead_waits_for_the_kernel_to_be_quiet_after_the_loading_cell():
    assert _probe(BUSY_AFTER_THE_CELL, standby="0") == "[]"


#: What only later commands need is imported once the first standby is up: under the GIL, those imports slowed
#: its start down.  Each standby, as it is made, notes whether the guard's walk was imported by then.
WALK_AFTER_THE_STANDBY = """
import sys, threading
from execmagic.engine.engine import Engine
made = Engine._make_standby
walk_there = []

def noting(self, sandbox):
    standby = made(self, sandbox)
    walk_there.append("execmagic.guard.walk" in sys.modules)
    return standby

Engine._make_standby = noting
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
(thread,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
thread.join(60)
assert "execmagic.guard.walk" in sys.modules
print(walk_there[0])
"""


def test_what_only_later_commands_need_is_imported_once_the_first_standby_is_up():
    assert _probe(WALK_AFTER_THE_STANDBY, standby="1") == "False"


#: A command made the engine first (its own standby is its business): what only later commands need still waits
#: for the kernel to be quiet, not imported beside that command (here a spin once the parser is built).
WALK_AFTER_A_COMMAND = """
import sys, threading, time
import execmagic.magics.ahead as ahead
ahead.QUIET_LIMIT = 60.0
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
from execmagic.engine.default import default_engine
default_engine()
from execmagic.magics.exec_magics import ExecMagics
while ExecMagics.__dict__["exec_line"]._parser is None:  # built just before the thread looks for an engine
    time.sleep(0.001)
end = time.monotonic() + 0.1
while time.monotonic() < end:
    pass
during = "execmagic.guard.walk" in sys.modules
(thread,) = [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
thread.join(60)
assert "execmagic.guard.walk" in sys.modules
print(during)
"""


def test_what_only_later_commands_need_waits_for_quiet_after_a_command_made_the_engine():
    assert _probe(WALK_AFTER_A_COMMAND, standby="0") == "False"


#: Unloaded at once (in the loading cell), or every command sandboxed by default: no engine is made ahead.
NOTHING_AHEAD = """
import threading
import psutil
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell({cell!r}, store_history=True).success
for thread in [t for t in threading.enumerate() if t.name == "execmagic-import-ahead"]:
    thread.join(60)
from execmagic.engine.default import current_default_engine
assert current_default_engine() is None
assert psutil.Process().children(recursive=True) == []
print("ok")
"""


@pytest.mark.parametrize("cell", ["%load_ext execmagic\n%unload_ext execmagic",
                                  "%config ExecMagics.sandbox = 'read-only'\n%load_ext execmagic"])
def test_no_engine_ahead_for_magics_unloaded_at_once_nor_when_commands_are_sandboxed(cell):
    assert _probe(NOTHING_AHEAD.format(cell=cell), standby="1") == "ok"


#: A command in the loading cell itself makes the engine first: the thread leaves it (and the standby that
#: command's end asked for) alone -- a second wish would have the one being made thrown away.
COMMAND_FIRST = """
import threading
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic\\n%exec --capture true", store_history=True).success
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
from execmagic.engine.default import current_default_engine
standby = current_default_engine().warm.wait_ready(30)
print(standby.marker.rsplit("-", 1)[-1])
"""


def test_a_command_in_the_loading_cell_keeps_its_engine_and_standby():
    assert _probe(COMMAND_FIRST, standby="1") == "0001"  # the first standby made, never replaced


#: Standbys off: the engine is made ahead, and nothing starts (the watchdog comes with the first process).
NO_STANDBY = """
import threading
import psutil
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
from execmagic.engine.default import current_default_engine
engine = current_default_engine()
assert engine is not None and not engine.standby and engine.warm.wait_ready(1) is None
assert psutil.Process().children(recursive=True) == []
print("ok")
"""


@pytest.mark.parametrize("how", ["env", "config"])
def test_with_standbys_off_the_engine_is_made_ahead_and_nothing_starts(how):
    if how == "env":
        assert _probe(NO_STANDBY, standby="0") == "ok"
    else:
        code = NO_STANDBY.replace('ip.run_cell("%load_ext', 'ip.run_cell("%config ExecMagics.standby = False\\n%load_ext')
        assert _probe(code, standby="1") == "ok"


def test_a_kernel_that_loaded_in_a_cell_and_never_ran_a_command_leaves_nothing():
    kernel = Kernel(extra_env={"EXECMAGIC_STANDBY": "1"})
    try:
        assert kernel.execute("%load_ext execmagic").status == "ok"
        ex = kernel.execute("import threading\n"
                            "[t.join(60) for t in threading.enumerate() if t.name == 'execmagic-import-ahead']\n"
                            "from execmagic.engine.default import current_default_engine\n"
                            "print(current_default_engine().warm.wait_ready(30) is not None)")
        assert ex.stream_text() == "True\n", ex.reply
    finally:
        kernel.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=5)  # its standby and watchdog too


#: What loading the extension imports, seen from the loading cell itself (the import-ahead waits for its end).
LOAD_IMPORTS = """
import sys
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_cell("pass")
before = set(sys.modules)
import execmagic.magics.ahead
execmagic.magics.ahead.AHEAD_WAIT = 60.0  # however slow the machine: nothing ahead before the cell ends
ip.run_cell("%load_ext execmagic\\nimport sys\\nloaded = set(sys.modules)", store_history=True)
print(" ".join(sorted(ip.user_ns["loaded"] - before)))
"""

#: Modules the load has no use for: what runs a command (the engine, the processes' specs, the sandbox, the
#: guard's tables, psutil), the backends' implementations and job states, the MCP server, a typo's suggester.
NOT_AT_LOAD = ("execmagic.engine.engine", "execmagic.process.spec", "execmagic.process.stop_report",
               "execmagic.process.sandbox_spec", "execmagic.process.foreground", "execmagic.guard.policy",
               "execmagic.background.backends.status", "execmagic.background.backends.local",
               "execmagic.background.backends.slurm.backend", "execmagic.mcp", "psutil", "difflib")


def test_the_load_imports_none_of_what_only_a_command_needs():
    loaded = set(_probe(LOAD_IMPORTS).split())
    assert "execmagic.magics.exec_magics" in loaded
    assert not loaded & set(NOT_AT_LOAD), sorted(loaded & set(NOT_AT_LOAD))


#: A gone kernel's log folder of 30 days ago; the extension loaded in a cell (the engine made ahead), then a cell
#: that keeps logs 90 days, then a command: that command's settings are the ones the folders are pruned with.
RETENTION_SET_AFTER_THE_LOAD = """
import os, subprocess, tempfile, threading, time
tempfile.tempdir = {tmp!r}  # the default log location, under this test's folder
root = os.path.join(tempfile.tempdir, f"execmagic-{{os.getuid()}}")
os.mkdir(root, 0o700)
gone = subprocess.Popen(["true"])
gone.wait()
month = time.time() - 30 * 86400
old = os.path.join(root, time.strftime("%Y%m%d-%H%M%S", time.localtime(month)) + f"-{{gone.pid}}")
os.mkdir(old)
os.utime(old, (month, month))
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
from execmagic.engine.default import current_default_engine
assert current_default_engine() is not None  # made ahead
assert ip.run_cell("%config ExecMagics.log_retention_days = 90", store_history=True).success
assert ip.run_cell("%exec --capture true", store_history=True).success
current_default_engine()._pruning.join(60)
print(os.path.isdir(old))
"""


def test_logs_are_pruned_with_the_retention_set_after_the_load(tmp_path):
    assert _probe(RETENTION_SET_AFTER_THE_LOAD.format(tmp=str(tmp_path)), standby="1") == "True"


#: What the first command imports, and which of them only other work needs: stopping a tree or a prune
#: (psutil), a background shell (its module, the reads' cursors), a template in Python or JavaScript code,
#: the guard's walk and rules (for commands past its quick look), its reading of interpreter code (``python -c``…),
#: the sandbox's walls (bubblewrap's arguments, the session's holder: for a confined run only).
FIRST_RUN_IMPORTS = """
import sys
from execmagic.magics import FIRST_RUN_MODULES
before = set(sys.modules)  # what the load imported
for name in FIRST_RUN_MODULES:
    __import__(name)
print(" ".join(sorted(set(sys.modules) - before)))
"""
NOT_FOR_A_FIRST_RUN = ("psutil", "execmagic.background.shell", "execmagic.background.cursors",
                       "execmagic.engine.code_scan", "execmagic.guard.scripts", "execmagic.guard.walk",
                       "execmagic.guard.rules", "execmagic.process.sandbox", "execmagic.process.sandbox_bwrap",
                       "execmagic.process.sandbox_session", "execmagic.process.sandbox_cgroup",
                       "execmagic.process.sandbox_spec")


def test_the_first_commands_imports_leave_what_only_other_work_needs():
    imported = set(_probe(FIRST_RUN_IMPORTS).split())
    assert "execmagic.engine.engine" in imported
    assert not imported & set(NOT_FOR_A_FIRST_RUN), sorted(imported & set(NOT_FOR_A_FIRST_RUN))


#: Loaded in a cell, the thread's work done, then commands: they import none of the package's modules, nor
#: the suggester for a mistyped name, which only a mistake needs (5 ms that the first command paid).
COMMANDS_AFTER_THE_WORK_AHEAD = """
import sys, threading
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
assert ip.run_cell("%load_ext execmagic", store_history=True).success
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
before = set(sys.modules)
assert ip.run_cell("%exec --capture true", store_history=True).success
assert ip.run_cell("x = 1\\n%exec --capture --param x echo {x}", store_history=True).success
print("imported:", *sorted(m for m in set(sys.modules) - before if m.startswith("execmagic") or m == "difflib"))
"""


def test_commands_after_the_work_ahead_import_nothing_more():
    assert _probe(COMMANDS_AFTER_THE_WORK_AHEAD, standby="1") == "imported:"
