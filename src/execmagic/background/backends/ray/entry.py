"""How the kernel's Python starts the follower (:mod:`.follow`), so that nothing in its working folder
is imported: a module of its own, as both :mod:`.cluster` (which builds the command) and the follower
(which runs it) need it.
"""

from __future__ import annotations

import sys

__all__ = ["BOOTSTRAP", "follower_argv"]

#: ``python -c`` code that starts the follower where ``-P`` is not there (before 3.11): the folder ``-c`` puts
#: first on the path (``''``) is taken off before anything is imported.
BOOTSTRAP = ("import sys; sys.path[:1] = [p for p in sys.path[:1] if p]; "
             "from execmagic.background.backends.ray.follow import main; sys.exit(main())")


def follower_argv() -> tuple[str, ...]:
    """How the kernel's Python starts the follower so that nothing in its working folder is imported."""
    if sys.version_info >= (3, 11):
        return (sys.executable, "-P", "-m", "execmagic.background.backends.ray.follow")
    return (sys.executable, "-c", BOOTSTRAP)
