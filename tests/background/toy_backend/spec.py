"""``--on toy`` as the registry knows it: its options, its settings section, its factory."""

from __future__ import annotations

from execmagic.background.backends.base import Option
from execmagic.background.backends.registry import BackendSpec
from execmagic.background.backends.resources import cpus_option


def _make(values, grace):
    from .backend import ToyBackend  # the backend's own modules load when a command first runs there

    return ToyBackend(folder=values.get("folder"), cpus=values.get("cpus"), grace=grace)


SPEC = BackendSpec(
    name="toy", help="a toy cluster: local processes writing into a folder", make=_make,
    options=(cpus_option("CPUs per job; 0: any."),
             Option("folder", "Folder the jobs write their output to; empty: a new temp folder.")),
    settings_name="ToyBackend", settings_example='folder = "/tmp/toy"')
