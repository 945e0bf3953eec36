"""The sandbox modes, one record each: what a mode does and how every help text says it.

A mode is a word a caller gives (``ExecMagics.sandbox``, ``--sandbox-mode``, ``%mcp serve --sandbox``,
``execmagic-mcp --sandbox``, ``Toolbox(sandbox=…)``).  Its record holds both halves of its meaning:

- what :func:`~.sandboxing.choose_sandbox` does with it (its flags: whether it confines at all, whether
  the writable roots are writable, whether it runs unconfined where the sandbox cannot work);
- one phrase saying so, from which :func:`describe_modes` words every help text and :func:`mode_names`
  every list of choices -- so a new mode reaches them all by being here, and no help text can forget one.

The walls themselves are :mod:`..process.sandbox`'s, which knows only the modes it builds (``read-only``,
``workspace``; ``off`` builds none): a mode here is a way of choosing among those walls.  A mode that needs
walls of a new kind adds them there too.  Engine level, not process level: ``auto``'s fallback and the
roots' defaults are the engine's decisions, and the help texts are read by every layer above it.
"""

from __future__ import annotations

from ..process.plural import listed
from ..process.records import record

__all__ = ["RECORDS", "SANDBOX_MODES", "SandboxMode", "describe_modes", "mode_named", "mode_names"]


@record
class SandboxMode:
    """One sandbox mode: its word, what :func:`~.sandboxing.choose_sandbox` does with it, and its phrase."""

    #: The word callers give.
    name: str
    #: What it does, one phrase for every audience; ``{roots}`` stands for the writable roots as that
    #: audience names them (``allowed_dirs, else the folder the kernel started in``, ``the --allow-dir
    #: folders, else …``): the same folders, called by the setting each reader knows.
    says: str
    #: Whether commands meet walls at all (``off``: they run as the user).
    confines: bool = True
    #: Whether the writable roots are writable (else only a private ``/tmp`` is).
    writes_roots: bool = False
    #: Whether it gives way rather than fail: unconfined where the sandbox cannot work (saying why), and a
    #: root that would open too much (``/``, the home folder) left out with a note instead of an error.  A
    #: mode asked for by name otherwise fails closed: nothing runs unconfined that the caller meant confined.
    lenient: bool = False


#: Every mode, weakest first: the order of every list of choices.
RECORDS: tuple[SandboxMode, ...] = (
    SandboxMode("off", "no walls: commands run as you", confines=False),
    SandboxMode("read-only", "nothing writable but a private /tmp"),
    SandboxMode("workspace", "also writable: {roots}; .git stays read-only", writes_roots=True),
    SandboxMode("auto", "workspace where the sandbox works, else unsandboxed, saying why", writes_roots=True,
                lenient=True),
)
#: Every word a caller may use, in :data:`RECORDS`' order (argparse's and traitlets' choices).
SANDBOX_MODES: tuple[str, ...] = tuple(mode.name for mode in RECORDS)


def mode_named(name: str) -> SandboxMode:
    """The record of ``name``; :class:`SandboxProblem` (a usage mistake) for a word that is no mode."""
    for mode in RECORDS:
        if mode.name == name:
            return mode
    from ..process.sandbox_spec import SandboxProblem  # a mistake's type: not imported by %load_ext for it

    raise SandboxProblem(name, f"unknown sandbox mode (one of: {', '.join(SANDBOX_MODES)})")


def mode_names() -> str:
    """``off, read-only, workspace or auto``: the choices, for a short help that points to a long one."""
    return listed(list(SANDBOX_MODES))


def describe_modes(roots: str, default: str | None = None) -> str:
    """Every mode with its phrase, for one help text: ``off (…), read-only (…), … or auto (…)``.

    ``roots``: the writable roots as this help's reader names them.  ``default``: the mode this setting
    takes when none is given, marked ``the default`` (``None``: the help shows the default elsewhere, as a
    settings table does).
    """
    parts = []
    for mode in RECORDS:
        said = mode.says.format(roots=roots)
        parts.append(f"{mode.name} ({'the default: ' if mode.name == default else ''}{said})")
    return listed(parts)
