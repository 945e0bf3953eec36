"""``%bg``, ``%bgout`` and ``%kill``: background shells from a notebook.

Background output never appears in a cell by itself -- only when ``%bgout``
asks for it -- and a notebook interrupt never reaches a background shell (each
runs in its own session); interrupting ``%bgout --wait/--follow`` stops the
looking, never the shell.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class, no_var_expand
from IPython.display import display

from ..process import checks
from ..process.plural import counted
from .cluster import cluster_options
from .exec_magics import ExecMagics, engine_errors, sandbox_options
from .helpfmt import argument, fixed_width_help, kwds, magic_arguments
from .options import parse_line

if TYPE_CHECKING:  # imported by the first command that needs them, not at %load_ext
    from ..background.registry import ShellRegistry
    from ..process.results import ShellOutput
    from .live import LiveOutput

__all__ = ["BackgroundMagics"]

#: Seconds each ``--follow`` read waits for news before asking again.
_FOLLOW_POLL = 1.0
#: Seconds ``--follow`` gathers new output before showing it: a line-by-line job then fills a few blocks
#: (a saved notebook or its markdown export shows one per message, not one per line), still live enough.
_FOLLOW_GATHER = 0.5


@magics_class
class BackgroundMagics(Magics):
    """Start, watch, filter and stop long jobs without blocking the notebook.

    Settings (``kill_grace``, ``max_background_shells``, ``display_budget``) are
    the traits of :class:`ExecMagics`, so there is one place to configure.
    """

    def __init__(self, shell: Any, exec_magics: ExecMagics) -> None:
        super().__init__(shell=shell)
        self.exec_magics = exec_magics

    @property
    def shells(self) -> ShellRegistry:
        """The engine's registry, with the current trait values handed to it."""
        self.exec_magics.sync_background_settings()
        return self.exec_magics.engine.shells

    @no_var_expand
    @magic_arguments(name="bg")
    @kwds(formatter_class=fixed_width_help)
    @argument("cmdline", nargs="*", metavar="CMDLINE", help="the shell command line, as typed")
    @argument("--name", metavar="ID", help="the shell's id instead of bg1, bg2, …")
    @argument("--timeout", type=float, metavar="S",
              help="stop the shell (and all it started) after S seconds (at most a year)")
    @argument("--cwd", metavar="DIR", help="working directory (relative to the session's)")
    @argument("--env", action="append", metavar="K=V", help="set an environment variable (repeatable)")
    @argument("--clear-env", action="store_true",
              help="start from an empty environment: only --env values (bash still sets PWD, SHLVL and _ itself)")
    @argument("--param", action="append", metavar="K=V|NAME",
              help="fill {K} everywhere with the text V; a bare NAME: the notebook's NAME, keeping its type")
    @argument("--isolated", action="store_true", help="start from the kernel's cwd and env, not the session's")
    @argument("--dry-run", action="store_true", help="show the fully expanded command; start nothing")
    @argument("--allow-dangerous", action="store_true", help="start even what a guardrail refuses")
    @argument("--cleanup", action="store_true", help="forget the shells that ended and delete their logs")
    @sandbox_options
    @cluster_options
    @line_magic("bg")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def bg(self, line: str) -> None:
        """Start a shell command in the background and return at once; ``%bg`` alone lists the shells.

        The shell starts from the session's cwd and environment (and never writes
        them back), in its own process session with stdin closed. Its output goes
        to log files; read it with ``%bgout``, stop it with ``%kill``.

        Examples::

            %bg python train.py --epochs 10
            %bg --name server --timeout 3600 python -m http.server 8000
            %bg --sandbox make test        # writes only in the workspace and a private /tmp
            %bg
            %bg --cleanup
            %bg --on slurm --partition gpu --gpus 1 --time 4:00:00 python train.py
            %bg --on slurm      # the SLURM jobs, also those an earlier kernel started
        """
        args, command = parse_line(line, self.bg.parser, command_follows=True)
        if args.cleanup:
            if command or line.split() != ["--cleanup"]:
                raise UsageError("--cleanup goes alone: %bg --cleanup")
            removed = self.shells.cleanup(remove_logs=True)
            print(f"removed {counted(len(removed), 'ended shell')} and their logs: {', '.join(removed)}" if removed
                  else "no ended shell to remove")
            return
        if not command:
            if args.on is not None and line.split() == ["--on", args.on]:
                self._reattach(args)
                return
            if line.strip():
                raise UsageError("%bg needs a command line after its options, e.g. %bg --name job make all")
            from ..display.shells import ShellTable

            display(ShellTable(tuple(self.shells.list())))
            return
        with engine_errors():
            checks.text(command, "the command line")
        magics = self.exec_magics
        magics.start_background(args, magics.request(args, text=command, background=True))

    def _reattach(self, args: Any) -> None:
        """List the shells on ``--on``'s backend, taking over the jobs this kernel does not know yet
        (an earlier kernel's: a cluster's jobs outlive it)."""
        backend = self.exec_magics.backend(args)
        assert backend is not None
        self.exec_magics.sync_background_settings()
        with engine_errors():
            infos = self.exec_magics.engine.reattach(backend)
        from ..display.shells import ShellTable

        display(ShellTable(tuple(infos)))

    @no_var_expand
    @magic_arguments(name="bgout")
    @kwds(formatter_class=fixed_width_help)
    @argument("id", nargs="?", help="the shell's id (bg1, or its --name)")
    @argument("--filter", metavar="REGEX",
              help="only lines matching REGEX (the rest stays in the log); quote it: --filter 'loss|error'")
    @argument("--stream", choices=("stdout", "stderr", "both"), default="both", help="which output to show")
    @argument("--wait", type=float, default=0.0, metavar="S",
              help="wait up to S seconds for new output (with --filter: a matching line) or the end"
                   " (inf: until the shell ends)")
    @argument("--tail", type=int, metavar="N", help="the last N lines of the whole log instead of what is new")
    @argument("--all", action="store_true", help="the whole log instead of what is new")
    @argument("--follow", action="store_true",
              help="keep showing new output until the shell ends (interrupt stops following, not the shell)")
    @line_magic("bgout")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def bgout(self, line: str) -> None:
        """Show what a background shell printed since the last look, and its status.

        Examples::

            %bgout bg1
            %bgout bg1 --wait 10
            %bgout train --filter "loss|error" --follow
            %bgout train --wait 60 --filter ERROR   # up to a minute for an ERROR line
            %bgout bg1 --tail 20
            %bgout bg1 --wait inf      # until the shell ends
        """
        from .live import LiveOutput

        args, _ = parse_line(line, self.bgout.parser)
        if args.id is None:  # said as %kill says it, with the ids there are (argparse would name "id" only)
            ids = self.shells.ids()
            which = f"shells: {', '.join(ids)}" if ids else "there is none yet; %bg starts one"
            raise UsageError(f"%bgout needs the id of the shell to read ({which}), e.g. %bgout {(ids or ['bg1'])[-1]}")
        with engine_errors():
            wait = checks.wait(args.wait, "--wait")
        if args.follow and (args.tail is not None or args.all):
            raise UsageError("--follow shows what is new; it does not combine with --tail or --all")
        budget = self.exec_magics.display_budget
        read = {"stream": args.stream, "pattern": args.filter, "max_bytes": max(budget, 1)}
        live = LiveOutput(budget)
        with engine_errors():
            try:
                if args.follow:
                    out = self._follow(args.id, live, read)
                else:
                    out = self.shells.read(args.id, wait=wait, tail=args.tail, whole_log=args.all, **read)
                    self._write(live, out)
            except KeyboardInterrupt:
                print(f"\n(stopped looking at {args.id}; the shell itself was not touched)", file=sys.stderr)
                out = self.shells.read(args.id, **read)
                self._write(live, out)
        live.finish_line()
        display(out)

    def _follow(self, shell_id: str, live: LiveOutput, read: dict[str, Any]) -> ShellOutput:
        """Show what is new until the shell ends; the status it returns counts the lines the filter held back
        over the whole follow (each read counts its own: the last alone would say 0 or 1 by timing)."""
        gathered: list[tuple[str, str]] = []
        since = 0.0  # when the first piece of what is gathered arrived
        held_back: collections.Counter[str] = collections.Counter()
        try:
            while True:
                wait = _FOLLOW_POLL if not gathered else max(since + _FOLLOW_GATHER - time.monotonic(), 0.0)
                out = self.shells.read(shell_id, wait=wait, **read)
                held_back.update(out.filtered_out)
                out = dataclasses.replace(out, filtered_out={name: held_back[name] for name in out.filtered_out})
                if not gathered:
                    since = time.monotonic()
                gathered += [(name, text) for name, text in (("stdout", out.stdout), ("stderr", out.stderr)) if text]
                if gathered and (out.at_end or time.monotonic() >= since + _FOLLOW_GATHER):
                    self._show(live, gathered)
                    gathered = []
                if out.at_end:
                    return out
                if live.over:
                    print(f"(stopped following {shell_id} at the display budget; it is still running:"
                          f" %bgout {shell_id} --tail N shows the latest lines)", file=sys.stderr)
                    return out
        except KeyboardInterrupt:
            self._show(live, gathered)  # read already: the cursor is past it, so show it now or never
            raise

    @staticmethod
    def _show(live: LiveOutput, pieces: list[tuple[str, str]]) -> None:
        """Write gathered output in arrival order, each run of one stream as one write."""
        merged: list[tuple[str, str]] = []
        for name, text in pieces:
            if merged and merged[-1][0] == name:
                merged[-1] = (name, merged[-1][1] + text)
            else:
                merged.append((name, text))
        for name, text in merged:
            live(name, text)

    @staticmethod
    def _write(live: LiveOutput, out: ShellOutput) -> None:
        if out.stdout:
            live("stdout", out.stdout)
        if out.stderr:
            live("stderr", out.stderr)

    @no_var_expand
    @magic_arguments(name="kill")
    @kwds(formatter_class=fixed_width_help)
    @argument("ids", nargs="*", metavar="ID", help="the shells to stop")
    @argument("--all", action="store_true", help="stop every running background shell")
    @argument("--signal", default="TERM", metavar="NAME", help="first signal to send (TERM, INT, HUP, KILL, …)")
    @argument("--grace", type=float, metavar="S", help="seconds before SIGKILL (default: ExecMagics.kill_grace)")
    @line_magic("kill")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def kill(self, line: str) -> None:
        """Stop background shells and everything they started (TERM, grace, KILL).

        Killing a shell that already ended is a calm answer, not an error.

        Examples::

            %kill bg1
            %kill train --signal INT --grace 10
            %kill --all
        """
        args, _ = parse_line(line, self.kill.parser)
        if not args.ids and not args.all:
            running = [info.id for info in self.shells.list() if info.running]
            which = f"running: {', '.join(running)}" if running else "none is running now; %bg lists them all"
            raise UsageError(f"%kill needs the id of the shell to stop ({which}), or --all")
        if args.ids and args.all:
            raise UsageError("name the shells to stop (%kill bg1 bg2) or use --all, not both")
        with engine_errors():
            checks.grace(args.grace, "--grace")
            shells = self.shells
            if args.all:
                outcomes = shells.kill_all(sig=args.signal, grace=args.grace)
                if not outcomes:
                    print("no background shell is running")
            else:
                from ..background.registry import kill_many

                outcomes = kill_many(shells, args.ids, sig=args.signal, grace=args.grace)
        for outcome in outcomes:
            display(outcome)
