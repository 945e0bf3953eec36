"""A caller's sandbox: a mode word and the network turned into a :class:`~..process.sandbox.Sandbox`.

The walls themselves are in :mod:`..process.sandbox` (bubblewrap).  This module decides, for one
engine, what they enclose -- the same words wherever a sandbox is chosen, each a record of
:mod:`.sandbox_modes` whose flags this module reads:

- ``off``: no sandbox.  ``read-only``: nothing writable but a private ``/tmp``.
- ``workspace``: the writable roots too -- ``allowed_dirs`` when set, else the folder the engine
  started in (a notebook's folder), fixed when the sandbox is set; a later ``cd`` never moves them.
- ``auto`` (agents' default): ``workspace`` where the sandbox works; where it does not, the run goes
  unsandboxed and says why.  A root that would be ``/`` or the home folder is not taken silently:
  ``auto`` falls back to ``read-only`` with a note; asked for by name, the same root is an error.

Asked for by name where the sandbox cannot work, a mode fails closed (:class:`SandboxUnavailable`):
nothing runs unconfined.  The home folder is hidden by allow-list (:mod:`..process.sandbox_walls`); shown
in it, read-only: the kernel's own Python (:func:`interpreter_paths`: its installation, its virtual
environment, the folders on its module path -- pyenv, a user site, an editable install live in the home
folder), the paths a caller adds (``readable``), and in ``read-only`` mode the folder it would have made
writable (a notebook's project: read-only is no use if it cannot be read).  What is hidden inside besides:
Jupyter's runtime folder (kernel connection files: with one, anyone runs code in the kernel), the
connection file of the kernel this process is, wherever it lies (``ipython kernel -f FILE``, a
front end that keeps its own folder),
execmagic's log folders (other runs' logs) and the audit log.  A run's own files (its prelude, state
file, big script) are bound back by the engine, per run.  The kernel's own virtual environment is
read-only inside when it lies in the workspace (:func:`kernel_environment`: what is installed there
runs at every kernel start, unconfined); any other environment in the workspace stays writable.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..process.records import record
from ..process.sandbox_scan import within
from .sandbox_modes import SANDBOX_MODES, mode_named

if TYPE_CHECKING:  # the walls themselves are imported when a sandbox is first set: a run that is not
    # confined (most are) never needs them, and the first command after the load would pay 7 ms for them
    from ..process.sandbox import Sandbox
    from ..process.sandbox_session import Limits, SessionWalls

__all__ = ["SANDBOX_MODES", "SandboxChoice", "SessionTmp", "choose_sandbox", "interpreter_paths", "jupyter_runtime_dir",
           "kernel_connection_file", "kernel_environment", "kernel_environment_note"]


@record
class SandboxChoice:
    """What a caller's sandbox setting came to: the sandbox (``None``: runs are not confined) and what to
    tell about it (an ``auto`` that could not confine, a root left out)."""

    sandbox: Sandbox | None
    notes: tuple[str, ...] = ()

    def describe(self) -> str | None:
        """One line for a summary (``None`` when off by choice)."""
        return self.sandbox.describe() if self.sandbox is not None else None


def jupyter_runtime_dir() -> str:
    """Where Jupyter keeps kernel connection files (without importing Jupyter when it is not there)."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir as find
    except ImportError:  # pragma: no cover - ipykernel brings jupyter_core
        data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
        return os.environ.get("JUPYTER_RUNTIME_DIR") or os.path.join(data, "jupyter", "runtime")
    return find()


def kernel_connection_file() -> str | None:
    """The connection file of the kernel this process is, when it is one (``None`` otherwise).

    Not always in Jupyter's runtime folder: a kernel started with ``-f FILE``, or by a front end with
    its own folder, keeps its key elsewhere.  Read from the kernel application only when ipykernel is
    loaded already (this layer never imports a front end: plain Python and agents run without one).
    """
    module = sys.modules.get("ipykernel.kernelapp")
    app = getattr(module, "IPKernelApp", None)
    with contextlib.suppress(Exception):  # a half-made or foreign application: nothing to add
        if app is not None and app.initialized():
            path = app.instance().abs_connection_file
            return os.path.abspath(path) if isinstance(path, str) and path else None
    return None


def interpreter_paths() -> tuple[str, ...]:
    """The folders the kernel's Python runs from, to show inside the sandbox: its installation and virtual
    environment (``sys.prefix`` and kin), the folder of its real executable, and the absolute folders on its
    module path (a user site, an editable install's source).  A sandboxed ``python``, ``pip`` or script then
    imports what the kernel imports, wherever that lies (pyenv keeps Python in ``~/.pyenv``)."""
    found = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    found.update(p for p in sys.path if p and os.path.isabs(p))
    return tuple(sorted(os.path.realpath(p) for p in found if os.path.exists(p)))


def _shown(paths: Sequence[str], home: str) -> tuple[str, ...]:
    """``paths`` without the home folder and what holds it (a module path entry of ``~`` itself, a read-only
    view of a notebook started there): showing those would undo the hiding."""
    real_home = os.path.realpath(home)
    return tuple(p for p in paths if not within(real_home, os.path.realpath(p)))


def kernel_environment(roots: Sequence[str]) -> tuple[str, ...]:
    """The kernel's own environment (``sys.prefix``), bound read-only where the walls would not leave it so:
    under the shared temp folder, which the private ``/tmp`` would hide (its python, its pip, the packages a
    command imports), and inside a writable root -- a virtual environment in the workspace, whose
    ``site-packages`` and ``.pth`` files the kernel runs at every start, unconfined.  Another virtual
    environment in the workspace stays writable (``pip install`` into it is ordinary work)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix)}
    return tuple(sorted(p for p in prefixes if p.startswith("/tmp/") or any(within(p, root) for root in roots)))


#: A pip, uv or conda named in a sandboxed script: it may try to install into the kernel's own environment.
_INSTALLERS = re.compile(r"(?<![\w./-])(?:pip3?|uv|conda|mamba|micromamba)(?![\w./-])")


def kernel_environment_note(sandbox: Sandbox | None, text: str) -> tuple[str, ...]:
    """What to say beside a sandboxed script that runs an installer while the kernel's own environment is
    read-only inside (:func:`kernel_environment`): why ``pip install`` into it fails, and what to do."""
    if sandbox is None or not sandbox.spec.writable_roots or not _INSTALLERS.search(text):
        return ()
    inside = [p for p in sandbox.spec.readable if any(within(p, root) for root in sandbox.spec.writable_roots)]
    if not inside:
        return ()
    return (f"the kernel's own environment ({inside[0]}) is read-only in the sandbox: what is installed there runs"
            " unconfined at every kernel start; install into another virtual environment in the workspace",)


def choose_sandbox(mode: str, *, network: bool, roots: Sequence[str], start_dir: str,
                   hidden: Sequence[str], home: str | None = None, readable: Sequence[str] = (),
                   session: SessionTmp | None = None) -> SandboxChoice:
    """Set the sandbox ``mode`` asks for.

    ``roots``: the allowed directories (when set, they are the writable roots, and a bad one is an
    error); else ``start_dir`` is.  ``hidden``: more paths to hide (log folders, the audit log).
    ``readable``: more paths shown read-only where the sandbox hides (``~`` allowed; the home folder itself
    is refused: it would show every credential in it).
    ``session``: the session's ``/tmp`` and limits (``None``: a ``/tmp`` per run, nothing limited).
    Raises :class:`SandboxProblem` for a mode or a root that cannot be honoured, and
    :class:`SandboxUnavailable` for an explicit mode where bubblewrap cannot run.
    """
    from ..process.sandbox import SandboxSpec, availability, plan_sandbox, resolve_roots

    record = mode_named(mode)
    if not record.confines:
        return SandboxChoice(None)
    home = home or os.path.expanduser("~")
    if record.lenient:
        found = availability()
        if not found.ok:
            return SandboxChoice(None, (f"ran unsandboxed: {found.reason}",))
    notes: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    if record.writes_roots:
        choice = resolve_roots([os.path.abspath(os.path.expanduser(r)) for r in roots] or [start_dir], home=home,
                               explicit=not record.lenient)
        writable, notes = choice.roots, choice.notes
    # the kernel's own environment, read-only where the walls would not leave it so (kernel_environment);
    # and, read-only, the folder a read-only sandbox is about (a notebook under /tmp would look empty)
    looked_at = (roots or [start_dir]) if not record.writes_roots else []
    under_tmp = {os.path.realpath(p) for p in looked_at if os.path.realpath(p).startswith("/tmp/") and os.path.isdir(p)}
    kernel_env = tuple(sorted({*kernel_environment(writable), *under_tmp}))
    # read-only: the folder it would have made writable stays readable (the home folder stays hidden)
    viewed = () if writable else _shown([os.path.abspath(os.path.expanduser(r)) for r in roots] or [start_dir], home)
    # "~" is the home folder the sandbox hides (the caller's ``home``, which may not be $HOME's)
    added = (os.path.abspath(home + p[1:] if p == "~" or p.startswith("~/") else os.path.expanduser(p))
             for p in readable)
    visible = (*_shown(interpreter_paths(), home), *viewed, *added)
    spec = SandboxSpec(mode="workspace" if writable else "read-only", writable_roots=writable, network=network,
                       readable=kernel_env, visible=visible,
                       hidden=tuple(os.path.abspath(p) for p in (jupyter_runtime_dir(), kernel_connection_file(),
                                                                 *hidden) if p))
    walls, walls_notes = session.walls(availability().userns) if session is not None else (None, ())
    sandbox = plan_sandbox(spec, home=home, walls=walls)
    return SandboxChoice(sandbox, notes + sandbox.notes + walls_notes)


class SessionTmp:
    """A session's holder of its ``/tmp`` and limits (:mod:`..process.sandbox_session`), started with the
    first sandbox set and shared by every sandbox of the session; one again when the limits change."""

    def __init__(self, limits: Callable[[], Limits]) -> None:
        self._limits = limits
        self._current: SessionWalls | None = None
        self._every: list[SessionWalls] = []
        self._lock = threading.Lock()

    def walls(self, userns: bool) -> tuple[SessionWalls | None, tuple[str, ...]]:
        """The running holder, or ``None`` and why there is none (runs then get a ``/tmp`` each, unlimited)."""
        from ..process.sandbox_session import WallsUnavailable, start_walls

        limits = self._limits()
        with self._lock:
            current = self._current
            if current is None or current.limits != limits or current.userns != userns or not current.alive():
                try:
                    current = self._current = start_walls(limits, userns=userns)
                except WallsUnavailable as exc:
                    self._current = None
                    return None, (f"sandbox: each command gets a /tmp of its own, not kept, and processes are not "
                                  f"limited ({exc.why})",)
                self._every.append(current)
            return current, ()

    def alive(self, walls: SessionWalls | None) -> bool:
        """Whether ``walls`` is still the session's (a holder killed from outside, or other limits: not)."""
        return walls is None or (walls is self._current and walls.alive() and walls.limits == self._limits())

    def close(self) -> None:
        with self._lock:
            every, self._every, self._current = self._every, [], None
        for walls in every:
            walls.close()
