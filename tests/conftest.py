"""Shared fixtures: every test that starts processes proves they are gone afterwards.

Each test runs with a unique ``EXECMAGIC_TEST_TOKEN`` in the environment, which
every process it starts (and their descendants) inherits; after the test, no
live process may still carry it.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
import signal
import sys
import time
import uuid

import pytest

from processes import TOKEN_VAR, assert_none_left, pid_alive


def pytest_configure(config):
    # Started with SIGINT ignored (a CI script's `cmd &`, nohup), Python leaves it ignored, and so does every
    # process the tests start (an ignored signal survives exec): interrupts and Ctrl-C would test nothing,
    # and a test that waits for one would hang. The suite takes Python's default back, for itself and thereby
    # for all it starts (a handled signal is reset to the default at exec).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers", "watchdog_outlives_test: the module's engine (and its watchdog) lives across tests; "
        "the module's teardown proves the watchdog ends")


_SESSION_START = time.time()


def pytest_sessionfinish(session, exitstatus):
    # Each engine the tests make logs into a folder of its own in the temp dir, kept a week after its owner
    # ends (what a notebook's outputs point at): a whole run leaves thousands, and every later engine's prune
    # walks them.  The run removes the folders made since it began whose owner is gone -- its own engines'
    # and kernels' (on a machine where notebooks run beside the suite, also those of a kernel that ended
    # meanwhile: the price of not knowing whose a gone owner's folder was).
    # The engines this process made and never closed (most tests' own) live until it ends: their folders
    # go too when empty, as a closed engine's do.
    from execmagic.process.retention import log_roots, prune_log_roots

    prune_log_roots(retention_days=0, since=_SESSION_START)
    ours = re.compile(rf"\d{{8}}-\d{{6}}-{os.getpid()}(-\d+)?")
    for root in log_roots():
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            if ours.fullmatch(name):
                for folder, _dirs, _files in os.walk(os.path.join(root, name), topdown=False):
                    with contextlib.suppress(OSError):
                        os.rmdir(folder)  # empty ones only


@pytest.fixture(autouse=True)
def no_leftover_processes(request):
    token = uuid.uuid4().hex
    os.environ[TOKEN_VAR] = token
    try:
        yield token
    finally:
        del os.environ[TOKEN_VAR]
    assert_none_left(TOKEN_VAR, token, watchdogs=request.node.get_closest_marker("watchdog_outlives_test") is None)


@pytest.fixture(scope="module")
def notebook_shell():
    """The test process's InteractiveShell with execmagic loaded, asking for what a notebook asks for
    (text, HTML and the provenance JSON; a terminal's text-only default is tested on its own)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    from execmagic.display import PROVENANCE_MIME

    shell = start_ipython() or InteractiveShell.instance()  # the test shell is created once per process
    settings = copy.deepcopy(shell.config)  # what a module's %config sets must not reach the next module's
    shell.run_line_magic("load_ext", "execmagic")
    terminal_types = list(shell.display_formatter.active_types)
    shell.display_formatter.active_types = ["text/plain", "text/html", PROVENANCE_MIME]
    yield shell
    shell.display_formatter.active_types = terminal_types
    engine = shell.magics_manager.registry["ExecMagics"].engine
    watchdog = engine.shells.watchdog_pid
    standbys = engine.warm.wait_full(10)  # those being started are waited for, so that they are known here
    shell.run_line_magic("unload_ext", "execmagic")
    for section in set(shell.config) - set(settings):
        del shell.config[section]
    shell.config.update(settings)
    assert watchdog is None or not pid_alive(watchdog)
    assert not any(pid_alive(standby.runner.pid) for standby in standbys)


@pytest.fixture
def engine(tmp_path):
    from execmagic.engine import Engine, RunOptions

    engine = Engine(log_dir=str(tmp_path / "logs"), options=RunOptions(grace=0.3))
    yield engine
    engine.close()


@pytest.fixture
def py():
    """``py(code)`` → argv that runs ``code`` in a child Python (as Trio's tests do)."""
    return lambda code: [sys.executable, "-c", code]


@pytest.fixture(scope="session")
def bwrap_works():
    """bubblewrap's sandbox works here (probed once), or the test is skipped saying why."""
    from execmagic.process import sandbox

    found = sandbox.availability()
    if not found.ok:
        pytest.skip(f"no sandbox here: {found.reason}")
    return found
