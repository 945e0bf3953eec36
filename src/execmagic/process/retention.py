"""Bounded disk use: the log folders of owners that are gone do not pile up in the temp dir.

Each engine logs into ``<tmp>/execmagic-<uid>/<YYYYmmdd-HHMMSS>-<pid>/`` (or, when that root
was refused as not ours alone, into a private ``<tmp>/execmagic-<uid>-XXXXXXXX/``; see
:mod:`.logdir`).  When a new one starts, the folders of owners that are no longer running are removed once they are
older than the retention period, and -- oldest first -- while all folders together are
over the quota.  A live owner's folder is never touched: its logs are what its
notebook's outputs point at.  Only folders named the way engines name them are looked at, and
only in roots that are ours alone: a root another user could write is never pruned (removing
files there could be turned against us), and a private root left empty goes too.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time

from .clock import STAMP_FORMAT
from .logdir import default_root, fallback_prefix, temp_base
from .private import why_not_private
from .records import record

__all__ = ["DEFAULT_QUOTA", "DEFAULT_RETENTION_DAYS", "PruneReport", "log_roots", "prune_log_folders",
           "prune_log_roots", "running_since"]

#: Days a gone owner's logs are kept: long enough to look back over a week of work.
DEFAULT_RETENTION_DAYS = 7.0
#: Bytes all log folders may take together before the oldest gone owners' folders go.
DEFAULT_QUOTA = 2 * 1024**3
_FOLDER = re.compile(r"(?P<stamp>\d{8}-\d{6})-(?P<pid>\d+)(?:-\d+)?")


@record
class PruneReport:
    """What a prune removed (paths) and how many bytes that freed."""

    removed: tuple[str, ...] = ()
    freed: int = 0


def running_since(pid: int, when: float) -> bool:
    """Whether process ``pid`` runs and already ran at ``when`` (a timestamp): a pid reused by a
    process started later is not the one that wrote a file then, and a zombie has ended."""
    started = _started(pid)
    return started is not None and started <= when + 1


def _started(pid: int) -> float | None:
    """When process ``pid`` started (``None``: it does not run, or has ended and is a zombie)."""
    import psutil  # here: the engine's module imports this one, and only a prune on its thread asks

    try:
        proc = psutil.Process(pid)
        started = proc.create_time()
        return None if proc.status() == psutil.STATUS_ZOMBIE else started
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


class _Owners:
    """Whether the process that created a folder still runs, each pid and each stamp looked up once: the
    folders of one test run share a handful of pids and seconds, and a look costs a process's status and
    a reading of the time zone (7,660 folders took 0.5 s, on a thread of every new engine)."""

    def __init__(self) -> None:
        self._started: dict[int, float | None] = {}
        self._stamped: dict[str, float | None] = {}

    def stamped(self, stamp: str) -> float | None:
        """When a folder was made, from its name (``None``: not a time)."""
        if stamp not in self._stamped:
            try:
                self._stamped[stamp] = time.mktime(time.strptime(stamp, STAMP_FORMAT))
            except ValueError:
                self._stamped[stamp] = None
        return self._stamped[stamp]

    def running(self, stamp: str, pid: int) -> bool:
        stamped = self.stamped(stamp)
        if stamped is None:
            return False
        if pid not in self._started:
            self._started[pid] = _started(pid)
        started = self._started[pid]
        return started is not None and started <= stamped + 1


def _size(path: str) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def prune_log_folders(root: str, *, keep: str = "", retention_days: float = DEFAULT_RETENTION_DAYS,
                      quota: int = DEFAULT_QUOTA, now: float | None = None,
                      since: float | None = None) -> PruneReport:
    """Remove gone owners' log folders under ``root`` that are past ``retention_days``, then the
    oldest of them while everything under ``root`` is over ``quota`` bytes.  ``keep`` is never removed,
    nor, with ``since`` (a timestamp), a folder made before it: a test run tidies what it made alone.

    Never raises for the file system: a folder that cannot be read or removed is left as it is.
    """
    now = time.time() if now is None else now
    try:
        entries = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False) and _FOLDER.fullmatch(e.name)]
    except OSError:
        return PruneReport()
    folders = []  # (mtime, size, path, removable)
    owners = _Owners()
    for entry in entries:
        match = _FOLDER.fullmatch(entry.name)
        assert match is not None
        made = owners.stamped(match["stamp"])
        if since is not None and (made is None or made < since - 1):  # stamps have whole seconds
            continue
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        removable = entry.path != keep and not owners.running(match["stamp"], int(match["pid"]))
        folders.append((mtime, _size(entry.path), entry.path, removable))
    removed: list[str] = []
    freed = 0
    total = sum(size for _, size, _, _ in folders)
    for mtime, size, path, removable in sorted(folders):
        expired = now - mtime > retention_days * 86400
        if removable and (expired or total > quota):
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.exists(path):
                removed.append(path)
                freed += size
                total -= size
    return PruneReport(tuple(removed), freed)


def log_roots(tmp: str | None = None) -> list[str]:
    """The roots engines log into that are ours alone: the default one, and the private ones made
    when it was refused."""
    tmp = temp_base()[0] if tmp is None else tmp
    candidates = [os.path.join(tmp, os.path.basename(default_root()))]
    with contextlib.suppress(OSError):
        candidates += sorted(e.path for e in os.scandir(tmp)
                             if e.name.startswith(fallback_prefix()) and e.is_dir(follow_symlinks=False))
    return [root for root in candidates if why_not_private(root) is None]


def prune_log_roots(*, keep: str = "", retention_days: float = DEFAULT_RETENTION_DAYS, quota: int = DEFAULT_QUOTA,
                    tmp: str | None = None, now: float | None = None, since: float | None = None) -> PruneReport:
    """:func:`prune_log_folders` in every root of :func:`log_roots`; a private root left empty is removed."""
    now = time.time() if now is None else now
    removed: list[str] = []
    freed = 0
    for root in log_roots(tmp):
        try:
            young = now - os.stat(root).st_mtime < 60  # an engine may have just made it, its folder not yet in it
        except OSError:
            continue
        report = prune_log_folders(root, keep=keep, retention_days=retention_days, quota=quota, now=now,
                                   since=since)
        removed += report.removed
        freed += report.freed
        if os.path.basename(root).startswith(fallback_prefix()) and root != os.path.dirname(keep) and not young:
            try:
                os.rmdir(root)  # only when empty
            except OSError:
                continue
            removed.append(root)
    return PruneReport(tuple(removed), freed)
