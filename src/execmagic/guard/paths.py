"""Paths as the rules see them: normalised without touching the disk, judged, and followed through ``cd``.

``rm -rf /usr/..`` is ``rm -rf /`` and ``cd / && rm -rf *`` is ``rm -rf /*``, so a path is taken
apart and put together again (``..``, ``.``, ``//``, ``~``, ``$HOME``) relative to the directory a
``cd`` moved to.  Nothing is resolved on this machine: the command may run elsewhere later, and
a symlink proves nothing about intent.  A path that depends on what is unknown (a variable, an
unknown directory) is ``None`` -- not judged, rather than guessed.  What the shell makes of a word
before it is a path is followed as far as it can only mean one thing: ``${HOME:?}`` is ``$HOME``,
``/{etc,usr}`` is ``/etc`` and ``/usr``, and a glob at the top level (``/[e]tc``, ``/?``) counts
for every system directory it could match.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Sequence

__all__ = ["HOME", "Path", "after_cd", "braces", "critical_place", "critical_target", "device_path", "path_text",
           "resolve", "startup_file", "system_file"]

Path = tuple[str, ...]
"""An absolute path as its parts; ``("home", "~")`` stands for the home directory."""

HOME: Path = ("home", "~")
_HOME_PREFIX = re.compile(r"(~[\w.-]*|\$HOME|\$\{HOME(?::?[-?=][^}]*)?\})(?=/|$)")  # ${HOME:?}, ${HOME:-x}
_GLOBS = frozenset({"*", ".*", "{*,.*}", "{.*,*}"})
_SYSTEM_DIRS = {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "opt", "proc", "root", "sbin",
                "srv", "sys", "usr", "var", "snap", "run", "mnt", "media", "nix", "Users", "System", "Library",
                "Applications", "Volumes", "private"}
#: Directories one level down that a system cannot do without (what is installed, and its package databases).
_SYSTEM_SUBDIRS = {("usr", name) for name in ("bin", "sbin", "lib", "lib32", "lib64", "libexec", "include", "share",
                                               "local", "src")} | {("var", "lib"), ("var", "db"), ("var", "spool"),
                                                                   ("var", "mail"), ("etc", "ssh"), ("etc", "ssl")}
#: Files the system needs to boot, to run a shell or to let anyone log in: emptying one is like deleting /etc.
_SYSTEM_FILES = {("etc", name) for name in ("passwd", "shadow", "group", "gshadow", "sudoers", "fstab", "crypttab",
                                             "inittab", "nsswitch.conf", "ld.so.preload", "ld.so.conf", "login.defs")}
_SYSTEM_FILES |= {(*top, name) for top in (("bin",), ("usr", "bin")) for name in ("sh", "bash", "sudo", "su", "login")}
_SYSTEM_FILE_DIRS = {("boot",), ("etc", "pam.d"), ("etc", "sudoers.d")}
#: Files a shell runs as it starts: what is written there runs in every new shell, unseen.
_STARTUP_FILES = {".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
                  ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout",
                  ".xprofile", ".xinitrc", ".xsessionrc", ".pam_environment", ".bash_aliases"}
_SYSTEM_STARTUP = {("etc", "profile"), ("etc", "bash.bashrc"), ("etc", "bashrc"), ("etc", "zshrc"), ("etc", "zshenv"),
                   ("etc", "zprofile"), ("etc", "environment"), ("etc", "zsh", "zshrc"), ("etc", "zsh", "zshenv")}
#: What stands in /home or /Users and is no one's home directory.
_NO_HOMES = {("home", "lost+found"), ("Users", "Shared")}
_GLOB = re.compile(r"[*?\[]")
_ONLY_WILDCARDS = re.compile(r"(?:\*|\?|\[[^\]]*\])+")  # /?, /*?, /[a-z]*: any top-level entry
_BRACE = re.compile(r"(?<!\$)\{([^{}]*,[^{}]*)\}")  # {a,b}, not ${a}; the innermost first
_DEVICE = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|mapper/|loop|mem$|kmem$|port$|sg)")


def resolve(path: str, cwd: Path | None, *, globs: bool = True) -> Path | None:
    """``path`` as absolute parts, or ``None`` when unknown (relative to an unknown directory, a variable).

    ``/usr/..`` is ``/``; ``//``, ``/./`` and trailing slashes go; ``~``, ``$HOME`` and ``${HOME}`` are the
    home directory; with ``globs`` a trailing ``*`` or ``.*`` stands for its directory (it empties it).
    """
    if len(path) <= _PATH_KEPT:
        return _resolved(str(path), cwd, globs)
    return _resolve(path, cwd, globs)


#: Paths up to this length have their answer kept: a script writes to ``/dev/null`` and a few files again and again,
#: and each write is put to several rules.
_PATH_KEPT = 256


@functools.lru_cache(maxsize=4096)
def _resolved(path: str, cwd: Path | None, globs: bool) -> Path | None:
    return _resolve(path, cwd, globs)


def _resolve(path: str, cwd: Path | None, globs: bool) -> Path | None:
    if not path:  # rm -rf "" names no file (an empty variable, quoted)
        return None
    home = _HOME_PREFIX.match(path)
    if home:
        parts, rest = ["home", home.group(1) if home.group(1).startswith("~") else "~"], path[home.end():]
    elif path.startswith("/"):
        parts, rest = [], path
    elif cwd is None:
        return None
    else:
        parts, rest = list(cwd), path
    for part in rest.split("/"):
        if "$" in part or "`" in part:
            return None
        if part == "..":
            del parts[-1:]
        elif part not in ("", "."):
            parts.append(part)
    while globs and parts and parts[-1] in _GLOBS:
        parts.pop()
    return tuple(parts)


def critical_place(path: Path | None) -> str | None:
    """``'the root directory'`` / ``'a home directory'`` / ``'the system directory /usr'`` or ``None``."""
    if path is None:
        return None
    if not path:
        return "the root directory"
    if len(path) == 2 and (path[0], path[1]) not in _NO_HOMES and path[0] in ("home", "Users"):
        return "a home directory"  # (~, ~bob, /home/bob, macOS's /Users/bob: cd /home && rm -rf alice)
    if (len(path) == 1 and path[0] in _SYSTEM_DIRS) or path in _SYSTEM_SUBDIRS:
        return f"the system directory /{'/'.join(path)}"
    if len(path) == 1 and _GLOB.search(path[0]):  # a glob at the top level: what could it match?
        if _ONLY_WILDCARDS.fullmatch(path[0]):
            return "the root directory"
        matched = sorted(d for d in _SYSTEM_DIRS if fnmatch.fnmatchcase(d, path[0]))
        return f"the system directory /{matched[0]}" if matched else None
    return None


def braces(word: str, limit: int = 64) -> list[str]:
    """The words brace expansion makes of ``word``: ``/{etc,usr}`` → ``/etc``, ``/usr``; ``{/,}`` → ``/``.

    Sequences (``{1..3}``) are left as written; past ``limit`` words the rest stays unexpanded.
    """
    done: list[str] = []
    todo = [word]
    while todo and len(done) + len(todo) < limit:
        one = todo.pop(0)
        found = _BRACE.search(one)
        if found is None:
            done.append(one)
        else:
            todo.extend(one[:found.start()] + alt + one[found.end():] for alt in found.group(1).split(","))
    return [w for w in done + todo if w]


def critical_target(word: str, cwd: Path | None, *, globs: bool = True) -> str | None:
    """What :func:`critical_place` says of the first of ``word``'s brace expansions that names one."""
    for one in braces(word) if "{" in word else [word]:
        where = critical_place(resolve(one, cwd, globs=globs))
        if where:
            return where
    return None


def device_path(word: str, cwd: Path | None, *, disks: bool = True) -> str | None:
    """The normalised path when ``word`` names a disk device (any ``/dev/`` path with ``disks=False``)."""
    path = resolve(word, cwd, globs=False)
    if not path or path[0] != "dev":
        return None
    text = "/" + "/".join(path)
    return text if not disks or _DEVICE.match(text) else None



def path_text(path: Path) -> str:
    """A path of parts as a refusal names it: ``~/…`` under the home folder, absolute otherwise."""
    return "~/" + "/".join(path[2:]) if path[:2] == HOME else "/" + "/".join(path)


def system_file(word: str, cwd: Path | None) -> str | None:
    """``word`` as a path when it names a file the system needs (``/etc/passwd``, ``/boot/…``, ``/bin/sh``)."""
    path = resolve(word, cwd, globs=False)
    if path and (path in _SYSTEM_FILES or path[:-1] in _SYSTEM_FILE_DIRS):
        return path_text(path)
    return None


def startup_file(word: str, cwd: Path | None) -> str | None:
    """``word`` as a path when it names a shell start-up file (``~/.bashrc``, ``/etc/profile``, …)."""
    path = resolve(word, cwd, globs=False)
    if path is None:
        return None
    in_home = len(path) >= 3 and path[0] == "home" and (path[1].startswith("~") or len(path) == 3)
    if (in_home and len(path) == 3 and path[2] in _STARTUP_FILES) or path in _SYSTEM_STARTUP or (
            path[:2] == ("etc", "profile.d")) or (in_home and path[2:] == (".config", "fish", "config.fish")):
        return path_text(path)
    return None


def after_cd(words: Sequence[str], cwd: Path | None) -> Path | None:
    """The directory after a command of ``words`` ran in ``cwd``.

    ``cd``/``pushd`` move it; after ``popd`` or ``cd -`` it is unknown (the stack is not tracked).
    """
    name = words[0][words[0].rfind("/") + 1:] if words else ""  # (its basename: asked after every pipeline walked)
    if name in ("cd", "pushd", "chdir"):
        args = [w for w in words[1:] if w not in ("-L", "-P", "-e", "-@", "--")]
        if not args:
            return HOME
        return None if args[0] == "-" else resolve(args[0], cwd, globs=False)
    return None if name == "popd" else cwd
