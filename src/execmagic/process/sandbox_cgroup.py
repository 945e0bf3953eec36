"""A cgroup of a sandboxed session's own, where this process may make one: its memory and its processes.

The per-user process limit (:mod:`.sandbox_session`) does not bind uid 0, and nothing in it bounds
memory; a cgroup does both, for every process in it, root's too, and counts the session's ``/tmp`` (a
tmpfs's pages are charged to the cgroup of whoever wrote them).  One can be made where the folder a
controller's cgroup of this process lies in is writable: cgroup v1 for a kernel running as root (the
controller's own hierarchy, ``/sys/fs/cgroup/memory/...``), cgroup v2 where that folder was delegated to
the user and enables the controller for its children (``cgroup.subtree_control``), as systemd does for
a user's session.  Elsewhere: ``None``, and why.

A run is put in it before anything of it starts: a small ``sh`` outside the walls writes ``0`` (itself)
into each ``cgroup.procs``, then ``exec``s what enters the session; whatever it starts inherits the
cgroup.  The folders are removed when the engine closes (a cgroup with processes left cannot be: a dead
kernel's empty folders stay, as any cgroup a program leaves).
"""

from __future__ import annotations

import contextlib
import os

from .records import record

__all__ = ["CGROUP_ROOT", "SessionCgroup", "make_cgroup"]

#: Where the cgroup file systems are mounted.
CGROUP_ROOT = "/sys/fs/cgroup"
#: The ``sh`` that moves itself into the cgroups named before ``--``, then runs what follows.
_MOVE = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 126; shift; done; shift; exec "$@"'


@record
class SessionCgroup:
    """The session's cgroup folders (one per hierarchy: v1 has one per controller) and what they limit."""

    folders: tuple[str, ...]
    memory: int
    processes: int

    def entry(self) -> tuple[str, ...]:
        """The argv that moves a run into the cgroup before the rest of its argv runs."""
        return ("/bin/sh", "-c", _MOVE, "sh", *(os.path.join(f, "cgroup.procs") for f in self.folders), "--")

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the cgroup's memory limit (``memory.events``, v2;
        ``memory.oom_control``, v1); 0 where it cannot be read."""
        return self._count(("memory.events", "memory.oom_control"), "oom_kill")

    def forks_refused(self) -> int:
        """How many forks the cgroup's process limit refused (``pids.events``); 0 where it cannot be read."""
        return self._count(("pids.events",), "max")

    def tasks(self) -> int | None:
        """How many processes (and threads) are in the cgroup now (``pids.current``); ``None``: not counted."""
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError), open(os.path.join(folder, "pids.current"),
                                                                encoding="ascii") as fh:
                return int(fh.read())
        return None

    def _count(self, files: tuple[str, ...], key: str) -> int:
        for folder in self.folders:
            for name in files:
                with contextlib.suppress(OSError, ValueError), open(os.path.join(folder, name), encoding="ascii") as fh:
                    for line in fh:
                        found, _, value = line.partition(" ")
                        if found == key:
                            return int(value)
        return 0

    def close(self) -> None:
        for folder in self.folders:
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def _own_paths() -> dict[str, str]:
    """This process's cgroup per controller (``""``: the v2 hierarchy), from ``/proc/self/cgroup``."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup", encoding="utf-8") as fh:
        for line in fh:
            _id, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _where(paths: dict[str, str], controller: str) -> tuple[str, str] | None:
    """``(parent folder, the file that sets the limit)`` for ``controller``, or ``None`` where none is writable."""
    v1 = os.path.join(CGROUP_ROOT, controller)
    if controller in paths and os.path.isdir(v1):
        parent = os.path.join(v1, paths[controller].lstrip("/"))
        setting = "pids.max" if controller == "pids" else "memory.limit_in_bytes"
        return (parent, setting) if os.access(parent, os.W_OK) else None
    if "" in paths and os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        # a new cgroup beside ours: ours holds processes, so it cannot enable controllers for children
        parent = os.path.dirname(os.path.join(CGROUP_ROOT, paths[""].lstrip("/")))
        try:
            with open(os.path.join(parent, "cgroup.subtree_control"), encoding="ascii") as fh:
                enabled = fh.read().split()
        except OSError:
            return None
        if controller in enabled and os.access(parent, os.W_OK) and os.access(
                os.path.join(parent, "cgroup.procs"), os.W_OK):
            return parent, "pids.max" if controller == "pids" else "memory.max"
    return None


def make_cgroup(name: str, *, memory: int, processes: int) -> tuple[SessionCgroup | None, str]:
    """The session's cgroup ``name`` limiting ``memory`` bytes and ``processes`` (``0``: that one not), or
    ``None`` and why none could be made."""
    paths = _own_paths()
    wanted = [(c, v) for c, v in (("memory", memory), ("pids", processes)) if v]
    places = {c: _where(paths, c) for c, _ in wanted}
    if not wanted or any(place is None for place in places.values()):
        return None, "no cgroup can be made for it here: cgroup v2 is not delegated to this user"
    folders: list[str] = []
    try:
        for controller, value in wanted:
            parent, setting = places[controller]  # type: ignore[misc]
            folder = os.path.join(parent, name)
            if folder not in folders:
                os.mkdir(folder, 0o755)
                folders.append(folder)
            with open(os.path.join(folder, setting), "w", encoding="ascii") as fh:
                fh.write(str(value))
    except OSError as exc:
        SessionCgroup(tuple(folders), memory, processes).close()
        return None, f"its cgroup could not be made: {exc.strerror}"
    return SessionCgroup(tuple(folders), memory, processes), ""
