"""What a Ray job asks for: ``--cpus``, ``--gpus``, ``--mem``, ``--env``, ``--working-dir``, ``--cwd``,
each checked here, before anything is sent, so a mistake is one line naming the option.

``--working-dir DIR`` and ``--cwd DIR`` differ on purpose: a Ray node does not share the kernel's
filesystem, so the kernel's folder means nothing there.  ``--working-dir`` is a folder *here*,
zipped and uploaded by Ray, which unpacks it on the node as the job's working directory;
``--cwd`` is a folder *on the node* (a shared filesystem, a path in the image) that the command
starts in.  Without either the command starts where Ray puts a job (its own temp folder).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ....process.errors import UsageProblem, shown_value
from ....process.records import record

__all__ = ["RayOptions", "parse_env", "parse_mem"]

_MEM = re.compile(r"(\d+(?:\.\d+)?)([KMGT]?)B?", re.IGNORECASE)
_UNITS = {"": 1 << 20, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_mem(text: str) -> int:
    """``--mem`` as SLURM takes it (``4G``, ``512M``, ``512``: megabytes when no unit is given) in
    bytes, as Ray's ``entrypoint_memory`` wants it."""
    found = _MEM.fullmatch(text.strip())
    if not found or float(found.group(1)) <= 0:
        raise UsageProblem(f"--mem {shown_value(text)}: give a size such as 4G, 512M or 1024 (megabytes)")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def parse_env(entries: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``--env K=V`` entries as pairs; a name that is no environment variable name is refused."""
    pairs = []
    for entry in entries:
        name, sep, value = entry.partition("=")
        if not sep or not _ENV_NAME.fullmatch(name):
            raise UsageProblem(f"--env {shown_value(entry)}: give NAME=VALUE, NAME made of letters, digits and '_'")
        pairs.append((name, value))
    return tuple(pairs)


def _amount(value: float | None, flag: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UsageProblem(f"{flag} {shown_value(value)}: give a number of at least 0")
    return value


@record
class RayOptions:
    """What a job asks Ray for; ``None``/empty: Ray's default (an entrypoint reserves no resources)."""

    #: CPUs reserved for the command (``entrypoint_num_cpus``); fractions allowed, as Ray allows them.
    cpus: float | None = None
    #: GPUs reserved for the command (``entrypoint_num_gpus``).
    gpus: float | None = None
    #: Memory reserved for the command, as SLURM's ``--mem`` (``4G``); Ray schedules by it, does not cap.
    mem: str | None = None
    #: Environment variables of the job (``runtime_env.env_vars``): the kernel's environment is not
    #: sent (PATH, HOME and the rest belong to this machine, not to the node).
    env: tuple[tuple[str, str], ...] = ()
    #: A folder here, uploaded by Ray as the job's working directory (see the module docstring).
    working_dir: str | None = None
    #: A folder on the node the command starts in (relative: inside the uploaded working directory).
    cwd: str | None = None

    def __post_init__(self) -> None:
        _amount(self.cpus, "--cpus")
        _amount(self.gpus, "--gpus")
        if self.mem:
            parse_mem(self.mem)
        parse_env(f"{k}={v}" for k, v in self.env)

    @classmethod
    def from_words(cls, *, cpus: float | None = None, gpus: float | None = None, mem: str | None = None,
                   env: Iterable[str] = (), working_dir: str | None = None, cwd: str | None = None) -> RayOptions:
        """Options as a magic line gives them (``--env K=V`` entries as text)."""
        return cls(cpus=cpus, gpus=gpus, mem=mem or None, env=parse_env(env), working_dir=working_dir or None,
                   cwd=cwd or None)

    def merged(self, env: Mapping[str, str]) -> RayOptions:
        """These options with more environment variables (the line's ``--env`` over a setting's)."""
        return dataclasses.replace(self, env=tuple({**dict(self.env), **env}.items()))

    def submit_fields(self) -> dict[str, Any]:
        """The fields of Ray's submit request these options set (not the runtime environment)."""
        fields: dict[str, Any] = {}
        if self.cpus is not None:
            fields["entrypoint_num_cpus"] = self.cpus
        if self.gpus is not None:
            fields["entrypoint_num_gpus"] = self.gpus
        if self.mem:
            fields["entrypoint_memory"] = parse_mem(self.mem)
        return fields
