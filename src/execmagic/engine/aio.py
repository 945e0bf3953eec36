"""Blocking engine calls made awaitable: a worker thread, and a cancel that stops the command first."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..process.foreground import CancelToken

__all__ = ["in_thread"]

T = TypeVar("T")


async def in_thread(call: Callable[[CancelToken | None], T], cancellable: bool) -> T:
    """Run a blocking call on its own thread; if the awaiting task is cancelled, stop the command
    (through a :class:`CancelToken`) and wait until it is stopped before letting the cancel through."""
    loop = asyncio.get_running_loop()
    token = CancelToken() if cancellable else None
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            value = call(token)
        except BaseException as exc:
            loop.call_soon_threadsafe(_settle, future, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, future, value, None)

    threading.Thread(target=work, name="execmagic-async", daemon=True).start()
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if token is not None:
            token.cancel()
            with contextlib.suppress(BaseException):
                await future  # the command's processes are stopped before the cancel goes on
        raise
    finally:
        if token is not None and future.done():
            token.close()


def _settle(future: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(value)
