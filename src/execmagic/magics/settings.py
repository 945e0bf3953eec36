"""The settings of the magics: every default a trait, each checked on its own.

``%config ExecMagics.timeout = 300`` or ``c.ExecMagics.timeout = 300`` in
``ipython_config.py``.  A bad value is refused with one line and the previous
value stays; no setting's failure keeps another from applying (each one reaches
the engine by itself).  Values are turned into plain engine values at call time (what every run gets
once, until a setting changes).

(Over 400 lines, on purpose: one class, :class:`ExecSettings`, holds every trait of the magics, which
``%config ExecMagics`` lists together -- most of its lines are their help texts and checks; the magics that use
them live apart, in :mod:`.exec_magics`.)
"""

from __future__ import annotations

import math
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import Magics
from traitlets import All, Bool, Enum, Float, Int, List, TraitError, Unicode, observe, validate
from traitlets.config import Config

from ..engine.sandbox_modes import SANDBOX_MODES, describe_modes
from ..guard.levels import GUARDS
from ..process import checks
from ..process.errors import UsageProblem, shown_value
from ..process.sandbox_limits import DEFAULT_MEMORY, DEFAULT_PROCESSES, DEFAULT_TMP_BYTES, Limits

if TYPE_CHECKING:
    from ..display.render import View
    from ..engine.engine import Engine
    from ..process.spec import RunOptions

__all__ = ["ExecSettings"]

#: The largest count a setting takes (bytes, characters, shells): past it is a typo, not a wish.
_MAX_COUNT = 10**12


def _refuse(proposal: Any, why: str) -> TraitError:
    return TraitError(f"ExecMagics.{proposal['trait'].name} = {shown_value(proposal['value'])} refused: {why}")


class ExecSettings(Magics):
    """The traits of :class:`~execmagic.magics.exec_magics.ExecMagics` and how they reach the engine."""

    @property
    def engine(self) -> Engine:
        """The process-wide engine, made at the first command that needs it, with these settings.

        Not by ``%load_ext`` itself: the prompt does not wait for the engine's modules.  Loaded in a
        cell, a thread makes it once that cell is over (:mod:`.ahead`); loaded by a profile, into every
        kernel, nothing is made before a cell runs a command.  Whoever makes it
        first -- a magic, ``execmagic.run``, a Toolbox -- gets these settings applied
        (:meth:`apply_engine_settings` is its configurer, see :mod:`~execmagic.engine.default`).
        """
        from ..engine.default import default_engine

        engine = default_engine()
        # gone kernels' logs pruned once, with the settings of the moment a command first asks: not those of
        # the load, when the engine may be made ahead of a cell that sets log_retention_days
        engine.start_pruning()
        return engine

    @property
    def ipython(self) -> Any:
        """The shell these magics belong to (always set once they are registered)."""
        assert self.shell is not None
        return self.shell

    timeout = Float(
        None, allow_none=True,
        help="Seconds before a foreground command is stopped. None: no limit (the stop button always works).",
    ).tag(config=True)
    kill_grace = Float(
        2.0, help="Seconds a stopped command gets after each signal (INT/TERM) before the next, then SIGKILL.",
    ).tag(config=True)
    drain_time = Float(
        0.25, help="Seconds to keep reading after the command exited while a leftover process holds its output.",
    ).tag(config=True)
    display_budget = Int(
        100_000, help="Characters of a command's output a cell receives, however it gets there (live, --quiet, a"
                      " displayed Result, in each format): past it, the start and the end with the log's path; all"
                      " of it is in the log and in the Result's .stdout.",
    ).tag(config=True)
    stable_output = Bool(
        False, help="Leave what changes from run to run -- durations, start times, log paths in the saved record"
                    " -- out of what a cell shows and saves, so a runbook kept in git changes only where its"
                    " commands or their outcomes did. What ran, its output and how it ended stay.",
    ).tag(config=True)
    keep_bytes = Int(
        1_000_000, help="Bytes of each stream kept in memory in the Result (head + tail); what does not fit is in"
                        " the log.",
    ).tag(config=True)
    log_dir = Unicode(
        "", help="Directory for output logs. Empty: a fresh directory per kernel under the system temp dir.",
    ).tag(config=True)
    default_language = Unicode("bash", help="Language of a %%exec cell that names none.").tag(config=True)
    errexit = Bool(
        False, help="Stop a bash/sh cell at its first failed command (set -e, and -o pipefail in bash)."
                    " Off, as in bash: a cell's status is its last command's. --errexit/--no-errexit per cell.",
    ).tag(config=True)
    raise_on_error = Bool(
        True, help="Raise (stopping 'Run all') when a command fails; --no-raise turns it off per run.",
    ).tag(config=True)
    max_background_shells = Int(
        32, help="Background shells that may run at once; one more is refused with a clear error.",
    ).tag(config=True)
    guard = Enum(
        GUARDS, default_value="catastrophic",
        help="Commands refused before they run: 'catastrophic' (destroys a system or data: rm -rf /, mkfs, dd onto"
             " a disk, fork bombs, kill -9 -1, …), 'all' (also risky ones: curl | sh, reboot), or 'none'."
             " --allow-dangerous overrides it for one run. A guardrail that reads text, not a sandbox: for"
             " walls the operating system keeps, see sandbox (agents get them by default).",
    ).tag(config=True)
    allowed_dirs = List(
        Unicode(), default_value=[],
        help="When set, commands may only run in these directories (symlinks resolved); a cd outside is undone.",
    ).tag(config=True)
    audit_log = Unicode(
        "", help="A file that gets one JSON line before each command starts and one after (also refusals and kills);"
                 " if it cannot be written, nothing runs.",
    ).tag(config=True)
    status_delay = Float(
        2.0, help="Seconds a command runs before a live status line (elapsed, bytes) appears.",
    ).tag(config=True)
    prefer_kernel_env = Bool(
        True, help="Put the kernel interpreter's bin directory first on PATH, so pip, python and jupyter in a"
                   " command are the kernel's own (as %pip ensures). False: PATH exactly as inherited.",
    ).tag(config=True)

    standby = Bool(
        True, help="Start the next command's bash ahead of time (in the background, after each command and"
                   " after `%load_ext` typed in a cell), so a short plain command (simple commands and pipes:"
                   " no $(...), loops or brackets) skips bash's"
                   " start-up; any other, or one that does not fit it (a cd or export since, --env, --cwd, input),"
                   " starts as usual. False: every command starts its own bash"
                   " (EXECMAGIC_STANDBY=0 in the environment: False for every engine of the process).",
    ).tag(config=True)

    sandbox = Enum(
        SANDBOX_MODES, default_value="off",
        help="Operating-system walls around every command (bubblewrap, Linux): "
             + describe_modes("allowed_dirs, else the folder the kernel started in")
             + ". In every mode but off: no network (see sandbox_network), the home folder hidden but the workspace,"
             " the kernel's Python and secret-free settings (see sandbox_readable), the host's /run and /var/lib"
             " sockets and Jupyter's connection files hidden, no process outside visible. A named mode that"
             " cannot work here is an error, never an unconfined run. --sandbox / --sandbox-mode per command.",
    ).tag(config=True)
    sandbox_network = Bool(
        False, help="Let sandboxed commands use the network (off: only their own loopback).",
    ).tag(config=True)
    sandbox_readable = List(
        Unicode(), default_value=[],
        help="More paths sandboxed commands may read where the sandbox hides them (in the home folder: a tool's"
             " settings, ~/.local/bin; ~ allowed, the home folder itself refused). Credential stores inside"
             " them stay hidden; a path that is missing is left out. %mcp serve's agent gets them too.",
    ).tag(config=True)
    sandbox_tmp_size = Int(
        DEFAULT_TMP_BYTES, help="Bytes of the sandboxed session's private /tmp, kept from one command to the next"
                                " (memory that cannot be swapped out; default 1 GiB). A change starts an empty one.",
    ).tag(config=True)
    sandbox_processes = Int(
        DEFAULT_PROCESSES, help="Processes (and threads) the sandboxed session may run at once, all its commands"
                                " and background shells together, where the machine allows (for a kernel running as"
                                " root: where a cgroup can be made, see sandbox_memory); a command that holds"
                                " the session there (a fork bomb) is stopped, its line says so; 0: no limit.",
    ).tag(config=True)
    sandbox_memory = Int(
        -1, help="Bytes of memory the sandboxed session may use, its commands, background shells and /tmp together"
                 " (-1: half the machine's), where a cgroup of its own can be made (a kernel running as root, or"
                 " cgroup v2 delegated to the user); 0: no limit. Past it, the kernel kills a process of the session,"
                 " and the summary says so.",
    ).tag(config=True)

    redact_provenance = Bool(
        True, help="Show and save commands with secrets redacted (values of secret-named templates and variables,"
                   " token-shaped text); the command runs with the real values.",
    ).tag(config=True)
    keep_logs = Bool(
        False, help="Keep a log file of every command; by default only when the result cannot hold the output.",
    ).tag(config=True)
    log_retention_days = Float(
        7.0, help="Days the log folders of kernels that are gone are kept (removed when a kernel starts).",
    ).tag(config=True)
    log_quota = Int(
        2 * 1024**3, help="Bytes all log folders may take; past it the oldest gone kernels' folders are removed.",
    ).tag(config=True)

    # -- %mcp serve (one block: the traits and their checks) --------------------------------------
    mcp_idle_timeout = Float(
        600.0, help="Seconds an MCP session of %mcp serve may go without a request before it is closed (the"
                    " shells its agent started keep running). --idle-timeout per server.",
    ).tag(config=True)
    mcp_max_sessions = Int(
        100, help="MCP sessions %mcp serve keeps open at once; one more closes the one idle longest."
                  " --max-sessions per server.",
    ).tag(config=True)

    @validate("mcp_idle_timeout")
    def _check_mcp_idle_timeout(self, proposal: Any) -> Any:
        return self._checked(proposal, lambda v: checks.timeout(v, "ExecMagics.mcp_idle_timeout"))

    @validate("mcp_max_sessions")
    def _check_mcp_max_sessions(self, proposal: Any) -> Any:
        return self._check_count(proposal)

    def _load_config(self, cfg: Any, section_names: Any = None, traits: Any = None) -> None:
        """Load config (a file's, or what ``%config`` kept): a refused value is said once and skipped, so
        one bad line never stops the extension from loading -- each setting applies on its own."""
        try:
            super()._load_config(cfg, section_names, traits)
            return
        except TraitError:
            if getattr(self, "_applying_config", False):
                raise  # %config: the caller says it and keeps the previous value
        name = type(self).__name__
        for key, value in dict(cfg.get(name, {})).items():
            try:
                super()._load_config(Config({name: {key: value}}), section_names, traits)
            except TraitError as exc:
                print(f"{' '.join(str(exc).split())}; the default stays", file=sys.stderr)

    def update_config(self, config: Any) -> None:
        """Apply ``%config``; a refused value is said in the cell as one line (``%config`` only logs it)
        and the previous value stays.  (IPython keeps the line in the shell's config all the same: a
        later load of the extension says so again, keeps the default, and loads.)"""
        name = type(self).__name__
        self._applying_config = True
        try:
            for key, value in config.get(name, {}).items():
                trait = self.traits().get(key)
                if trait is None:
                    continue  # traitlets names an unknown setting itself
                if isinstance(value, bool) and isinstance(trait, (Int, Float)):  # True seconds is a mistake
                    raise TraitError(f"ExecMagics.{key} = {shown_value(value)} refused:"
                                     " it must be a number, not a bool")
                try:  # the type alone, before our own checks (None where the setting allows it: "no limit")
                    if not (value is None and trait.allow_none):
                        getattr(trait, "validate", lambda _owner, checked: checked)(self, value)
                except TraitError:  # said as every refusal is: traitlets' own message echoes a value whole
                    raise TraitError(f"ExecMagics.{key} = {shown_value(value)} refused:"
                                     f" it must be {trait.info()}") from None
            super().update_config(config)
        except TraitError as exc:  # said here, once: re-raised, %config would log it again (ERROR:root:...)
            print(f"{' '.join(str(exc).split()).rstrip('.')}; the previous value stays", file=sys.stderr)
        finally:
            self._applying_config = False

    # -- each value checked on its own -------------------------------------------------------
    @validate("timeout")
    def _check_timeout(self, proposal: Any) -> Any:
        return self._checked(proposal, lambda v: checks.timeout(v, "ExecMagics.timeout"))

    @validate("kill_grace", "drain_time", "status_delay", "log_retention_days")
    def _check_seconds(self, proposal: Any) -> Any:
        value = proposal["value"]
        if not math.isfinite(value) or not 0 <= value <= checks.MAX_SECONDS:
            raise _refuse(proposal, f"it must be a number of seconds from 0 to {checks.MAX_SECONDS:.0f} (a year)")
        return value

    @validate("sandbox_readable")
    def _check_sandbox_readable(self, proposal: Any) -> Any:
        for path in proposal["value"]:  # a relative one would be read against wherever the kernel stands
            if not os.path.isabs(os.path.expanduser(path)):
                raise _refuse(proposal, f"each path must be absolute or start with ~, not {shown_value(path)}")
        return proposal["value"]

    @validate("display_budget", "keep_bytes", "max_background_shells", "log_quota")
    def _check_count(self, proposal: Any) -> Any:
        if not 1 <= proposal["value"] <= _MAX_COUNT:
            raise _refuse(proposal, f"it must be from 1 to {_MAX_COUNT:,}")
        return proposal["value"]

    @validate("sandbox_tmp_size")
    def _check_tmp_size(self, proposal: Any) -> Any:
        if not 1 << 20 <= proposal["value"] <= 1 << 50:  # under a MiB nothing works; a tmpfs takes no more
            raise _refuse(proposal, "it must be from 1 MiB (1048576) to 2**50 bytes")
        return proposal["value"]

    @validate("sandbox_memory")
    def _check_memory(self, proposal: Any) -> Any:
        if proposal["value"] not in (-1, 0) and not 16 << 20 <= proposal["value"] <= 1 << 60:  # under 16 MiB: no bash
            raise _refuse(proposal, "it must be -1 (half the machine's), 0 (no limit) or from 16 MiB (16777216) to "
                                    "2**60 bytes")
        return proposal["value"]

    @validate("sandbox_processes")
    def _check_processes(self, proposal: Any) -> Any:
        if proposal["value"] != 0 and not 16 <= proposal["value"] <= _MAX_COUNT:  # fewer: bash and bwrap alone
            raise _refuse(proposal, f"it must be 0 (no limit) or from 16 to {_MAX_COUNT:,}")
        return proposal["value"]

    @validate("default_language")
    def _check_language(self, proposal: Any) -> Any:
        from ..engine.languages import known_language

        value = proposal["value"]
        if not value.strip() or "\0" in value or not known_language(value):
            raise _refuse(proposal, "name a language (bash, sh, python, node, or an interpreter on PATH)")
        return value

    @validate("log_dir")
    def _check_log_dir(self, proposal: Any) -> Any:
        value = proposal["value"]
        if value:
            from ..process.private import make_folder

            try:
                value = os.path.abspath(os.path.expanduser(value))  # bash resolves paths against the run's cwd
                make_folder(value)
            except (OSError, ValueError) as exc:
                raise _refuse(proposal, f"it cannot be created ({getattr(exc, 'strerror', None) or exc})") from None
            if not os.access(value, os.W_OK | os.X_OK):
                raise _refuse(proposal, "it is not a writable directory")
        return value

    @validate("allowed_dirs")
    def _check_allowed_dirs(self, proposal: Any) -> Any:
        for path in proposal["value"]:
            if "\0" in path or not os.path.isdir(os.path.expanduser(path)):
                raise _refuse(proposal, f"{shown_value(path)} is not a directory")
        return proposal["value"]

    @validate("audit_log")
    def _check_audit_log(self, proposal: Any) -> Any:
        from ..guard.policy import AuditUnavailable, open_audit_log

        value = proposal["value"]
        if value:
            try:
                os.close(open_audit_log(value))
            except AuditUnavailable as exc:
                raise _refuse(proposal, f"it cannot be written ({exc.reason})") from None
            except ValueError as exc:  # a NUL in the path
                raise _refuse(proposal, str(exc)) from None
        return value

    @staticmethod
    def _checked(proposal: Any, check: Any) -> Any:
        try:
            return check(proposal["value"])
        except UsageProblem as exc:
            raise _refuse(proposal, str(exc)) from None

    # -- reaching the engine ------------------------------------------------------------------
    @observe("log_dir", "allowed_dirs", "audit_log", "prefer_kernel_env", "redact_provenance", "log_retention_days",
             "log_quota", "standby", "sandbox_tmp_size", "sandbox_processes", "sandbox_memory")
    def _engine_setting_changed(self, change: dict[str, Any]) -> None:
        default = sys.modules.get("execmagic.engine.default")
        if default is not None:  # else no engine exists yet: it gets the settings when it is made
            default.reconfigure_default()

    def apply_engine_settings(self, engine: Engine | None = None) -> None:
        """Hand the engine-wide settings over to ``engine`` (default: the process-wide one); each value
        was checked when it was set.  Per-caller settings (a guard level, a timeout) are not here."""
        from ..process.logdir import LogDir
        from ..process.standby import standby_default

        engine = engine if engine is not None else self.engine
        if self.log_dir and engine.logs.path != self.log_dir:
            engine.logs = LogDir(self.log_dir)
        engine.policy.allowed_roots = tuple(self.allowed_dirs)
        engine.policy.audit_log = self.audit_log or None
        engine.prefer_kernel_env = self.prefer_kernel_env
        engine.standby = self.standby and standby_default()
        engine.redact_display = self.redact_provenance
        engine.log_retention_days = self.log_retention_days
        engine.log_quota = self.log_quota
        engine.sandbox_limits = Limits(tmp_bytes=self.sandbox_tmp_size, processes=self.sandbox_processes,
                                       memory=DEFAULT_MEMORY if self.sandbox_memory == -1 else self.sandbox_memory)

    def sync_background_settings(self) -> None:
        """Hand the current trait values to the engine's shell registry."""
        self.engine.shells.grace = self.kill_grace
        self.engine.shells.max_shells = self.max_background_shells

    @observe(All)
    def _forget_made(self, change: dict[str, Any]) -> None:
        """A setting changed: what :meth:`run_options` and :meth:`display_view` made of the settings (made once,
        not at each cell: 40-50 µs of a short command's) is made again, into a new dict (one made from values
        read before the change went into the old one)."""
        self.__dict__["_made_of_settings"] = {}

    def run_options(self, timeout: float | None) -> RunOptions:
        """One run's limits: ``--timeout`` (checked here) or the trait, and the other traits."""
        from ..process.spec import RunOptions

        made: dict[str, Any] = self.__dict__.setdefault("_made_of_settings", {})
        if timeout is not None:
            try:
                timeout = checks.timeout(timeout, "--timeout")
            except UsageProblem as exc:
                raise UsageError(str(exc)) from None
        elif "run" in made:
            return cast("RunOptions", made["run"])
        from .live import log_over

        # a stream the display may cut is logged, so that the cut can point at the whole of it
        options = RunOptions(timeout=self.timeout if timeout is None else timeout, grace=self.kill_grace,
                             drain=self.drain_time, keep_bytes=self.keep_bytes, keep_logs=self.keep_logs,
                             log_over=log_over(self.display_budget))
        if timeout is None:
            made["run"] = options
        return options

    def display_view(self) -> View:
        """How results are shown now (asked at each rendering, so ``%config`` applies to the next one)."""
        from ..display.render import View

        made: dict[str, Any] = self.__dict__.setdefault("_made_of_settings", {})
        view = made.get("view")
        if view is None:
            view = made["view"] = View(budget=self.display_budget, stable=self.stable_output)
        return cast("View", view)
