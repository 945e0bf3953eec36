"""nbval settings for the notebooks.

The ``application/json`` rendering of a result is a dict with start times and
durations, which nbval's sanitizers (strings only) cannot normalise; the same
facts are compared through the sanitized text/plain and text/html renderings.
"""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if skip is not None and "application/json" not in skip:
            notebook.skip_compare = (*skip, "application/json")
