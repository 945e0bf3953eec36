"""Private folders and files: what execmagic writes, nobody else reads, and nobody else plants.

The temp folder is shared by every user of a machine, so a name made there is predictable and
can be taken first: another user who makes ``<tmp>/execmagic-<uid>`` before us (mode 777) would
read every log, and could swap in the prelude that every bash sources -- running code as us.  As
ssh-agent, tmux and Jupyter's runtime folder do, every folder is created 0700 and *checked* before
use -- a real folder, not a symlink, owned by us, no bits for group or others -- and every file is
created fresh (``O_EXCL | O_NOFOLLOW``) with mode 0600, whatever the umask.  A folder that fails
the check is refused, never repaired (it may be someone else's): the caller picks another.

A folder the user chose (a ``log_dir``) is theirs: it is created 0700 when missing, used as it is
when it exists, and what we write into it is 0600 all the same.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import tempfile
from collections.abc import Callable

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "NotPrivate",
    "create_file",
    "create_unique",
    "fallback_folder",
    "make_folder",
    "open_own_file",
    "private_folder",
    "sealed_memory_file",
    "why_not_private",
    "why_swappable",
    "write_file",
]

#: Folders we make: only we may list, enter or change them.
FOLDER_MODE = 0o700
#: Files we make: only we may read or write them (logs hold whatever a command printed, tokens included).
FILE_MODE = 0o600
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CREATE = os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class NotPrivate(OSError):
    """A folder that is not ours alone (``why``: a symlink, another owner, open to others)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(errno.EPERM, why, path)
        self.path = path
        self.why = why


def _why_not_private(st: os.stat_result) -> str | None:
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    if stat.S_IMODE(st.st_mode) & 0o077:
        return f"others may use it (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _why_unopenable(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a symlink or not a folder"
    return os.strerror(exc.errno) if exc.errno else str(exc)


def why_not_private(path: str) -> str | None:
    """Why the existing folder ``path`` is not ours alone (``None``: it is); nothing is created."""
    try:
        fd = os.open(path, _OPEN_DIR)
    except OSError as exc:
        return _why_unopenable(exc)
    try:
        return _why_not_private(os.fstat(fd))
    finally:
        os.close(fd)


def _mkdir_missing(path: str) -> bool:
    """Create ``path`` and any missing parents, each 0700; whether ``path`` itself was made now."""
    try:
        os.mkdir(path, FOLDER_MODE)
        return True
    except FileExistsError:
        return False
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        if parent == path or os.path.isdir(parent):  # the parent is there: the name is not to be had (/proc)
            raise
        _mkdir_missing(parent)
    try:
        os.mkdir(path, FOLDER_MODE)
        return True
    except FileExistsError:
        return False


def private_folder(path: str) -> str:
    """Make ``path`` (0700) or check an existing one; return it.  :class:`NotPrivate` when it is a
    symlink, not ours, or writable by group or others -- then nothing in it may be trusted or written.
    One of ours that only others could read (0755) is closed to 0700: nothing can have been planted."""
    made = _mkdir_missing(path)
    try:
        fd = os.open(path, _OPEN_DIR)
    except OSError as exc:  # O_NOFOLLOW's ELOOP for a symlink, ENOTDIR for a file, EACCES for another's 0700
        raise NotPrivate(path, _why_unopenable(exc)) from None
    try:
        st = os.fstat(fd)
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid == os.geteuid() and mode != FOLDER_MODE and (made or not mode & 0o022):
            # ours, and nobody else could ever write in it (made just now under a odd umask, or by an
            # older version, 0755): nothing can have been planted, so it is made exactly 0700
            os.fchmod(fd, FOLDER_MODE)
            st = os.fstat(fd)
        why = _why_not_private(st)
    finally:
        os.close(fd)
    if why is not None:
        raise NotPrivate(path, why)
    return path


def make_folder(path: str) -> str:
    """A folder the user named: made 0700 (parents too) when missing, taken as it is when it exists."""
    _mkdir_missing(path)
    if not os.path.isdir(path):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    return path


def fallback_folder(prefix: str, folder: str | None = None) -> str:
    """A new private folder in ``folder`` (default: the temp folder), with an unguessable name (``mkdtemp``:
    0700, ours)."""
    return tempfile.mkdtemp(prefix=prefix, dir=folder)


def why_swappable(path: str) -> str | None:
    """Why another user could swap what lies in ``path`` or any folder above it (``None``: nobody can).

    A folder that others may write lets them rename any entry in it -- our folder too, whatever its own
    mode -- and put theirs in its place, between a check of ours and a later open by path; unless it has
    the sticky bit (``/tmp``: only an entry's owner may rename it).  A group scratch folder (``0775``, or
    ``0777`` without ``t``) is such a folder; so is one another user owns, who may change its mode."""
    folder = os.path.realpath(path)
    while True:
        try:
            st = os.stat(folder)
        except OSError as exc:
            return f"{folder} cannot be looked at ({_why_unopenable(exc)})"
        if st.st_uid not in (0, os.geteuid()):
            return f"{folder} belongs to another user (uid {st.st_uid})"
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return f"others may write in {folder} and it has no sticky bit"
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def create_file(path: str, flags: int = os.O_WRONLY) -> int:
    """Create ``path`` fresh, mode 0600, and return a descriptor; ``FileExistsError`` when anything
    (a file, a symlink) is already there -- what already existed is never written through or trusted."""
    fd = os.open(path, flags | _CREATE, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # the umask may have taken our own read bit
    except OSError:
        os.close(fd)
        raise
    return fd


def create_unique(folder: str, stem: str, suffix: str, flags: int = os.O_WRONLY) -> tuple[str, int]:
    """:func:`create_file` at ``folder/stem+suffix``, or at ``stem-2+suffix``… when that name is taken
    (two engines logging into one folder the user chose), then at names nobody can guess -- so names
    taken on purpose, all of them, cannot keep a log from being written: ``(path, descriptor)``."""
    for n in range(1, 20):
        tag = "" if n == 1 else f"-{n}" if n <= 4 else f"-{secrets.token_hex(6)}"
        path = os.path.join(folder, f"{stem}{tag}{suffix}")
        try:
            return path, create_file(path, flags)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free file name", os.path.join(folder, stem + suffix))


def open_own_file(path: str) -> int:
    """Open a file we wrote, to read it: never through a symlink, never blocking on a fifo put in its
    place, and only a regular file of ours (``OSError`` otherwise) -- what another user swapped in, in a
    folder they may write, is neither read as ours nor able to hang the reader."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        raise PermissionError(errno.EPERM, "not a file of ours", path)
    return fd


def write_file(path: str, data: bytes, *, unique: bool = False) -> str:
    """Write ``data`` to a new private file at ``path`` (see :func:`create_file`; ``unique``: or beside
    it, see :func:`create_unique`); return the path written."""
    if unique:
        stem, suffix = os.path.splitext(path)
        path, fd = create_unique(os.path.dirname(path), os.path.basename(stem), suffix)
    else:
        fd = create_file(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    return path


def sealed_memory_file(name: str, content: Callable[[int], bytes]) -> int | None:
    """A memory file (``memfd``) holding ``content(fd)`` (what it holds may name its own descriptor: a shell
    that reads it closes it then), sealed so that nobody -- a process it is handed to
    included -- can ever write, grow or shrink it; its descriptor (close-on-exec), or ``None`` where the
    system has none (not Linux, or a kernel without sealing: the caller writes a private file instead).

    A file a shell reads by ``/dev/fd/N`` from such a descriptor has no path: nothing in a folder to
    check, to swap between the check and the read, or to leave behind."""
    create = getattr(os, "memfd_create", None)
    if create is None:
        return None
    try:
        fd = create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError:
        return None
    try:
        view = memoryview(content(fd))
        while view:
            view = view[os.write(fd, view):]
        seals = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    except OSError:
        os.close(fd)
        return None
    return fd
