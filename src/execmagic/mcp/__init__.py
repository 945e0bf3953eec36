"""``execmagic-mcp`` / ``python -m execmagic.mcp``: the agent tools as an MCP server over stdio.

    execmagic-mcp [--plugins DIR] [--guard all|catastrophic|none] [--allow-dir DIR]...
                  [--audit-log PATH] [--env-allow NAME]... [--no-redact]
                  [--sandbox off|read-only|workspace|auto] [--network] [--background-on NAME]

An MCP client starts it as a subprocess and speaks JSON-RPC over its stdin/stdout.  It serves
Bash, BashOutput, KillShell, ListShells and one tool per plugin manifest in ``--plugins DIR``,
with the same guardrails as :class:`~execmagic.agents.tools.Toolbox`.  Whatever ends it (stdin
closed because the client exited or was killed, SIGTERM, SIGHUP, SIGINT), every shell it started
is stopped before it exits; if it is killed outright, the engine's watchdog stops them.

``--sandbox`` confines every command the agent runs in operating-system walls (bubblewrap; see
:mod:`execmagic.engine.sandboxing`): ``workspace`` leaves writable only the ``--allow-dir``
folders, else the folder the server was started in (an MCP client starts it in the project).
The default is ``auto``: ``workspace`` where bubblewrap works, unsandboxed elsewhere with a note in
every answer.  Two things a client sees differently inside: the shared ``/tmp`` is a private empty
one (the server's own folder stays visible and writable, even under ``/tmp``), and ``$PPID`` is a pid
of the sandbox's own namespace -- a client that wants its server's pid has it from starting it.
``--sandbox off`` gives the agent the user's whole authority again.

``--background-on slurm`` (or another backend's name) sends the agent's ``run_in_background``
commands there as jobs, with the backend's defaults -- the operator's choice, never the model's.
Such a job runs on that system's machines, outside the sandbox: the Bash tool's description and every
answer of such a job say so, and a sandbox mode named with it (``--sandbox workspace``) is refused at
start; ``auto`` keeps the commands here confined.

Every mistake at start (a bad manifest, a missing directory, the SDK not installed or older than
the server needs, a sandbox named where it cannot work) is one line on stderr and exit status 2: an
MCP client shows that line in its server log.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..agents.mcp_server import INSTALL_HINT, McpTooOld, McpUnavailable, require_sdk, sandbox_line, sandbox_trouble
from ..agents.mcp_stdio import serve_stdio
from ..agents.plugins import PluginTool, load_manifest
from ..agents.tools import Toolbox
from ..background.backends import registry
from ..engine.engine import Engine
from ..engine.placement import SandboxElsewhere
from ..engine.sandbox_modes import SANDBOX_MODES, describe_modes
from ..guard.policy import GUARDS, Policy
from ..process.errors import ExecError, UsageProblem
from ..process.sandbox import SandboxProblem, SandboxUnavailable

__all__ = ["PROG", "StartProblem", "build_toolbox", "main", "manifests_in", "parser"]

PROG = "execmagic-mcp"
#: Seconds each shell gets between SIGTERM and SIGKILL when the server exits.
EXIT_GRACE = 1.0


class StartProblem(Exception):
    """Something the operator must fix before the server can start; its text is the one line shown."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Serve execmagic's agent tools (Bash, BashOutput, "
                                "KillShell, ListShells and plugins) to an MCP client over stdio.")
    p.add_argument("--plugins", metavar="DIR",
                   help="serve one tool per plugin manifest (*.toml, *.json) in DIR")
    p.add_argument("--guard", choices=GUARDS, default="all",
                   help="which dangerous commands are refused (default: all; 'none' checks nothing)")
    p.add_argument("--allow-dir", action="append", default=[], metavar="DIR",
                   help="commands start only in DIR or below, and a cd outside is undone after the command"
                        " (repeatable; default: anywhere; a guardrail, not a sandbox)")
    p.add_argument("--audit-log", metavar="PATH", help="append one JSON line per decision to PATH")
    p.add_argument("--env-allow", action="append", default=[], metavar="NAME",
                   help="pass this variable on even though it looks secret (repeatable)")
    p.add_argument("--no-redact", action="store_true", help="do not redact secret values from output")
    p.add_argument("--sandbox", choices=SANDBOX_MODES, default="auto",
                   help="confine every command (bubblewrap): "
                        + describe_modes("the --allow-dir folders, else the folder the server starts in",
                                         default="auto"))
    p.add_argument("--network", action="store_true", help="with --sandbox: let commands reach the network")
    names = registry.names()
    p.add_argument("--background-on", metavar="NAME", choices=names,
                   help=f"run the agent's background commands there ({', '.join(names[:-1])} or {names[-1]};"
                        " default: local): a job on another system runs outside the sandbox (every answer says so),"
                        " with --sandbox auto or off")
    p.add_argument("--readable", action="append", default=[], metavar="PATH",
                   help="with --sandbox: show PATH, read-only, where the sandbox hides (the home folder is hidden"
                        " but the workspace, the kernel's Python and a few secret-free settings; repeatable)")
    return p


def manifests_in(directory: str) -> list[str]:
    """The manifest files of a plugin folder, in name order (not its subfolders)."""
    if not os.path.isdir(directory):
        raise StartProblem(f"--plugins {directory}: not a directory")
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if n.endswith((".toml", ".json")) and os.path.isfile(os.path.join(directory, n)))


def build_toolbox(args: argparse.Namespace) -> Toolbox:
    """The engine and toolbox the options describe; :class:`StartProblem` for anything wrong."""
    for root in args.allow_dir:
        if not os.path.isdir(os.path.expanduser(root)):
            raise StartProblem(f"--allow-dir {root}: not a directory")
    if args.network and args.sandbox == "off":
        raise StartProblem("--network goes with a sandbox (without one the agent has the network already):"
                           " --sandbox workspace --network")
    roots = tuple(os.path.realpath(os.path.expanduser(r)) for r in args.allow_dir)
    engine = Engine(policy=Policy(allowed_roots=roots, audit_log=args.audit_log))
    if roots and engine.policy.outside_roots(engine.session.current_cwd()):
        engine.session.cwd = roots[0]  # start inside the allowed directories, not where the client happened to be
    try:
        toolbox = Toolbox(engine, guard=args.guard, env_allow=args.env_allow, redact_secrets=not args.no_redact,
                          sandbox=args.sandbox, network=args.network, readable=args.readable,
                          background_on=args.background_on)
    except (SandboxProblem, SandboxUnavailable) as exc:
        engine.close()
        raise StartProblem(sandbox_trouble(args.sandbox, exc, auto="start with --sandbox auto",
                                           root_fix="start the server in the project folder or name it with"
                                                    " --allow-dir DIR")) from None
    except SandboxElsewhere as exc:
        engine.close()
        raise StartProblem(f"--sandbox {exc.mode} does not go with --background-on {exc.backend}: its jobs run on"
                           " that system's machines, outside the sandbox; use --sandbox auto (commands here"
                           " confined, the jobs not, and every answer says so) or --sandbox off") from None
    except UsageProblem as exc:  # the backend cannot be set up (its logs folder cannot be made), say
        engine.close()
        raise StartProblem(f"--background-on {args.background_on}: {exc}") from None
    try:
        for path in manifests_in(args.plugins) if args.plugins else []:
            toolbox.add(PluginTool(load_manifest(path), engine).spec())
    except ExecError as exc:
        engine.close()
        raise StartProblem(str(exc)) from None
    except ValueError as exc:  # a plugin named like a built-in tool, or like another plugin
        engine.close()
        raise StartProblem(f"--plugins {args.plugins}: {exc}") from None
    return toolbox


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:  # the SDK is the optional extra, and a neighbour may pin it lower: say what to install, in one line
        require_sdk()
    except McpTooOld as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except McpUnavailable:
        print(f"{PROG}: the MCP SDK is not installed: {INSTALL_HINT}", file=sys.stderr)
        return 2
    try:
        toolbox = build_toolbox(args)
    except StartProblem as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    elsewhere = toolbox.background_on is not None and toolbox.background_on.remote  # local jobs meet the walls
    jobs = f"; background jobs on {args.background_on}, outside the sandbox" if elsewhere else ""
    print(f"{PROG}: serving {', '.join(toolbox.tools)} over stdio (guard {args.guard}; {sandbox_line(toolbox)}{jobs})",
          file=sys.stderr)
    try:
        serve_stdio(toolbox)
    except McpUnavailable as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        toolbox.engine.close(EXIT_GRACE)
    return 0
