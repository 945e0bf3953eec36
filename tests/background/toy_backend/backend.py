"""Start toy jobs: the command, its output sent to two files in the toy's folder."""

from __future__ import annotations

import dataclasses
import os
import tempfile

from execmagic.background.backends.jobnames import file_word, job_name
from execmagic.process.errors import UsageProblem
from execmagic.process.launch import launch

from .handle import POLLER, ToyHandle

#: ``bash -c`` words that send the job's streams to its files, then run the command as it is.
_TO_FILES = 'exec >"$1" 2>"$2"; shift 2; exec "$@"'


class ToyBackend:
    name = "toy"
    remote = False  # it runs on this machine, under this machine's rules

    def __init__(self, folder=None, cpus=None, grace=2.0):
        self.folder = folder or tempfile.mkdtemp(prefix="toy-")
        self.cpus = cpus
        self.grace = grace
        self.started = []

    def start(self, command, *, marker, log_paths, timeout=None, shell_id="job"):
        stem = os.path.join(self.folder, file_word(job_name(shell_id)) + "-" + file_word(marker))
        paths = {"stdout": f"{stem}.out", "stderr": f"{stem}.err"}
        words = ("bash", "-c", _TO_FILES, "toy", paths["stdout"], paths["stderr"])
        job = dataclasses.replace(command, argv=(*words, *command.argv), fd_reader=command.fd_reader + len(words))
        proc = launch(job, marker)
        for pipe in (proc.stdout, proc.stderr):  # the job writes to its files, not to these
            pipe.close()
        handle = ToyHandle(proc, marker, paths)
        POLLER.add(handle)
        self.started.append(handle)
        return handle

    def reattach(self, job_id, *, marker):
        raise UsageProblem(f"toy jobs cannot be reattached ({job_id})")

    def find_jobs(self):
        return []

    def foreground(self, command, *, name):
        return None
