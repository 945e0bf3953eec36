"""``python -m execmagic install-kernel``: a kernelspec that any Jupyter, in any environment, can start.

The kernelspec shipped in the wheel (``jupyter-config/kernels/execmagic``) says ``"python"`` as its
interpreter.  Jupyter replaces that word with *its own* interpreter, which is right only when
Jupyter and execmagic live in the same environment.  Registered for a Jupyter in another
environment, that kernel would run the server's Python, where execmagic is not installed.

So this installer does what ipykernel's own ``ipython kernel install`` does: it writes the absolute
path of the interpreter running it as ``argv[0]`` (``sys.executable`` as given, not with symlinks
resolved: a virtualenv's ``bin/python`` is a symlink whose target knows nothing of the
virtualenv), and hands the folder to jupyter_client's ``KernelSpecManager.install_kernel_spec``,
which knows where ``--user``, ``--sys-prefix`` and ``--prefix`` put kernelspecs on each platform.
The kernel loads the extension through ``IPKernelApp.extra_extensions``, which adds to the
extensions a user configured in ``ipython_config.py`` instead of replacing them.  It starts through
:mod:`.kernel_launcher` (``python -P -m`` from 3.11), not ``-m ipykernel_launcher``: nothing in the
notebook's folder is imported before the kernel is up, and the folder is appended to the module path
after.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import sys
import tempfile
from typing import Any

from ..process.errors import shown_value
from ..process.records import record
from .helpfmt import HELP_WIDTH
from .kernel_launcher import kernel_argv

__all__ = ["DEFAULT_NAME", "InstalledKernel", "install_kernel", "kernel_dict", "main", "parser"]

#: The shipped kernelspec's name too: installing with ``--user`` shadows the wheel's copy on purpose
#: (the user folder comes first on Jupyter's search path).
DEFAULT_NAME = "execmagic"
#: What jupyter_client accepts as a kernel name (it refuses others with a long traceback).
_NAME = re.compile(r"[a-z0-9._-]+", re.IGNORECASE)


@record
class InstalledKernel:
    name: str
    path: str          # the kernelspec folder Jupyter will read
    python: str        # argv[0] of the kernel
    display_name: str


def kernel_dict(display_name: str, python: str | None = None) -> dict[str, Any]:
    """kernel.json for an execmagic kernel run by ``python`` (default: this interpreter)."""
    from ipykernel.kernelspec import get_kernel_dict

    # ipykernel turns frozen modules off on CPython so that its debugger can step into the stdlib
    python_arguments = ("-Xfrozen_modules=off",) if platform.python_implementation() == "CPython" else ()
    spec = get_kernel_dict(extra_arguments=["--IPKernelApp.extra_extensions=execmagic"])
    # not ipykernel's `-m ipykernel_launcher`, which imports from the notebook's folder first (see
    # kernel_launcher): this Python's own way to start with nothing of that folder on the path
    start = kernel_argv(os.path.abspath(python or sys.executable), safe_path=sys.version_info >= (3, 11),
                        python_arguments=python_arguments)
    spec["argv"] = [*start, *spec["argv"][spec["argv"].index("-f"):]]
    spec["display_name"] = display_name
    return spec


def install_kernel(*, name: str = DEFAULT_NAME, display_name: str | None = None, user: bool = False,
                   prefix: str | None = None) -> InstalledKernel:
    """Write the kernelspec ``name`` for this interpreter; ``user``, else ``prefix``, else system-wide.

    An existing kernelspec of that name in the same place is replaced (installing again after a
    move of the environment is the fix, so it must be allowed).  Raises ``OSError`` when the place
    cannot be written.
    """
    import json

    from ipykernel.kernelspec import RESOURCES
    from jupyter_client.kernelspec import KernelSpecManager

    shown = display_name or ("Python 3 (execmagic)" if name == DEFAULT_NAME else f"Python 3 (execmagic: {name})")
    spec = kernel_dict(shown)
    with tempfile.TemporaryDirectory(suffix="-execmagic-kernelspec") as staging:
        folder = os.path.join(staging, name)
        shutil.copytree(RESOURCES, folder)  # ipykernel's logos, so the launcher shows a Python icon
        for entry in os.listdir(folder):
            os.chmod(os.path.join(folder, entry), 0o644)  # a read-only site-packages gives read-only copies
        with open(os.path.join(folder, "kernel.json"), "w", encoding="utf-8") as fh:
            json.dump(spec, fh, indent=1)
        path = KernelSpecManager().install_kernel_spec(folder, kernel_name=name, user=user, prefix=prefix)
    return InstalledKernel(name=name, path=path, python=spec["argv"][0], display_name=shown)


def parser() -> argparse.ArgumentParser:
    """The command's parser (its help is in the generated reference: fixed width, no paths of this machine)."""
    parser = argparse.ArgumentParser(
        prog="python -m execmagic install-kernel",
        formatter_class=lambda prog: argparse.HelpFormatter(prog, width=HELP_WIDTH),
        description="Register a Jupyter kernel that runs this Python with execmagic loaded. "
                    "Run it with the Python of the environment execmagic is installed in; the Jupyter "
                    "that starts the kernel may live anywhere.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="for your user only (the default: needs no administrator rights)")
    where.add_argument("--sys-prefix", action="store_true",
                       help="into this environment's Jupyter data (sys.prefix/share/jupyter), for a Jupyter installed "
                            "here")
    where.add_argument("--prefix", metavar="P",
                       help="into P/share/jupyter/kernels: P is the environment (sys.prefix) of the Jupyter "
                            "that should see the kernel")
    where.add_argument("--system", action="store_true", help="for every user of this machine (needs rights)")
    parser.add_argument("--name", metavar="N", default=DEFAULT_NAME,
                        help=f"the kernelspec's name (default {DEFAULT_NAME}; letters, digits, . _ -)")
    parser.add_argument("--display-name", metavar="D", help="the name in Jupyter's launcher and kernel menu")
    return parser


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if not _NAME.fullmatch(args.name):
        cli.error(f"--name {shown_value(args.name)}: a kernel name is letters, digits, '.', '_' and '-'")
    prefix = sys.prefix if args.sys_prefix else args.prefix
    user = not (args.sys_prefix or args.prefix or args.system)
    if prefix is not None and not os.path.isdir(prefix):
        cli.error(f"--prefix {shown_value(prefix)} is not a directory")
    try:
        done = install_kernel(name=args.name, display_name=args.display_name, user=user, prefix=prefix)
    except OSError as exc:
        hint = " (try --user)" if isinstance(exc, PermissionError) and not user else ""
        print(f"install-kernel: cannot write the kernelspec: {exc.strerror or exc}"
              f"{' ' + repr(exc.filename) if exc.filename else ''}{hint}", file=sys.stderr)
        return 1
    print(f"Installed kernel {done.name!r} ({done.display_name}) in {done.path}\n"
          f"  it runs {done.python} with execmagic loaded")
    return 0
