"""A bash started before it is needed, so that a run only hands it its script.

(Over 400 lines, on purpose: a third of it is this docstring, the standby's contract with a cold start,
which the code beside it keeps; the runner's boot, fit check and discard (``_boot``, :meth:`Standby.fits`,
:meth:`Standby.discard`) share that contract.)

Starting bash (exec, dynamic linking, start-up) is most of a short command's time.  A *standby*
is that bash started ahead -- with the next run's cwd and environment, in its own process
session, marked and known to the watchdog like any run -- blocked reading its script from a
pipe.  A run only writes the script and reads the output (the benchmark has the figures).

The standby runs the script with ``eval``, which behaves as ``bash -c`` does in everything
tested (``$LINENO``, ``$0``, ``$#``, ``$_``, ``$BASH_EXECUTION_STRING``, ``$SHLVL``, command
errors, ``exit``, ``return``, the EXIT trap) but one: a syntax error reads ``bash: eval: line
N`` where ``bash -c`` says ``bash: -c: line N``.  So it takes only a script that surely parses
(:mod:`..shell.plain_syntax`: ``ls -la``, ``cd data && make > log``, ``echo "$HOME"``); any other runs
cold, with ``bash -c``, exactly as with no standby at all, and the standby waits for the next run.
(Asking a ``bash -n`` started beside it instead would cost a second process per standby,
which eats the start-up it saves when runs come back to back.)  The runner's
``read`` takes a pipe a byte at a time, so a script over :data:`SCRIPT_LIMIT` runs cold too.
The runner holds nothing but its pipes until used, and is killed with its session when the
standby is discarded.

A run takes the standby only if a cold start made at that moment would inherit what it did: the
same cwd (the same directory), environment, bash, and process attributes -- user, groups,
capabilities, namespaces, limits, scheduling and the rest (:mod:`.inherit` lists them) -- so a
change Python made since (``os.setgroups``, ``unshare``, ``os.umask``...) starts the run cold.
``$SECONDS`` is counted from the run's start, as in a cold start.  Two things still tell a standby
from a cold start: ``/proc/$$/cmdline`` (what ``ps`` shows) is ``bash -c`` with the boot line, not
with the script -- a process cannot rewrite its arguments without a privilege (``PR_SET_MM``) or
a new ``exec``, the very start-up the standby saves -- and the process's start time
(``/proc/$$/stat``, ``ps -o lstart``) is when the standby started.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..shell.plain_syntax import surely_parses
from .errors import PreExecError
from .inherit import Inherited, inherited
from .launch import MARKER_VAR, executable_identity, found_executable, handed_args
from .pump import ready_pipes
from .sandbox_end import ShellEnd
from .spec import Command
from .standby_apart import Apart, pipes
from .standby_reap import kill_and_reap, reap_killed
from .stop import ignores
from .system import readable

if TYPE_CHECKING:
    from .sandbox import Confined

__all__ = ["SCRIPT_LIMIT", "STANDBY_ENV_VAR", "Confine", "Standby", "StandbyGone", "can_stand_by", "idle_pids",
           "runs_in_standby", "standby_default", "start_standby"]

#: ``EXECMAGIC_STANDBY=0`` in the environment: engines of this process start with no standby shell.
STANDBY_ENV_VAR = "EXECMAGIC_STANDBY"

#: Bytes of script a standby takes at most: its ``read`` takes a pipe a byte at a time (a system call
#: each), and one write into an empty pipe of this size never blocks.
SCRIPT_LIMIT = 2048
#: Seconds a standby may take to start, and the one-time probe of ``env --default-signal``.
_PROBE_TIMEOUT = 5.0

#: A script that may turn on tracing in its own shell (``set -x``, ``set -eux``, ``set -o xtrace``,
#: ``shopt -o xtrace``, ``SHELLOPTS``): ``eval`` is one level of indirection more than ``bash -c``, which
#: xtrace shows (``++ cmd`` for ``+ cmd``).  A false match (``set -- -x``) only costs a cold start; ``tar -xf``
#: or ``chmod +x`` do not match.  Not caught: tracing turned on by a file the script sources, or by ``eval``.
_MAY_TRACE = re.compile(r"\bset\b[^\n;&|]*[-+][A-Za-z]*x|xtrace|SHELLOPTS")

Register = Callable[[int, str], Callable[[], None]]
Expect = Callable[[str], Callable[[], None]]

_idle: dict[int, Standby] = {}  # runner pid -> standby, while it waits for a script
_idle_lock = threading.Lock()
# A child forked without exec (multiprocessing's fork start) inherits every descriptor.  Holding a standby's
# script pipe open there, it would keep the runner from ever seeing the end of its script.  So a fork waits
# while descriptors are made or handed over (under this lock), and the child closes every one it inherited
# and treats those standbys as the parent's (see _after_fork_in_child).
_fork_lock = threading.Lock()
_every: weakref.WeakSet[Standby] = weakref.WeakSet()


def standby_default() -> bool:
    """Whether engines keep a standby shell unless told otherwise (``EXECMAGIC_STANDBY=0``: no).  Linux only:
    what a run inherits is compared through ``/proc/thread-self`` (elsewhere every command starts cold)."""
    if not sys.platform.startswith("linux"):
        return False
    return os.environ.get(STANDBY_ENV_VAR, "1").strip().lower() not in ("0", "off", "false", "no")


def idle_pids() -> list[int]:
    """The pids of every standby of this process still waiting for a script."""
    with _idle_lock:
        return list(_idle)


def runs_in_standby(script: str) -> bool:
    """Whether a standby may run ``script`` for ``bash -c script`` and nobody could tell: it surely parses
    (a syntax error would read as ``eval``'s), is within :data:`SCRIPT_LIMIT`, has no NUL (``bash -c`` cannot
    be given one; the runner's ``read`` would drop it), does not trace itself (``eval`` shows one level more),
    and does not start with ``-`` or ``+`` (``bash -c`` reads those as options)."""
    return len(script) <= SCRIPT_LIMIT and _short_runs_in_standby(script)


@functools.lru_cache(maxsize=128)  # a notebook runs the same few lines again and again: each is read once
def _short_runs_in_standby(script: str) -> bool:
    """:func:`runs_in_standby` of a script of at most :data:`SCRIPT_LIMIT` characters (so the answers kept
    are small): a function of the text alone."""
    if "\0" in script or script.startswith(("-", "+")) or _MAY_TRACE.search(script):
        return False
    try:
        if len(script.encode("utf-8", "surrogateescape")) > SCRIPT_LIMIT:
            return False
    except UnicodeEncodeError:  # a lone surrogate: let the cold start say what it says
        return False
    return surely_parses(script)


#: SIGINT's bit in the ignored-signals mask.
_SIGINT_BIT = 1 << (signal.SIGINT - 1)


@functools.cache
def _env_with_default_signal() -> str | None:
    """An ``env`` that can start a program with a signal back at its default (coreutils 8.31 and newer)."""
    env = shutil.which("env")
    if env is None:
        return None
    try:
        done = subprocess.run([env, "--default-signal=INT", "true"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=_PROBE_TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        return None
    return env if done.returncode == 0 else None


def _directory_of(pid: int) -> tuple[int, int] | None:
    """The directory process ``pid`` works in (device and inode; ``None``: gone)."""
    with contextlib.suppress(OSError):
        its = os.stat(f"/proc/{pid}/cwd")
        return its.st_dev, its.st_ino
    return None


def _same_environment(env: Mapping[str, str], mine: Mapping[str, str], ignore: frozenset[str]) -> bool:
    """Whether each variable of ``env`` not in ``ignore`` is in ``mine`` with its value.  With as many names in
    each, and every ignored name of ``env`` in ``mine`` too, that is a dict comparison (done in C) of ``env``
    given ``mine``'s values of the ignored names: a loop over fifty-odd names in Python cost more than the rest
    of the check.  Otherwise (rare) they are asked name by name."""
    if len(env) == len(mine) and all(name in mine for name in ignore if name in env):
        patched = dict(env)
        for name in ignore:
            if name in patched:
                patched[name] = mine[name]
        return patched == mine
    missing = object()
    return all(name in ignore or mine.get(name, missing) == value for name, value in env.items())


def _identity(path: str) -> tuple[int, int]:
    """The file ``path`` names (its device and inode)."""
    found = os.stat(path)
    return found.st_dev, found.st_ino


def _program(pid: int) -> tuple[int, int] | None:
    """The file process ``pid`` runs (device and inode; ``None``: gone)."""
    with contextlib.suppress(OSError):
        return _identity(f"/proc/{pid}/exe")
    return None


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close our ends of the pipes of ``proc`` (an end already closed is fine)."""
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


class StandbyGone(Exception):
    """The standby died before it could take its script (killed from outside): run the command cold."""


def _boot(script_fd: int, ready_fd: int, streams: tuple[int, int] | None = None) -> str:
    """The runner's own script, one line (``eval`` counts ``$LINENO`` from its own line): say it is up (a
    byte on a pipe of its own), read the script into the variable ``bash -c`` keeps it in, let go of both
    pipes (a plain ``exec``: put behind ``builtin`` it would keep them open; the ``read``, which ends at
    EOF with status 1, in an ``||`` list: no ERR trap takes it for a failure of the script's), count
    ``$SECONDS`` from now (not from when the standby started), leave ``$_`` as bash -c starts with it
    (bash's path; after the assignment, which empties it), run it.  Builtins by name where it can: an
    exported function of the same name would run instead (an environment exporting ``exec`` or ``builtin``
    gets no standby at all).  ``streams``: the run's stdout and stderr, handed apart (see :mod:`.standby_apart`),
    made the shell's own before it says it is up."""
    moved = "" if streams is None else f"exec 1>&{streams[0]} 2>&{streams[1]} {streams[0]}>&- {streams[1]}>&-; "
    return (f"{moved}builtin printf . >&{ready_fd}; exec {ready_fd}>&-; "
            f"IFS= builtin read -r -N 2147483647 -u {script_fd} BASH_EXECUTION_STRING || builtin :; "
            f"exec {script_fd}<&-; "
            'SECONDS=0; builtin : "$BASH"; builtin eval "$BASH_EXECUTION_STRING"')


#: Functions the boot line calls; exported in the environment (``BASH_FUNC_name%%``) they would run instead.
_BOOT_NAMES = ("builtin", "exec", "printf", "read", ":", "eval")


def can_stand_by(env: Mapping[str, str]) -> bool:
    """Whether a standby can be started with ``env``: it exports no function that would take over its boot line,
    nor ``SECONDS`` (bash -c counts from its value; the boot line counts from 0)."""
    return "SECONDS" not in env and not any(f"BASH_FUNC_{name}%%" in env for name in _BOOT_NAMES)


def _wait_until_up(runner: subprocess.Popen[bytes], ready: int, program: tuple[int, int], ignores_int: bool) -> None:
    """Wait for the runner's byte: bash (not ``env`` on its way to it) is started and reading; check it runs
    ``program`` and ignores SIGINT as recorded (``ignores_int``): where ``env`` put it back at its default, that
    it did; without env, that Python did not change it between the record and the fork."""
    if not readable(ready, _PROBE_TIMEOUT) or os.read(ready, 1) != b".":
        raise OSError("the standby shell did not start")
    if _program(runner.pid) != program:
        raise OSError("the standby shell runs another program")
    if ignores(runner.pid, signal.SIGINT) != ignores_int:
        raise _SigintFlipped("the standby shell's SIGINT is not as recorded")


class Standby:
    """A runner bash blocked reading its script.

    ``cwd`` and ``env`` are what it was started with (the marker aside); :meth:`fits` says
    whether a command would run the same in it.  Use once: :meth:`release` (which hands the
    runner over) or :meth:`discard`.
    """

    def __init__(self, *, cwd: str, env: Mapping[str, str], marker: str, runner: subprocess.Popen[bytes],
                 script_fd: int, unregister: Callable[[], None], attributes: Inherited, program: str,
                 program_id: tuple[int, int], apart: Apart | None = None) -> None:
        self.cwd = cwd
        self._bash = program  # the bash found on PATH as it started (the runner was checked to run that file)
        self._program_id = program_id  # that file: a cold run must find the same
        self.env = dict(env)
        self.marker = marker
        self.runner = runner
        self.inherited = attributes  # what :func:`inherited` said as it was started
        #: The runner's directory (:func:`_directory_of`), read once as it is up: blocked reading its script, it
        #: changes directory no more, and no other process can change it (a stat of /proc less on every check).
        self.directory: tuple[int, int] | None = None
        self._script_fd: int | None = script_fd
        self._unregister: Callable[[], None] | None = unregister
        self._apart = apart
        #: A sandboxed standby's shell, watched from outside bwrap: its run ends with it (see :mod:`.sandbox_end`).
        self.shell_end: ShellEnd | None = None
        self._owner = os.getpid()
        #: Set once it is handed its script, or discarded (the keeper starts the next after: see ..engine.warm).
        self.handed = threading.Event()
        _every.add(self)
        with _idle_lock:
            _idle[runner.pid] = self

    program = property(lambda self: os.path.realpath(self._bash), doc="The bash it runs, by its real path.")

    def fits(self, command: Command, ignore: frozenset[str] = frozenset()) -> bool:
        """Whether ``command`` is a plain ``bash -c SCRIPT`` that would run the same here (the script itself is
        :func:`runs_in_standby`'s to judge): same cwd (the same directory, not one made again at its path), same
        environment (``ignore``: names the caller sets per run), same inherited process attributes (:mod:`.inherit`),
        no input."""
        argv = command.argv
        if len(argv) != 3 or argv[:2] != ("bash", "-c") or command.input is not None or command.cwd != self.cwd:
            return False
        if self._owner != os.getpid():  # a forked child's copy: the processes are the parent's
            return False
        env, mine = command.env, self.env
        if len(env) != len(mine) or "SHELLOPTS" in env:  # xtrace from the start would show the runner's own line
            return False
        if not _same_environment(env, mine, ignore):
            return False
        try:
            here = os.stat(self.cwd)  # still the directory the runner is in (not one removed and made again)
            if inherited() != self.inherited or (here.st_dev, here.st_ino) != self.directory:
                return False
            # the bash a cold run would start now: one copied onto PATH since, or put in place of this one
            # (a package upgrade), would be another file
            return executable_identity("bash", self.cwd, env) == self._program_id
        except (OSError, PreExecError):  # bash is gone, or /proc/thread-self is root's once Python dropped
            return False  # root (the process is no longer dumpable)

    def release(self, script: bytes) -> subprocess.Popen[bytes]:
        """Hand the runner its script and the run: it is no longer idle (raises :class:`StandbyGone`)."""
        with _idle_lock:
            _idle.pop(self.runner.pid, None)
        with _fork_lock:
            fd, self._script_fd = self._script_fd, None
            assert fd is not None
            try:
                os.write(fd, script)  # within the limit: one write into an empty pipe, never blocks
            except BrokenPipeError:
                raise StandbyGone() from None
            finally:
                os.close(fd)
        self.handed.set()
        return self.runner

    def registration(self) -> Callable[[], None]:
        """The runner's watchdog registration, handed to the run that took it (reports its end)."""
        unregister, self._unregister = self._unregister, None
        return unregister or (lambda: None)

    def discard(self) -> None:
        """Close the runner's script pipe, kill it with its session and reap it (never blocking: see
        :func:`.standby_reap.kill_and_reap`); the watchdog forgets it."""
        with _idle_lock:
            _idle.pop(self.runner.pid, None)
        if self._owner != os.getpid():  # a forked child's copy (its descriptors are closed): not ours to kill,
            self.registration()()  # but the child's watchdog link must not tell a watchdog it starts to sweep it
            return
        if self.runner.returncode is None:  # killed before its script pipe closes: an end of input is an empty
            with contextlib.suppress(ProcessLookupError, PermissionError):  # script, run to its end -- the
                os.killpg(self.runner.pid, signal.SIGKILL)  # session's state written back into the log folder
        with _fork_lock:  # then: a runner that cannot be killed ends at the end of its (empty) script
            if self._script_fd is not None:
                os.close(self._script_fd)
                self._script_fd = None
        kill_and_reap(self.runner)
        _close_pipes(self.runner)
        self._let_go()
        self.registration()()
        self.handed.set()

    def _let_go(self) -> None:
        """Close what a sandboxed standby holds of its own (its pipes before they settled, its shell's end)."""
        if self._apart is not None:
            self._apart.close()
        if self.shell_end is not None:
            self.shell_end.close()
            self.shell_end = None

    def _forget(self) -> None:
        """In a forked child: close the descriptors inherited from the parent's standby (runs at the fork:
        takes no lock; :meth:`discard` drops the registration later)."""
        if self._script_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._script_fd)
        self._script_fd = None
        _close_pipes(self.runner)
        self._let_go()


#: Turns a runner's argv and environment into how it starts inside walls (a sandbox): the argv, the
#: environment of the program that starts (never the runner's own: it runs outside the walls) and the
#: arguments it reads from a file descriptor (see :func:`.launch.handed_args`).
Confine = Callable[[list[str], dict[str, str]], "Confined"]


def start_standby(cwd: str, env: Mapping[str, str], marker: str, *, expect: Expect, register: Register,
                  confine: Confine | None = None, pass_fds: tuple[int, ...] = ()) -> Standby:
    """Start a standby for runs in ``cwd`` with ``env`` (what a plain ``bash -c`` run would get).

    ``expect`` and ``register`` are the watchdog's (as for :func:`~.foreground.run_command`): the
    runner is swept if this process dies.  ``confine`` starts it inside a sandbox, as a confined run
    would start (its argv's first word is then the program that runs: bubblewrap, by its path; the
    runner's pipes pass through it).  ``pass_fds``: descriptors the runner is handed as a run would be
    (:attr:`.spec.Command.pass_fds`).  OS refusals raise ``OSError``; a missing bash raises
    :class:`~.errors.PreExecError`.
    """
    reap_killed()  # the monitor of the run that ended a moment ago (see .standby_reap): this thread is awake now
    run_env = dict(env)
    run_env[MARKER_VAR] = marker
    bash = found_executable("bash", cwd, run_env)
    attributes = inherited()
    env_tool = _env_with_default_signal() if attributes.ignored & _SIGINT_BIT else None
    try:
        return _start(cwd, env, marker, run_env, bash, attributes, env_tool, expect=expect, register=register,
                      confine=confine, pass_fds=pass_fds)
    except _SigintFlipped:  # a cell ended between the read and the fork: once more, through env this time
        if env_tool is not None or (env_tool := _env_with_default_signal()) is None:
            raise
        return _start(cwd, env, marker, run_env, bash, attributes, env_tool, expect=expect, register=register,
                      confine=confine, pass_fds=pass_fds)


class _SigintFlipped(OSError):
    """The runner ignores SIGINT, which Python did not when the start began: a kernel's cell ended meanwhile."""


def _start(cwd: str, env: Mapping[str, str], marker: str, run_env: dict[str, str], bash: tuple[str, tuple[int, int]],
           attributes: Inherited, env_tool: str | None, *, expect: Expect, register: Register, confine: Confine | None,
           pass_fds: tuple[int, ...]) -> Standby:
    """:func:`start_standby`'s start of one runner, through ``env_tool`` (which puts SIGINT back at its default)
    when given: where SIGINT is ignored as the start begins, or once more after a cell's end raced the fork.  (Through
    env every time, each start would cost an exec more: 0.7 ms of CPU.)"""
    if env_tool is not None:
        attributes = attributes._replace(ignored=attributes.ignored & ~_SIGINT_BIT)
    launch = _runner_launch(bash[0], env_tool, run_env, confine)
    with _fork_lock:  # no fork may inherit the pipes before the Standby holds them (a forked child closes them)
        (read_end, write_end), (ready_read, ready_write) = pipes(2)
        apart = runner = unregister = expected = None
        try:
            apart = Apart() if confine is not None else None  # the run's pipes, apart from bwrap's own
            expected = expect(marker)
            boot = _boot(read_end, ready_write, apart.writes if apart is not None else None)
            with handed_args([*launch.argv[:-1], boot], launch.fd_args, reader=launch.reader) as (argv, fds):
                runner = subprocess.Popen(
                    argv, executable=launch.program, cwd=cwd, env=launch.env,
                    pass_fds=(read_end, ready_write, *(apart.writes if apart is not None else ()), *fds, *pass_fds),
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
            unregister = register(runner.pid, marker)
        except BaseException:
            _failed(runner, unregister, write_end, ready_read)
            if apart is not None:
                apart.close()
            raise
        finally:
            os.close(read_end)
            os.close(ready_write)
            if expected is not None:
                expected()
        standby = Standby(cwd=cwd, env=env, marker=marker, runner=runner, script_fd=write_end, unregister=unregister,
                          attributes=attributes, program=bash[0], program_id=bash[1], apart=apart)
    try:
        _wait_until_up(runner, ready_read, launch.up_program or bash[1],
                       ignores_int=bool(attributes.ignored & _SIGINT_BIT))
        if apart is not None:
            standby.shell_end = apart.settle(runner)
        standby.directory = _directory_of(runner.pid)
        ready_pipes(runner)  # its run's pump reads them as they are (here, not on the run's thread)
    except BaseException:
        standby.discard()
        raise
    finally:
        os.close(ready_read)
    return standby


class _Launch(NamedTuple):
    """How a runner is started: its argv (the boot line last, filled in once its pipes exist), the file
    executed, its environment, the file it is checked to run once up (``None``: bash), and the
    arguments handed through a file descriptor (``None``: none)."""

    argv: Sequence[str]
    program: str
    env: dict[str, str]
    up_program: tuple[int, int] | None = None
    fd_args: bytes | None = None
    #: Where in ``argv`` the program that reads ``fd_args`` stands.
    reader: int = 0


def _runner_launch(bash: str, env_tool: str | None, run_env: dict[str, str], confine: Confine | None) -> _Launch:
    """The runner's launch.  A kernel ignores SIGINT between cells, so a standby started then (or as a cell
    ends: the flip races the fork) would ignore it for good (bash cannot undo an ignored signal), where a run
    started in a cell -- Python handles SIGINT there -- gets the default: ``env_tool`` (``env --default-signal``),
    given then (see :func:`start_standby`), puts it back before bash starts,
    finding bash on PATH as a run does (argv[0] stays "bash"; fits() checks the program that runs is that
    bash).  Confined: bwrap, then bash inside, with env before both; the runner is checked to be bwrap."""
    argv: Sequence[str] = ["bash", "-c", ""]
    if confine is not None:
        confined = confine(list(argv), run_env)
        argv, env, reader = confined.argv, confined.env, confined.reader
        program, up_program = argv[0], _identity(argv[reader])  # what enters a session execs bwrap
        if env_tool is not None:  # `env` runs outside the walls too: it gets bwrap's environment
            return _Launch([env_tool, "--default-signal=INT", *argv], env_tool, env, up_program, confined.fd_args,
                           reader=reader + 2)
        return _Launch(argv, program, env, up_program, confined.fd_args, reader=reader)
    if env_tool is not None:
        return _Launch([env_tool, "--default-signal=INT", *argv], env_tool, run_env)
    return _Launch(argv, bash, run_env)


def _failed(runner: subprocess.Popen[bytes] | None, unregister: Callable[[], None] | None, *fds: int) -> None:
    """Undo a start that went wrong: kill and reap the runner, tell the watchdog, close our pipe ends."""
    if runner is not None:
        kill_and_reap(runner)
        _close_pipes(runner)
    if unregister is not None:
        unregister()
    for fd in fds:
        os.close(fd)


def _after_fork_in_child() -> None:
    global _fork_lock, _idle_lock
    _fork_lock, _idle_lock = threading.Lock(), threading.Lock()  # as the parent held them: locked
    _idle.clear()
    for standby in list(_every):
        standby._forget()


os.register_at_fork(before=lambda: _fork_lock.acquire(), after_in_parent=lambda: _fork_lock.release(),
                    after_in_child=_after_fork_in_child)
