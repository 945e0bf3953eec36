"""What the sandbox hides outside its writable roots: whole folders by allow-list, and the files that only
root may read.

A list of known credential stores misses the next tool's (an agent's CLI login, a token cache), and a scan
when the sandbox is set misses what appears later (a ``huggingface-cli login`` after it).  So a folder that
holds such things is replaced, inside, by an empty tmpfs -- made anew by every bwrap start, so that whatever
appears there later is hidden too, with no scan -- and what a working sandbox needs is bound back read-only
(:data:`WALLS` and what is shown in each):

- the home folder (:data:`HOME_SHOWN`): keys, tokens, shell and database histories, every tool's login.
  Shown: the writable roots that lie in it (writable, as everywhere), the paths the caller names (the
  kernel's interpreter and virtual environment, a user's additions) and a short list of configuration
  and data that hold no secret.  Not shown, on purpose: ``~/.gitconfig`` (an ``insteadOf`` URL or an
  ``extraHeader`` holds tokens; git inside runs with no global settings), the shell's start-up files
  (``export API_KEY=...`` lines), ``pip.conf`` (an index password), ``~/.jupyter`` (a server's token).
- ``/run`` (and ``/var/run`` where it is a folder of its own): the host's Unix sockets -- Docker's
  (root on the host), containerd's, D-Bus, systemd's, ``/run/screen``, every user's ``/run/user/N``
  with its agents, a database's peer-authenticated socket.  ``--unshare-net`` cuts the network, not a
  socket that is a file, and ``connect()`` works on a read-only mount.  Shown, with the network on:
  the resolver file ``/etc/resolv.conf`` points to.
- ``/var/lib`` (:data:`VAR_LIB_SHOWN`): services' folders (databases, libvirt's and LXD's sockets).
  Shown: the package databases and the user lookups a working system reads.
- ``/var/snap`` and the Nix daemon's socket folder, where they exist: snaps cannot run inside anyway
  (``snap-confine`` is set-uid), and the Nix daemon builds as root.

Made read-only after every bind back (the sandbox's seal), so a command cannot leave files there.

Apart, found when the sandbox is set (:func:`root_only`): the files and folders of ``/etc`` and
``/var/backups`` that others may not read (``/etc/shadow``, ``/etc/sudoers``, SSH host keys, TLS
private keys): a kernel running as root owns them, and inside it keeps its uid; they show empty.

What stays reachable (said in the README): a Unix socket in a folder none of this covers (``/var/tmp``,
``/srv``, ``/opt``, ``/mnt``, another user's home as its permissions allow) -- and the ones the
commands' own programs make in the roots, which is what a workspace needs.  Known limits: inside a
folder shown whole (a user's ``~/.config``), the credential stores hidden again are the known ones that
existed when the sandbox was set; a file only root may read is hidden by a mount at its path, so one
created later shows, and one removed while the sandbox is set makes its runs fail (bwrap cannot make
the mount point on the read-only system) until the sandbox is set again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from .records import record
from .sandbox_scan import outermost, real_path, walk, within

__all__ = ["HOME_SHOWN", "ROOT_ONLY_FOLDERS", "ROOT_ONLY_LIMIT", "VAR_LIB_SHOWN", "WALLS", "Walls", "find_walls",
           "root_only"]

#: Folders replaced by an empty tmpfs inside, besides the home folder (those that exist; real paths).
WALLS = ("/run", "/var/run", "/var/lib", "/var/snap", "/nix/var/nix/daemon-socket")
#: Below the home folder, shown read-only: configuration and data that hold no secret and that tools read --
#: git's global ignore file (its default place), matplotlib's settings, and the models and data sets of
#: Hugging Face's and PyTorch's caches (a script that loads one works offline; their tokens lie elsewhere).
HOME_SHOWN = (".config/git/ignore", ".config/matplotlib", ".cache/huggingface/hub", ".cache/huggingface/datasets",
              ".cache/torch")
#: Below ``/var/lib``, shown read-only: package databases (``dpkg -l``, ``apt show``, ``rpm -q``), the CA
#: certificates some systems keep there, the machine id, the system's user lookups through SSSD (an LDAP
#: user's own name: ``id``, ``ls -l``, ``ssh``).  Kept short: each is a mount at every start.
VAR_LIB_SHOWN = ("dpkg", "apt", "rpm", "pacman", "ca-certificates", "dbus", "sss/mc", "sss/pipes/nss")
#: Where files only root may read are looked for when the sandbox is set: the system's settings, and Debian's
#: copies of its password files (``/var/backups/shadow.bak``).
ROOT_ONLY_FOLDERS = ("/etc", "/var/backups")
#: At most this many entries are looked at there (``/etc`` has a few thousand): a walk of milliseconds, once.
ROOT_ONLY_LIMIT = 50_000
#: Top-level folders the system runs from: a home folder that is one of them, or holds one, cannot be hidden.
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")


@record
class Walls:
    """What a sandbox hides outside its roots, found once: the argv parts and the one line that says it."""

    #: The home folder, hidden (real path; ``None``: there is none, or it holds the system's own folders).
    home: str | None
    #: Folders replaced by an empty tmpfs, real paths (none below another).
    emptied: tuple[str, ...] = ()
    #: Paths inside them bound back read-only (they existed when the sandbox was set).
    shown: tuple[str, ...] = ()
    #: Writable roots that lie inside them (bound back by the sandbox itself, writable).
    roots: tuple[str, ...] = ()
    #: Files (``/dev/null`` over them) and folders (an empty tmpfs) only root may read.
    private_files: tuple[str, ...] = ()
    private_folders: tuple[str, ...] = ()

    def args(self) -> list[str]:
        """bwrap's options: the empty folders, then what is bound back into them, then the private files.

        They come before the roots are bound (a root in the home folder is bound into its tmpfs).  "-try":
        a shown path removed after the sandbox was set is not there to show; bwrap would fail without it.
        """
        args = [a for folder in (*self.emptied, *self.private_folders) for a in ("--tmpfs", folder)]
        args += [a for path in self.shown for a in ("--ro-bind-try", path, path)]
        args += [a for path in self.private_files for a in ("--ro-bind", "/dev/null", path)]
        return args

    def sealed(self) -> tuple[str, ...]:
        """The tmpfs folders to make read-only once every bind into them is made (the sandbox's seal)."""
        return (*self.emptied, *self.private_folders)

    def covers(self, path: str) -> bool:
        """Whether ``path`` (real) is hidden by these walls already: in an emptied folder, outside anything
        bound back there.  A path covered needs no mount of its own to hide it."""
        return (any(within(path, folder) for folder in self.emptied)
                and not any(within(path, shown) for shown in (*self.shown, *self.roots)))

    def describe(self) -> str:
        """One line: what is hidden, and what is shown inside it (for ``%mcp`` and the agent's tool)."""
        parts = []
        if self.home is not None:
            parts.append("the home folder" + _shown_in(self.home, self.shown, self.roots))
        else:  # no home folder, or one that holds the system: the sandbox hides its known stores by name
            parts.append("the home folder's known credential stores")
        others = [f for f in self.emptied if f != self.home]
        if others:
            words = [f"{f} (but package databases and user lookups)" if f == "/var/lib" else f for f in others]
            parts.append("the host's " + ", ".join(words))
        private = len(self.private_files) + len(self.private_folders)
        if private:
            parts.append(f"{private} file{'s' if private != 1 else ''} of {' and '.join(ROOT_ONLY_FOLDERS)}"
                         " only root may read")
        return "hidden: " + "; ".join(parts) if parts else "hidden: nothing outside the roots"


def _shown_in(home: str, shown: Sequence[str], roots: Sequence[str]) -> str:
    """`` but the workspace and ~/a, ~/b (read-only)`` for what is shown in the home folder."""
    mine = [f"~{p[len(home):]}" for p in shown if within(p, home)]
    kept = (["the workspace"] if any(within(r, home) for r in roots) else []) + (
        [f"{', '.join(mine)} (read-only)"] if mine else [])
    return " but " + " and ".join(kept) if kept else ""


def find_walls(home: str, *, visible: Iterable[str] = (), roots: Sequence[str] = (), network: bool = False,
               ) -> Walls:
    """The walls of a sandbox for ``home`` (a path; made real here), found on disk now.

    ``visible``: paths (real, absolute) to show read-only wherever they lie (the ones outside every wall
    need nothing); ``roots``: the writable roots (real), bound by the caller; ``network``: the resolver's
    file is shown too.
    """
    real_home = real_path(home)
    hideable = (os.path.isdir(real_home) and real_home != "/"
                and not any(within(folder, real_home) for folder in _SYSTEM))
    walls = [real for real in (real_path(w) for w in WALLS) if os.path.isdir(real)]
    emptied = outermost([*([real_home] if hideable else []), *walls])
    wanted = [*visible, *(os.path.join(real_home, p) for p in HOME_SHOWN if hideable),
              *(os.path.join("/var/lib", p) for p in VAR_LIB_SHOWN)]
    if network:
        wanted.append("/etc/resolv.conf")
    shown = tuple(sorted(outermost(p for p in (real_path(w) for w in wanted)
                                   if any(within(p, f) for f in emptied) and os.path.exists(p)
                                   and not any(within(p, r) for r in roots))))
    files, folders = root_only()
    return Walls(real_home if hideable else None, emptied, shown,
                 tuple(r for r in roots if any(within(r, f) for f in emptied)), files, folders)


def root_only(folders: Sequence[str] | None = None,
              limit: int | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The files and the folders below ``folders`` (:data:`ROOT_ONLY_FOLDERS`) that others may not read and
    this process may by their owner and group bits: what a kernel running as root reads inside, where it
    keeps uid 0 but no capability (an ordinary user's kernel only finds what its groups let it read).  A
    folder others may not enter is taken whole; symlinks are not followed (what one points to is judged
    where it lies).  An empty file or folder has nothing to hide: each hidden one is a mount at every
    start, so it is left out."""
    files: list[str] = []
    hidden: list[str] = []

    groups = {os.getegid(), *os.getgroups()}

    def visit(entry: os.DirEntry[str]) -> bool:
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            if st.st_mode & stat.S_IXOTH:
                return True
            if _allowed(st, groups, 0o1) and _has_entries(entry.path):
                hidden.append(entry.path)
        elif (not stat.S_ISLNK(st.st_mode) and not st.st_mode & stat.S_IROTH and _allowed(st, groups, 0o4)
              and not (stat.S_ISREG(st.st_mode) and st.st_size == 0)):
            files.append(entry.path)
        return False

    walk([real_path(f) for f in (ROOT_ONLY_FOLDERS if folders is None else folders) if os.path.isdir(f)],
         ROOT_ONLY_LIMIT if limit is None else limit, visit)
    return tuple(files), tuple(hidden)


def _allowed(st: os.stat_result, groups: set[int], bit: int) -> bool:
    """Whether this process may read (``bit`` 4) or enter (1) what ``st`` describes by its mode bits alone,
    as a process without capabilities does (root's own files by their owner bits, others' by theirs)."""
    if st.st_uid == os.geteuid():
        return bool(st.st_mode >> 6 & bit)
    if st.st_gid in groups:
        return bool(st.st_mode >> 3 & bit)
    return bool(st.st_mode & bit)


def _has_entries(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except OSError:
        return True  # cannot tell: hide it
