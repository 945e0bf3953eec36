"""A magic's route to the notebook in a kernel: nothing it sends waits on ipykernel's IO thread.

In a kernel, everything bound for IOPub -- stream text and display messages alike -- is sent by
one IO thread, from one queue, in order.  ``display()`` first flushes stdout, then stderr, each
flush waiting for a round trip to that thread, which must first wake from idle: two such waits
were a sizeable share of a short command's time.  A foreground run instead has both streams
flushed as it starts when they hold text (the cell's earlier text goes out while the command runs) and its summary
sent as it ends, neither waited for.  The order stays the notebook's:

- the summary is sent from the IO thread, queued behind the flushes: a flush run there queues
  its stream message behind what is already queued, so a message queued from the cell's thread
  would overtake the text;
- what the run itself writes (live output, the status line) is flushed as it is written, with
  ipykernel's waiting flush;
- what the cell prints after the magic is flushed later than the summary was queued.

A message sent to IOPub without a flush first -- a comm message of a widget created right after
the magic -- can go out before the summary, which only joins the queue when the IO thread gets to
it; what a notebook shows (text, displays, errors, the reply) flushes first and keeps its place.

Only ipykernel 6 and 7, whose queue works so, and only their own streams and display publisher;
anything else -- a terminal, another kernel, a replaced ``sys.stdout``, a publisher that keeps
display history or has a hook (an Output widget) -- gets IPython's own ``display``.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["CellOutput"]


class CellOutput:
    """One run's output route: streams flushed at its start, its display bundle sent at its end."""

    def __init__(self, shell: Any) -> None:
        self._shell = shell
        self._pub: Any = getattr(shell, "display_pub", None)
        self._streams: tuple[Any, Any] = (sys.stdout, sys.stderr)
        self._thread = _io_thread(*self._streams) if _plain_publisher(self._pub) else None
        if self._thread is not None:
            for stream in self._streams:
                if _holds_text(stream):  # a flush of nothing would only wake the IO thread, mid-run
                    self._thread.schedule(stream._flush)

    def show(self, data: dict[str, Any]) -> None:
        """Show ``data`` (a display bundle) in the cell: ``display(data, raw=True)``, without the waits."""
        thread, pub = self._thread, self._pub
        now = (sys.stdout, sys.stderr, getattr(self._shell, "display_pub", None))
        if thread is None or now != (*self._streams, pub) or not _plain_publisher(pub):  # %%capture, a widget…
            from IPython.display import display

            display(data, raw=True)
            return
        from ipykernel.jsonutil import json_clean

        msg = pub.session.msg("display_data", json_clean({"data": data, "metadata": {}, "transient": {}}),
                              parent=pub.parent_header)
        thread.schedule(lambda: pub.session.send(pub.pub_socket, msg, ident=pub.topic))


def _io_thread(out: Any, err: Any) -> Any:
    """The IO thread that sends both streams' text, when they are ipykernel's streams of this process."""
    try:
        import ipykernel
        from ipykernel.iostream import OutStream
    except ImportError:  # pragma: no cover (ipykernel is a dependency)
        return None
    if ipykernel.version_info[0] not in (6, 7):
        return None
    if type(out) is not OutStream or type(err) is not OutStream or out.pub_thread is not err.pub_thread:
        return None
    thread = out.pub_thread
    alive = thread is not None and thread.thread is not None and thread.thread.is_alive()
    return thread if alive and out._is_master_process() else None


def _holds_text(stream: Any) -> bool:
    """Whether ``stream`` (ipykernel's) may hold text not sent yet: every write marks it so (``_flush_pending``)
    until the flush that sends it; the echo to a terminal, when there is one, is flushed there too."""
    return getattr(stream, "_flush_pending", True) or getattr(stream, "echo", None) is not None


def _plain_publisher(pub: Any) -> bool:
    """ipykernel's display publisher itself (not a subclass with its own ``publish``), keeping no history,
    with no hook to hand messages to."""
    try:
        from ipykernel.zmqshell import ZMQDisplayPublisher
    except ImportError:  # pragma: no cover
        return False
    return (type(pub) is ZMQDisplayPublisher and not getattr(pub, "store_display_history", False)
            and pub.session is not None and not pub._hooks)
