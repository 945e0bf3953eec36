"""Finding bubblewrap and whether it works here, and the arguments every sandbox starts with.

Whether it works is decided by one real run of bwrap (``true`` with every namespace a sandbox uses),
then cached: a kernel or container that forbids a namespace says so once, when a sandbox is set, and
never in a run.  That run starts from :func:`base_args`, the same arguments :func:`.sandbox.plan_sandbox`
starts every sandbox with, so what the probe proved is what runs use.  The bwrap is found in folders
only an administrator writes in first, then on this process's own PATH -- never a session's, which a
sandboxed command could have changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

from .errors import ExecError
from .records import record
from .sandbox_session import HOST_ENV
from .sandbox_spec import SandboxSpec

__all__ = [
    "BWRAP_VAR", "PRIVATE_TMP", "SYSTEM_DIRS", "Availability", "SandboxUnavailable", "availability", "base_args",
    "find_bwrap",
]

#: The kernel's own environment variable naming the bwrap to use, read when the sandbox is set (from this
#: process's ``os.environ``, never from a session a sandboxed command could have changed).  An absolute path
#: is that file; empty, or a file that is not there, means "no bubblewrap here" -- how an administrator or
#: a test makes the sandbox unavailable on a machine that has one.
BWRAP_VAR = "EXECMAGIC_BWRAP"
#: Where bwrap is looked for first: folders only an administrator can write in.
SYSTEM_DIRS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")
#: The parts of ``/proc`` that set the whole machine (``kernel.core_pattern`` names a program the kernel
#: runs as root; IRQ affinities): made read-only inside, for a kernel that runs as root.
_KERNEL_SETTINGS = ("/proc/sys", "/proc/irq")
#: The private temp folder, inside.
PRIVATE_TMP = "/tmp"


class SandboxUnavailable(ExecError):
    """The sandbox cannot work on this machine (``reason``: what to do about it; ``detail``: bwrap's own words)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"exec: no sandbox here: {reason}")


@record
class Availability:
    """Whether the sandbox works here: ``reason`` (``None``: it does) says what to do when it does not."""

    bwrap: str | None
    reason: str | None = None
    #: bwrap's own last line when its probe failed (for a person; never parsed).
    detail: str = ""
    #: Whether a user namespace is used (always for a user; root falls back to none, capabilities dropped).
    userns: bool = True

    @property
    def ok(self) -> bool:
        return self.reason is None


def find_bwrap(path: str | None = None) -> str | None:
    """bwrap's absolute path: in :data:`SYSTEM_DIRS`, then on this process's own PATH (read now, when the
    sandbox is set -- never a run's or a session's PATH).  ``path``: search only that PATH string."""
    if path is not None:
        return shutil.which("bwrap", path=path)
    for folder in (*SYSTEM_DIRS, *os.environ.get("PATH", "").split(os.pathsep)):
        found = shutil.which("bwrap", path=folder) if os.path.isabs(folder) else None
        if found is not None:
            return found
    return None


_availability: dict[tuple[str | None, str | None, str | None], Availability] = {}
_availability_lock = threading.Lock()


def availability(bwrap: str | None = None, *, path: str | None = None) -> Availability:
    """Whether the sandbox works here and, if not, why -- decided by one real run of bwrap, then cached.

    ``bwrap``: that file; ``path``: the bwrap on that PATH string; neither: the one :data:`BWRAP_VAR`
    names when it is set, else :func:`find_bwrap`'s.  The probe runs ``true`` with every namespace a
    sandbox uses, so that a kernel or container that forbids one says so here, once, instead of in
    every run.  The cache is keyed by what was asked and by :data:`BWRAP_VAR`'s value now, so that
    changing the variable is seen the next time a sandbox is set.
    """
    named = os.environ.get(BWRAP_VAR) if bwrap is None and path is None else None
    key = (bwrap, path, named)
    with _availability_lock:
        if key not in _availability:
            if named is not None:
                _availability[key] = _named_probe(named)
            else:
                _availability[key] = _probe(bwrap if bwrap is not None else find_bwrap(path),
                                            explicit=bwrap is not None)
        return _availability[key]


def _named_probe(named: str) -> Availability:
    """The sandbox with the bwrap :data:`BWRAP_VAR` names: none when it is empty or not there."""
    if not named:
        return Availability(None, f"{BWRAP_VAR} is set empty: no bubblewrap here (unset it to look for one)")
    if not os.path.isabs(named):
        return Availability(None, f"{BWRAP_VAR} must name bubblewrap by an absolute path, not {named!r}")
    if not (os.path.isfile(named) and os.access(named, os.X_OK)):
        return Availability(None, f"{BWRAP_VAR} names {named}, which is not there: no bubblewrap here "
                                  "(install it, or name the right file)")
    return _probe(named, explicit=True)


def _probe(bwrap: str | None, explicit: bool) -> Availability:
    if not sys.platform.startswith("linux"):
        return Availability(None, f"the sandbox needs Linux namespaces (bubblewrap); this is {sys.platform}")
    if bwrap is None:
        return Availability(None, "bubblewrap is not installed: install it (Debian, Ubuntu: apt install "
                                  "bubblewrap; Fedora: dnf install bubblewrap)")
    if explicit and not (os.path.isfile(bwrap) and os.access(bwrap, os.X_OK)):
        return Availability(None, f"no bubblewrap at {bwrap}: install it or name the right file")
    detail = _run_probe(bwrap, userns=True)
    if detail is None:
        return Availability(bwrap)
    if os.geteuid() == 0 and _run_probe(bwrap, userns=False) is None:
        return Availability(bwrap, userns=False)  # root without user namespaces: capabilities dropped instead
    return Availability(bwrap, _namespace_trouble(), detail)


def _run_probe(bwrap: str, userns: bool) -> str | None:
    """Run ``true`` in the strictest sandbox; ``None`` when it worked, else bwrap's last line."""
    argv = [*base_args(bwrap, SandboxSpec(mode="read-only"), userns), "--", "true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False,
                              env=HOST_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


#: Kernel settings that forbid user namespaces, with the value that does, and what it means.
_USERNS_SWITCHES = (
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "unprivileged user namespaces are switched off "
     "(sysctl kernel.unprivileged_userns_clone=0)"),
    ("/proc/sys/user/max_user_namespaces", "0", "user namespaces are switched off (sysctl user.max_user_namespaces=0)"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "AppArmor restricts unprivileged user "
     "namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=1; an AppArmor profile for bwrap allows them)"),
)


def _namespace_trouble() -> str:
    """Why bwrap could not make its namespaces, read from the kernel's settings (not from bwrap's words)."""
    for switch, value, why in _USERNS_SWITCHES:
        try:
            with open(switch, encoding="ascii") as fh:
                if fh.read().strip() == value:
                    return why
        except OSError:
            continue
    return "bubblewrap cannot create namespaces here (a container that forbids them, or seccomp)"


def base_args(bwrap: str, spec: SandboxSpec, userns: bool) -> list[str]:
    """Namespaces, privileges, the read-only file system, ``/dev``, ``/proc`` and the private ``/tmp``."""
    args = [bwrap]
    if userns:
        args += ["--unshare-user", "--disable-userns"]  # no nested user namespace: no `unshare -r` way back
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not spec.network:
        args.append("--unshare-net")
    args += ["--cap-drop", "ALL", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # The fresh /proc has writable kernel settings for the host's root, capabilities or not (a setting's
    # write checks the file's owner): read-only, as the rest of the system is.  ("-try": a system without.)
    args += [a for path in _KERNEL_SETTINGS for a in ("--ro-bind-try", path, path)]
    args += ["--bind", spec.temp, PRIVATE_TMP] if spec.temp is not None else ["--tmpfs", PRIVATE_TMP]
    return args
