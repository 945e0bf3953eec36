"""nbval settings for the notebooks.

The JSON provenance rendering of a result (``application/vnd.execmagic+json``) is
a dict with start times and durations, which nbval's sanitizers (strings only)
cannot normalise; the same facts are compared through the sanitized text/plain
and text/html renderings.
"""

import os
import sys

import pytest

from execmagic.display import PROVENANCE_MIME

# The runbook stops at a failing step on purpose (so "jupyter execute" and papermill stop too): its
# cell is not tagged raises-exception.  tests/test_notebooks.py checks it with nbval through a copy
# that expects that failure.
collect_ignore = ["runbook.ipynb"]

# The kernels nbval starts inherit this PATH: with the interpreter's bin folder first (as an
# activated virtualenv has it), the saved outputs do not depend on how pytest was started
# (a "python3 is the kernel's own (/path)" note would otherwise appear when it was not).
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if skip is not None and PROVENANCE_MIME not in skip:
            notebook.skip_compare = (*skip, PROVENANCE_MIME)
