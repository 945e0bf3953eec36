"""What a sandboxed session may use, and the defaults, apart from the walls that apply them
(:mod:`.sandbox_session`): the settings read them when the extension loads, long before any sandbox starts,
and must not pull in what starting one needs."""

from __future__ import annotations

import os

from .records import record

__all__ = ["DEFAULT_MEMORY", "DEFAULT_PROCESSES", "DEFAULT_TMP_BYTES", "Limits"]

#: A session's ``/tmp``: 1 GiB.  It is memory that cannot be swapped out; half the machine's (a tmpfs's
#: own default) let three shells take gigabytes.  A setting raises it for work that needs more.
DEFAULT_TMP_BYTES = 1 << 30
#: A session's processes (and threads): a build's ``make -j``, a pool of workers and a browser fit many
#: times over; a fork bomb stops there, far below what would starve the machine (tens of thousands).
DEFAULT_PROCESSES = 1024
#: A session's memory, where a cgroup can bound it: half the machine's, so that the kernel and the rest of the
#: machine keep the other half whatever the session does (its /tmp is counted in it).
DEFAULT_MEMORY = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2

@record
class Limits:
    """What a sandboxed session may use (``0``: no limit of that kind)."""

    #: Bytes of the session's ``/tmp``.
    tmp_bytes: int = DEFAULT_TMP_BYTES
    #: Processes and threads of the session's runs together.
    processes: int = DEFAULT_PROCESSES
    #: Bytes of memory of the session's runs together (and of its ``/tmp``), where a cgroup can be made.
    memory: int = DEFAULT_MEMORY
