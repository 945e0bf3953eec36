"""Fixtures the magics' test files share: the notebook's shell, its magics and a fresh start per test.

One shell for the whole run (``notebook_shell``): what a test sets with ``%config`` outlives it, so a
test that depends on a setting sets it (``fresh_magics``) and puts back what it changed.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def ip(notebook_shell):
    """The test process's shell with execmagic loaded (``notebook_shell``), under a short name."""
    return notebook_shell


@pytest.fixture
def magics(ip):
    """The loaded ``ExecMagics``: asked for per test, since ``%reload_ext`` makes a new one."""
    return ip.magics_manager.registry["ExecMagics"]


@pytest.fixture
def fresh_magics(ip, tmp_path):
    """The loaded ``ExecMagics`` with logs in the test's own folder, a short kill grace (0.3 s: a test
    that stops a command waits that long) and a new persistent session; afterwards no background shell
    is left and shell ids start at bg1 again."""
    ip.run_line_magic("config", f"ExecMagics.log_dir = {str(tmp_path / 'logs')!r}")
    ip.run_line_magic("config", "ExecMagics.kill_grace = 0.3")
    magics = ip.magics_manager.registry["ExecMagics"]
    magics.engine.session.reset()
    yield magics
    magics = ip.magics_manager.registry["ExecMagics"]  # a new one after %reload_ext, made from %config's values
    magics.engine.shells.kill_all()
    magics.engine.shells.cleanup()
    magics.engine.shells._counter = 0
