"""What a sandbox is asked for, and whether it can be honoured: the spec, its writable roots, its errors.

The walls are built from a spec in :mod:`.sandbox` (whose docstring is the sandbox's manual).  This
module decides, before any bwrap runs, whether a spec can be set: a writable root that would open too
much (``/``, the home folder or a folder holding it, the shared temp folder) is refused when the user
named it and left out, with a note, when it is only the folder the engine started in; every path bound
in must be absolute and exist.  What is found on disk inside the roots is :mod:`.sandbox_scan`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable

from .errors import UsageProblem
from .records import record
from .sandbox_scan import outermost as _outermost
from .sandbox_scan import real_path as _real
from .sandbox_scan import within as _within

__all__ = ["RootChoice", "SandboxProblem", "SandboxSpec", "UnsafeRoot", "checked_spec", "resolve_roots"]

#: The shared temp folder, outside: as a writable root it would hand out its sockets (tmux, ssh-agent).
_SHARED_TMP = ("/tmp", "/var/tmp")


class SandboxProblem(UsageProblem):
    """A sandbox that cannot be set as asked (``path``: what it is about, ``why``: one phrase)."""

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        self.why = why
        about = f" with {path!r}" if path else ""
        super().__init__(f"exec: cannot sandbox{about}: {why} (EINVAL)")


class UnsafeRoot(SandboxProblem):
    """A writable root that would open too much: ``/``, the home folder or one holding it, the shared temp."""


@record
class SandboxSpec:
    """What a sandbox allows; absolute paths only (the caller resolves them, see :func:`resolve_roots`)."""

    #: One of :data:`.sandbox.MODES`.
    mode: str = "off"
    #: Folders writable in ``workspace`` mode.
    writable_roots: tuple[str, ...] = ()
    #: Share the host's network (else a namespace with only its own loopback).
    network: bool = False
    #: More files and folders to hide, beyond the walls and :data:`.sandbox.CREDENTIAL_STORES`.
    hidden: tuple[str, ...] = ()
    #: Paths shown read-only where the walls hide (the home folder, ``/run``, ``/var/lib``): the kernel's
    #: interpreter and environment, a user's additions.  One that is missing is left out; one that is the
    #: home folder, or holds it, is refused (it would show every credential of it).
    visible: tuple[str, ...] = ()
    #: Paths bound back read-only after the hiding (session-wide: the prelude).
    readable: tuple[str, ...] = ()
    #: Files and folders bound back writable after the hiding.
    writable_paths: tuple[str, ...] = ()
    #: Leave ``.git`` folders in the roots writable (``git commit`` inside the sandbox).
    allow_git_writes: bool = False
    #: A folder of the caller's bound at ``/tmp`` (shared by the runs of a session); ``None``: an empty tmpfs each run.
    temp: str | None = None


@record
class RootChoice:
    """The writable roots :func:`resolve_roots` kept, and why any were left out (empty roots: read-only)."""

    roots: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _why_unsafe(root: str, home: str) -> str | None:
    """Why the real folder ``root`` may not be writable as a whole (``None``: it may)."""
    if root == "/":
        return "it is the root folder: everything would be writable"
    if root == home:
        return "it is the home folder: shell start-up files and credentials would be writable"
    if _within(home, root):
        return "it holds the home folder: shell start-up files and credentials would be writable"
    if root in {_real(p) for p in _SHARED_TMP}:
        return "it is the shared temp folder: other programs' sockets there (tmux, ssh-agent) would be reachable"
    return None


def _check_root(root: str, home: str) -> str:
    """``root`` made real, or :class:`SandboxProblem` (relative, missing) / :class:`UnsafeRoot`."""
    if not os.path.isabs(root):
        raise SandboxProblem(root, "a writable root must be an absolute path")
    real = _real(root)
    if not os.path.isdir(real):
        raise SandboxProblem(root, "a writable root must be an existing folder")
    why = _why_unsafe(real, _real(home))
    if why is not None:
        raise UnsafeRoot(root, why)
    return real


def resolve_roots(roots: Iterable[str], *, home: str, explicit: bool) -> RootChoice:
    """The writable roots, checked once when the sandbox is set (real paths, nested ones folded).

    ``explicit``: the user named them, so an unsafe or missing one is an error (:class:`UnsafeRoot`,
    :class:`SandboxProblem`) -- silently narrowing what they asked for would surprise them.  Otherwise
    (the folder the engine started in) such a root is left out with a note, and with none left the
    caller falls back to ``read-only``: a notebook started in the home folder gets a sandbox that
    protects, not one that opens the home folder.
    """
    kept: list[str] = []
    notes: list[str] = []
    for root in roots:
        try:
            kept.append(_check_root(root, home))
        except SandboxProblem as exc:
            if explicit:
                raise
            # the home folder is hidden, not only read-only: a note that said "read-only" would mislead
            there = ("hidden there but for what the sandbox shows" if _real(root) == _real(home)
                     else "read-only there")
            notes.append(f"sandbox: {root} is not writable ({exc.why}); {there}")
    return RootChoice(roots=_outermost(kept), notes=tuple(notes))


def checked_spec(spec: SandboxSpec, home: str) -> SandboxSpec:
    """``spec`` with its roots made real and folded; :class:`SandboxProblem` for a root or a bound path
    that cannot be (a spec may be made by hand, without :func:`resolve_roots`)."""
    roots = _outermost(_check_root(root, home) for root in spec.writable_roots) if spec.mode == "workspace" else ()
    if spec.mode == "workspace" and not roots:
        raise SandboxProblem("", "workspace mode needs at least one writable root")
    for path in (*spec.readable, *spec.writable_paths, *([spec.temp] if spec.temp is not None else [])):
        if not os.path.isabs(path) or not os.path.exists(path):
            raise SandboxProblem(path, "a path bound into the sandbox must be absolute and exist")
    for path in spec.hidden:  # one that does not exist has nothing to hide; a relative one hides by chance
        if not os.path.isabs(path):
            raise SandboxProblem(path, "a hidden path must be absolute")
    for path in spec.visible:
        if not os.path.isabs(path):
            raise SandboxProblem(path, "a path shown in the sandbox must be absolute")
        if _within(_real(home), _real(path)):
            raise SandboxProblem(path, "it would show the whole home folder: name the folders in it that tools need")
    return dataclasses.replace(spec, writable_roots=roots)
