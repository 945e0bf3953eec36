"""Guardrails that are per engine, not per command: allowed directories and the audit log.

The command check lives in :mod:`.check` (its rules in :mod:`.rules`) and the secret handling in
:mod:`.secrets`; their names are re-exported here, where callers have always found them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from typing import Any

from ..process.errors import ExecError
from ..process.clock import now_iso
from .check import GUARDS, CommandRefused, Guard, Refusal, check, find_danger
from .secrets import DEFAULT_ENV_ALLOW, SECRET_NAME, SECRET_VALUE, looks_secret, redact, sanitize_env

__all__ = [
    "DEFAULT_ENV_ALLOW", "GUARDS", "SECRET_NAME", "SECRET_VALUE", "AuditUnavailable", "CommandRefused", "Guard",
    "Policy", "Refusal", "check", "find_danger", "looks_secret", "redact", "sanitize_env",
]


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
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            with self._lock, open(self.audit_log, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise AuditUnavailable(self.audit_log, exc.strerror or str(exc)) from None

    def audit_outcome(self, phase_of: str = "outcome", **record: Any) -> str | None:
        """Record how something ended (or, ``phase_of="intent"``, what starts that may not be refused);
        return a note (never raise) if it could not be recorded."""
        try:
            self.audit(phase=phase_of, **record)
        except AuditUnavailable as exc:
            return f"audit log: this outcome was not recorded ({exc.reason})"
        return None


class AuditUnavailable(ExecError):
    """The audit log cannot be written, so nothing is started (an unrecorded command is worse than none)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"not run: the audit log {path!r} cannot be written ({reason})")
