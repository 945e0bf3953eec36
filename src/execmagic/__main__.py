"""``python -m execmagic COMMAND``: the package's command line.

    python -m execmagic install-kernel [--user|--sys-prefix|--prefix P|--system] [--name N] [--display-name D]

Like ``__init__``, this module wires layers together and sits in none of them.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

USAGE = """usage: python -m execmagic COMMAND [OPTIONS]

commands:
  install-kernel   register a Jupyter kernel that runs this Python with execmagic loaded
                   (python -m execmagic install-kernel --help for its options)"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    if args[0] == "install-kernel":
        from .magics.kernelspec import main as install_main

        return install_main(args[1:])
    import difflib

    close = difflib.get_close_matches(args[0], ["install-kernel"], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    print(f"{USAGE}\n\npython -m execmagic: unknown command {args[0]!r}{hint}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
