"""``%exec --on slurm``: a foreground run through ``srun`` (a :class:`~.base.Foreground`).

``srun`` streams the job's stdout and stderr apart and ends with its exit code, so the local
foreground loop shows the job live and its stop button reaches it: ``srun --quit-on-interrupt``
forwards the interrupt to the job's wrapper, which stops the job's whole tree.  The wrapper is
passed as text (``bash -c``), so no path needs to be shared with the nodes; a script that must stand on
no argv (a secret's) goes in the job's environment (:mod:`.script`).

Around the run: a status line follows the job's state (one ``squeue`` a second, on a thread of its
own, so a slow controller never holds up the output), and a run that was stopped is cancelled by its
job name afterwards (``srun`` may have been stopped before it could end the job).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping

from ....process.spec import Command
from ..jobnames import job_name
from . import cli
from .cli import SlurmError
from .monitor import QUEUE_EVERY
from .options import SlurmOptions
from .script import job_command, wrapper_text
from .status import status_of

__all__ = ["SrunRun"]


class SrunRun:
    """One foreground run on the cluster, named ``execmagic-NAME`` (``name``: unique in this kernel)."""

    def __init__(self, command: Command, *, name: str, env: Mapping[str, str], options: SlurmOptions, grace: float,
                 command_timeout: float) -> None:
        """``env``: the job's environment (:meth:`~.backend.SlurmBackend.job_env`); ``grace``: the wrapper's
        between a stop's signal and SIGKILL; ``command_timeout``: any one SLURM command's."""
        self.job_name = job_name(name)
        self._timeout = command_timeout
        job_argv, env = job_command(command, env)  # the script by the environment, if secret
        argv = (cli.find_program("srun"), "--quit-on-interrupt", "--export=ALL", f"--job-name={self.job_name}",
                f"--chdir={command.cwd}", *options.sbatch_args(),
                "bash", "-c", wrapper_text(), "slurm_job.sh", "", "0", f"{grace:g}",
                self.job_name, "--", *job_argv)  # no files: srun passes the exit code on
        # should the kernel die mid-run, its watchdog stops srun and then cancels the job by name
        # (srun killed outright leaves its allocation running)
        cancel = [cli.find_program("scancel"), "--me", f"--name={self.job_name}"]
        if "SLURM_CONF" in env:
            cancel = ["env", f"SLURM_CONF={env['SLURM_CONF']}", *cancel]
        #: What runs locally: srun, with the job's environment (``--export=ALL``).
        # no descriptor reaches the cluster: a script that must stand on no argv went into the environment
        self.command = dataclasses.replace(command, argv=argv, env=env, on_owner_death=tuple(cancel),
                                           script_boot=None)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        #: The job's state as the queue last reported it, in :meth:`~.status.JobStatus.words` form.
        self._state_words: str | None = None

    @property
    def words(self) -> str | None:
        """The job's state in words for the progress line (``queued (Resources)``, ``running on
        node7``), as :meth:`~.base.Handle.describe` gives it; ``None`` until the queue has been asked."""
        return self._state_words

    def watch(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="execmagic-srun-state", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stopped.wait(QUEUE_EVERY):
            try:
                listed = cli.queue(timeout=min(self._timeout, 5.0), name=self.job_name)
            except SlurmError:
                continue  # the status line keeps what it said; the run's output goes on
            if listed:
                self._state_words = status_of(next(iter(listed.values()))).words()

    def finish(self, *, stopped: bool) -> None:
        self._stopped.set()
        if stopped:
            cli.run_slurm(["scancel", "--me", f"--name={self.job_name}"], timeout=self._timeout)
