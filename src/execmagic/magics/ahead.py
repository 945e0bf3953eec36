"""What the first command would pay once, done ahead on a thread while the notebook waits for its next cell.

The load registers the magics and returns (its own cost is the prompt's).  Then, once the kernel is quiet --
the loading cell over, its reply and idle status sent: every thread but this one asleep, waiting for the next
message (started at the cell's end, the work competed with the reply for the interpreter, and made the load
cell about 20 ms longer) -- a thread imports what the first ``%exec`` needs (about 30 ms of module bodies:
the engine, the guard's quick look, the renderers) and builds its parser; and when the extension was loaded
*in a cell* -- someone typed ``%load_ext execmagic`` and is about to use it -- it also makes the process-wide
engine with the notebook's settings and has its standby bash started (with it the watchdog), so the first
command finds them ready, as every later one does.  While that standby starts (bash's start is another
process's work), IPython's display formatters are made, ours with them (:mod:`.renderers`: the load leaves them
to whoever first shows something).
The engine comes after them: started while the rest is imported, the standby is often still being started
when a quick first command comes, which then waits for it (measured: 10 ms slower, 50 ms after the load).
Then, once that standby is up and the kernel quiet again, the regexes most commands use are compiled (those
marked ``often``: the guard's quick look, redaction, the standby's grammar check; a third of what the imports
cost), and what only later commands need is imported last.

Loaded outside a cell -- a profile's ``c.InteractiveShellApp.extensions`` or ``exec_lines`` (run as cells
kept out of the history), which load the extension into every kernel, most of which may never run a
command, or a script -- only the imports are done: no
engine, no process, until a command asks (a standby bash and a watchdog in each such kernel would be a
cost paid for nothing).  Whatever starts here is stopped as a command's would be: by ``%unload_ext``,
at the interpreter's exit, and by the watchdog if the kernel dies.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..engine.warm import WarmShell
    from .exec_magics import ExecMagics

__all__ = ["AFTER_ENGINE_MODULES", "AHEAD_SWITCH_INTERVAL", "AHEAD_WAIT", "FIRST_RUN_MODULES", "LOCK", "QUIET_LIMIT",
           "QUIET_LOOK", "QUIET_SHARE", "STANDBY_WAIT", "exiting", "start"]

#: What the first command needs that registering the magics does not (45 ms of thread CPU, 60 before the guard's
#: walk and rules were left to :data:`AFTER_ENGINE_MODULES`; since then two thirds of that: on a slower machine 47
#: ms against 72, once their modules' regexes were compiled on first use, ``shell/patterns.py``).  (The import
#: graph has no circle, which a test holds: two threads importing at once cannot deadlock.)
FIRST_RUN_MODULES = ("execmagic.engine.engine", "execmagic.guard.policy", "execmagic.display.render",
                     "execmagic.magics.kernel_io", "execmagic.magics.live", "execmagic.process.watchdog")
#: What only some commands need, imported last -- once the engine is made, its standby up and the kernel
#: quiet again: a first command coming soon needs those more -- the guard's walk and rules (10 ms: only a
#: command with a word some rule needs gets past the guard's quick look), its reading of interpreter code
#: (``python -c``…; 5 ms of patterns), and what the first command's threads import (psutil, 7 ms: its prune
#: asks whether gone kernels' logs' owners still run; a kernel has it already).
AFTER_ENGINE_MODULES = ("execmagic.guard.walk", "execmagic.guard.scripts", "psutil")
#: Seconds the thread waits for the cell that loaded the extension to end (IPython's ``post_run_cell``)
#: before it imports anyway: a load outside a cell has no cell to wait for.
AHEAD_WAIT = 0.05
#: Seconds between two looks at whether the kernel is quiet; it is once two looks in a row found its other
#: threads quiet (one look may fall between two steps of its reply).
QUIET_LOOK = 0.001
#: The share of a look's time the other threads may have used the CPU in, and still be quiet (an idle kernel's
#: threads use none; one sending a reply uses all of it).
QUIET_SHARE = 0.2
#: Seconds the thread waits for the kernel to be quiet at most: a process whose threads never all sleep (a
#: thread of the user's computing) would otherwise leave the first command all of the work.
QUIET_LIMIT = 0.1
#: Seconds the thread waits for the standby it had started to be up before it imports what only later commands
#: need (their imports, under the GIL, would slow its start down; one that cannot start ends the wait sooner).
STANDBY_WAIT = 1.0
#: The interpreter's thread switch interval (seconds) while working ahead: the kernel's own threads (a cell
#: that comes meanwhile, its messages) then get the GIL within this, not the default 5 ms each time -- at the
#: default, the imports delayed the load cell's end by about 13 ms, when they began as the cell ended.
AHEAD_SWITCH_INTERVAL = 0.0005
#: Held while the engine is made ahead, and by ``unload``: an engine is never made for magics unloaded meanwhile.
LOCK = threading.Lock()
_exiting = False


def exiting() -> None:
    """The interpreter is exiting (its engine is being closed): from now on nothing is made ahead."""
    global _exiting
    with LOCK:
        _exiting = True


def start(shell: Any, exec_magics: ExecMagics, loaded: Callable[[], bool]) -> None:
    """Start the thread for ``exec_magics`` (``loaded``: whether they are still loaded, asked under :data:`LOCK`)."""
    cell_over = threading.Event()
    events = getattr(shell, "events", None)
    if events is not None:
        def forget() -> None:
            events.unregister("pre_run_cell", began)
            events.unregister("post_run_cell", over)

        def began(*_: Any) -> None:
            forget()  # a cell began after the load: the load was in none (a profile's), whose end this is not

        def over(result: Any = None, *_: Any) -> None:
            if getattr(getattr(result, "info", None), "store_history", True):  # not a profile's exec_lines
                cell_over.set()
            forget()

        events.register("pre_run_cell", began)
        events.register("post_run_cell", over)
    threading.Thread(target=_work, args=(cell_over, exec_magics, loaded), name="execmagic-import-ahead",
                     daemon=True).start()


def _work(cell_over: threading.Event, exec_magics: ExecMagics, loaded: Callable[[], bool]) -> None:
    """Import, build the parser, and -- the loading cell being over by then -- make the engine and its standby.

    A failure here is left to the first command, which meets it again and shows why in its cell.  Nothing is
    imported before the cell is over: the loading cell would share the interpreter with it."""
    cell_over.wait(AHEAD_WAIT)
    _wait_quiet(QUIET_LIMIT)
    interval = sys.getswitchinterval()
    short = min(interval, AHEAD_SWITCH_INTERVAL)
    sys.setswitchinterval(short)
    try:
        for name in FIRST_RUN_MODULES:
            importlib.import_module(name)
        exec_magics.exec_line.parser  # noqa: B018  # built here, not by the first %exec
        warm = _start_engine(exec_magics, loaded) if cell_over.is_set() else None
        from . import renderers

        renderers.make(exec_magics.shell)  # IPython's display formatters, and ours with them (not by a command)
        if warm is not None:  # its start is not slowed down by imports for later commands
            warm.wait_ready(STANDBY_WAIT)
        _wait_quiet(QUIET_LIMIT)  # nor is a command that came meanwhile (it may have made the engine itself)
        from ..shell.patterns import compile_often

        compile_often()  # the patterns most commands use, compiled on first use otherwise (shell/patterns.py)
        for name in AFTER_ENGINE_MODULES:
            importlib.import_module(name)
    except Exception:
        return
    finally:
        if sys.getswitchinterval() == short:  # unless someone set another meanwhile
            sys.setswitchinterval(interval)


def _wait_quiet(limit: float) -> None:
    """Return once the other threads of this process were quiet at two looks in a row (:data:`QUIET_LOOK`
    apart), or after ``limit`` seconds.

    Quiet: they used almost no CPU since the look before (:data:`QUIET_SHARE` of the time), and none is running
    or waiting for a CPU (``R`` in ``/proc``: on a busy machine a thread at work may get no CPU for a while).
    A thread waiting for the GIL sleeps: the CPU it used just before tells it apart."""
    deadline = time.monotonic() + limit
    quiet_looks = 0
    others = _others_cpu()
    while quiet_looks < 2 and time.monotonic() < deadline:
        time.sleep(QUIET_LOOK)
        now = _others_cpu()
        quiet = now - others < QUIET_LOOK * QUIET_SHARE and _none_running()
        others = now
        quiet_looks = quiet_looks + 1 if quiet else 0


def _others_cpu() -> float:
    """Seconds of CPU the process's other threads used so far (those that ended too)."""
    return time.process_time() - time.thread_time()


def _none_running() -> bool:
    """Whether no thread of this process but the caller is running or waiting for a CPU (state ``R`` in
    ``/proc``); ``True`` where that cannot be known (no ``/proc``: the CPU used says it alone)."""
    me = str(threading.get_native_id())
    try:
        threads = os.listdir("/proc/self/task")
    except OSError:
        return True
    for tid in threads:
        if tid == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as stat:
                line = stat.read()
        except OSError:  # it ended meanwhile
            continue
        state = line.rfind(b")") + 2  # after the name, which may hold anything
        if line[state:state + 1] == b"R":
            return False
    return True


def _start_engine(exec_magics: ExecMagics, loaded: Callable[[], bool]) -> WarmShell | None:
    """The process-wide engine, made as the first command would make it, and its standby on its way (in the
    engine's own worker): the keeper making it, if one is.  Not when every command is sandboxed by default:
    the standby started here is an unconfined one, which such a command never takes.  Not either when the
    engine is there already (a command came first, or a reload): its runs keep their standby, which a second
    wish would replace."""
    from ..engine.default import current_default_engine, default_engine

    with LOCK:
        if _exiting or not loaded() or exec_magics.sandbox != "off" or current_default_engine() is not None:
            return None
        engine = default_engine()  # with the notebook's settings; its logs are pruned by the first command
        if not engine.standby:
            return None
        engine.warm.refill(at_once=True)
        return engine.warm
