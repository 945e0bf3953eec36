"""The rules: what is refused and why (the table first), then how each rule recognises a command.

A rule is judged on one simple command at a time (:class:`~.commands.Simple`: wrappers removed,
paths relative to the directory a ``cd`` moved to); the walk over shell text that finds those
commands, and sees code handed to a shell, is in :mod:`.walk`.  The table is data, so that a
reader (and the tests) can see every rule in one place; a matcher returns the rule's id and the
words its reason names, and :func:`refuse` words the reason from the table -- never elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ..process.records import record
from ..shell.patterns import lazy_pattern
from ..shell.words import WRITES
from .commands import Simple
from .kills import kill_all, kill_init, kill_user
from .options import SHELLS, find_exec, flags_of, operands_of
from .paths import Path, critical_target, device_path, resolve, startup_file, system_file
from .targets import archived_and_removed, cleaned_trees, removed, written

__all__ = ["MATCHERS", "RULES", "RULES_BY_ID", "WRITE_MATCHERS", "Hit", "Refusal", "Rule", "match", "refuse"]

@record
class Rule:
    """One guardrail: its id, whether guard ``catastrophic`` refuses it (else only ``all``), why, and what it matches.

    ``reason`` may name ``{where}`` (e.g. "the root directory"), ``{device}`` or ``{name}``,
    filled in from the command that matched.
    """

    id: str
    catastrophic: bool
    reason: str
    matches: str


# -- the rules: what is refused, and why ------------------------------------------------------------
RULES: tuple[Rule, ...] = (
    Rule("rm-no-preserve-root", True, "deletes everything under / (--no-preserve-root)",
         "rm with --no-preserve-root"),
    Rule("rm-recursive-root", True, "recursively deletes {where}",
         "rm -r of /, ~, $HOME or a top-level system directory (/usr/.. is /; a trailing * or .* counts; "
         "/{etc,usr} and /[e]tc too); rm -rf * or . after a cd to one of them; in python/perl/node/ruby "
         "-c/-e code, shutil.rmtree('/') and the like, or a shell command run by os.system, system, execSync, `…`"),
    Rule("rsync-delete-root", True, "deletes whatever in {where} is not in the source (rsync --delete)",
         "rsync --delete (--del, --delete-after, …) onto /, ~ or a top-level system directory"),
    Rule("mkfs-device", True, "formats a disk device, erasing it", "mkfs*, mke2fs, mkswap, mkdosfs, mkntfs of /dev/…"),
    Rule("dd-device", True, "writes raw data onto the disk device {device}",
         "dd, dcfldd or dc3dd of=/dev/sda, ddrescue … /dev/sda"),
    Rule("redirect-device", True, "overwrites the disk device {device}", "> /dev/sda, cat x >> /dev/nvme0n1"),
    Rule("write-device", True, "{name} writes onto a disk device", "tee /dev/sda, cp disk.img /dev/sda"),
    Rule("wipe-device", True, "{name} erases a disk device",
         "shred, wipefs, blkdiscard, truncate, cryptsetup luksFormat, badblocks -w, nvme format of a disk device"),
    Rule("partition-device", True, "rewrites a disk's partition table",
         "fdisk, sfdisk, parted, sgdisk, gdisk, cfdisk of a disk device, unless only listing"),
    Rule("kernel-trigger", True, "writes to {device}, which reboots, halts or crashes the machine at once",
         "echo b > /proc/sysrq-trigger, tee /proc/sysrq-trigger"),
    Rule("clobber-system-file", True, "{name} empties, replaces or deletes {where}, which the system needs to run",
         "> /etc/passwd, truncate -s0 /etc/shadow, cp x /etc/sudoers, rm /bin/sh, anything written over in /boot"),
    Rule("git-clean-root", True, "deletes every file git does not track in {where} (git clean)",
         "git -C ~ clean -fdx, cd / && git clean -f, git --work-tree=/ clean -fd"),
    Rule("archive-remove-root", True, "{name} deletes {where} once it is packed",
         "tar --remove-files, zip -m, 7z -sdel or rsync --remove-source-files of /, ~ or a system directory"),
    Rule("kill-init", True, "signals process 1 (init): the machine or the container goes down with it",
         "kill -9 1, kill -s KILL 1, pkill init, killall systemd"),
    Rule("chmod-recursive-root", True, "recursively changes permissions or owners of {where}", "chmod -R 777 /"),
    Rule("chown-recursive-root", True, "recursively changes permissions or owners of {where}", "chown -R x /"),
    Rule("chgrp-recursive-root", True, "recursively changes permissions or owners of {where}", "chgrp -R x ~"),
    Rule("find-delete-root", True, "deletes files throughout {where}", "find / -delete, find ~ -exec rm …"),
    Rule("mv-root", True, "moves {where} away", "mv ~ /tmp/x, mv /usr /old"),
    Rule("fork-bomb", True, "a fork bomb: it multiplies processes until the machine stalls",
         ":(){ :|:& };:, :() ( :|:& ); :, f(){ f & f; }; f, function f { f|f& }; f, perl -e 'fork while fork', "
         "while :; do bash & done (an endless loop that starts a process in the background at every turn)"),
    # catastrophic: every program of yours goes (this kernel, the notebook server, every other notebook's kernel,
    # with their unsaved work), and as root the whole machine, as if init were killed
    Rule("kill-all", True, "signals every process you may signal (pid -1): as root, every process on the machine",
         "kill -9 -1, kill -- -1, kill -1"),
    Rule("kill-user", True, "{name} signals every process {whose}",
         "pkill -u root or killall -u me with no name, pkill . (a pattern matching every name), killall5"),
    Rule("power", False, "{name} stops the machine",
         "shutdown, reboot, halt, poweroff, init/telinit 0/6, systemctl reboot/poweroff/halt/kexec"),
    Rule("crontab-remove", False, "removes every scheduled job of the user", "crontab -r"),
    Rule("shred-file", False, "{name} destroys {where} beyond recovery",
         "shred -u ~/.ssh/id_rsa, srm ~/.aws/credentials, wipe /etc/passwd (not an ordinary file: shred x.tmp)"),
    Rule("startup-file", False, "writes to the shell start-up file {where}: what it holds runs in every new shell",
         "echo … >> ~/.bashrc, ln -sf /dev/null ~/.profile, tee /etc/profile.d/x.sh, sed -i … ~/.zshrc"),
    Rule("too-deep", True, "is nested too deeply to check (substitutions, quotes or code inside code)",
         "rm -rf $($($(… two hundred levels …))): what the check cannot follow is not run"),
    Rule("pipe-to-shell", False, "runs code downloaded from the network without looking at it",
         "curl/wget piped into a shell or interpreter, or substituted into one: curl … | sh, "
         "sh -c \"$(curl …)\", bash <(curl …), eval \"$(wget -O- …)\", bash <<< \"$(curl …)\"; "
         "a file downloaded earlier in the same text run: curl -o f URL && sh f"),
)
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}


@record
class Refusal:
    """Why a command was refused: the rule's id, its reason, and the simple command that matched.

    ``catastrophic`` is the rule's level (refused under guard ``catastrophic``, else only ``all``).
    Each caller words a refusal for its own audience from these fields; :meth:`describe` is the
    part they share.
    """

    rule: str
    reason: str
    command: str
    catastrophic: bool = True

    def describe(self) -> str:
        """``refused: 'rm -rf ~' — recursively deletes a home directory (rule rm-recursive-root)``."""
        return f"refused: {self.command!r} — {self.reason} (rule {self.rule})"


def refuse(rule_id: str, command: str, **fields: str) -> Refusal:
    """The refusal of ``command`` by rule ``rule_id``, its reason filled in with ``fields``."""
    rule = RULES_BY_ID[rule_id]
    return Refusal(rule.id, rule.reason.format(**fields), command, rule.catastrophic)


# -- the rules' matchers: a simple command → (rule id, the reason's fields) -------------------------------
Hit = tuple[str, dict[str, str]]
"""A matcher's verdict: the rule's id and the words its reason names (``{"where": "the root directory"}``)."""


def _rm(s: Simple) -> Hit | None:
    if s.name != "rm":
        return None
    flags = flags_of(s.words[1:])
    if "--no-preserve-root" in flags:
        return "rm-no-preserve-root", {}
    if not flags & {"-r", "-R", "--recursive"}:
        return None
    for target in operands_of(s.words[1:]):
        where = critical_target(target, s.cwd)
        if where:
            return "rm-recursive-root", {"where": where}
    return None


_RSYNC_VALUES = {"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "-T",
                 "--temp-dir", "--files-from", "--log-file", "--password-file", "-B", "--block-size", "--chmod",
                 "--chown", "--backup-dir", "--suffix", "--timeout", "--bwlimit", "--max-size", "--min-size", "--port",
                 "-M", "--remote-option", "--compare-dest", "--copy-dest", "--link-dest", "--partial-dir"}


def _rsync_delete(s: Simple) -> Hit | None:
    """``rsync -a --delete empty/ /``: the destination loses whatever the source lacks."""
    if s.name != "rsync" or not any(w == "--del" or w.startswith("--delete") for w in s.words[1:]):
        return None
    operands = operands_of(s.words[1:], _RSYNC_VALUES)
    where = critical_target(operands[-1], s.cwd) if len(operands) >= 2 else None
    return ("rsync-delete-root", {"where": where}) if where else None


def _mkfs(s: Simple) -> Hit | None:
    if (s.name.startswith("mkfs") or s.name in ("mke2fs", "mkswap", "mkdosfs", "mkntfs")) and any(
            device_path(w, s.cwd, disks=False) for w in s.words[1:]):
        return "mkfs-device", {}
    return None


def _dd(s: Simple) -> Hit | None:
    if s.name in ("dd", "dcfldd", "dc3dd", "ddrescue"):
        for word, _ in written(s):
            device = device_path(word, s.cwd)
            if device:
                return "dd-device", {"device": device}
    return None


def _kernel_trigger(s: Simple) -> Hit | None:
    for word, _ in written(s):
        if resolve(word, s.cwd, globs=False) == ("proc", "sysrq-trigger"):
            return "kernel-trigger", {"device": "/proc/sysrq-trigger"}
    return None


def _system_file(s: Simple) -> Hit | None:
    """``> /etc/passwd``, ``truncate -s0 /etc/shadow``, ``rm -f /bin/sh``; appending (``>>``, ``tee -a``) is not."""
    targets = [word for word, empties in written(s) if empties] + removed(s)
    for word in targets:
        where = system_file(word, s.cwd)
        if where:
            return "clobber-system-file", {"name": s.name or "a redirection", "where": where}
    return None


def _git_clean(s: Simple) -> Hit | None:
    for tree, cwd in cleaned_trees(s):
        where = critical_target(tree, cwd, globs=False)
        if where:
            return "git-clean-root", {"where": where}
    return None


def _archive_remove(s: Simple) -> Hit | None:
    for word, cwd in archived_and_removed(s):
        where = critical_target(word, cwd)
        if where:
            return "archive-remove-root", {"name": s.name, "where": where}
    return None


def _shred(s: Simple) -> Hit | None:
    """Shredding what a system or a home cannot do without: a key or credential in a home's hidden folders
    (``~/.ssh/id_rsa``), a file the system needs, a home or the root; not an ordinary file (``shred x.tmp``)."""
    if s.name in ("shred", "wipe", "srm"):
        for word, _ in written(s):
            path = resolve(word, s.cwd)
            hidden = path is not None and path[:1] == ("home",) and any(p.startswith(".") for p in path[2:])
            if hidden or system_file(word, s.cwd) or critical_target(word, s.cwd):
                return "shred-file", {"name": s.name, "where": word}
    return None


def _startup_file(s: Simple) -> Hit | None:
    for word, _ in written(s):
        where = startup_file(word, s.cwd)
        if where:
            return "startup-file", {"where": where}
    return None


#: What wipes a disk it is given: ``cryptsetup luksFormat``, ``badblocks -w``, ``nvme format`` among them.
_WIPES = ("shred", "wipefs", "blkdiscard", "truncate", "cryptsetup", "badblocks", "nvme")


def _wipes(s: Simple) -> bool:
    """Whether a program of :data:`_WIPES` writes the device, not only reads it (``badblocks`` tests it read-only
    unless ``-w`` or ``-n``; ``cryptsetup`` and ``nvme`` only with a verb that formats or erases)."""
    if s.name == "badblocks":
        return bool(flags_of(s.words[1:]) & {"-w", "-n"})
    if s.name == "cryptsetup":
        return any(w in ("luksFormat", "erase", "luksErase", "reencrypt") for w in s.words[1:])
    if s.name == "nvme":
        return any(w in ("format", "sanitize", "write-zeroes") for w in s.words[1:])
    return True


def _device_write(s: Simple) -> Hit | None:
    for op, target in s.redirects:
        device = device_path(target, s.cwd) if op in WRITES else None
        if device:
            return "redirect-device", {"device": device}
    targets = operands_of(s.words[1:])
    if (s.name == "tee" and any(device_path(w, s.cwd) for w in targets)) or (
            s.name == "cp" and any(device_path(w, s.cwd) for w, _ in written(s))):
        return "write-device", {"name": s.name}
    if s.name == "truncate":  # truncate -r /dev/sda f only reads the device's size
        targets = operands_of(s.words[1:], {"-s", "--size", "-r", "--reference"})
    if s.name in _WIPES and any(device_path(w, s.cwd) for w in targets) and _wipes(s):
        return "wipe-device", {"name": s.name}
    listing = flags_of(s.words[1:]) & {"-l", "--list", "-p", "--print"} or "print" in s.words
    if s.name in ("fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk") and not listing and any(
            device_path(w, s.cwd) for w in targets):
        return "partition-device", {}
    return None


def _chmod_root(s: Simple) -> Hit | None:
    if s.name not in ("chmod", "chown", "chgrp") or not flags_of(s.words[1:]) & {"-R", "--recursive"}:
        return None
    targets = operands_of(s.words[1:])
    reference = any(w.startswith("--reference") for w in s.words)
    for target in targets if reference else targets[1:]:  # the first operand is the mode or the owner
        where = critical_target(target, s.cwd)
        if where:
            return f"{s.name}-recursive-root", {"where": where}
    return None


def _find_delete(s: Simple) -> Hit | None:
    if s.name != "find":
        return None
    deletes = "-delete" in s.words or any(map(_deletes, filter(None, find_exec(s.words))))
    starts = []
    for word in s.words[1:]:
        if word.startswith(("-", "(", "!", ")")):
            break
        starts.append(word)
    for start in starts if deletes else ():
        where = critical_target(start, s.cwd)
        if where:
            return "find-delete-root", {"where": where}
    return None


def _deletes(run: Sequence[str]) -> bool:
    """Whether a command ``find -exec`` runs deletes what it is given: ``rm``/``shred``, or a shell's code that runs
    one (``-exec sh -c 'rm -rf "$1"' _ {} \\;``: the files found are its arguments)."""
    name = os.path.basename(run[0])
    return name in ("rm", "shred") or (name in SHELLS and any(map(_DELETES.search, run[1:])))


#: ``rm``/``shred`` where a shell's code runs a command.
_DELETES = lazy_pattern(r"(?:^|[\s;&|(`])(?:sudo\s+)?(?:rm|shred)\s")


def _power(s: Simple) -> Hit | None:
    if s.name in ("shutdown", "reboot", "halt", "poweroff") and "--help" not in s.words:
        return "power", {"name": s.name}
    if s.name in ("init", "telinit") and s.words[1:2] in (("0",), ("6",)):
        return "power", {"name": f"{s.name} {s.words[1]}"}
    if s.name == "systemctl" and any(w in ("poweroff", "reboot", "halt", "kexec") for w in s.words[1:]):
        return "power", {"name": "systemctl"}
    return None


def _move_home(s: Simple) -> Hit | None:
    if s.name != "mv":
        return None
    operands = operands_of(s.words[1:], {"-t", "--target-directory", "-S", "--suffix"})
    targeted = any(w == "-t" or w.startswith("--target-directory") for w in s.words)
    for source in operands if targeted else operands[:-1]:  # mv ~/* ~/old/ tidies up; mv ~ /x does not
        where = critical_target(source, s.cwd, globs=False)
        if where:
            return "mv-root", {"where": where}
    return None


def _crontab(s: Simple) -> Hit | None:
    if s.name == "crontab" and "-r" in flags_of(s.words[1:]):
        return "crontab-remove", {}
    return None


#: Catastrophic rules first: a risky one (shred) must not hide a catastrophic one (shred /etc/passwd) from that level.
MATCHERS: tuple[Callable[[Simple], Hit | None], ...] = (
    _rm, _rsync_delete, _mkfs, _dd, _device_write, _kernel_trigger, _system_file, _git_clean, _archive_remove,
    _chmod_root, _find_delete, _move_home, kill_init, kill_all, kill_user, _power, _crontab, _shred, _startup_file)


#: Every program some matcher judges by its name (``mkfs.*`` aside); any other command can only break a rule
#: through what a redirection writes.  Asked first, so that a long script of ordinary commands costs one set
#: lookup per command rather than nineteen matchers.  A new matcher adds the names it judges here.
JUDGED_NAMES = frozenset({
    "rm", "unlink", "rsync", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "dd", "dcfldd", "dc3dd", "ddrescue", "tee",
    "cp", "install", "ln", "mv", "link", "truncate", "shred", "wipe", "srm", "sed", "wipefs", "blkdiscard", "fdisk",
    "sfdisk", "parted", "sgdisk", "gdisk", "cfdisk", "git", "tar", "zip", "7z", "7za", "7zz", "chmod", "chown",
    "chgrp", "find", "kill", "pkill", "killall", "killall5", "shutdown", "reboot", "halt", "poweroff", "init",
    "telinit", "systemctl", "crontab", "cryptsetup", "badblocks", "nvme"})


def judged_writes(redirects: Sequence[tuple[str, str]], cwd: Path | None) -> bool:
    """Whether one of ``redirects`` (run in ``cwd``) writes where a matcher may look.

    Every matcher judges what a redirection writes by where it resolves (:func:`.paths.resolve`): one that resolves
    nowhere -- a relative name where the directory is not known, a variable -- is judged by none.
    """
    return any(op in WRITES and resolve(target, cwd, globs=False) is not None for op, target in redirects)


#: The matchers that judge any program, by what its redirections write (the others each ask for their names first).
WRITE_MATCHERS: tuple[Callable[[Simple], Hit | None], ...] = (_device_write, _kernel_trigger, _system_file,
                                                               _startup_file)


def match(simple: Simple) -> Refusal | None:
    """The first rule in :data:`MATCHERS` order that ``simple`` breaks, as a refusal."""
    name = simple.name
    matchers = MATCHERS
    if name not in JUDGED_NAMES and not name.startswith("mkfs"):
        if not judged_writes(simple.redirects, simple.cwd):
            return None
        matchers = WRITE_MATCHERS  # (ls 2>/dev/null: four matchers, not nineteen)
    for matcher in matchers:
        hit = matcher(simple)
        if hit:
            return refuse(hit[0], simple.display, **hit[1])
    return None
