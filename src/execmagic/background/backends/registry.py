"""The backends by name: what ``--on NAME``, ``start(..., on=NAME)``, the agent tools and reattach
go through, so nothing above this folder knows any backend.

Each backend is one :class:`BackendSpec`: its name, one line of help, the :class:`~.base.Option` values
it takes, the name of its settings section, and a factory that makes the backend from the values
of those options.  The spec lives in a light module of its own, its package's ``spec.py`` (no SLURM
or HTTP code): the magics build their flags and settings from it when the extension loads, and the
backend itself is imported by the factory, when a command first runs there.

A backend shipped with execmagic is one line of :data:`_BUILTIN` (the module holding its ``SPEC``);
any other registers with :func:`register`: before ``%load_ext execmagic`` for the magics to offer it,
at any time for ``start(on=NAME)`` and the agent tools.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

from ...process.errors import UsageProblem, shown_value
from ...process.records import record
from .base import Backend, Option

__all__ = ["BackendSpec", "backend_given", "get", "names", "register", "resolve", "specs", "unregister"]


@record
class BackendSpec:
    """One backend as the registry knows it."""

    #: ``--on NAME``, ``start(on=NAME)``, :attr:`~.base.Backend.name` of what :attr:`make` gives.
    name: str
    #: For ``--on``'s help: ``a batch job; its logs on a shared folder``.
    help: str
    #: ``make(values, grace)``: the backend, from every option's value (``None``: not given, the
    #: site's default; see :func:`resolve`) and the grace between a stop's signal and SIGKILL.
    make: Callable[[Mapping[str, Any], float], Backend]
    options: tuple[Option, ...] = ()
    #: The settings section of the options that are settings (``c.SlurmBackend.partition``):
    #: a public name users write in their configuration, so it never changes with the code.
    settings_name: str | None = None
    #: One setting as the docs show it (``partition = "gpu"``): ``%config SlurmBackend.partition = "gpu"``.
    settings_example: str = ""

    @property
    def flags(self) -> dict[str, Option]:
        """The options given on a magic's line, by flag."""
        return {option.flag: option for option in self.options if option.flag is not None}

    def backend(self, values: Mapping[str, Any] | None = None, *, grace: float = 2.0) -> Backend:
        """The backend with ``values`` (as given on a line or by settings: parsed and checked here)."""
        return self.make(resolve(self, values or {}, {}), grace)


#: The backends shipped with execmagic: the module (under this package) holding each one's ``SPEC``.
#: A new backend is one more line here.
_BUILTIN = (
    "local_spec",
    "slurm.spec",
    "ray.spec",
)

_lock = threading.Lock()
_specs: dict[str, BackendSpec] = {}
_loaded = False


def _load_builtin() -> None:
    global _loaded
    with _lock:
        if _loaded:
            return
        for module in _BUILTIN:
            spec = importlib.import_module(f"{__package__}.{module}").SPEC
            _specs.setdefault(spec.name, spec)
        _loaded = True


def register(spec: BackendSpec) -> None:
    """Add a backend (or replace the one of that name); a flag it shares with another backend must
    be read the same way (one argparse option serves both).

    The magics build ``--on``, the flags and the settings sections when they are imported: a backend
    registered later is there for ``start(on=NAME)`` and ``Toolbox(background_on=NAME)``, and for
    the magics only if it was registered before ``%load_ext execmagic``."""
    _load_builtin()
    with _lock:
        for other in _specs.values():
            if other.name == spec.name:
                continue
            for flag, option in spec.flags.items():
                theirs = other.flags.get(flag)
                if theirs is not None and (theirs.kind, theirs.name) != (option.kind, option.name):
                    raise ValueError(f"backend {spec.name!r} reads {flag} unlike backend {other.name!r}")
        _specs[spec.name] = spec


def unregister(name: str) -> None:
    """Remove the backend called ``name`` (nothing if there is none)."""
    _load_builtin()
    with _lock:
        _specs.pop(name, None)


def specs() -> list[BackendSpec]:
    """Every backend, in the order they were registered (``local`` first)."""
    _load_builtin()
    with _lock:
        return list(_specs.values())


def names() -> tuple[str, ...]:
    return tuple(spec.name for spec in specs())


def get(name: str) -> BackendSpec:
    """The backend called ``name``, or a one-line usage problem naming those there are."""
    _load_builtin()
    with _lock:
        spec = _specs.get(name)
    if spec is None:
        known = " or ".join(map(repr, names()))
        raise UsageProblem(f"unknown backend {shown_value(name)}: use {known} (or a backend object)")
    return spec


#: What a :class:`~.base.Backend` has that a caller's other values do not: checked before the engine
#: relies on it, so a wrong value is the caller's one-line mistake, not an AttributeError deep inside.
_BACKEND_SHAPE = ("name", "remote", "start", "reattach", "find_jobs", "foreground")


def backend_given(on: Any, what: str, *, grace: float) -> Backend:
    """The backend ``on`` names (made with its defaults and ``grace``) or is; ``what`` names the argument
    in the :class:`UsageProblem` for a value that is neither (a number, bytes, a dict)."""
    if isinstance(on, str):
        return get(on).backend(grace=grace)
    if all(hasattr(on, attribute) for attribute in _BACKEND_SHAPE):
        return cast(Backend, on)
    known = ", ".join(map(repr, names()))
    raise UsageProblem(f"{what} must be a backend's name ({known}) or a backend, not {type(on).__name__}"
                       f" {shown_value(on)}")


def resolve(spec: BackendSpec, given: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """Each option's value for :attr:`BackendSpec.make`: the one ``given`` (on the line; ``None``:
    not given) over the setting's, parsed; empty or 0 is ``None``, the site's default.  An option
    that :attr:`~.base.Option.adds_to_setting` gets both, the setting's first."""
    values: dict[str, Any] = {}
    for option in spec.options:
        line = given.get(option.name)
        setting = settings.get(option.name, option.default)
        if option.adds_to_setting:
            parts = [_parse(option, value) for value in (setting, line) if value]
            values[option.name] = sum(parts[1:], parts[0]) if parts else None
        else:
            value = line if line is not None else setting
            values[option.name] = (_parse(option, value) if value or line is not None else None) or None
    return values


def _parse(option: Option, value: Any) -> Any:
    return option.parse(value) if option.parse is not None else value
