"""The one rule for a sandbox against a backend: a job that runs elsewhere is outside our walls.

The sandbox is bubblewrap on this machine.  A job on a remote backend (a SLURM job, a Ray job)
runs on that system's machines, under that system's rules: nothing of ours can confine it.  So:

- a mode that does not confine (``off``): nothing to decide;
- a lenient one (``auto``: confine where it can, else say why): the job runs unsandboxed, and says so;
- any other (``workspace``, ``read-only``), or a sandbox insisted on (``--sandbox``): refused with
  :class:`SandboxElsewhere` -- what was asked to be confined never runs unconfined.

(The flags are each mode's record's, :mod:`.sandbox_modes`: a new mode is placed by what it is.)

The magics, the agent tools, :meth:`.Engine.plan` and :meth:`.Engine.start_background` all ask
:func:`sandbox_elsewhere`; each words the refusal for its own reader from the error's fields.
"""

from __future__ import annotations

from ..background.backends.base import Backend
from ..process.errors import UsageProblem
from .sandbox_modes import mode_named
from .sandboxing import SandboxChoice

__all__ = ["SandboxElsewhere", "elsewhere_note", "sandbox_elsewhere"]


class SandboxElsewhere(UsageProblem):
    """A sandbox asked for a job that runs elsewhere: ``mode`` (the sandbox's) and ``backend`` (its name)."""

    def __init__(self, mode: str, backend: str) -> None:
        self.mode = mode
        self.backend = backend
        super().__init__(f"sandbox {mode!r} does not go with a job on {backend}: the job runs on that system's"
                         " machines, outside the sandbox, under that system's rules (set the sandbox off for it)")


def elsewhere_note(backend: str) -> str:
    """What a run on a remote backend says of its walls (an agent's answer says it every time)."""
    return f"ran unsandboxed: the job runs on {backend}, under its own rules"


def sandbox_elsewhere(mode: str, backend: Backend | None, *, insist: bool = False) -> SandboxChoice | None:
    """The sandbox of a run on ``backend`` when the backend decides it: ``None`` when it does not (no
    backend, or local processes: the sandbox ``mode`` is set as usual); no sandbox for a remote one, with a
    note under ``auto``.  ``insist``: a sandbox was asked for by name (``--sandbox``), so ``auto`` too is
    refused.  Raises :class:`SandboxElsewhere` for a named mode on a remote backend."""
    if backend is None or not backend.remote:
        return None
    record = mode_named(mode)
    if not record.confines:
        return SandboxChoice(None)
    if record.lenient and not insist:
        return SandboxChoice(None, (elsewhere_note(backend.name),))
    raise SandboxElsewhere(mode, backend.name)
