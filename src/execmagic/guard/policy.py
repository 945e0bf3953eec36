"""Guardrails that are per engine, not per command: allowed directories and the audit log.

The command check lives in :mod:`.check` (its rules in :mod:`.rules`) and the secret handling in
:mod:`.secrets`; their names are re-exported here, so a caller of the guard needs one import.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import stat
import threading
from typing import TYPE_CHECKING, Any

from ..process.clock import now_iso
from ..process.errors import ExecError
from ..process.lazy import lazy_exports
from .check import GUARDS, CommandRefused, Guard, check, find_danger
from .secrets import DEFAULT_ENV_ALLOW, SECRET_NAME, SECRET_VALUE, looks_secret, redact, sanitize_env

if TYPE_CHECKING:
    from .rules import Refusal

__all__ = [
    "DEFAULT_ENV_ALLOW", "GUARDS", "SECRET_NAME", "SECRET_VALUE", "AuditUnavailable", "CommandRefused", "Guard",
    "Policy", "Refusal", "check", "find_danger", "looks_secret", "open_audit_log", "redact", "sanitize_env",
]

__getattr__, __dir__ = lazy_exports(__package__, {"Refusal": "rules"}, globals(), module=__name__)  # as .check's


# -- allowed directories and the audit log ----------------------------------------------------
@dataclasses.dataclass
class Policy:
    """Per-engine guardrails that are not about one command's text.

    ``allowed_roots``: when not empty, runs may only start in (and a session may only ``cd``
    into) these directories and below, compared after resolving symlinks.
    ``audit_log``: a file that gets one JSON line per decision (run, refused, background).
    """

    allowed_roots: tuple[str, ...] = ()
    audit_log: str | None = None
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    #: Audit logs already looked at for being readable by others, and what to tell the user once.
    _looked_at: set[str] = dataclasses.field(default_factory=set, repr=False)
    _notes: list[str] = dataclasses.field(default_factory=list, repr=False)

    def take_notes(self) -> tuple[str, ...]:
        """What to tell the user once (an audit log that others can read)."""
        with self._lock:
            notes, self._notes = tuple(self._notes), []
        return notes

    def outside_roots(self, path: str) -> bool:
        if not self.allowed_roots:
            return False
        real = os.path.realpath(path)
        for root in self.allowed_roots:
            root_real = os.path.realpath(os.path.expanduser(root))
            if real == root_real or real.startswith(root_real.rstrip("/") + "/"):
                return False
        return True

    def audit(self, **record: Any) -> None:
        """Append one JSON line (with the time) and flush it to disk before returning.

        Raises :class:`AuditUnavailable` when the line cannot be written: the callers that
        are about to *start* something refuse to; the ones recording an outcome say so instead.
        """
        if not self.audit_log:
            return
        record = {"time": now_iso(utc=True), **record}
        # bytes that are not UTF-8 (surrogate escapes) are written as \udcXX escapes, never refused
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "backslashreplace")
        with self._lock:
            fd = open_audit_log(self.audit_log)
            if self.audit_log not in self._looked_at:
                self._looked_at.add(self.audit_log)
                mode = stat.S_IMODE(os.fstat(fd).st_mode)
                if mode & 0o044:  # one we made is 0600: this one was there before, and keeps its mode
                    self._notes.append(f"audit log {self.audit_log} is readable by others (mode {mode:04o}): "
                                       f"chmod 600 it to keep the commands it records private")
            try:
                os.write(fd, line)
                os.fsync(fd)
            except OSError as exc:
                raise AuditUnavailable(self.audit_log, exc.strerror or str(exc)) from None
            finally:
                os.close(fd)

    def audit_outcome(self, phase_of: str = "outcome", **record: Any) -> str | None:
        """Record how something ended (or, ``phase_of="intent"``, what starts that may not be refused);
        return a note (never raise) if it could not be recorded."""
        try:
            self.audit(phase=phase_of, **record)
        except AuditUnavailable as exc:
            return f"audit log: this outcome was not recorded ({exc.reason})"
        return None


def open_audit_log(path: str) -> int:
    """Open ``path`` to append, as a descriptor; :class:`AuditUnavailable` if it is not a regular file
    or cannot be opened.  Non-blocking, so a named pipe nobody reads is refused instead of hanging.

    A new audit log is 0600 (it records every command, with what the user typed); one that already
    existed keeps its mode -- the user made it, perhaps for others to read on purpose."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
    except OSError as exc:
        why = "a symlink (the log is written only where it stands)" if exc.errno == errno.ELOOP else None
        raise AuditUnavailable(path, why or exc.strerror or str(exc)) from None
    st = os.fstat(fd)
    why = ("not a regular file" if not stat.S_ISREG(st.st_mode)
           else f"owned by another user (uid {st.st_uid}), who could read it" if st.st_uid != os.geteuid() else None)
    if why is not None:  # another user's file, made ahead in a shared folder, would read every command
        os.close(fd)
        raise AuditUnavailable(path, why)
    return fd


class AuditUnavailable(ExecError):
    """The audit log cannot be written, so nothing is started (an unrecorded command is worse than none)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"not run: the audit log {path!r} cannot be written ({reason})")
