"""``--on ray`` as every caller sees a backend: :class:`RayBackend`, the registry's, gives
:class:`~.cluster.RayCluster` the shape of :class:`~..base.Backend` (find and reattach, a foreground
run, remote), so the magics, the API, the Toolbox and reattach reach Ray through the registry like any
other backend.

What goes with a job: the command, the options (``--cpus``, ``--gpus``, ``--mem``, ``--working-dir``)
and the environment the notebook *set* -- its session's exports and ``--env`` -- but not the kernel's
inherited one (``PATH``, ``HOME`` and the rest describe this machine, not the node), nor execmagic's
own variables for a run here (the node's wrapper sets its own marker).

Which jobs a new kernel takes over (the rule every backend follows, see :meth:`~..base.Backend.find_jobs`):
this user's, started by execmagic from this machine (``user`` and ``host`` in the job's metadata,
with execmagic's marker), that Ray still lists as pending or running.  A reattached job's output is
read again from the start of its log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ....process.launch import MARKER_VAR
from ....process.spec import Command
from ....process.watchdog import WATCHDOG_VAR
from ..base import JobRecord
from .client import RayPhase
from .cluster import JobWatch, RayCluster
from .handle import RayHandle
from .options import RayOptions

__all__ = ["RayBackend", "RayForeground", "sent_environment"]

#: Variables bash sets for itself, and those execmagic sets for a run here (the run's marker, the session's
#: state and prelude, the watchdog's, the follower's settings): never "set by the notebook".  The node's
#: wrapper sets its own marker.  ``PATH`` stays the node's too: here it names this machine's folders (the
#: kernel's own environment first, as a run here gets it), which mean nothing there.
_NOT_SENT = frozenset({"PATH", "PWD", "OLDPWD", "SHLVL", "_", "BASH_ENV", MARKER_VAR, "EXECMAGIC_STATE",
                       "EXECMAGIC_BASH_ENV", WATCHDOG_VAR, "EXECMAGIC_RAY_FOLLOW"})


def sent_environment(env: Mapping[str, str], inherited: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of ``env`` the notebook set (differing from what the kernel ``inherited``), without
    execmagic's own and bash's: what a job elsewhere gets of the command's environment."""
    inherited = os.environ if inherited is None else inherited
    return {name: value for name, value in env.items() if inherited.get(name) != value and name not in _NOT_SENT}


class RayBackend:
    """Ray Jobs as a backend of the registry (``--on ray``); its settings section has the same name
    (``c.RayBackend.address``)."""

    name = "ray"
    remote = True

    def __init__(self, options: RayOptions | None = None, *, address: str | None = None,
                 headers: Mapping[str, str] | None = None, grace: float = 2.0,
                 request_timeout: float = 30.0) -> None:
        self.ray = RayCluster(options, address=address, headers=headers, grace=grace,
                              request_timeout=request_timeout)

    def __repr__(self) -> str:
        return f"RayBackend({self.ray.client.address!r})"

    def _with_env(self, command: Command) -> RayCluster:
        """The backend whose options carry what the notebook set in ``command``'s environment."""
        sent = sent_environment(command.env)
        if not sent:
            return self.ray
        ray = self.ray
        return RayCluster(ray.options.merged(sent), address=ray.client.address, headers=ray.client.headers,
                          grace=ray.grace, request_timeout=ray.client.timeout)

    def start(self, command: Command, *, marker: str, log_paths: Mapping[str, str], timeout: float | None = None,
              shell_id: str = "job") -> RayHandle:
        return self._with_env(command).start(command, marker=marker, log_paths=log_paths, timeout=timeout,
                                             shell_id=shell_id)

    def reattach(self, job_id: str, *, marker: str) -> RayHandle:
        return self.ray.reattach(job_id, marker=marker)

    def find_jobs(self) -> list[JobRecord]:
        """This user's pending or running jobs started by execmagic from this machine (see the module)."""
        live = (RayPhase.PENDING, RayPhase.RUNNING)
        return [JobRecord(job_id=job.job_id, shell_id=job.shell_id, command=job.command, cwd="", marker=job.marker,
                          started_at=job.started_at, timeout=job.timeout)
                for job in self.ray.find_jobs() if job.phase in live]

    def foreground(self, command: Command, *, name: str) -> RayForeground:
        return RayForeground(self._with_env(command), command, name=name)


class RayForeground:
    """``%exec --on ray``: a local process of ours submits the job and streams it (see :mod:`.follow`);
    a stop of that process (the stop button, the loop's timeout, a dead kernel's watchdog) stops the job."""

    def __init__(self, backend: RayCluster, command: Command, *, name: str) -> None:
        self._backend = backend
        self.job_id = backend.foreground_job_id(name)
        #: What runs locally: the follower, with the job's settings in its environment.
        self.command = backend.foreground_command(command, name=name)
        self._watch: JobWatch | None = None

    @property
    def words(self) -> str | None:
        return self._watch.words if self._watch is not None else None

    def watch(self) -> None:
        if self._watch is None:
            self._watch = self._backend.watch_job(self.job_id)

    def finish(self, *, stopped: bool) -> None:
        if self._watch is not None:
            self._watch.stop()
        if stopped:
            self._backend.stop_job(self.job_id)
