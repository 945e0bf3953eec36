"""Background shells as SLURM batch jobs (``--on slurm``); the design is in :mod:`.backend`, the
user's guide in :file:`slurm.md`.

The modules, as every remote backend has them: :mod:`.spec` (what the registry imports: the options
and settings), :mod:`.options` (what a job asks for), :mod:`.cli` (SLURM's commands), :mod:`.backend`
(submit, find, reattach), :mod:`.handle` (one job), with :mod:`.files` (its files on the shared
folder), :mod:`.monitor`, :mod:`.status`, :mod:`.script` (the wrapper, :file:`slurm_job.sh`) and
:mod:`.srun` (a foreground run).
"""

from typing import TYPE_CHECKING

from ....process.lazy import lazy_exports

if TYPE_CHECKING:
    from .backend import SlurmBackend
    from .cli import SlurmError
    from .handle import SlurmHandle
    from .options import SlurmOptions, check_extra, checked_logs_dir, default_logs_dir, sbatch_words

__all__ = ["SlurmBackend", "SlurmError", "SlurmHandle", "SlurmOptions", "check_extra", "checked_logs_dir",
           "default_logs_dir", "sbatch_words"]

#: Where each public name lives: imported when first asked for (the registry imports this package
#: when the magics load, for its ``spec``; the backend's own modules load when a command runs there).
_WHERE = {
    "SlurmBackend": "backend", "SlurmError": "cli", "SlurmHandle": "handle", "SlurmOptions": "options",
    "check_extra": "options", "checked_logs_dir": "options", "default_logs_dir": "options", "sbatch_words": "options",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
