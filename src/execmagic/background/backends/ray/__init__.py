"""Background shells as Ray Jobs (``--on ray``), through Ray's Jobs REST API; the design is in
:mod:`.cluster`, the user's guide in :file:`ray.md`.

The modules, as every remote backend has them: :mod:`.spec` (what the registry imports: the options
and settings), :mod:`.options` (what a job asks for), :mod:`.client` (Ray's REST API), :mod:`.backend`
(the registry's backend) over :mod:`.cluster` (submit, find, reattach), :mod:`.handle` (one job),
:mod:`.status` (Ray's word for its state, typed), with :mod:`.job` (a job's record), :mod:`.framing`
and :mod:`.wrapper` (what runs on the node) and :mod:`.follow` (a foreground run).
"""

from typing import TYPE_CHECKING

from ....process.lazy import lazy_exports

if TYPE_CHECKING:
    from .backend import RayBackend
    from .client import RayClient, RayError, RayPhase
    from .cluster import RayCluster
    from .handle import RayHandle
    from .job import RayJob
    from .options import RayOptions

__all__ = ["RayBackend", "RayClient", "RayCluster", "RayError", "RayHandle", "RayJob", "RayOptions", "RayPhase"]

#: Where each public name lives: imported when first asked for (the registry imports this package
#: when the magics load, for its ``spec``; the backend's own modules load when a command runs there).
_WHERE = {
    "RayBackend": "backend", "RayClient": "client", "RayCluster": "cluster", "RayError": "client",
    "RayHandle": "handle", "RayJob": "job", "RayOptions": "options", "RayPhase": "client",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
