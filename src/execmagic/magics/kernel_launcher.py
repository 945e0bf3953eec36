"""Start an IPython kernel so that nothing in the folder it starts in is imported before it is up.

``python -m ipykernel_launcher`` (Jupyter's usual kernelspec) puts the kernel's working folder -- the
notebook's -- first on the module path, so an ``ipykernel_launcher.py`` (or ``traitlets.py``, ``zmq.py``,
any module the kernel imports while starting) written there runs in place of the real one, at every
kernel start, unconfined: whatever wrote it (a sandboxed command, a downloaded file) gets the kernel.
execmagic's kernelspecs start the kernel through :func:`main` instead:

- with ``python -P -m execmagic.magics.kernel_launcher`` from Python 3.11 (``-P``: no folder of the
  command line's is put on the path), or ``python -c`` with :data:`BOOTSTRAP` where the version is not
  known (the kernelspec shipped in the wheel, which any Python may run) or older: it takes the folder
  off the path before it imports anything;
- and IPython is told not to put the folder back (``ignore_cwd``) while the kernel starts;
- once the kernel is up (its extensions loaded), the folder (``''``: the kernel's working folder, as
  IPython would have it) is *appended* to the path: ``import mymodule`` next to the notebook works, and
  a local ``json.py`` no longer shadows the standard library's, nor a local ``numpy.py`` the installed one.
"""

from __future__ import annotations

import sys

__all__ = ["BOOTSTRAP", "kernel_argv", "main"]

#: ``python -c`` code that starts the kernel where ``-P`` cannot be counted on: the folder ``-c`` puts first
#: on the path (``''``) is taken off before anything is imported.
BOOTSTRAP = ("import sys; sys.path[:1] = [p for p in sys.path[:1] if p]; "
             "from execmagic.magics.kernel_launcher import main; main()")


def kernel_argv(python: str, *, safe_path: bool, python_arguments: tuple[str, ...] = ()) -> list[str]:
    """The argv of a kernel run by ``python`` (before ``-f {connection_file}``): ``-P -m`` this module when
    ``safe_path`` (the interpreter is 3.11 or newer), else ``-c`` :data:`BOOTSTRAP`."""
    start = ["-P", "-m", __name__] if safe_path else ["-c", BOOTSTRAP]
    return [python, *python_arguments, *start]


def main(argv: list[str] | None = None) -> None:
    """Start the kernel (``argv``: its command line, default ``sys.argv[1:]``), the working folder put on the
    module path last, after start-up."""
    from ipykernel.kernelapp import IPKernelApp

    while "" in sys.path:  # a launcher of another's may have left it
        sys.path.remove("")
    args = [*(sys.argv[1:] if argv is None else argv), "--IPKernelApp.ignore_cwd=True"]
    app = IPKernelApp.instance()
    app.initialize(args)
    sys.path.append("")  # now, and last: local imports work, and shadow nothing the kernel or a package needs
    app.start()


if __name__ == "__main__":
    main()
