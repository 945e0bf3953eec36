"""Language → interpreter mapping for scripts (a known name, or anything on PATH), and what a shell's own
words at its end say of a command it could not start."""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping

from ..process.errors import UnknownLanguage, did_you_mean
from ..process.private import write_file
from ..process.results import Result
from .session import NOTE_FAILURE, RUNNER

__all__ = ["ERREXIT_FLAGS", "ERREXIT_TRAP", "INLINE_LIMIT", "handed_argv", "known_language", "name_shell_start_failure",
           "script_argv"]

#: Languages with a known way to pass the script as an argument.  Python is the
#: kernel's own interpreter, so a notebook's virtualenv is the one that runs.
_INLINE: dict[str, tuple[str, ...]] = {
    "bash": ("bash", "-c"),
    "sh": ("sh", "-c"),
    "dash": ("dash", "-c"),
    "python": (sys.executable, "-c"),
    "python3": (sys.executable, "-c"),
    "node": ("node", "-e"),
    "javascript": ("node", "-e"),
    "js": ("node", "-e"),
}
#: What "stop at the first failed command" is in each shell that has it: ``set -e``, and in bash also
#: ``pipefail`` (a failure anywhere in a pipeline fails it; dash has no pipefail).  As flags on the
#: interpreter's command line rather than a first line of the script, so the user's line numbers stay.
ERREXIT_FLAGS: dict[str, tuple[str, ...]] = {"bash": ("-e", "-o", "pipefail"), "sh": ("-e",), "dash": ("-e",)}
#: What bash says when ``set -e`` stops a script, which by itself it does silently: the line that stopped
#: it, and for exit 141 why -- with ``pipefail`` the commonest preview, ``zcat data.gz | head -3``, fails as
#: its writer is stopped by SIGPIPE when ``head`` has read enough.  An ``ERR`` trap put before the
#: script on its first line (line numbers stay the user's), one line of the script's own stderr; silent
#: where ``set +e`` let a failure pass.  ``set -E`` so that a failure inside a function is named too; the
#: trap speaks in the script's own process only, so a subshell that failed is named once, by its line; what
#: it does is kept out of a ``set -x`` trace (its stderr is /dev/null, its line goes out on a copy of it)
#: and gives ``$_`` back as it was.  It notes the failure as the session's own ERR trap does (see
#: :data:`.session.NOTE_FAILURE`), so a session run's result names the same line (:attr:`.Result.failed_line`);
#: the command that runs a whole script (:data:`.session.RUNNER`) failing is no line of the user's: not named.
#: A script's own ``ERR`` trap replaces it.
ERREXIT_TRAP = (
    r"""set -E; trap '{ """ + NOTE_FAILURE + r""" if [[ $- == *e* && $BASHPID == "$$" ]]; then"""
    r""" case ${__execmagic_e#* * } in """ + RUNNER + r""") ;; *) __execmagic_s=${__execmagic_e#* };"""
    r""" __execmagic_s=${__execmagic_s%% *} __execmagic_why=; [[ $__execmagic_s != 141 ]] ||"""
    r""" __execmagic_why=": SIGPIPE, a reader such as head closed the pipe early,"""
    r""" and pipefail counts that as a failure (|| true lets the line pass)";"""
    r""" builtin printf "%s\n" "--errexit stopped the cell at line ${__execmagic_e%% *}:"""
    r""" exit $__execmagic_s$__execmagic_why" >&3; __execmagic_s=stop; builtin unset __execmagic_why;; esac;"""
    r""" fi; builtin : "${__execmagic_e#* * }"; } 3>&2 2>&-' ERR; """
)
#: Bytes of script passed inline at most.  Linux refuses one argument over 128 KiB (E2BIG),
#: so a bigger cell (a heredoc of data) goes through a file: a shell sources it (``$0``, ``$@``
#: and the session's EXIT trap stay as they are), other interpreters run it.
INLINE_LIMIT = 100_000


def known_language(language: str, path: str | None = None) -> bool:
    """Whether ``language`` can run a script: a known one, an executable path, or a name on PATH."""
    if language in _INLINE:
        return True
    if "/" in language:
        return os.access(language, os.X_OK)
    return shutil.which(language, path=path if path is not None else os.environ.get("PATH", os.defpath)) is not None


#: Interpreters people name in a cell besides the known ones; offered for a typo when on PATH.
_OTHER_INTERPRETERS = ("ruby", "perl", "Rscript", "zsh", "ksh", "fish", "lua", "php", "julia", "deno", "bun", "tclsh")


def _closest(language: str, path: str) -> str | None:
    """A language that would run, close to a mistyped one (``pyhton`` → ``python``)."""
    if not language or "/" in language:
        return None
    candidates = [*_INLINE, *(name for name in _OTHER_INTERPRETERS if shutil.which(name, path=path))]
    return did_you_mean(language, candidates)


def _write(path: str | Callable[[], str], script: str) -> str:
    """A new private file (0600, ``O_EXCL``; beside ``path`` when that is taken): an interpreter runs it, so
    nothing already there is reused.  Returns the path written."""
    # surrogate escapes (from bytes values that are not UTF-8) go back out as the original bytes
    return write_file(path() if callable(path) else path, script.encode("utf-8", "surrogateescape"), unique=True)


def script_argv(language: str, script: str, env: Mapping[str, str], script_path: str | Callable[[], str], *,
                errexit: bool = False) -> tuple[tuple[str, ...], str | None]:
    """The argv that runs ``script`` in ``language``.

    ``errexit``: a shell stops at the first failed command (:data:`ERREXIT_FLAGS`); other
    languages stop at an uncaught error anyway and ignore it.

    Known languages take the script inline (a big one through ``script_path``); any
    other name is looked up on PATH and given the script as a file, which is how
    ``ruby``, ``perl``, ``Rscript`` and most interpreters take a program.
    A name that is neither is a usage problem (no process is started).

    ``script_path``: where a file would go, or what says it only when one is written (a script that goes
    inline, most of them, then costs no look at the folder).  Returns the argv and the file the script was
    written to (``None``: inline), which the caller removes after the run.
    """
    inline = _INLINE.get(language)
    trap = ""
    if inline is not None and errexit and language in ERREXIT_FLAGS:
        inline = (inline[0], *ERREXIT_FLAGS[language], *inline[1:])
        trap = ERREXIT_TRAP if language == "bash" else ""  # dash (sh) has no ERR trap, nor pipefail
    if inline is not None:
        # The interpreter being missing is a run failure (exit 127), reported when it is launched.
        if len(script) * 4 <= INLINE_LIMIT or len(script.encode("utf-8", "surrogateescape")) <= INLINE_LIMIT:
            return (*inline, trap + script), None
        script_path = _write(script_path, script)
        if inline[0] in ("bash", "sh", "dash"):
            return (*inline, trap + ". " + shlex.quote(script_path)), script_path
        return (inline[0], script_path), script_path
    path = env.get("PATH", os.defpath)
    if not language or not known_language(language, path):
        raise UnknownLanguage(language, _closest(language, path))
    script_path = _write(script_path, script)
    return (language, script_path), script_path


#: How a shell started with ``-c`` reads its script from a descriptor (``{fd}``) instead of its argv, where
#: every user of the machine reads it (see :attr:`.Command.script_boot`).  bash: as ``bash -c`` would run it
#: in all but a syntax error's first words (``bash: eval: line N`` for ``bash: -c: line N``): ``$0``, ``$#``,
#: ``$LINENO``, ``$_``, ``$BASH_EXECUTION_STRING``, runtime errors, exit codes are the same (the standby's
#: way, :mod:`..process.standby`); a ``read`` of a memory file, no process more.  sh (dash) has no ``read``
#: of a whole file, nor redirections of descriptors past 9: ``cat`` reads it by ``/dev/fd/N`` (and the
#: descriptor stays open in the script), and its errors read ``sh: N: eval: ...``.
_SCRIPT_BOOTS = {
    "bash": ('IFS= builtin read -r -d "" -u {fd} BASH_EXECUTION_STRING || builtin :; command exec {fd}<&-; '
             'builtin : "$BASH"; builtin eval "$BASH_EXECUTION_STRING"'),
    "sh": 'eval "$(cat /dev/fd/{fd})"',
    "dash": 'eval "$(cat /dev/fd/{fd})"',
    # the kernel's Python: as `python -c` would run it but for one frame more in a traceback (the boot's own)
    "python": 'exec(compile(open({fd}, encoding="utf-8", errors="surrogateescape").read(), "<string>", "exec"))',
}
_SCRIPT_BOOTS["python3"] = _SCRIPT_BOOTS["python"]


def handed_argv(language: str, text: str, shown: str, errexit: bool) -> tuple[tuple[str, ...], str | None]:
    """The argv of a shell script that must not stand on the argv, and how the shell reads it instead
    (:data:`_SCRIPT_BOOTS`): one that holds a secret (what is shown of it is redacted: ``ps`` would show
    every user the value) or is too big for an argument (it went through a file, whose private path
    ``ps`` showed).  ``((), None)``: the script goes as :func:`.languages.script_argv` puts it."""
    boot = _SCRIPT_BOOTS.get(language)
    if boot is None or "\0" in text:  # a NUL: the shell's own refusal, as ever (a read would cut the script)
        return (), None
    if shown == text and (len(text) * 4 <= INLINE_LIMIT or len(text.encode("utf-8", "surrogatepass")) <= INLINE_LIMIT):
        return (), None
    program = sys.executable if language.startswith("python") else language  # the kernel's, as script_argv has it
    if errexit and language in ERREXIT_FLAGS:  # as script_argv puts it: the flags, and bash's trap first
        trap = ERREXIT_TRAP if language == "bash" else ""
        return (program, *ERREXIT_FLAGS[language], "-c", trap + text), boot
    return (program, "-c", text), boot


# What bash/sh print last when the script's final command could not be started, by exit code.
_SHELL_START_FAILURES = {
    127: (("command not found", "not found"), "{} not found in PATH", "ENOENT"),
    126: (("Permission denied",), "permission denied '{}'", "EACCES"),
}


def name_shell_start_failure(result: Result) -> Result:
    """Give a shell's "command not found" / "Permission denied" ending the one-line form of a start
    failure (``exec: … (CODE)``).

    Only the last line is read, by splitting, never by a regex over all of stderr: a command may
    print megabytes without a newline before it exits 127.
    """
    known = _SHELL_START_FAILURES.get(result.exit_code)
    if known is None or result.error:
        return result
    endings, issue, code = known
    last = result.stderr_capture.text[-4096:].rstrip("\n").rpartition("\n")[2]  # the kept tail: never the log
    parts = last.split(": ")  # "bash: line 1: NAME: command not found", "sh: 1: NAME: not found"
    if len(parts) < 3 or parts[-1] not in endings or not parts[-2] or any(c.isspace() for c in parts[-2]):
        return result
    return dataclasses.replace(result, error=f"exec: {issue.format(parts[-2])} ({code})", error_code=code)
