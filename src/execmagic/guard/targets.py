"""What a command writes, empties or deletes as a side effect: the files and trees the rules then judge.

Many programs can destroy the same file, so a rule about a *place* (``/etc/passwd``, ``~/.bashrc``,
``/proc/sysrq-trigger``) asks here which words of a command are places it writes to, rather than
listing programs itself: ``> F``, ``tee F``, ``cp X F``, ``ln -sf X F``, ``dd of=F``, ``truncate F``, ``sed -i … F``.
The same for what is deleted after it is packed away (``tar --remove-files``, ``zip -m``) and for
the tree ``git clean`` empties (``git -C ~ clean -fdx``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from ..shell.words import WRITES
from .commands import Simple
from .options import flags_of, operands_of
from .paths import Path, after_cd, resolve

__all__ = ["archived_and_removed", "cleaned_trees", "removed", "written"]

_COPY_VALUES = {"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group",
                "--backup"}
_DDRESCUE_VALUES = {"-b", "-c", "-e", "-i", "-o", "-s", "-m", "-K", "-a", "-x", "-Z", "--sector-size",
                    "--cluster-size", "--input-position", "--output-position", "--size", "--domain-mapfile"}
_TAR_VALUES = {"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b", "-H", "-g",
               "-K", "-L", "-N", "-V", "--format", "--exclude", "--transform", "--owner", "--group", "--mode"}


def written(s: Simple) -> Iterator[tuple[str, bool]]:
    """The files ``s`` writes to, each with whether it loses what it held (``>`` does, ``>>`` and ``tee -a`` do not)."""
    for op, target in s.redirects:
        if op in WRITES and not (op == ">&" and target.isdigit()):
            yield target, op not in (">>", "&>>", "<>")
    args = list(s.words[1:])
    if s.name in ("dd", "dcfldd", "dc3dd"):
        yield from ((w.split("=", 1)[1], True) for w in args if w.startswith(("of=", "hof=", "wipe=", "hwipe=")))
    elif s.name == "ddrescue":
        yield from ((w, True) for w in operands_of(args, _DDRESCUE_VALUES)[1:2])
    elif s.name == "tee":
        keeps = bool(flags_of(args) & {"-a", "--append"})
        yield from ((w, not keeps) for w in operands_of(args))
    elif s.name in ("cp", "install", "ln", "mv", "link"):
        yield from ((w, True) for w in _copied_to(args))
    elif s.name in ("truncate", "shred", "wipe", "srm"):
        yield from ((w, True) for w in operands_of(args, {"-s", "--size", "-r", "--reference", "-n", "--iterations"}))
    elif s.name == "sed" and any(w.startswith(("-i", "--in-place")) for w in args):
        operands = operands_of(args, {"-e", "-f", "--expression", "--file"})
        scripted = any(w in ("-e", "-f") or w.startswith(("--expression", "--file")) for w in args)
        yield from ((w, False) for w in (operands if scripted else operands[1:]))


#: Folders a file is copied into by their name alone (``cp x/sda /dev``): where devices and the system's files are.
_SYSTEM_FOLDERS = {"/dev", "/etc", "/boot", "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/lib", "/usr/lib"}


def _copied_to(args: Sequence[str]) -> list[str]:
    """The files ``cp``/``mv``/``install``/``ln`` writes: its last operand, or, copied into a folder (``-t DIR``,
    ``--target-directory=DIR``, a last operand ending in ``/`` or naming a system folder), each source's name
    there (``cp x/sda -t /dev`` writes ``/dev/sda``)."""
    operands = operands_of(args, _COPY_VALUES)
    into = None
    for i, word in enumerate(args):
        if word in ("-t", "--target-directory") and i + 1 < len(args):
            into = args[i + 1]
        elif word.startswith("--target-directory="):
            into = word.split("=", 1)[1]
        elif word.startswith("-t") and len(word) > 2 and not word.startswith("--"):
            into = word[2:]
    if into is None:
        if len(operands) < 2:
            return []
        if not (operands[-1].endswith("/") or operands[-1] in _SYSTEM_FOLDERS):
            return [operands[-1]]
        into, operands = operands[-1], operands[:-1]
    return [into.rstrip("/") + "/" + os.path.basename(source.rstrip("/")) for source in operands if source.rstrip("/")]


def removed(s: Simple) -> list[str]:
    """The files ``rm`` or ``unlink`` deletes (recursive or not), and those ``mv`` takes away."""
    if s.name == "mv":
        return operands_of(s.words[1:], _COPY_VALUES)[:-1]
    return operands_of(s.words[1:]) if s.name in ("rm", "unlink") else []


def archived_and_removed(s: Simple) -> Iterator[tuple[str, Path | None]]:
    """What ``tar --remove-files``, ``zip -m``, ``7z -sdel`` or ``rsync --remove-source-files`` deletes once packed,
    each with the directory it is relative to."""
    args = list(s.words[1:])
    if s.name == "tar" and "--remove-files" in args:
        yield from _tar_members(args, s.cwd)
    elif s.name == "zip" and flags_of(args) & {"-m", "--move"}:
        yield from ((w, s.cwd) for w in operands_of(args, {"-b", "-n", "-t", "-tt", "-x", "-i", "-P"})[1:])
    elif s.name in ("7z", "7za", "7zz") and "-sdel" in args:
        yield from ((w, s.cwd) for w in operands_of(args)[2:])  # 7z a ARCHIVE FILES…
    elif s.name == "rsync" and "--remove-source-files" in args:
        yield from ((w, s.cwd) for w in operands_of(args, {"-e", "--rsh", "--exclude", "--include", "-f"})[:-1])


def _tar_members(args: Sequence[str], cwd: Path | None) -> Iterator[tuple[str, Path | None]]:
    """The files a tar command line names, each with the directory a ``-C`` before it moved to."""
    skip, first = False, True
    for i, word in enumerate(args):
        if skip:
            skip = False
        elif word in ("-C", "--directory") and i + 1 < len(args):
            cwd, skip = resolve(args[i + 1], cwd, globs=False), True
        elif word.startswith("--directory="):
            cwd = resolve(word.split("=", 1)[1], cwd, globs=False)
        elif word.startswith("--"):
            skip = word in _TAR_VALUES
        elif word.startswith("-") or (first and not word.startswith("/") and "f" in word and word.isalpha()):
            skip = "f" in word or word in _TAR_VALUES  # -cf ARCHIVE, old-style "cf ARCHIVE"
        else:
            yield word, cwd
        first = False


def cleaned_trees(s: Simple) -> list[tuple[str, Path | None]]:
    """The trees ``git clean -f`` empties of untracked files (``-C``, ``--work-tree``, its paths), each with the
    directory it is relative to."""
    if s.name != "git":
        return []
    args, cwd, i, tree = list(s.words[1:]), s.cwd, 0, None
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            cwd = after_cd(["cd", args[i + 1]], cwd)
        elif args[i].startswith("--work-tree"):
            tree = args[i].split("=", 1)[1] if "=" in args[i] else (args[i + 1] if i + 1 < len(args) else None)
        i += 2 if args[i] in ("-C", "-c", "--work-tree", "--git-dir", "--namespace") else 1
    rest = args[i:]
    flags = flags_of(rest[1:])
    if rest[:1] != ["clean"] or not flags & {"-f", "--force"} or flags & {"-n", "--dry-run"}:
        return []
    paths = operands_of(rest[1:], {"-e", "--exclude"})  # git clean -fdx ~: a path limits it, to ~ here
    base = (tree, cwd) if tree is not None else (".", cwd)
    return [(path, after_cd(["cd", base[0]], base[1])) for path in paths] or [base]
