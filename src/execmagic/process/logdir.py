"""Where one engine's files go: its logs, and what its shells read (prelude, state files, big scripts).

By default each engine logs into ``<tmp>/execmagic-<uid>/<YYYYmmdd-HHMMSS>-<pid>/``, a fixed root
so that :mod:`.retention` finds the folders of owners that are gone.  That root is in a folder every
user may write, so it is checked at every use (see :mod:`.private`); when another user made it
first, or made it open, it is refused with a note and the engine moves to a private folder with an
unguessable name (``<tmp>/execmagic-<uid>-XXXXXXXX/``, pruned the same way).

A temp folder in which another user could swap our folders -- one that others may write without the
sticky bit, or below such a folder (a group scratch folder as ``TMPDIR``, on many clusters) -- is not
used at all: the checks could be raced between a check and a later open by path.  The default root then
goes in ``$XDG_RUNTIME_DIR``, else ``~/.cache``, with a note (:func:`temp_base`).

A folder the user chose is used as it is for the logs; what a shell reads and runs (the prelude,
state files, big scripts) stays in a private folder of the default root, checked like it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from typing import BinaryIO

from .clock import now_stamp
from .private import (
    FOLDER_MODE,
    NotPrivate,
    create_unique,
    fallback_folder,
    make_folder,
    private_folder,
    why_swappable,
)

__all__ = ["LogDir", "default_root", "fallback_prefix", "temp_base"]

_log = logging.getLogger("execmagic")


def temp_base() -> tuple[str, str | None]:
    """The folder the default log roots go in, and why it is not the temp folder (``None``: it is).

    The temp folder, unless another user could swap our folders in it or above it (see
    :func:`.private.why_swappable`: a group scratch folder without the sticky bit, as ``TMPDIR`` on many
    clusters): then the checks of :mod:`.private` could be raced, and ``$XDG_RUNTIME_DIR`` (the user's own,
    0700) serves, else ``~/.cache`` (made 0700 when missing)."""
    tmp = tempfile.gettempdir()
    why = why_swappable(tmp)
    if why is None:
        return tmp, None
    cache = os.path.join(os.path.expanduser("~"), ".cache")
    for candidate in (os.environ.get("XDG_RUNTIME_DIR"), cache):
        if not candidate or not os.path.isabs(candidate):
            continue
        if candidate == cache and not os.path.isdir(cache):
            try:
                make_folder(cache)
            except OSError:
                continue
        if os.path.isdir(candidate) and why_swappable(candidate) is None:
            return candidate, (f"temp folder {tmp} refused ({why}: another user could swap our folders there): "
                               f"logs go to {candidate}")
    return tmp, f"temp folder {tmp}: {why}, and no private folder to use instead (XDG_RUNTIME_DIR, ~/.cache)"


def _still_private(path: str) -> bool:
    """Whether ``path`` is, at one look (``lstat``: a link is not followed), what :func:`.private.private_folder`
    leaves a folder it accepts: a folder of ours that only we may use (0700).  Anything else -- missing, another
    mode, a link -- is for :func:`.private.private_folder` to make, close or refuse (four system calls, each
    a moment the kernel's other threads may take the interpreter for, where this is one)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == FOLDER_MODE


def default_root() -> str:
    """``<base>/execmagic-<uid>``: where engines log unless told otherwise (``<base>``: :func:`temp_base`)."""
    return os.path.join(temp_base()[0], f"execmagic-{os.geteuid()}")


def fallback_prefix() -> str:
    """The name start of the private roots made when :func:`default_root` is refused."""
    return f"execmagic-{os.geteuid()}-"


class LogDir:
    """Hands out per-run log files under one folder, checked (or made) at every use.

    ``path=None``: a new folder of this engine's under the default root.  :attr:`notes` collects what
    a caller should tell the user once (a refused root); :meth:`take_notes` hands them over.
    """

    def __init__(self, path: str | None = None) -> None:
        self.chosen = path is not None
        self.root: str | None = None  # the default root (set below): None for a folder the user chose
        self.notes: list[str] = []
        #: The folder the default root is in (see :func:`temp_base`).
        self.base: str | None = None
        self._lock = threading.Lock()
        #: Where what a shell reads goes when the user chose the log folder (made when first needed).
        self._private: LogDir | None = None
        if path is not None:
            path = os.path.abspath(path)  # bash resolves the paths we hand it against the run's cwd, not ours
        else:
            self.base, refused = temp_base()
            self.root = os.path.join(self.base, f"execmagic-{os.geteuid()}")
            if refused is not None:
                _log.warning("execmagic: %s", refused)
                self.notes.append(refused)
            path = self._claim(self._checked_root(), f"{now_stamp()}-{os.getpid()}")
        self.path = path
        self.ensure()

    # -- the folder ---------------------------------------------------------------------------
    def ensure(self) -> str:
        """The log folder, made again if it was cleaned up under us and checked to be ours alone
        (the default root, that is; a folder the user chose is theirs); return it."""
        if self.chosen:
            return make_folder(self.path)
        root, path = self.root, self.path
        assert root is not None
        if _still_private(root) and _still_private(path):  # as every run finds them: one look at each
            return path
        try:
            private_folder(root)
            return private_folder(path)
        except NotPrivate as exc:
            return self._move(root, exc)

    def _checked_root(self) -> str:
        assert self.root is not None
        try:
            return private_folder(self.root)
        except NotPrivate as exc:
            self._refuse(exc)
            self.root = fallback_folder(fallback_prefix(), self.base)
            return self.root

    def _move(self, root: str, refused: NotPrivate) -> str:
        """``root`` (or our folder in it) is no longer ours alone: go on in a private folder of our own."""
        with self._lock:
            if self.root == root:  # else another thread moved already
                self._refuse(refused)
                self.root = fallback_folder(fallback_prefix(), self.base)
                self.path = self._claim(self.root, os.path.basename(self.path))
            return private_folder(self.path)

    def _refuse(self, exc: NotPrivate) -> None:
        note = f"log folder {exc.path} refused ({exc.why}): logs go to a private folder instead"
        _log.warning("execmagic: %s", note)
        self.notes.append(note)

    @staticmethod
    def _claim(root: str, name: str) -> str:
        """A folder of our own in ``root``: ``name``, or ``name-2``… when another engine of this process
        made that one in the same second (runs of both must never share a log's name)."""
        for n in range(1, 10_000):
            path = os.path.join(root, name if n == 1 else f"{name}-{n}")
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            os.chmod(path, 0o700)  # just made, in a folder only we may write: exactly ours, whatever the umask
            return private_folder(path)
        raise FileExistsError(f"no free log folder name under {root}")

    def remove_if_empty(self) -> None:
        """At the engine's end: our folder in the default root goes if it holds no file (runs that printed
        little keep no log, so most kernels leave none), its empty subfolders with it.  Only empty folders
        are removed (``rmdir``, which fails on anything else): a log a notebook points at always stays, and a
        folder the user chose is theirs to keep."""
        with self._lock:
            private = self._private
        if private is not None:
            private.remove_if_empty()
        if self.chosen:
            return
        for folder, _dirs, _files in os.walk(self.path, topdown=False):  # symlinks not followed
            with contextlib.suppress(OSError):
                os.rmdir(folder)

    def take_notes(self) -> tuple[str, ...]:
        """What to tell the user, once."""
        with self._lock:
            notes, self.notes = tuple(self.notes), []
            private = self._private
        return notes + (private.take_notes() if private is not None else ())

    def runtime(self) -> str:
        """The folder for what a shell reads and runs (the session prelude, state files, big scripts).

        In the default location, the log folder (checked to be ours alone at every use).  A folder the
        user chose is theirs, and its parents may be anyone's -- a folder that can be swapped between a
        check and bash reading a path -- so then it is always a private folder of the default root."""
        if not self.chosen:
            return self.ensure()
        with self._lock:
            if self._private is None:
                self._private = LogDir()
            private = self._private
        return private.ensure()

    # -- files ---------------------------------------------------------------------------------
    def opener(self, run_label: str) -> Callable[[str], tuple[str, BinaryIO]]:
        """Opens ``<label>.<stream>.log`` fresh and private (0600) when a recorder first needs it."""
        def open_log(stream: str) -> tuple[str, BinaryIO]:
            path, fd = create_unique(self.ensure(), f"{run_label}.{stream}", ".log")
            return path, os.fdopen(fd, "wb", buffering=0)  # unbuffered: the recorder writes a megabyte at a time

        return open_log
