"""The result renderers (``display/formatters.py``) registered when IPython makes its display formatters.

IPython makes a shell's display formatters -- ten configurables, one per MIME type -- the first time anything
asks for them: in a fresh kernel, after ``%load_ext execmagic``, whose registering made them.  That was 1.3 ms
of the load's main thread, and with our own registering and its modules about 3 ms (a tenth of the load).
So, where they are not made yet, the shell's ``display_formatter`` gets an ``_formatters_default`` of its own
(traitlets reads an instance's before its class's, :meth:`traitlets.HasTraits._get_trait_default_generator`):
whoever first asks for the formatters -- a value shown in a cell, a command's summary, or the thread that works
ahead (:mod:`.ahead`) while the notebook waits -- gets IPython's own, with ours registered.  Where they are made
already, ours are registered at once, as before.  Two threads asking at once get the same ones (:data:`_LOCK`).
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..display.render import View

__all__ = ["make", "register", "unregister"]

#: The name of the default-making method traitlets looks up (``_<trait>_default``), on the instance first.
_DEFAULT = "_formatters_default"
#: Held while the formatters are made and ours registered (re-entrant: registering asks for the formatters).
_LOCK = threading.RLock()


def _class_default(display: Any) -> Callable[[Any], Any] | None:
    """IPython's own maker of ``display``'s formatters (``None``: not the ``_formatters_default`` of a class)."""
    for cls in type(display).__mro__:
        made = vars(cls).get(_DEFAULT)
        if made is not None:
            return made
    return None


def register(shell: Any, view: Callable[[], View] | None = None) -> None:
    """Have the renderers registered with ``shell``'s formatters: now if they are made, else when they are."""
    display = shell.display_formatter
    with _LOCK:
        ipythons = _class_default(display)
        if display.trait_has_value("formatters") or ipythons is None:
            from ..display import formatters

            formatters.register(shell, view=view)
            return

        def made(_owner: Any) -> Any:
            with _LOCK:
                if not display.trait_has_value("formatters"):  # (else another thread made them, ours with them)
                    from ..display import formatters

                    made_ones = ipythons(display)
                    # ours in before they are the shell's: a value shown by another thread meanwhile (the first
                    # command's summary, as this runs on the thread that works ahead) reads them without the lock
                    formatters.register(shell, view=view, into=made_ones)
                    display.set_trait("formatters", made_ones)
                return display.formatters

        # (left in place once used: a thread that read it before the formatters were set still calls it)
        display.__dict__[_DEFAULT] = made


def make(shell: Any) -> None:
    """Have ``shell``'s formatters made now, ours with them (:mod:`.ahead`, while the notebook waits)."""
    display = getattr(shell, "display_formatter", None)
    if display is not None:
        display.formatters  # noqa: B018


def unregister(shell: Any) -> None:
    """Remove the renderers from ``shell``'s formatters, or the wish to register them when they are made."""
    display = shell.display_formatter
    with _LOCK:
        display.__dict__.pop(_DEFAULT, None)
        if "execmagic.display.formatters" in sys.modules and display.trait_has_value("formatters"):
            sys.modules["execmagic.display.formatters"].unregister(shell)
