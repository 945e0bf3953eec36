"""Calling a magic in a real InteractiveShell and keeping what it printed and displayed."""

from __future__ import annotations

from IPython.utils.capture import capture_output


def magic(ip, name, line, cell=None):
    """``%name line`` (or ``%%name line`` with ``cell``) in ``ip``; its captured stdout, stderr and outputs."""
    with capture_output() as cap:
        if cell is None:
            ip.run_line_magic(name, line)
        else:
            ip.run_cell_magic(name, line, cell)
    return cap
