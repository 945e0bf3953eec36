"""Background shells as Ray Jobs, through Ray's Jobs REST API (see :mod:`.backend`)."""

from .backend import RayBackend, RayHandle, RayJob, RayOptions
from .client import RayClient, RayError, RayPhase

__all__ = ["RayBackend", "RayClient", "RayError", "RayHandle", "RayJob", "RayOptions", "RayPhase"]
