"""A copy of ``os.environ`` as text, decoded once per change of its bytes (every run starts from one)."""

from __future__ import annotations

import os

__all__ = ["environ_copy"]

#: The last ``os.environ`` seen, as bytes and as text (see :func:`environ_copy`).
_environ_seen: tuple[dict[bytes, bytes], dict[str, str]] | None = None


def environ_copy() -> dict[str, str]:
    """``dict(os.environ)``, decoded once per change: ``os.environ`` holds bytes and decodes each name and
    value as it is read, every time -- fifty of each at every run, where they are the same as the last run's
    nearly always.  Its bytes are copied (one C-level copy) and compared with the last ones'; the text is
    decoded again only when they differ, from those very bytes (another thread may be setting one meanwhile)."""
    global _environ_seen
    data = getattr(os.environ, "_data", None)
    if type(data) is not dict:  # not CPython's os.environ: as it is
        return dict(os.environ)
    raw = data.copy()
    seen = _environ_seen
    if seen is None or seen[0] != raw:
        seen = _environ_seen = (raw, {os.fsdecode(name): os.fsdecode(value) for name, value in raw.items()})
    return dict(seen[1])
