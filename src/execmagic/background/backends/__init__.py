"""Where background shells run: the :class:`~.base.Backend` interface, its implementations, and the
:mod:`.registry` that names them (``--on local``, ``--on slurm``, …).

Nothing outside this package imports a backend's own module: callers go through :mod:`.registry`
and the protocols of :mod:`.base` (a test checks it).  ``local``, every registry's default, is imported
when first asked for, as the others are: the magics read this package when the extension loads, and
the local backend's process control (psutil) is needed only once a shell starts.
"""

from typing import TYPE_CHECKING

from ...process.lazy import lazy_exports
from .base import STREAMS, Backend, Foreground, Handle, JobRecord, Option

if TYPE_CHECKING:
    from .local import LocalBackend, LocalHandle
    from .status import JobStatus, Phase

__all__ = ["STREAMS", "Backend", "Foreground", "Handle", "JobRecord", "JobStatus", "LocalBackend", "LocalHandle",
           "Option", "Phase"]

__getattr__, __dir__ = lazy_exports(__name__, {"JobStatus": "status", "LocalBackend": "local", "LocalHandle": "local",
                                                    "Phase": "status"}, globals())
