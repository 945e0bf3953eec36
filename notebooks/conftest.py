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
    _skip_without_slurm(items)
    for item in items:
        notebook = getattr(item, "parent", None)
        skip = getattr(notebook, "skip_compare", None)
        if skip is not None and PROVENANCE_MIME not in skip:
            notebook.skip_compare = (*skip, PROVENANCE_MIME)


# -- cluster.ipynb: a real one-node SLURM cluster, started for it (tests/slurm_cluster.py) ------------
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
try:
    import slurm_cluster  # found through the line above
except ImportError:  # this file copied elsewhere (a test runs nbval on a changed notebook): no cluster notebook
    slurm_cluster = None

_CLUSTER_NOTEBOOK = "cluster.ipynb"
_cluster: list = []


def _is_cluster_notebook(item) -> bool:
    return os.path.basename(str(getattr(item, "fspath", ""))) == _CLUSTER_NOTEBOOK


def _skip_without_slurm(items) -> None:
    absent = slurm_cluster.missing() if slurm_cluster is not None else ["tests/slurm_cluster.py"]
    if absent:
        skip = pytest.mark.skip(reason=f"SLURM is not installed (missing {', '.join(absent)}): "
                                       "apt-get install -y slurmctld slurmd slurm-client munge")
        for item in items:
            if _is_cluster_notebook(item):
                item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before nbval starts the notebook's kernel (it inherits SLURM_CONF): start the cluster once."""
    if _is_cluster_notebook(item) and not _cluster and not item.get_closest_marker("skip"):
        import tempfile

        _cluster.append(slurm_cluster.Cluster(tempfile.mkdtemp(prefix="execmagic-nb-slurm-")).start())
        os.environ["SLURM_CONF"] = _cluster[0].conf


def pytest_sessionfinish(session):
    while _cluster:
        _cluster.pop().stop()
