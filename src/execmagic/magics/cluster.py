"""``--on NAME``: where a magic's command runs, with the options and settings of each backend.

Nothing here knows any backend: ``--on``'s choices, each backend's flags (``--partition``,
``--cpus``…), their help and checks, and each backend's settings section come from the backends'
registry (:mod:`execmagic.background.backends.registry`).  A settings section keeps the public name
its backend declares (``c.SlurmBackend.partition = "gpu"`` in ``ipython_config.py``, or
``%config SlurmBackend.partition = "gpu"``); an option on the magic's line wins over its setting.
Turned into a plain backend at call time, as every setting is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from traitlets import Float, Int, TraitType, Unicode
from traitlets.config import Configurable

from ..background.backends import registry
from ..process.errors import UsageProblem
from .helpfmt import argument

if TYPE_CHECKING:
    from ..background.backends.base import Backend, Option
    from ..background.backends.registry import BackendSpec

__all__ = ["backend_for", "cluster_options", "settings_classes"]

_TRAITS: dict[type[Any], Callable[..., TraitType[Any, Any]]] = {str: Unicode, int: Int, float: Float}


def _flags(specs: list[BackendSpec] | None = None) -> dict[str, tuple[Option, list[str]]]:
    """Every backend's flags, each once: its option (as the first backend declaring it reads it) and
    the backends that take it, in the registry's order."""
    flags: dict[str, tuple[Option, list[str]]] = {}
    for spec in registry.specs() if specs is None else specs:
        for flag, option in spec.flags.items():
            flags.setdefault(flag, (option, []))[1].append(spec.name)
    return flags


#: The backends :func:`_flags_now` last saw, and their flags.
_flags_seen: tuple[list[BackendSpec], dict[str, tuple[Option, list[str]]]] | None = None


def _flags_now() -> dict[str, tuple[Option, list[str]]]:
    """:func:`_flags` of the registry now, worked out again only when its backends are not the last ones
    seen (each run asks, to tell a flag given without its ``--on``; a backend is registered rarely)."""
    global _flags_seen
    specs, seen = registry.specs(), _flags_seen
    if seen is None or seen[0] != specs:  # the same backends, the same objects (frozen): the same flags
        seen = _flags_seen = (specs, _flags(specs))
    return seen[1]


def _flag_help(flag: str, flags_by_backend: list[tuple[str, dict[str, Option]]]) -> str:
    """``with --on slurm: the partition …``; a flag two backends take says each one's help."""
    helps: dict[str, list[str]] = {}
    for name, flags in flags_by_backend:
        option = flags.get(flag)
        if option is not None:
            helps.setdefault(option.help, []).append(name)
    return "; ".join(f"with --on {' or '.join(names)}: {text}" for text, names in helps.items())


def _on_help(specs: list[BackendSpec]) -> str:
    """``where to run: local (default) or slurm (a batch job; its logs on a shared folder)``."""
    parts = [f"{spec.name} ({spec.help})" for spec in specs]
    return "where to run: " + (", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else parts[0])


def cluster_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--on`` and every backend's flags, for the magics that can run elsewhere (the registry read once:
    each magic's class is defined when the extension loads)."""
    specs = registry.specs()
    flags_by_backend = [(spec.name, spec.flags) for spec in specs]
    decorators = [argument("--on", choices=tuple(spec.name for spec in specs), default=None, help=_on_help(specs))]
    for flag, (option, _) in _flags(specs).items():
        decorators.append(argument(flag, dest=option.name, type=option.kind, metavar=option.metavar,
                                   help=_flag_help(flag, flags_by_backend)))
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


@functools.cache
def settings_classes() -> dict[str, type[Configurable]]:
    """One settings section per backend that has settings, by backend name: a ``Configurable``
    named as the backend declares (``SlurmBackend``), one trait per option that is a setting."""
    classes = {}
    for spec in registry.specs():
        options = [option for option in spec.options if option.setting]
        if spec.settings_name is None or not options:
            continue
        traits: dict[str, Any] = {
            option.name: _TRAITS[option.kind](option.default, help=option.setting_help or option.help).tag(config=True)
            for option in options}
        traits["__doc__"] = (f"Defaults for ``--on {spec.name}`` (``%bg``, ``%%exec --bg``, ``%exec``):"
                             f" ``c.{spec.settings_name}.NAME``; an option on the line wins.")
        traits["__module__"] = __name__
        classes[spec.name] = type(spec.settings_name, (Configurable,), traits)
    return classes


def __getattr__(name: str) -> type[Configurable]:
    """A settings section by its public name (``from execmagic.magics.cluster import SlurmBackend``)."""
    for cls in settings_classes().values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def backend_for(args: Any, settings: Mapping[str, Configurable], grace: float) -> Backend | None:
    """The backend ``args`` ask for (``None``: no ``--on``, the default), each option over its
    setting; a flag given without ``--on`` one of the backends taking it is a one-line usage error."""
    on = getattr(args, "on", None)
    flags = _flags_now()
    given = [flag for flag, (option, _) in flags.items() if getattr(args, option.name, None) is not None]
    spec = registry.get(on) if on is not None else None
    for flag in given:
        if spec is None or flag not in spec.flags:
            raise UsageError(f"{flag} goes with --on {' or '.join(flags[flag][1])}")
    if spec is None:
        return None
    line = {option.name: getattr(args, option.name, None) for option in spec.flags.values()}
    section = settings.get(spec.name)
    configured = {option.name: getattr(section, option.name) for option in spec.options
                  if option.setting and section is not None}
    try:
        return spec.make(registry.resolve(spec, line, configured), grace)
    except UsageProblem as exc:
        raise UsageError(str(exc)) from None
