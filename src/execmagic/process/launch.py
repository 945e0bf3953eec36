"""The only place a process is created.

Every command gets its own process session (so a notebook interrupt does not
reach it by accident, and its whole tree can be signalled at once), stdin from
``/dev/null`` unless input is given (so ``read`` and prompts get EOF instead of
hanging the kernel), and a marker variable in its environment that its
descendants inherit, so even a double-forked daemon can be found later.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence

from .checks import ENV_NAME  # the one definition of a variable name
from .errors import MalformedEntry, PreExecError, shown_value
from .spec import Command

__all__ = ["MARKER_VAR", "check_cwd", "executable_identity", "handed_args", "handed_script", "launch",
           "parse_env_entry", "resolve_executable"]

#: Environment variable carried by every process the engine starts (value: the run's token).
MARKER_VAR = "EXECMAGIC_RUN"


def parse_env_entry(entry: str, what: str = "env") -> tuple[str, str]:
    """``"K=V"`` → ``("K", "V")``; a malformed entry is a usage problem with a one-line reason
    (``what`` names the option it came from: ``env``, ``param``)."""
    name, sep, value = entry.partition("=")
    if not sep:
        raise MalformedEntry(what, entry, "expected NAME=VALUE")
    if not ENV_NAME.fullmatch(name):
        raise MalformedEntry(what, entry, f"{shown_value(name)} is not a variable name")
    return name, value


def check_cwd(cwd: str, shown: str | None = None) -> None:
    """Raise a :class:`PreExecError` (``exec: … (ENOENT)``) when ``cwd`` cannot be a working directory.

    The path is looked at with one ``stat``, whose error names the problem: a name longer than
    the system takes (``ENAMETOOLONG``) is not a directory that "does not exist".  Any other
    failure to look (a missing parent, a loop of links) reads: it does not exist.
    """
    label = shown_value(shown if shown is not None else cwd)
    try:
        os.stat(cwd)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise PreExecError(f"working directory name too long {label}", "ENAMETOOLONG", exit_code=1) from None
        raise PreExecError(f"working directory does not exist {label}", "ENOENT", exit_code=1) from None
    if not os.path.isdir(cwd):
        raise PreExecError(f"working directory is not a directory {label}", "ENOTDIR", exit_code=1)
    if not os.access(cwd, os.X_OK):
        raise PreExecError(f"permission denied for working directory {label}", "EACCES", exit_code=1)


def resolve_executable(name: str, cwd: str, env: Mapping[str, str]) -> str:
    """Find what ``name`` would run: a path (relative to ``cwd``) or a PATH lookup in the run's env."""
    return _resolve(name, cwd, env)[0]


def executable_identity(name: str, cwd: str, env: Mapping[str, str]) -> tuple[int, int]:
    """The file (device, inode) :func:`resolve_executable` finds: what a run checks is still the program its
    standby runs, on every run (the lookup's own ``stat`` of it, not one more)."""
    return found_executable(name, cwd, env)[1]


def found_executable(name: str, cwd: str, env: Mapping[str, str]) -> tuple[str, tuple[int, int]]:
    """:func:`resolve_executable`'s path and :func:`executable_identity`'s file, from one lookup."""
    path, found = _resolve(name, cwd, env)
    found = found or os.stat(path)
    return path, (found.st_dev, found.st_ino)


def _resolve(name: str, cwd: str, env: Mapping[str, str]) -> tuple[str, os.stat_result | None]:
    if not name:
        raise PreExecError("empty command", "EINVAL", exit_code=127)
    if "/" in name:
        path = os.path.join(cwd, name)
        if not os.path.exists(path):
            raise PreExecError(f"no such file {shown_value(name)}", "ENOENT", exit_code=127)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PreExecError(f"permission denied {shown_value(name)}", "EACCES", exit_code=126)
        return path, None
    found = _on_path(name, env.get("PATH", os.defpath))
    if found is None:
        raise PreExecError(f"{shown_value(name, quoted=False)} not found in PATH", "ENOENT", exit_code=127)
    return found


def _on_path(name: str, path: str) -> tuple[str, os.stat_result | None] | None:
    """``shutil.which(name, path=path)`` for a bare name, with the ``stat`` of the file found: one ``access`` per
    folder and one ``stat`` of the file found, where ``shutil.which`` makes two of the file it finds (it exists,
    it is not a folder) and the standby's check a third.  (An ``access`` says no without an exception: a ``stat``
    per folder raised one in each folder before bash's, a third of the lookup in a kernel's PATH.)"""
    if sys.platform == "win32":  # PATHEXT, the current folder first: shutil's own
        return (found, None) if (found := shutil.which(name, path=path)) is not None else None
    if not path:  # PATH='' finds nothing, as in shutil.which (PATH=':' looks in the current folder)
        return None
    seen = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        try:
            if not os.access(candidate, os.F_OK | os.X_OK):
                continue
            found = os.stat(candidate)
        except (OSError, ValueError):
            continue
        if not stat.S_ISDIR(found.st_mode):
            return candidate, found
    return None


def _memory_file(name: str, data: bytes) -> int:
    """A new memory file holding ``data``, read from its start (close-on-exec: passed only where named)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def handed_script(argv: Sequence[str], boot: str | None) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """``argv`` with its last word (a script) put in a memory file and ``boot`` (its ``{fd}`` that file's
    descriptor) in its place, and the fd to pass, while the block runs: what the script holds (a secret's
    value, a private path) is never on an argv, which every user of the machine reads (``ps``,
    ``/proc/PID/cmdline``).  ``boot`` ``None``: ``argv`` as it is, no fd."""
    if boot is None:
        yield list(argv), ()
        return
    fd = _memory_file("execmagic-script", os.fsencode(argv[-1]))
    try:
        yield [*argv[:-1], boot.replace("{fd}", str(fd))], (fd,)
    finally:
        os.close(fd)


@contextlib.contextmanager
def handed_args(argv: Sequence[str], fd_args: bytes | None, *, reader: int = 0
                ) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """``argv`` with ``--args FD`` after the program that reads it (``argv[reader]``: bwrap, which may be
    started through another program), and the fd to pass, while the block runs.

    The fd is a memory file (``memfd``) holding ``fd_args``: nothing on disk to race or leave behind,
    no pipe that a large environment could fill before the program reads it.  It is close-on-exec here,
    so only the child it is passed to gets it; it is closed when the block ends (the child has its own).
    ``fd_args`` ``None``: ``argv`` as it is, no fd.
    """
    if fd_args is None:
        yield list(argv), ()
        return
    fd = _memory_file("execmagic-args", fd_args)
    try:
        yield [*argv[:reader + 1], "--args", str(fd), *argv[reader + 1:]], (fd,)
    finally:
        os.close(fd)


def launch(command: Command, marker: str) -> subprocess.Popen[bytes]:
    """Start ``command`` in a new session with piped stdout/stderr, marked with ``marker``.

    OS refusals become :class:`PreExecError`.  stdin is a pipe only when the command has input.
    """
    env = dict(command.env)
    env[MARKER_VAR] = marker
    executable = resolve_executable(command.argv[0], command.cwd, env)
    try:
        with handed_script(command.argv, command.script_boot) as (argv, script_fds), \
                handed_args(argv, command.fd_args, reader=command.fd_reader) as (argv, fds):
            return subprocess.Popen(
                argv,
                executable=executable,
                cwd=command.cwd,
                env=env,
                stdin=subprocess.PIPE if command.input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(*fds, *script_fds, *command.pass_fds),
            )
    except PermissionError:
        raise PreExecError(f"permission denied {shown_value(command.argv[0])}", "EACCES", exit_code=126) from None
    except FileNotFoundError:
        # The file exists (resolved above), so its interpreter (#! line) is what is missing.
        raise PreExecError(f"bad interpreter for {shown_value(command.argv[0])}", "ENOENT", exit_code=127) from None
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, "EIO")
        raise PreExecError(f"cannot execute {shown_value(command.argv[0])}: {exc.strerror}", code,
                           exit_code=126) from None
