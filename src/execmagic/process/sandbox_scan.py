"""What the sandbox protects inside its writable roots, found on disk once, when it is set.

- the ``.git`` folders of the roots and of repositories a few levels below (:func:`git_dirs`): a hook
  or a ``core.fsmonitor`` line written there would run, unsandboxed, at the user's next ``git``;
- an empty ``.git`` folder put in each root that has none (:func:`git_placeholders`): bound read-only,
  it keeps a ``git init`` inside from making a repository there whose config the user's next plain
  ``git status`` in that folder would obey (git passes over an empty ``.git`` to the repository above);
- the folders between a root and such a ``.git`` (:func:`pinned`): bound onto themselves, they cannot
  be renamed away from the protection;
- the files hard-linked to files outside the roots (:func:`linked_outside`): such a file *is* the
  outside file, which a bind mount cannot tell apart.

Every walk is bounded (a root with a huge tree is not walked for seconds) and never follows symlinks.
The paths here are real (symlinks resolved) and absolute, as bind mounts take them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

__all__ = ["GIT_SCAN_DEPTH", "LINK_SCAN_LIMIT", "git_dirs", "git_placeholders", "linked_outside", "outermost",
           "pinned", "real_path", "walk", "within"]

#: How many folder levels below a writable root are searched for repositories whose ``.git`` stays read-only.
GIT_SCAN_DEPTH = 3
#: At most this many folders are looked into by that search (a root with a huge tree is not walked for seconds).
_GIT_SCAN_LIMIT = 20_000
#: At most this many entries of the roots are looked at for files hard-linked outside them (one ``lstat``
#: each, about a microsecond: a tenth of a second for the whole walk, once, when the sandbox is set).
LINK_SCAN_LIMIT = 100_000


def real_path(path: str) -> str:
    """The path with every symlink resolved: what a bind mounts, and what comparisons must use."""
    return os.path.realpath(path)


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both real, absolute)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def outermost(paths: Iterable[str]) -> tuple[str, ...]:
    """The paths that are not below another of them, in order (a nested root adds nothing)."""
    unique = sorted(set(paths), key=len)
    kept: list[str] = []
    for path in unique:
        if not any(within(path, other) for other in kept):
            kept.append(path)
    return tuple(kept)


def walk(roots: Iterable[str], limit: int, visit: Callable[[os.DirEntry[str]], bool]) -> bool:
    """Call ``visit`` on each entry below ``roots`` (symlinks not followed; a folder is walked into when
    ``visit`` returns true for it), at most ``limit`` entries; whether every entry was looked at.

    A folder that cannot be read, or whose ``visit`` raises :class:`OSError` (an entry gone meanwhile),
    is left for the next."""
    looked = 0
    pending = list(roots)
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    looked += 1
                    if looked > limit:
                        return False
                    if visit(entry) and entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        except OSError:
            continue
    return True


def linked_outside(roots: Iterable[str], limit: int = LINK_SCAN_LIMIT) -> tuple[list[str], bool]:
    """The regular files below ``roots`` with a hard link found nowhere in them (another name for the same
    data, outside the walls: writing through this one writes that file), and whether all was looked at.

    A bind mount cannot tell such a file from the others -- it *is* the outside file -- so it is bound
    read-only by itself.  Made inside, a hard link to an outside file is impossible (it crosses mounts:
    ``EXDEV``); one already there (put by an earlier, unconfined step) is what this finds.  Files whose
    every link is in the roots are left alone; so are ``.git`` folders (read-only already) and symlinks
    (not followed; a symlink pointing outside is refused by the read-only mount it lands on).
    """
    seen: dict[tuple[int, int], list[str]] = {}
    links: dict[tuple[int, int], int] = {}

    def visit(entry: os.DirEntry[str]) -> bool:
        if entry.is_dir(follow_symlinks=False):
            return entry.name != ".git"
        if entry.is_file(follow_symlinks=False):
            st = entry.stat(follow_symlinks=False)
            if st.st_nlink > 1:
                key = (st.st_dev, st.st_ino)
                seen.setdefault(key, []).append(entry.path)
                links[key] = st.st_nlink
        return False

    complete = walk(roots, limit, visit)
    return _outside(seen, links), complete


def _outside(seen: Mapping[tuple[int, int], list[str]], links: Mapping[tuple[int, int], int]) -> list[str]:
    """The paths of the files some of whose links were not found inside."""
    return sorted(path for key, paths in seen.items() if len(paths) < links[key] for path in paths)


def pinned(protected: Iterable[str], roots: Sequence[str]) -> list[str]:
    """The folders between a root and each protected ``.git`` path, shallowest first: bound onto
    themselves (writable, as they were), they become mount points, which cannot be renamed or removed.

    The protection is a mount at the path found when the sandbox was set: renaming a folder that holds
    a nested repository would move the repository away from it (its ``.git`` writable at the next run,
    and moved back after).  The root itself is a mount point already; a ``.git`` below a pinned folder
    can be neither renamed nor removed either (it is a mount point too).  The price: ``mv`` of such a
    folder fails (``EBUSY``), and a ``rename`` out of it crosses mounts (``EXDEV``: ``mv`` copies).
    """
    found: set[str] = set()
    for path in protected:
        root = next((r for r in roots if within(path, r)), None)
        folder = os.path.dirname(path)
        while root is not None and folder != root and within(folder, root):
            found.add(folder)
            folder = os.path.dirname(folder)
    return sorted(found, key=lambda folder: (folder.count("/"), folder))


def git_placeholders(roots: Iterable[str]) -> list[str]:
    """Make an empty ``.git`` folder in each root that has no ``.git`` entry at all; return those made.

    A root with no repository of its own (a notebook folder whose repository is one level up, or none)
    would let a sandboxed ``git init . && git config core.fsmonitor CMD`` make one, and the user's next
    plain ``git status`` there would run CMD unconfined.  Kept read-only (found by :func:`git_dirs` and
    bound like any ``.git``), the empty folder takes that name for good: ``git init`` fails inside, and
    outside git passes over an empty ``.git`` (no ``HEAD``) to the repository above, as if it were not
    there.  It stays when the sandbox is gone: harmless, and a ``git init`` of the user's fills it.
    One that cannot be made (a root we may not write) is skipped: the sandbox's writes are ours, and
    cannot make one either.
    """
    made = []
    for root in roots:
        path = os.path.join(root, ".git")
        try:
            os.mkdir(path, 0o755)
        except OSError:  # there already (a repository's, or a file git_dirs reads), or not ours to make
            continue
        made.append(path)
    return made


def git_dirs(roots: Iterable[str], depth: int = GIT_SCAN_DEPTH) -> Iterator[str]:
    """The ``.git`` folders (and ``.git`` files with what they point to) in ``roots`` and up to ``depth``
    levels below, that lie inside a root (outside them everything is read-only already)."""
    roots = tuple(roots)
    for root in roots:
        for entry in _git_entries(root, depth):
            for path in _git_paths(entry):
                if any(within(path, r) for r in roots):
                    yield path


def _git_entries(root: str, depth: int) -> Iterator[str]:
    """``.git`` entries found breadth-first below ``root`` (symlinks not followed, at most
    :data:`_GIT_SCAN_LIMIT` folders looked into)."""
    level = [root]
    looked = 0
    for _ in range(depth + 1):
        below: list[str] = []
        for folder in level:
            looked += 1
            if looked > _GIT_SCAN_LIMIT:
                return
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name == ".git":
                            yield entry.path
                        elif entry.is_dir(follow_symlinks=False):
                            below.append(entry.path)
            except OSError:
                continue
        level = below


def _git_paths(entry: str) -> list[str]:
    """What to keep read-only for one ``.git`` entry: the folder; or the ``gitdir:`` file, the folder it
    names and that folder's ``commondir`` (a worktree's hooks and config live in the main repository)."""
    if os.path.isdir(entry) and not os.path.islink(entry):
        return [real_path(entry)]
    target = _read_pointer(entry, "gitdir:")
    if target is None:
        return [entry] if os.path.isfile(entry) else []
    paths = [entry, target]
    common = _read_pointer(os.path.join(target, "commondir"), "")
    if common is not None:
        paths.append(common)
    return paths


def _read_pointer(path: str, prefix: str) -> str | None:
    """The existing folder a one-line pointer file names (relative to the file's folder), or ``None``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            line = fh.readline(4096).strip()
    except OSError:
        return None
    if not line.startswith(prefix):
        return None
    target = real_path(os.path.join(os.path.dirname(path), line[len(prefix):].strip()))
    return target if os.path.isdir(target) else None
