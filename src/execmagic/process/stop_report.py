"""What stopping a process tree did, as a value apart from the stopping (:mod:`.stop`): a backend's
:class:`~execmagic.background.backends.base.Handle` says it too, and the backends' interface is read when the
extension loads, long before anything is stopped (and before psutil is needed)."""

from __future__ import annotations

from .records import record

__all__ = ["StopReport"]


@record
class StopReport:
    """What stopping did: processes signalled, those that needed SIGKILL, any that survived."""

    signalled: tuple[int, ...] = ()
    killed: tuple[int, ...] = ()
    survivors: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        return len(self.signalled)
