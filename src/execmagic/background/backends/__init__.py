"""Where background shells run: the :class:`~.base.Backend` interface, its implementations, and the
:mod:`.registry` that names them (``--on local``, ``--on slurm``, …).

Nothing outside this package imports a backend's own module: callers go through :mod:`.registry`
and the protocols of :mod:`.base` (a test checks it).  ``local`` is imported here because it is
every registry's default.
"""

from .base import STREAMS, Backend, Foreground, Handle, JobRecord, Option
from .local import LocalBackend, LocalHandle
from .status import JobStatus, Phase

__all__ = ["STREAMS", "Backend", "Foreground", "Handle", "JobRecord", "JobStatus", "LocalBackend", "LocalHandle",
           "Option", "Phase"]
