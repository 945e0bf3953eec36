"""What the sandboxed runs of one session share: a private ``/tmp`` of a bounded size, kept from one run to
the next, and a bound on their number of processes.

Each run starts its own bubblewrap, so a ``/tmp`` bwrap makes (a tmpfs) would be new at every run -- an
``echo x > /tmp/plan`` would be gone at the next call -- and a host folder bound there instead has no size
but the disk's.  So a *holder* is started once per session: a small process, outside the walls, that makes
a user namespace and a mount namespace of its own (its mounts are slaves of the host's: new host mounts
show, nothing of ours leaks out) and mounts there a tmpfs of :attr:`Limits.tmp_bytes` over an empty private
folder of ours.  Every run enters those two namespaces (``nsenter``, the holder's by its ``/proc`` entry)
before its bwrap starts; bwrap, copying the mount namespace it starts in, binds that tmpfs at ``/tmp``.
The holder waits on a pipe from this process: when the engine closes, or this process dies, it ends, and
the tmpfs goes with the last process inside.  A full ``/tmp`` fails a write with ``ENOSPC``: the run ends
with its own error, and :meth:`SessionWalls.tmp_full` lets the caller say why in one line.

Processes: since Linux 5.14 ``RLIMIT_NPROC`` counts a user's processes in each user namespace and the ones
below it, checked against the limit its creator had.  The holder makes two namespaces, the outer one with
its own limit unchanged (so nothing of the user's outside counts), the inner one -- the one runs enter --
after lowering its limit to :attr:`Limits.processes`: every process of every run of the session is counted
together against it, a fork bomb's ``fork`` fails with ``EAGAIN`` there, and nothing outside is touched.
The kernel exempts uid 0 from that limit (a kernel running as root), and older kernels count a user's
processes machine-wide.  Where a cgroup of the session's own can be made (:mod:`.sandbox_cgroup`: a root
kernel's, or cgroup v2 delegated to the user) it bounds the processes too, and the memory (:attr:`Limits.memory`,
the ``/tmp`` counted in it); a run enters it first.  What cannot be limited is "not limited", and
:meth:`SessionWalls.describe` says why, in the sandbox's one line.  A dead engine's holder removes the
session's folder and cgroups itself, at the end of its pipe.

Nothing of a session's environment reaches the holder or ``nsenter`` (they run outside the walls): both
start with :data:`HOST_ENV`; the holder is this interpreter in isolated mode (``-I -S``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import secrets
import shutil
import subprocess
import sys
import threading

from .private import fallback_folder
from .sandbox_cgroup import SessionCgroup, make_cgroup
from .sandbox_count import ProcessWatch, session_processes, user_namespace
from .sandbox_keep import KeptNamespaces
from .sandbox_limits import DEFAULT_MEMORY, DEFAULT_PROCESSES, DEFAULT_TMP_BYTES, Limits
from .system import readable

__all__ = ["DEFAULT_MEMORY", "DEFAULT_PROCESSES", "DEFAULT_TMP_BYTES", "HOST_ENV", "Limits", "SessionWalls",
           "WallsUnavailable", "start_walls"]

#: Seconds the holder may take to make its namespaces (a loaded machine starts Python slowly).
_START_TIMEOUT = 10.0
#: Seconds a closing engine waits for its holder to tidy up and end (what the session ran is stopped by then).
_CLOSE_WAIT = 5.0
#: The whole environment of what runs outside the walls (bwrap, the holder, what enters it), on the host
#: before any wall exists.  Nothing of a run's environment: a sandboxed command can ``export`` anything into
#: its session, and the loader and interpreter read many variables as code or as where to find it
#: (``LD_PRELOAD``, ``LD_AUDIT``, ``LD_LIBRARY_PATH``, ``GCONV_PATH``, ``GLIBC_TUNABLES``, ``MALLOC_*``,
#: ``LOCPATH``, ``BASH_ENV``, ``PYTHON*``...): a list of those would miss the next one, so none passes (as
#: Flatpak after CVE-2021-21261).
HOST_ENV = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
#: Where ``nsenter`` is looked for: folders only an administrator writes in (never a session's PATH).
_SYSTEM_DIRS = "/usr/bin:/bin:/usr/sbin:/sbin"

# The holder, run by this interpreter with -I -S: its first line on stdin (not its argv, which every user reads
# in ps) is the process limit (0: none), the tmpfs's bytes, its folder, whether to make user namespaces.  It
# says "." when ready, or "!" and why, then reads the session's cgroup folders until EOF (the engine closed,
# or this process died), and then removes them and its folder (a cgroup that still holds a process being
# stopped is tried again for 20 s).
_HOLDER = r"""
import ctypes, os, resource, sys, time
libc = ctypes.CDLL(None, use_errno=True)
def check(rc, what):
    if rc != 0:
        sys.stdout.write("!" + what + ": " + os.strerror(ctypes.get_errno()) + "\n"); sys.stdout.flush(); sys.exit(1)
def userns():
    uid, gid = os.geteuid(), os.getegid()
    check(libc.unshare(0x10000000), "cannot make a user namespace")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open("/proc/self/" + name, "w") as fh:
            fh.write(text)
words = sys.stdin.readline().rstrip("\n").split("\0")
processes, size, folder, use_userns = int(words[0]), int(words[1]), words[2], words[3] == "1"
if use_userns:
    userns()
    if processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    userns()
check(libc.unshare(0x20000), "cannot make a mount namespace")
check(libc.mount(b"none", b"/", None, 0x4000 | (1 << 19), None), "cannot make mounts private")
check(libc.mount(b"tmpfs", folder.encode(), b"tmpfs", 2 | 4, f"size={size},mode=1777".encode()),
      "cannot mount a tmpfs")
sys.stdout.write(".\n"); sys.stdout.flush()
cgroups = [line for line in sys.stdin.read().split("\n") if line]
libc.umount2(folder.encode(), 2)
for path in [folder, *cgroups]:
    for _ in range(100):
        try:
            os.rmdir(path)
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.2)
"""


def _kernel_counts_per_namespace() -> bool:
    """Whether this kernel counts ``RLIMIT_NPROC`` per user namespace (Linux 5.14 and later)."""
    try:
        major, minor = (int(part) for part in platform.release().split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (5, 14)


def _format_bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


class SessionWalls:
    """A running holder: its namespaces, which every run of the session enters, and what is limited."""

    def __init__(self, holder: subprocess.Popen[bytes], folder: str, nsenter: str, userns: bool,
                 limits: Limits, processes_limited: bool, why_processes: str) -> None:
        #: The session's cgroup, when one could be made (:meth:`add_cgroup`), and why not.
        self.cgroup: SessionCgroup | None = None
        self._why_memory = "no cgroup was asked for"
        self._seen = (0, 0)
        self.holder = holder
        #: The host folder the tmpfs covers (in the holder's mount namespace only): bound at ``/tmp``.
        self.folder = folder
        self.limits = limits
        self.userns = userns
        self._nsenter = nsenter
        self.processes_limited = processes_limited
        self._why_processes = why_processes
        self._lock = threading.Lock()
        #: The namespaces of the session's sandboxed standbys, held past their run (see :mod:`.sandbox_keep`).
        self.kept = KeptNamespaces()

    def entry(self) -> tuple[str, ...]:
        """The argv that enters the holder's namespaces, before bwrap's (which follows it)."""
        pid = self.holder.pid
        users = (f"--user=/proc/{pid}/ns/user",) if self.userns else ()
        moved = self.cgroup.entry() if self.cgroup is not None else ()
        # --wd=.: entering a mount namespace moves to its root; the folder the run was started in is opened
        # first and gone back to (bwrap's own cwd is the run's: what a standby's fit is checked by)
        return (*moved, self._nsenter, *users, f"--mount=/proc/{pid}/ns/mnt", "--wd=.", "--preserve-credentials",
                "--")

    def add_cgroup(self, name: str) -> None:
        """Make the session's cgroup (see :mod:`.sandbox_cgroup`), or keep why there is none."""
        memory = self.limits.memory
        self.cgroup, why = make_cgroup(name, memory=memory, processes=self.limits.processes)
        if self.cgroup is not None:
            self.processes_limited = self.processes_limited or bool(self.limits.processes)
            assert self.holder.stdin is not None
            with contextlib.suppress(OSError):  # the holder removes them once this process is gone
                self.holder.stdin.write("".join(f"{f}\n" for f in self.cgroup.folders).encode())
                self.holder.stdin.flush()
        elif memory:
            self._why_memory = why
            if not self.processes_limited and self.limits.processes:
                self._why_processes += f"; {why}"

    def describe(self) -> tuple[str, str]:
        """What the sandbox's one line says of the ``/tmp`` and of the limits (what is not limited says why)."""
        tmp = f"a private /tmp of {_format_bytes(self.limits.tmp_bytes)} kept for the session"
        processes = (f"at most {self.limits.processes} processes" if self.processes_limited
                     else f"processes not limited ({self._why_processes})")
        cgroup = self.cgroup
        memory = (f"memory at most {_format_bytes(cgroup.memory)}" if cgroup is not None and cgroup.memory
                  else f"memory not limited ({self._why_memory})")
        return tmp, f"{processes}; {memory}"

    def process_watch(self) -> ProcessWatch | None:
        """What a run of the session is told its leader with now and then, to be stopped when it holds the
        session at its process limit (see :mod:`.sandbox_count`); ``None`` where processes are not limited."""
        if not self.processes_limited or not self.limits.processes:
            return None
        cgroup = self.cgroup
        if cgroup is not None:
            return ProcessWatch(self.limits.processes, cgroup.tasks)
        session_ns = user_namespace(self.holder.pid) if self.userns else None
        if session_ns is None:
            return None
        return ProcessWatch(self.limits.processes, functools.partial(session_processes, session_ns))

    def limits_reached(self) -> tuple[bool, bool]:
        """Whether the session's memory limit made the kernel kill a process, and whether its process limit
        refused a fork, since the last look (where its cgroup counts them)."""
        if self.cgroup is None:
            return False, False
        with self._lock:
            now = (self.cgroup.oom_kills(), self.cgroup.forks_refused())
            seen, self._seen = self._seen, now
        return now[0] > seen[0], now[1] > seen[1]

    def alive(self) -> bool:
        return self.holder.poll() is None

    def tmp_full(self) -> bool:
        """Whether the session's ``/tmp`` has (almost) no room left: what a failed run is told."""
        try:
            st = os.statvfs(f"/proc/{self.holder.pid}/root{self.folder}")
        except OSError:
            return False
        return st.f_bavail * st.f_frsize < max(st.f_frsize, 1) * 2

    def close(self) -> None:
        """End the holder; the tmpfs goes when the last process in it ends (runs still running keep it)."""
        self.kept.let_go(every=True)
        with self._lock:
            if self.holder.stdin is not None:
                with contextlib.suppress(OSError):
                    self.holder.stdin.close()
            try:
                self.holder.wait(timeout=_CLOSE_WAIT)  # it removes its folder and the cgroups, then ends
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    self.holder.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.holder.wait(timeout=_CLOSE_WAIT)
            if self.holder.stdout is not None:
                self.holder.stdout.close()
            with contextlib.suppress(OSError):
                os.rmdir(self.folder)
            if self.cgroup is not None:
                self.cgroup.close()


class WallsUnavailable(OSError):
    """The holder could not be started (``why``: one phrase)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _processes_setting(limits: Limits, userns: bool) -> tuple[bool, str]:
    """Whether the process limit can hold here, and why not."""
    if not limits.processes:
        return False, "no limit was asked for"
    if not userns:
        return False, "the sandbox runs without a user namespace here"
    if os.geteuid() == 0:
        return False, "the kernel runs as root, whom the per-user process limit does not bind"
    if not _kernel_counts_per_namespace():
        return False, "Linux before 5.14 counts a user's processes machine-wide"
    return True, ""


def start_walls(limits: Limits, *, userns: bool) -> SessionWalls:
    """Start a session's holder (see the module's docstring); :class:`WallsUnavailable` when it cannot be."""
    nsenter = shutil.which("nsenter", path=_SYSTEM_DIRS)
    if nsenter is None:
        raise WallsUnavailable("nsenter (util-linux) is not installed")
    limited, why = _processes_setting(limits, userns)
    folder = fallback_folder("execmagic-tmp-")
    told = "\0".join([str(limits.processes if limited else 0), str(limits.tmp_bytes), folder, "1" if userns else "0"])
    try:
        holder = subprocess.Popen([sys.executable, "-I", "-S", "-c", _HOLDER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=HOST_ENV, cwd="/",
                                  start_new_session=True)
    except OSError as exc:
        os.rmdir(folder)
        raise WallsUnavailable(f"the holder could not start: {exc.strerror}") from None
    walls = SessionWalls(holder, folder, nsenter, userns, limits, limited, why)
    assert holder.stdout is not None and holder.stdin is not None
    try:
        holder.stdin.write(f"{told}\n".encode())
        holder.stdin.flush()
    except OSError:
        pass  # it ended already: said below
    ready = readable(holder.stdout.fileno(), _START_TIMEOUT)
    line = holder.stdout.readline().decode(errors="replace").strip() if ready else ""
    if line != ".":
        walls.close()
        raise WallsUnavailable(line[1:] if line.startswith("!") else "the holder did not start")
    walls.add_cgroup(f"execmagic-sandbox-{holder.pid}-{secrets.token_hex(4)}")
    return walls
