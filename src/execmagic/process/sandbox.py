"""An operating-system sandbox for commands: bubblewrap (``bwrap``) namespaces around one argv.

This module builds the walls once, when a sandbox is set (:func:`plan_sandbox`), and its docstring is
the sandbox's manual.  Its parts, a module each: what a sandbox is asked for and whether it can be
honoured (:mod:`.sandbox_spec`), finding bwrap and whether it works here (:mod:`.sandbox_bwrap`), what
the walls hide by allow-list (:mod:`.sandbox_walls`), what is found on disk inside the roots
(:mod:`.sandbox_scan`), and a session's ``/tmp`` and limits (:mod:`.sandbox_session`).

What a sandboxed command can and cannot do, by mode:

- ``off``: nothing changes; :meth:`Sandbox.wrap` returns the argv as it is.
- ``read-only``: the whole file system is visible read-only; the only writable place is a private
  ``/tmp``: the session's, of a bounded size and kept from one run to the next, when the sandbox is
  planned with ``walls`` (:mod:`.sandbox_session`: runs enter its namespaces first, which also hold
  the session's process and memory limits); else an empty tmpfs per run, or the caller's own ``temp``
  folder bound there.
- ``workspace``: as ``read-only``, plus the *writable roots* (absolute folders fixed when the sandbox
  is set; a later ``cd`` never moves them).  The ``.git`` folders of the roots, and of repositories
  found up to :data:`GIT_SCAN_DEPTH` levels below them, stay read-only (a hook or a ``core.fsmonitor``
  line written there would run, unsandboxed, at the user's next ``git`` command), unless
  ``allow_git_writes``; the folders between a root and such a ``.git`` cannot be renamed or removed
  (moving a repository away from the protected path would leave its ``.git`` writable).  A root with
  no ``.git`` gets an empty one, read-only too: a repository made there inside (``git init .`` and a
  ``core.fsmonitor`` line) would run at the user's next plain ``git status`` in that folder, even when
  the folder's own repository is the one above; git passes over an empty ``.git``.

In every mode but ``off``: no network (a fresh network namespace with only its own loopback) unless
``network``; a fresh ``/proc`` in a pid namespace of its own, so no process outside is visible or can
be signalled; a minimal ``/dev``; no capabilities and no further user namespaces (``unshare -r``,
``nsenter`` and ``mount`` cannot regain privileges); the kernel's settings (``/proc/sys``) read-only,
for a kernel running as root, who owns them with or without capabilities; hidden by allow-list
(:mod:`.sandbox_walls`): the home folder is an empty read-only tmpfs but for the roots in it, the paths
the caller shows (``visible``: the kernel's interpreter, a user's additions) and a short list of
secret-free configuration, and so are the host's ``/run`` and ``/var/lib`` (their Unix sockets: Docker,
D-Bus, databases, other users' runtime folders), whatever appears there later included; the files of
``/etc`` only root may read show empty.  Hidden behind an empty read-only tmpfs (a folder) or
``/dev/null`` (a file), where the walls do not cover them already: the credential stores of the home
folder that lie in a path shown there (:data:`CREDENTIAL_STORES`: ``visible=("~/.config",)`` still hides
``~/.config/gcloud``), the secrets a container platform mounts (:data:`SYSTEM_SECRETS`), and whatever the
caller names in ``hidden``.  The shared ``/tmp`` is replaced by the private one because it holds sockets
too (tmux, ssh-agent, X11): ``connect()`` works on a read-only mount, so a visible socket of a tmux
server is a way out.

What the caller passes (the engine, which knows these paths; this layer imports no Jupyter):

- ``hidden``: Jupyter's runtime folder (``jupyter_core.paths.jupyter_runtime_dir()``: the kernels'
  connection files hold the key that lets anyone run code in the kernel), execmagic's log root, the
  audit log, a user's ``log_dir``.
- ``readable`` / ``writable``: the exceptions a run needs inside what is hidden, bound back at the
  same path after the hiding: the session prelude where it is a file (read-only: a sandbox that could
  rewrite it would run code in the next unsandboxed shell; the engine's is a sealed memory file handed
  as a descriptor, which passes through bwrap as it is), a script file (read-only), the run's state file
  (writable).  A bind needs its source to exist: create the state file empty (``private.create_file``)
  before the run -- bash's ``> file`` then truncates and writes it in place.  Per-run paths go to
  :meth:`Sandbox.confine`, session-wide ones to the spec.
- the environment: never bwrap's own.  bwrap runs on the host, before any wall exists, so a
  command's ``export LD_PRELOAD=...`` in its environment would run the command's code there (as root,
  for a root kernel).  :meth:`Sandbox.confine` starts bwrap with :data:`HOST_ENV` and hands the run's
  environment inside as ``--setenv`` pairs read from a private file descriptor (``--args FD``), with
  every other option and private path: on bwrap's argv, which every user reads in ``ps``, stand only
  its path and the command.  :meth:`Sandbox.environment` points ``TMPDIR`` (and ``TMP``/``TEMP``) at
  the private ``/tmp``; the engine's marker variable stays in bwrap's own environment and passes
  through, so the engine still finds every sandboxed process by its environment.

Wiring, for the engine (the plan is made once, when the sandbox is set; each run only concatenates)::

    if not availability().ok: ...say availability().reason...
    choice = resolve_roots(allowed_dirs or [start_folder], home=home, explicit=bool(allowed_dirs))
    spec = SandboxSpec(mode="workspace" if choice.roots else "read-only", writable_roots=choice.roots,
                       hidden=(runtime_dir, log_root, audit_log), readable=(prelude,))
    sandbox = plan_sandbox(spec, home=home)     # raises UnsafeRoot / SandboxUnavailable / SandboxProblem
    confined = sandbox.confine(argv, cwd, env, readable=(script,), writable=(state_file,))
    launch(Command(argv=confined.argv, env=confined.env, fd_args=confined.fd_args, ...), marker)

``confine`` puts bwrap's absolute path first: ``launch`` then runs that file, never a ``bwrap`` found on
the session's PATH (a sandboxed agent could have planted one there).  bwrap finds the command itself
on the run's PATH, inside the sandbox: resolve it with ``launch.resolve_executable`` first so that
a missing command is still the engine's own error.  The ``cwd`` must exist inside the sandbox (a
folder under the shared ``/tmp`` that is not a root does not).

How it meets the engine's process handling:

- A standby shell started outside the sandbox must not take a sandboxed run (it would run it
  unsandboxed): start the standby itself through :meth:`Sandbox.wrap`, or take none while a sandbox is set.
- A user namespace is used for root too (uid 0 stays 0 inside; files of other users show as owned by
  ``nobody``): it is what lets bwrap forbid further user namespaces.  Where root may not make one,
  :func:`availability` falls back to none, and capabilities are dropped all the same.

- **No** ``--die-with-parent``: it sets ``PR_SET_PDEATHSIG``, which fires when the parent *thread*
  exits, and background shells are started from worker threads that end long before the shell.  A
  dead owner's sandboxes are stopped by the watchdog like any other run.
- ``--new-session``: the command gets a session of its own, so it cannot push keystrokes into a
  terminal (``TIOCSTI``) even where a caller did not start it in a new session (the engine does: then
  it is only a second line of defence).  The engine's stop still reaches it: ``stop_tree`` takes the
  leader's whole tree and every process carrying the marker, not only the session.
- Background processes a command leaves behind live on inside the sandbox after bwrap exits (its
  pid 1 waits for them), marked and found like any other leftover; killing that pid 1 ends them all.
  That pid 1 also holds the command's stdout and stderr until the last process inside ends, so a
  ``daemon >/dev/null &`` keeps the run's pipes open where it would not outside: the drain period
  applies, then the stop of what was left running.  (``--as-pid-1`` would avoid it, but then the
  kernel SIGKILLs every leftover the instant the command ends, without the stop's SIGTERM grace.)
  A run in a standby started inside (the engine's) has its pipes apart from bwrap's own
  (:mod:`.standby_apart`): there such a daemon is left running in the background, as outside.
- A run in a standby started inside ends with its shell, as an unconfined run does: left to bwrap, the
  shell's exit would wake bwrap's pid 1, which tells bwrap's monitor (an ``eventfd``), which exits -- two
  wake-ups more (about 0.4 ms on an idle machine of two cores, a scheduler's slice each on a loaded one).
  The run watches the shell from outside instead and reads how it ended where the kernel keeps it
  (:mod:`.sandbox_end`); bwrap's two processes, killed then, are reaped a moment later.  Tearing the
  sandbox's namespaces down is kept off that path too (:mod:`.sandbox_keep`); ``--as-pid-1``, measured, is no faster.
  Starting such a standby costs far more than the run it serves (30-90 ms on a loaded machine: the session's
  cgroup, bwrap's namespaces and mounts), so the engine keeps two ready per sandbox: a run right after a run
  takes the second while the first is started again (see the engine's ``warm`` module).

bwrap adds a few times a plain start's cost to every start (new namespaces, the mounts), so
nothing is looked up per run: everything found on disk (the ``.git`` scan, which hidden paths exist) is found
once, in :func:`plan_sandbox`, and so are the files of the roots hard-linked to files outside them
(put there earlier, by an unconfined step: one made inside fails, ``EXDEV``), bound read-only by
themselves (:func:`linked_outside`). Known limits: past :data:`LINK_BIND_LIMIT` such files (a
virtualenv whose files a package manager linked from its cache), or :data:`LINK_SCAN_LIMIT` entries,
the rest stay writable, and the sandbox's notes say so; a repository created later in a folder below
a root (the root itself has its read-only ``.git``), or deeper than the scan, has a writable ``.git``,
which runs at a ``git`` command the user runs in that folder; with the network on, the host's abstract
Unix sockets are reachable too, and every service on its loopback (a Jupyter server among them: with
its token, or none, it runs code unconfined). What a root holds and the user later runs unconfined
runs with the command's changes: scripts, a Makefile, a ``setup.py`` -- the user's to judge.  Python
modules next to a notebook are not imported by a kernel started from execmagic's kernelspecs before
it is up (see :mod:`execmagic.magics.kernel_launcher`); a kernel started otherwise by ``python -m
ipykernel_launcher`` imports an ``ipykernel_launcher.py`` from that folder first.

``EXECMAGIC_BWRAP`` (:data:`BWRAP_VAR`), in the kernel's own environment, names the bwrap to use; set empty, or to
a file that is not there, it says "no bubblewrap here" (named modes fail, ``auto`` runs unconfined and says so).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence

from .launch import MARKER_VAR
from .records import record
from .sandbox_bwrap import BWRAP_VAR, SYSTEM_DIRS, Availability, SandboxUnavailable, availability, base_args, find_bwrap
from .sandbox_bwrap import PRIVATE_TMP as _TMP
from .sandbox_scan import GIT_SCAN_DEPTH, LINK_SCAN_LIMIT, git_dirs, git_placeholders, linked_outside
from .sandbox_scan import outermost as _outermost
from .sandbox_scan import pinned as _pinned
from .sandbox_scan import real_path as _real
from .sandbox_scan import within as _within
from .sandbox_session import HOST_ENV, SessionWalls
from .sandbox_spec import RootChoice, SandboxProblem, SandboxSpec, UnsafeRoot, checked_spec, resolve_roots
from .sandbox_walls import Walls, find_walls

__all__ = [
    "BWRAP_VAR",
    "CREDENTIAL_STORES",
    "GIT_SCAN_DEPTH",
    "HOST_ENV",
    "LINK_BIND_LIMIT",
    "LINK_SCAN_LIMIT",
    "MODES",
    "SYSTEM_DIRS",
    "SYSTEM_SECRETS",
    "Availability",
    "Confined",
    "RootChoice",
    "Sandbox",
    "SandboxProblem",
    "SandboxSpec",
    "SandboxUnavailable",
    "UnsafeRoot",
    "availability",
    "find_bwrap",
    "git_dirs",
    "linked_outside",
    "plan_sandbox",
    "resolve_roots",
]

#: The sandbox modes, weakest first.
MODES = ("off", "read-only", "workspace")
#: Credential stores below the home folder (keys, cloud and registry tokens, the data services of notebooks,
#: database passwords, browser profiles with their session cookies, agents' and package indexes' logins,
#: settings files that hold tokens), and the histories where secrets typed by hand end up (shells, Python,
#: IPython's of every notebook cell, database shells).  The home folder is hidden whole (:mod:`.sandbox_walls`):
#: these are hidden again where a path shown in it holds them -- a second line, never the first.
CREDENTIAL_STORES = (
    ".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker", ".netrc", ".git-credentials", ".pypirc",
    ".azure", ".config/gh", ".npmrc", ".cargo/credentials", ".cargo/credentials.toml", ".password-store",
    ".local/share/keyrings",
    ".cache/huggingface/token", ".huggingface", ".kaggle", ".databrickscfg", ".config/rclone", ".s3cfg", ".boto",
    ".vault-token", ".terraform.d/credentials.tfrc.json", ".config/hub", ".pgpass", ".my.cnf", ".m2/settings.xml",
    ".mozilla", ".config/google-chrome", ".config/chromium",
    ".config/git/credentials", ".config/git/config", ".gitconfig", ".claude", ".claude.json", ".codex", ".gemini",
    ".config/github-copilot", ".cache/huggingface/stored_tokens", ".config/pip", ".pip", ".condarc",
    ".config/containers/auth.json", ".jupyter", ".local/share/jupyter/runtime",
    ".bash_history", ".zsh_history", ".python_history", ".ipython", ".psql_history", ".mysql_history",
    ".sqlite_history", ".node_repl_history", ".Rhistory", ".lesshst",
)
#: Secrets a machine mounts for its programs: a Kubernetes pod's service-account token (JupyterHub on
#: Kubernetes), Docker's and Compose's secrets.  Useless without the network, but readable they can be put
#: in an answer, for the model's next unconfined step.
SYSTEM_SECRETS = ("/run/secrets", "/var/run/secrets")
#: At most this many such files are kept read-only: each is a mount of its own, which bwrap makes at every
#: start (thousands cost seconds per run); past it, the rest stay writable and the sandbox says how many.
LINK_BIND_LIMIT = 64


@record
class Confined:
    """How to start one sandboxed command: what :func:`~.launch.launch` (or a standby) is given."""

    #: bwrap's path, ``--`` and the command (the only words other users see in ``ps``).
    argv: tuple[str, ...]
    #: bwrap's own environment: :data:`HOST_ENV` (and the marker), never the command's.
    env: dict[str, str]
    #: The rest of bwrap's arguments, NUL-separated, for ``--args FD`` (``None``: unconfined, ``argv`` as is).
    fd_args: bytes | None = None
    #: Where bwrap stands in ``argv`` (after the program that enters the session's namespaces, if any).
    reader: int = 0


def _nul_joined(args: Iterable[str]) -> bytes:
    """``args`` as bwrap's ``--args`` reads them: each NUL-terminated (``surrogateescape``: bytes as they came)."""
    return b"".join(os.fsencode(arg) + b"\0" for arg in args)


@record
class Sandbox:
    """A sandbox set once: the bwrap argv prefix is computed here, each run only appends to it."""

    spec: SandboxSpec
    #: bwrap and its options up to a run's own exceptions; empty when the mode is ``off``.
    prefix: tuple[str, ...] = ()
    #: What follows a run's exceptions: the hiding tmpfs made read-only (bwrap makes their mount points first).
    seal: tuple[str, ...] = ()
    #: The ``.git`` folders and files kept read-only.
    protected: tuple[str, ...] = ()
    #: The folders that are empty inside (the private ``/tmp``, the hiding tmpfs): see :meth:`wrap`.
    emptied: tuple[str, ...] = ()
    #: What the caller should say about the walls (files hard-linked outside the roots left writable).
    notes: tuple[str, ...] = ()
    #: One line: what is hidden and what is shown inside it (:meth:`.sandbox_walls.Walls.describe`).
    visibility: str = ""
    #: The session's holder (its ``/tmp`` and limits, see :mod:`.sandbox_session`), which runs enter first.
    walls: SessionWalls | None = None

    def wrap(self, argv: Sequence[str], cwd: str, *, readable: Iterable[str] = (),
             writable: Iterable[str] = ()) -> tuple[str, ...]:
        """The argv that runs ``argv`` in ``cwd`` inside the sandbox (``off``: ``argv`` itself), every option
        on it -- for a look at what bwrap is told; runs go through :meth:`confine`, which keeps them off it.

        ``readable`` / ``writable``: this run's own exceptions to what is hidden (its script, its state
        file), which must exist.  Nothing is looked up on disk here: a run pays for a tuple, no more.
        """
        if not self.prefix:
            return tuple(argv)
        return (self.prefix[0], *self._options(cwd, readable, writable), "--", *argv)

    def confine(self, argv: Sequence[str], cwd: str, env: Mapping[str, str], *, readable: Iterable[str] = (),
                writable: Iterable[str] = ()) -> Confined:
        """How to start ``argv`` in ``cwd`` with ``env`` inside the sandbox (``off``: as it is).

        bwrap runs outside the walls, so it never gets ``env``: a command's ``export LD_PRELOAD=...`` (or
        any loader or interpreter variable, :data:`HOST_ENV` says why none passes) would run code of the
        command's choosing in bwrap itself, on the host, before any namespace exists.  bwrap starts with
        :data:`HOST_ENV` and reads everything else -- its options, the run's private paths, and ``env``
        as ``--setenv`` pairs -- from a private file descriptor (``--args FD``), which no other user can
        read the way ``ps`` shows an argv.  Only bwrap's path and the command itself are on the argv.
        The marker variable stays in bwrap's own environment (the command inherits it from there), so
        that a value the command set cannot hide it from the engine's sweep.
        """
        if not self.prefix:
            return Confined(tuple(argv), dict(env))
        inside = self.environment(env)
        marker = inside.pop(MARKER_VAR, None)
        outside = dict(HOST_ENV) if marker is None else {**HOST_ENV, MARKER_VAR: marker}
        handed = list(self._options(cwd, readable, writable))
        handed += [arg for name in outside if name not in inside and name != MARKER_VAR
                   for arg in ("--unsetenv", name)]
        handed += [arg for name, value in inside.items() for arg in ("--setenv", name, value)]
        entry = self.walls.entry() if self.walls is not None else ()
        return Confined((*entry, self.prefix[0], "--", *argv), outside, _nul_joined(handed), reader=len(entry))

    def _options(self, cwd: str, readable: Iterable[str], writable: Iterable[str]) -> tuple[str, ...]:
        """bwrap's options for one run, after its path: the prefix, the run's exceptions, the seal, the cwd.

        A ``cwd`` below a folder that is empty inside (the host's ``/tmp``, where a notebook may stand; a
        hidden folder) does not exist there: it is made, empty, before the chdir -- the command runs in
        the private copy, as it would in any other private ``/tmp`` path.  Else bwrap fails to chdir
        before the command runs, and a session standing there could never ``cd`` away.
        """
        extra = [arg for p in readable for arg in ("--ro-bind", p, p)]
        extra += [arg for p in writable for arg in ("--bind", p, p)]
        if any(_within(cwd, folder) and cwd != folder for folder in self.emptied):
            extra += ["--dir", cwd]  # before the seal: a hiding tmpfs is still writable then
        return (*self.prefix[1:], *extra, *self.seal, "--chdir", cwd)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` as a sandboxed command sees it: a temp folder variable that is set points at the private
        ``/tmp`` (the outside one it named is hidden or read-only inside)."""
        out = dict(env)
        if self.prefix:
            for name in ("TMPDIR", "TMP", "TEMP"):
                if name in out:
                    out[name] = _TMP
        return out

    def describe(self) -> str:
        """One line for a summary: the mode, what is writable, the network."""
        mode = self.spec.mode
        if mode == "off":
            return "sandbox off"
        tmp, limits = ("a private /tmp", "") if self.walls is None else self.walls.describe()
        writable = [*self.spec.writable_roots, tmp] if mode == "workspace" else [tmp]
        git = "" if mode != "workspace" or self.spec.allow_git_writes else "; .git read-only"
        network = "on" if self.spec.network else "off"
        limited = f"; {limits}" if limits else ""
        return f"sandbox {mode}: writable {', '.join(writable)}{git}; network {network}{limited}"


def plan_sandbox(spec: SandboxSpec, *, home: str, bwrap: str | None = None,
                 walls: SessionWalls | None = None) -> Sandbox:
    """Set a sandbox: check the spec, find what exists on disk, build the bwrap argv prefix once.

    ``home``: the user's home folder (hidden but for what is shown in it, :mod:`.sandbox_walls`; it may not be
    a root).
    ``walls``: the session's holder (:func:`.sandbox_session.start_walls`): runs enter it, and its ``/tmp``
    is bound there (it replaces ``spec.temp``).
    Raises :class:`SandboxProblem` / :class:`UnsafeRoot` for a spec that cannot be honoured and
    :class:`SandboxUnavailable` when bwrap cannot run here (see :func:`availability`).
    """
    if spec.mode not in MODES:
        raise SandboxProblem(spec.mode, f"unknown sandbox mode (one of: {', '.join(MODES)})")
    if spec.mode == "off":
        return Sandbox(spec)
    if walls is not None:
        spec = dataclasses.replace(spec, temp=walls.folder)
    spec = checked_spec(spec, home)
    roots = spec.writable_roots
    found = availability(bwrap)
    if not found.ok or found.bwrap is None:
        raise SandboxUnavailable(found.reason or "", found.detail)
    if not spec.allow_git_writes:
        git_placeholders(roots)  # before the scan, which finds them: read-only like any .git
    protected = () if spec.allow_git_writes else _outermost(git_dirs(roots))
    seen = find_walls(home, visible=spec.visible, roots=roots, network=spec.network)
    args = [*base_args(found.bwrap, spec, found.userns), *seen.args()]
    args += [a for root in roots for a in ("--bind", root, root)]
    # "-try": a repository removed after the sandbox was set has nothing left to protect; without it,
    # bwrap would fail to mount it, and every later run with it
    # the folders above the kernel's own environment too, where it is bound read-only in a root (a renamed
    # parent would let a new environment be made at its path, which the next kernel start runs)
    args += [a for folder in _pinned((*protected, *spec.readable), roots) for a in ("--bind-try", folder, folder)]
    args += [a for path in protected for a in ("--ro-bind-try", path, path)]
    linked, notes = _linked_read_only(roots)
    args += [a for path in linked for a in ("--ro-bind-try", path, path)]
    hiding, seal = _hiding_args(spec, home, seen)
    seal = [*seal, *(a for folder in seen.sealed() for a in ("--remount-ro", folder))]
    emptied = (_TMP, *seal[1::2])  # the folders the seal makes read-only are the hiding tmpfs
    return Sandbox(spec, (*args, *hiding), tuple(seal), protected, emptied, notes, seen.describe(), walls)


def _linked_read_only(roots: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """The files of the roots hard-linked outside them, to keep read-only (at most :data:`LINK_BIND_LIMIT`),
    and what to say about those left writable or not looked at."""
    linked, complete = linked_outside(roots)
    notes = []
    if len(linked) > LINK_BIND_LIMIT:
        notes.append(f"{len(linked) - LINK_BIND_LIMIT} more files of the workspace share their data with files"
                     f" outside it (hard links) and stay writable; the first {LINK_BIND_LIMIT} are read-only")
    if not complete:
        notes.append(f"the workspace has over {LINK_SCAN_LIMIT:,} entries: files past them were not checked for"
                     " hard links to files outside it")
    return linked[:LINK_BIND_LIMIT], tuple(notes)


def _hiding_args(spec: SandboxSpec, home: str, walls: Walls) -> tuple[list[str], list[str]]:
    """Hide what exists of the credential stores, the system's secrets and ``spec.hidden`` where the walls do
    not already, and bind back the exceptions; and, apart, what makes the hiding tmpfs read-only -- which
    must come after every exception, a run's own too (bwrap makes their mount points in the tmpfs)."""
    wanted = [os.path.join(home, store) for store in CREDENTIAL_STORES]
    everything = (*wanted, *SYSTEM_SECRETS, *spec.hidden)
    folders, files = _existing(p for p in _outermost(_real(p) for p in everything) if not walls.covers(p))
    args = [a for folder in folders for a in ("--tmpfs", folder)]
    args += [a for file in files for a in ("--ro-bind", "/dev/null", file)]
    args += [a for p in spec.readable for a in ("--ro-bind", p, p)]
    args += [a for p in spec.writable_paths for a in ("--bind", p, p)]
    return args, [a for folder in folders for a in ("--remount-ro", folder)]


def _existing(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """The folders and the other files among ``paths`` that exist (nothing to hide where nothing is)."""
    folders: list[str] = []
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            folders.append(path)
        elif os.path.exists(path):
            files.append(path)
    return folders, files
