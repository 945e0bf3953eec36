"""Where background shells run: the :class:`~.base.Backend` interface and its implementations.

Only :mod:`.local` exists today; a cluster backend (SLURM) is one more module here.
"""

from .base import STREAMS, Backend, Handle
from .local import LocalBackend, LocalHandle

__all__ = ["STREAMS", "Backend", "Handle", "LocalBackend", "LocalHandle"]
