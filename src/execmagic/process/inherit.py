"""What a process started now by the calling thread would inherit, besides its cwd and environment.

A standby shell (:mod:`.standby`) is started before it is needed; a run may use it only if a cold
start made now would inherit exactly what the standby did.  Python can change any of it in between,
and Linux keeps most of it per thread (a standby is started by a worker thread, runs are made by
the caller's): so it is read from ``/proc/thread-self`` and the calling thread's own system calls.

Compared, all cheaply (one read of ``/proc/thread-self/status`` covers most of it):

- from ``status``: umask; user and group ids (real, effective, saved, filesystem) and supplementary
  groups; blocked and ignored signals; the capability sets (inheritable, permitted, effective,
  bounding, ambient); no-new-privs; seccomp mode and filters; speculation controls; CPU and memory
  node affinity; transparent huge pages switched off (``THP_enabled``);
- the namespaces a child is made in (``/proc/thread-self/ns``: cgroup, ipc, mnt, net, user, uts, and
  the pid and time namespaces *for children*), the cgroup it is made in, and the root directory
  (``os.chroot``);
- niceness, scheduling policy and real-time priority, I/O priority (the ``ioprio_get`` system call,
  on the architectures whose number is known here), timer slack, personality and secure bits
  (``prctl``), ``oom_score_adj``, resource limits.

Not compared (nothing cheap tells they changed; none is changed by common Python code): the memory
policy (``set_mempolicy``), the security module's label (``/proc/thread-self/attr``), a Landlock
domain, memory-deny-write-execute (``PR_SET_MDWE``), ``coredump_filter``, keyrings, the audit login
uid.  Where a file here cannot be read (a process that dropped root is no longer dumpable, and its
``/proc/thread-self/ns`` is root's), :func:`inherited` raises ``OSError``: no standby then.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import re
import resource
from typing import NamedTuple

__all__ = ["Inherited", "inherited"]

#: Resource limits a child inherits (``resource.setrlimit`` from Python changes them for the next run).
_RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
#: The lines of ``/proc/thread-self/status`` that a child inherits and that do not change by themselves.
#: (Anchored on the newline before them: about half the time of a multi-line ``^``.)
_STATUS_LINES = re.compile(
    rb"\n((?:Umask|Uid|Gid|Groups|THP_enabled|SigBlk|SigIgn|Cap(?:Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp"
    rb"|Seccomp_filters|Speculation\w*|Cpus_allowed|Mems_allowed):[^\n]*)")
#: The namespaces a child is made in (``pid`` and ``time`` are the caller's own; a child gets the ``*_for_children``).
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid_for_children", "time_for_children", "user", "uts")
#: ``ioprio_get``'s system call number on this machine (it has no libc wrapper; ``None``: not known here).
_IOPRIO_GET = {"x86_64": 252, "i386": 290, "i686": 290, "aarch64": 31, "riscv64": 31, "loongarch64": 31,
               "armv7l": 315, "ppc64le": 274, "ppc64": 274, "s390x": 283}.get(platform.machine())
_IOPRIO_WHO_PROCESS = 1
_PR_GET_SECUREBITS = 27
_PR_GET_TIMERSLACK = 30
_PERSONALITY_QUERY = 0xFFFFFFFF


class Inherited(NamedTuple):
    """See :func:`inherited`."""

    status: tuple[bytes, ...]  # the inherited lines of /proc/thread-self/status, as the kernel words them
    ignored: int               # the ignored signals' mask
    niceness: int
    limits: tuple[tuple[int, int], ...]
    namespaces: tuple[str, ...]
    scheduling: tuple[int | None, ...]  # policy, real-time priority, I/O priority, timer slack, personality, securebits
    oom_score_adj: bytes
    cgroup: bytes
    root: tuple[int, int]      # the root directory's device and inode


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _read(path: str) -> bytes:
    """A small /proc file in one read (``os.open``: about two thirds of the cost of ``open()``)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 16384)
    finally:
        os.close(fd)


def _namespaces() -> tuple[str, ...]:
    fd = os.open("/proc/thread-self/ns", os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:  # every kind there (the usual case), read without a call of ours around each
            return tuple([os.readlink(name, dir_fd=fd) for name in _NAMESPACES])
        except FileNotFoundError:
            return tuple([_namespace(name, fd) for name in _NAMESPACES])
    finally:
        os.close(fd)


def _namespace(name: str, dir_fd: int) -> str:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except FileNotFoundError:  # a kernel without this kind of namespace
        return ""


def _scheduling() -> tuple[int | None, ...]:
    libc = _libc()
    ioprio = libc.syscall(_IOPRIO_GET, _IOPRIO_WHO_PROCESS, 0) if _IOPRIO_GET is not None else None
    return (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority, ioprio,
            libc.prctl(_PR_GET_TIMERSLACK, 0, 0, 0, 0), libc.personality(_PERSONALITY_QUERY),
            libc.prctl(_PR_GET_SECUREBITS, 0, 0, 0, 0))


def inherited() -> Inherited:
    """What a process started now by the calling thread inherits besides its cwd and environment (see the
    module's docstring).  A standby started before Python changed one of them (``os.umask``,
    ``resource.setrlimit``, ``os.setgroups``, ``unshare``...) is stale."""
    lines = _STATUS_LINES.findall(_read("/proc/thread-self/status"))
    ignored = 0
    for i, line in enumerate(lines):  # on its own: a standby may have SIGINT put back at its default
        if line.startswith(b"SigIgn:"):
            ignored = int(line[7:], 16)
            del lines[i]
            break
    root = os.stat("/")
    return Inherited(tuple(lines), ignored,
                     os.getpriority(os.PRIO_PROCESS, 0), tuple(resource.getrlimit(limit) for limit in _RLIMITS),
                     _namespaces(), _scheduling(), _read("/proc/self/oom_score_adj"),
                     _read("/proc/thread-self/cgroup"), (root.st_dev, root.st_ino))
