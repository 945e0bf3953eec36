"""``%%exec``, ``%exec`` and ``%spawn``: translate a magic line into an engine request and show the result.

(Over 400 lines, on purpose: one :class:`ExecMagics` class holds the three magics IPython registers
together, sharing their settings and engine; some 170 of its lines are docstrings -- the ``%exec?`` help
pages, with their examples -- and option declarations.  What is not the magics' lives apart: the errors
a cell shows (:mod:`.cell_errors`), the live output (:mod:`.live`), the cell's display (:mod:`.kernel_io`),
the cluster options (:mod:`.cluster`), and the request handed to the engine (:mod:`..engine.requests`).)

This layer owns three things only: parsing (user mistakes become one-line
``UsageError``s), configuration (traitlets, turned into plain engine values at
call time) and presentation (live output, status line, summary, and a short
error that stops "Run all" when a command failed).  A magic turns its line into a
:class:`~execmagic.engine.requests.Request` (:meth:`ExecMagics.request`) and hands it
to the engine: what runs where, and with which walls, the engine decides.
"""

from __future__ import annotations

import dataclasses
import json
import keyword
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from IPython.core.error import UsageError
from IPython.core.magic import (
    cell_magic,
    line_magic,
    magics_class,
    no_var_expand,
)
from IPython.display import display

from ..engine.sandbox_modes import SANDBOX_MODES, mode_names
from ..guard.levels import Guard
from ..process import checks
from ..process.errors import shown_value
from .cell_errors import CellCommandFailed, CommandInterrupted, StartFailed, engine_errors
from .cluster import backend_for, cluster_options, settings_classes
from .helpfmt import argument, fixed_width_help, kwds, magic_arguments
from .options import NotebookVariables, parse_line, parse_pairs, split_words, template_params
from .settings import ExecSettings

if TYPE_CHECKING:  # the engine and the renderers are imported by the first command, not at %load_ext
    from traitlets.config import Configurable

    from ..background.backends.base import Backend
    from ..engine.engine import Plan
    from ..engine.requests import Request
    from ..engine.sandboxing import SandboxChoice
    from ..process.results import Result
    from .kernel_io import CellOutput

__all__ = ["CellCommandFailed", "CommandInterrupted", "ExecMagics", "StartFailed", "engine_errors", "sandbox_options"]


def _filled_note(plan: Plan) -> str:
    """One line that says which ``{name}`` filled with what (a secret's value hidden): a fill is never silent."""
    shown = list(dict.fromkeys(plan.shown_fill(fill) for fill in plan.fills))
    more = f"; and {len(shown) - 4} more (--dry-run lists them)" if len(shown) > 4 else ""
    return "filled " + "; ".join(shown[:4]) + more


def _common(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options every running magic shares (applied bottom-up, so they list in this order)."""
    decorators = [
        argument("--timeout", type=float, metavar="S",
                 help="stop the command (and all it started) after S seconds (at most a year)"),
        argument("--cwd", metavar="DIR", help="working directory for this run (relative to the session's)"),
        argument("--env", action="append", metavar="K=V", help="set an environment variable for this run (repeatable)"),
        argument("--clear-env", action="store_true",
                 help="start from an empty environment: only --env values (bash still sets PWD, SHLVL and _ itself)"),
        argument("--param", action="append", metavar="K=V|NAME",
                 help="fill {K} everywhere with the text V; a bare NAME: the notebook's NAME, keeping its type"
                      " (other notebook variables fill only where the shell would expand $VAR)"),
        argument("--input", metavar="TEXT",
                 help="text for the command's stdin ({var} templates work); stdin is closed otherwise"),
        argument("--out", metavar="NAME", help="store the Result in the variable NAME"),
        argument("--no-raise", action="store_true", help="do not raise when the command fails"),
        argument("--quiet", action="store_true", help="no live output; show the result with its output at the end"),
        argument("--capture", action="store_true",
                 help="return the Result instead of showing it: files = %%exec --capture ls, then files.lines;"
                      " a failure is shown and raises as usual"),
        argument("--isolated", action="store_true", help="run outside the persistent session (kernel cwd and env)"),
        argument("--dry-run", action="store_true", help="show the fully expanded command; run nothing"),
        argument("--allow-dangerous", action="store_true",
                 help="run even what a guardrail refuses (recursive delete of / or ~, mkfs, dd onto a disk, …)"),
    ]
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def sandbox_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--sandbox`` / ``--sandbox-mode``: for every magic that runs a command (``%bg`` too)."""
    func = argument("--sandbox-mode", metavar="MODE", choices=SANDBOX_MODES,
                    help=f"run inside this sandbox: {mode_names()} (see ExecMagics.sandbox)")(func)
    return argument("--sandbox", action="store_true",
                    help="run inside the sandbox: ExecMagics.sandbox's mode, or workspace when it is off"
                         " (writable: the allowed dirs or the notebook's folder, and a private /tmp)")(func)


def _errexit(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--errexit`` / ``--no-errexit``: one destination, ``None`` when neither is given (the trait decides)."""
    func = argument("--no-errexit", dest="errexit", action="store_const", const=False,
                    help="the status is the last command's, as in bash (the default; see ExecMagics.errexit)")(func)
    return argument("--errexit", dest="errexit", action="store_const", const=True,
                    help="stop at the first failed command: set -e, and -o pipefail in bash")(func)


@magics_class
class ExecMagics(ExecSettings):
    """Run commands from cells: never hangs on stdin, never floods the notebook, leaves nothing running.

    Every default below is a trait: ``%config ExecMagics.timeout = 300`` or
    ``c.ExecMagics.timeout = 300`` in ``ipython_config.py``.
    """

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        #: Each backend's defaults (``c.SlurmBackend.*`` for ``--on slurm``), by backend name;
        #: registered with the shell by ``load``.
        self.backend_settings: dict[str, Configurable] = {
            name: cls(parent=shell) if shell is not None else cls() for name, cls in settings_classes().items()}

    # -- the magics ---------------------------------------------------------------
    @no_var_expand
    @magic_arguments(name="%exec")
    @kwds(formatter_class=fixed_width_help)
    @argument("--bg", action="store_true", help="start the cell as a background shell (see %%bgout, %%kill)")
    @argument("--name", metavar="ID", help="with --bg: the shell's id instead of bg1, bg2, …")
    @_errexit
    @argument("language", nargs="?", help="bash (default), sh, python, node/javascript, or any interpreter on PATH")
    @_common
    @sandbox_options
    @cluster_options
    @cell_magic("exec")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def exec_cell(self, line: str, cell: str) -> Result | None:
        """Run the cell as a script; bash by default, in the persistent session.

        Templates: ``{name}`` is filled from ``--param name=text`` (text, as typed) or ``--param name``
        (the notebook's ``name``, keeping its type: a list stays a list in a python cell) everywhere in
        the cell.  Any other notebook variable fills only where the shell would expand ``$VAR``:
        unquoted words, "…", unquoted heredocs and the options' values -- never in '…', $'…', a
        quoted heredoc, or the code of a python, node or other interpreter's cell.  A value is
        quoted for where it lands; ``{name!raw}`` is as written; ``{{name}}`` is a brace where
        ``{name}`` would fill, and braces elsewhere stay as written.  Where it can still surprise:
        code inside "…" (``python -c "print(f'{x}')"``) and ``xargs -I{f}`` when the notebook has an
        ``f``: write ``{{x}}``, ``{{f}}`` there.  A typo, a form that is not filled (``{x!r}``) and a name left
        in '…' are told in one line; ``--dry-run`` lists what filled.

        Examples::

            %%exec
            cd data && ls -la
            export STAGE=train

            %%exec python --timeout 60
            print("hello from a child interpreter")

            %%exec --param name=world --no-raise
            echo hello {name}      # {name} is shell-quoted; {name!raw} inserts it as written

            %%exec
            echo {title}           # a notebook variable: filled, one shell word
            awk '{n}' data.csv     # in single quotes: awk's own program, left as written

            %%exec python --param sizes
            print(sum({sizes}))    # the notebook's list, as a Python list

            %%exec --sandbox
            make test              # the workspace writable, the rest read-only; no network

            %%exec --bg --name train
            python train.py --epochs 10

            %%exec --bg --on slurm --cpus 8 --mem 32G --time 2:00:00
            python train.py --epochs 100     # a SLURM batch job; %bgout/%kill as for any shell
        """
        args, _ = parse_line(line, self.exec_cell.parser)
        language = args.language or self.default_language
        errexit = self._errexit(args, language)
        with engine_errors():
            checks.text(cell, "the cell")
        if args.bg:
            for option in ("input", "out", "quiet", "capture"):
                if getattr(args, option):
                    raise UsageError(f"--{option} does not apply to --bg (read a background shell with %%bgout)")
            self.start_background(args, self.request(args, text=cell, language=language, errexit=errexit,
                                                     background=True))
            return None
        if args.name is not None:
            raise UsageError("--name goes with --bg")
        return self._run(args, self.request(args, text=cell, language=language, errexit=errexit))

    @no_var_expand
    @magic_arguments(name="exec")
    @kwds(formatter_class=fixed_width_help)
    @argument("cmdline", nargs="*", metavar="CMDLINE", help="the shell command line, as typed")
    @_errexit
    @_common
    @sandbox_options
    @cluster_options
    @line_magic("exec")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def exec_line(self, line: str) -> Result | None:
        """Run one shell line in the persistent session (``cd``/``export`` carry over).

        Options go before the command; everything after the first non-option word
        is the command line, passed to bash as typed.

        Examples::

            %exec ls -la
            %exec --timeout 5 make test
            %exec --cwd data wc -l {filename}
            %exec --sandbox ./build.sh             # writes only in the workspace, no network
            %exec --sandbox-mode read-only ./analyse.sh
            %exec --on slurm --cpus 4 python prepare.py    # through srun, streamed live
            files = %exec --capture ls             # the Result: files.lines, files.stdout (all of it)
        """
        args, command = parse_line(line, self.exec_line.parser, command_follows=True)
        if not command:
            raise UsageError("%exec needs a command line, e.g. %exec ls -la")
        with engine_errors():
            checks.text(command, "the command line")
        return self._run(args, self.request(args, text=command, errexit=self._errexit(args, "bash")))

    @no_var_expand
    @magic_arguments(name="spawn")
    @kwds(formatter_class=fixed_width_help)
    @argument("command", nargs="*", metavar="ARG", help="the program, then its arguments (one word, one argument)")
    @argument("--argv", action="store_true",
              help="the rest of the line is a JSON array: the whole argv, one string per argument")
    @argument("--json-args", metavar="JSON",
              help="send this JSON object as one line on stdin, then close it (the JSON-line plugin protocol)")
    @_common
    @sandbox_options
    @line_magic("spawn")  # type: ignore[arg-type]  # IPython types its decorators for Magics only
    def spawn(self, line: str) -> Result | None:
        """Run one program with an argument vector: no shell in between.

        The line is split into words the way a shell splits them (quotes respected);
        nothing else of a shell happens: no pipes, globs or $VAR (``${VAR}`` and
        ``{name}`` templating still apply, one word stays one argument; a notebook
        variable fills outside '…', a ``--param`` everywhere).

        Examples::

            %spawn git status --short
            %spawn python -c "print('one argument')"
            %spawn --argv ["printf", "%s\\n", "a b", "c"]
            %spawn --json-args '{"pin": 5}' ./plugins/gpio_write.py
        """
        args, rest = parse_line(line, self.spawn.parser, command_follows=True)
        argv = self._spawn_argv(args, rest)
        if args.json_args is not None:
            if args.input is not None:
                raise UsageError("--json-args and --input both set stdin; use one")
            try:
                payload = json.loads(args.json_args)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--json-args needs a JSON object: {exc}") from None
            if not isinstance(payload, dict):
                raise UsageError(f"--json-args needs a JSON object, not {type(payload).__name__}")
            args.input = json.dumps(payload) + "\n"
        return self._run(args, self.request(args, argv=tuple(argv)))

    @staticmethod
    def _spawn_argv(args: Any, rest: str) -> list[str]:
        """The argv of a ``%spawn`` line: its shell words, or the ``--argv`` JSON array; NUL bytes refused."""
        if args.argv:
            try:
                argv = json.loads(rest)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--argv needs a JSON array of strings: {exc}") from None
            if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
                raise UsageError('--argv needs a non-empty JSON array of strings, e.g. ["ls", "-la"]')
        else:  # a notebook variable stays out of '…', as a shell keeps $VAR out (a --param fills it)
            from ..engine.template import hold

            named = {entry.split("=", 1)[0] for entry in args.param or []}
            argv = split_words(rest, lambda quoted: hold(quoted, named))
        if not argv:
            raise UsageError("%spawn needs a command, e.g. %spawn git status")
        with engine_errors():
            return checks.argv(argv, "--argv" if args.argv else "argv")

    # -- shared machinery -------------------------------------------------------
    def _errexit(self, args: Any, language: str) -> bool:
        """``--errexit``/``--no-errexit`` or the trait; asked for by name in a language without it, an error."""
        from ..engine.languages import ERREXIT_FLAGS

        if args.errexit and language not in ERREXIT_FLAGS:
            raise UsageError(f"--errexit applies to bash and sh cells; a {language} cell stops at an uncaught error")
        return self.errexit if args.errexit is None else args.errexit

    def _templates(self, args: Any) -> dict[str, Any]:
        """What fills ``{name}``: ``--param`` values everywhere, the notebook's variables where ``$VAR`` would."""
        shell = self.ipython
        variables = NotebookVariables(shell.user_ns, shell.user_ns_hidden)
        return {"params": template_params(args.param, variables), "variables": variables}

    def _guard(self, args: Any) -> Guard:
        return "none" if getattr(args, "allow_dangerous", False) else cast(Guard, self.guard)

    @staticmethod
    def _check_values(args: Any) -> None:
        """Refuse NUL bytes and bad names in --cwd, --env and --input as typed (again after templating)."""
        checks.optional_text(args.cwd, "--cwd")
        checks.environment(parse_pairs(args.env, "env"), "--env")
        value = getattr(args, "input", None)
        if value is not None:
            checks.encode_input(value, "--input")

    def backend(self, args: Any) -> Backend | None:
        """Where ``args`` say to run (``--on`` and its options over their settings); ``None``: no ``--on``."""
        return backend_for(args, self.backend_settings, self.kill_grace) if hasattr(args, "on") else None

    def request(self, args: Any, *, background: bool = False, **what: Any) -> Request:
        """The run a magic's line asks for, as a value the engine plans (see :mod:`..engine.requests`):
        ``what`` -- the text, its language and ``errexit``, or the ``argv`` -- with the line's options, where
        ``{name}`` values come from, its sandbox and its backend.  A mistake in them is a ``UsageError``."""
        from ..engine.requests import Request

        out = getattr(args, "out", None)
        if out is not None and (not out.isidentifier() or keyword.iskeyword(out) or out.startswith("__")):
            raise UsageError(f"--out needs a variable name, not {shown_value(out)}")
        backend = self.backend(args)
        choice = self._sandbox(args, backend)
        with engine_errors():
            self._check_values(args)
            env = parse_pairs(args.env, "env")
        return Request(**what, cwd=args.cwd, env=env, clear_env=args.clear_env, input=getattr(args, "input", None),
                       isolated=args.isolated, background=background, sandbox=choice.sandbox, on=backend,
                       notes=choice.notes, **self._templates(args))

    def _sandbox(self, args: Any, backend: Backend | None) -> SandboxChoice:
        """The sandbox of one run: ``--sandbox-mode``, else ``--sandbox`` (the setting's mode, ``workspace``
        when it is off), else the setting.  Asked for where it cannot be -- a named mode without bubblewrap,
        a job on a cluster -- it is one ``UsageError`` before anything runs, never an unconfined run."""
        from ..engine.placement import SandboxElsewhere

        flag, mode = getattr(args, "sandbox", False), getattr(args, "sandbox_mode", None)
        if flag and mode is not None:
            raise UsageError("--sandbox uses ExecMagics.sandbox's mode, --sandbox-mode names one: give one of them")
        if mode is None:
            mode = "workspace" if flag and self.sandbox == "off" else self.sandbox
        with engine_errors():
            try:
                return self.engine.sandbox_for(mode, backend, insist=flag, network=self.sandbox_network,
                                               readable=self.sandbox_readable)
            except SandboxElsewhere as exc:  # worded for a notebook user: which option asked, and the way out
                given = "--sandbox" if flag else "--sandbox-mode" if args.sandbox_mode else "ExecMagics.sandbox"
                raise UsageError(f"{given} {exc.mode!r} does not go with --on {exc.backend}: the job runs on the"
                                 " cluster's nodes, under their rules (--sandbox-mode off runs it there)") from None

    def _plan(self, args: Any, request: Request) -> Plan:
        """The engine's plan of ``request``, saying what filled a ``{name}`` (``--dry-run`` lists each)."""
        with engine_errors():
            plan = self.engine.plan(request)
        if plan.fills and not args.dry_run:
            plan = dataclasses.replace(plan, notes=(_filled_note(plan), *plan.notes))
        return plan

    def start_background(self, args: Any, request: Request) -> None:
        """Start a requested command as a background shell and show its handle (``%bg``, ``%%exec --bg``)."""
        with engine_errors():
            timeout = checks.timeout(args.timeout, "--timeout")  # before the shell joins the reader
        plan = self._plan(args, request)
        if args.dry_run:
            print(plan.describe())
            return
        self.sync_background_settings()
        with engine_errors():
            info = self.engine.start_background(plan, name=args.name, timeout=timeout, guard=self._guard(args))
        display(info)
        for note in plan.notes:  # a background shell has no result to carry them
            print(f"note: {note}")

    def _run(self, args: Any, request: Request) -> Result | None:
        """Run a requested command in the foreground and show it; the Result itself with ``--capture``."""
        from ..display.render import Summary, short_command
        from .kernel_io import CellOutput
        from .live import LiveOutput, StatusLine

        options = self.run_options(args.timeout)
        plan = self._plan(args, request)
        if args.dry_run:
            print(plan.describe())
            return None
        in_kernel = hasattr(self.shell, "kernel")
        cell = CellOutput(self.shell)  # the cell's earlier text goes out while the command runs
        live = None if args.quiet or args.capture else LiveOutput(self.display_budget, keep_end=True)
        if plan.job is not None and in_kernel:  # the job's state (queued, running on node7) on the status line
            plan.job.watch()
        status = StatusLine(short_command(plan.command.display), self.status_delay, enabled=in_kernel, state=plan.job)
        try:
            with engine_errors():
                result = self.engine.run(plan, options=options, on_output=live, on_progress=status,
                                         guard=self._guard(args))
        finally:
            status.clear()
        if live is not None:
            live.finish(result)
        if args.out:
            self.ipython.user_ns[args.out] = result
        if args.capture and not self._raises(result, args):
            return result  # shown once: by IPython, as the cell's value, when it is not assigned
        self._show(result if args.quiet or args.capture else Summary(result), cell)  # streamed: the summary only
        self._raise_if_failed(result, args)
        return None

    def _show(self, value: Any, cell: CellOutput) -> None:
        from ..display.formatters import bundle_of

        data = bundle_of(self.shell, value)  # made directly when the renderers are ours
        if data is None:
            display(value)
        else:
            cell.show(data)

    def _raises(self, result: Result, args: Any) -> bool:
        """Whether the run ends the cell with an error (interrupted, or failed and raising is on)."""
        return result.interrupted or not (result.success or args.no_raise or not self.raise_on_error)

    def _raise_if_failed(self, result: Result, args: Any) -> None:
        if result.interrupted:  # the ✘ status line just above says what was interrupted: not said twice
            raise CommandInterrupted("the run stops here")
        if self._raises(result, args):
            raise CellCommandFailed(result)
