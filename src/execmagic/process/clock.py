"""The wall-clock times the engine writes down, in one place so every record reads alike.

Durations and deadlines use ``time.monotonic()`` (never affected by the clock being
set); only the moments a person or a file reads are wall-clock times, and they come
from here:

- :func:`now_iso` -- when something started or happened, as ISO 8601 with its UTC
  offset (``2024-05-01T14:03:07.123+02:00``): local time a person recognises, yet
  unambiguous in a log read elsewhere (:func:`iso_at`: the same of a moment noted before).
- :func:`now_stamp` -- the same moment as a file-name-safe word
  (``20240501-140307``), in :data:`STAMP_FORMAT`, which is also what reads a stamp
  back (log folders are named with it and pruned by it).
"""

from __future__ import annotations

import datetime
import time

__all__ = ["STAMP_FORMAT", "iso_at", "now_iso", "now_stamp"]

#: ``time.strftime`` format of :func:`now_stamp`: sortable, no characters a file system refuses.
STAMP_FORMAT = "%Y%m%d-%H%M%S"


def now_iso(timespec: str = "milliseconds", *, utc: bool = False) -> str:
    """Now, as ISO 8601 with an offset: local time by default, UTC (``+00:00``) with ``utc=True``.

    ``timespec`` is :meth:`datetime.datetime.isoformat`'s (``"seconds"``, ``"milliseconds"`` …).
    """
    return iso_at(time.time(), timespec, utc=utc)


def iso_at(timestamp: float, timespec: str = "milliseconds", *, utc: bool = False) -> str:
    """:func:`now_iso` of the moment ``timestamp`` (``time.time()``'s): a run notes the moment it starts at
    (a clock read, 0.1 µs) and writes it out once its command runs, while its shell works (5-40 µs)."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc)
    return (moment if utc else moment.astimezone()).isoformat(timespec=timespec)


def now_stamp() -> str:
    """Now, local time, as :data:`STAMP_FORMAT` (``20240501-140307``): for names of files and folders."""
    return time.strftime(STAMP_FORMAT)
