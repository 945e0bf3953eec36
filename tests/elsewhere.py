"""A backend that says its jobs run on another system, while they run here as local processes.

What the engine, the API and the agent tools do with a remote backend -- no sandbox of ours, no
session written back, the job ended with a foreground run -- is tested with it without a cluster
(the SLURM and Ray suites run the same paths against the real engines).
"""

from __future__ import annotations

import dataclasses

from execmagic.background.backends.local import LocalBackend


class Job:
    """A foreground run "elsewhere": the command itself, its job name in ``JOB_NAME``; it records how it
    was watched and finished."""

    words = None

    def __init__(self, command, name):
        self.name = name
        self.command = dataclasses.replace(command, env={**command.env, "JOB_NAME": name})
        self.watched = False
        self.finished = []

    def watch(self):
        self.watched = True

    def finish(self, *, stopped):
        self.finished.append(stopped)


class Elsewhere(LocalBackend):
    """Local processes under a remote backend's name (``remote``: the engine's rules for another system)."""

    name = "elsewhere"
    remote = True

    def __init__(self):
        self.jobs = []

    def foreground(self, command, *, name):
        job = Job(command, name)
        self.jobs.append(job)
        return job
