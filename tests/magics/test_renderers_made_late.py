"""The renderers reach IPython's display formatters when IPython makes them (``magics/renderers.py``): the load
makes none, whoever first asks gets them with ours, two threads asking at once get the same ones, and an
unload before they are made leaves no wish behind.  Each in a fresh interpreter (the test process's shell
made its formatters long ago); nothing here starts a process."""

from __future__ import annotations

import subprocess
import sys

import pytest

SHELL = """
import sys, threading
from IPython.core.interactiveshell import InteractiveShell
from execmagic.magics import renderers
ip = InteractiveShell.instance()
display = ip.display_formatter
def ours():
    from execmagic.display.mime import PROVENANCE_MIME
    from execmagic.display.shells import ShellTable
    return PROVENANCE_MIME in display.format(ShellTable(()))[0]
"""

PROBES = {
    "made by whoever asks first, ours with them": """
renderers.register(ip)
assert not display.trait_has_value("formatters")
assert "execmagic.display.formatters" not in sys.modules  # nor its modules imported
assert ours() and display.trait_has_value("formatters")
""",
    "made already: ours at once": """
display.formatters
renderers.register(ip)
assert "execmagic.display.formatters" in sys.modules and ours()
""",
    "threads asking at once get the same ones": """
renderers.register(ip)
start, got = threading.Barrier(8), []
def ask():
    start.wait()
    got.append(display.formatters)
threads = [threading.Thread(target=ask) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
assert len(got) == 8 and all(each is display.formatters for each in got)
assert ours()
""",
    "the shell's only once ours are in them": """
from execmagic.display.mime import PROVENANCE_MIME
from execmagic.display.shells import ShellTable
def complete(formatters):  # what another thread reading them without the lock finds, the moment they are set
    try:
        formatters["text/html"].lookup_by_type(ShellTable)
    except KeyError:
        return False
    return PROVENANCE_MIME in formatters
renderers.register(ip)
seen = []
display.observe(lambda change: seen.append(complete(change.new)), "formatters")
renderers.make(ip)
assert seen == [True] and ours()
""",
    "an unload before they are made leaves no wish": """
renderers.register(ip)
renderers.unregister(ip)
assert not ours() and display.trait_has_value("formatters")
""",
    "an unload after: ours gone": """
renderers.register(ip)
assert ours()
renderers.unregister(ip)
assert not ours()
""",
    "loaded in a cell that shows a value itself": """
ip.run_cell("%load_ext execmagic\\nfrom execmagic.display.shells import ShellTable\\n"
            "shown = get_ipython().display_formatter.format(ShellTable(()))[0]",
            store_history=False)  # as a profile's exec_lines: no engine made ahead
from execmagic.display.mime import PROVENANCE_MIME
assert PROVENANCE_MIME in ip.user_ns["shown"] and ours()
[t.join(60) for t in threading.enumerate() if t.name == "execmagic-import-ahead"]
import psutil
assert psutil.Process().children(recursive=True) == []
""",
}


@pytest.mark.parametrize("probe", PROBES)
def test_renderers_reach_the_formatters_when_ipython_makes_them(probe):
    done = subprocess.run([sys.executable, "-c", SHELL + PROBES[probe] + "print('ok')"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.endswith("ok\n"), done.stderr
