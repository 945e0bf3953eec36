"""A small driver for a real ipykernel through jupyter_client, as a notebook frontend talks to it."""

from __future__ import annotations

import dataclasses
import os
import queue
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

from jupyter_client.manager import KernelManager

KERNEL_TOKEN_VAR = "EXECMAGIC_KERNEL_TOKEN"


@dataclasses.dataclass
class Execution:
    reply: dict[str, Any]
    messages: list[tuple[float, dict[str, Any]]]  # (arrival time, iopub message)
    started: float

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [m for _, m in self.messages if m["msg_type"] in types]

    def stream_text(self, name: str = "stdout") -> str:
        return "".join(m["content"]["text"] for m in self.of_type("stream") if m["content"]["name"] == name)

    @property
    def status(self) -> str:
        return self.reply["content"]["status"]


class Kernel:
    """Starts a kernel with a marker in its environment, so what it leaves behind can be found."""

    def __init__(self, extra_env: dict[str, str] | None = None, kernel_name: str = "python3") -> None:
        self.token = uuid.uuid4().hex
        env = {k: v for k, v in os.environ.items() if k != "EXECMAGIC_TEST_TOKEN"}
        env[KERNEL_TOKEN_VAR] = self.token
        env.update(extra_env or {})
        self.manager = KernelManager(kernel_name=kernel_name)
        self.manager.kernel_spec.argv[0] = sys.executable  # this environment's Python, whatever is installed
        self.manager.start_kernel(env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    @property
    def pid(self) -> int:
        return self.manager.provisioner.process.pid  # type: ignore[union-attr]

    def execute(self, code: str, timeout: float = 60, on_message: Any = None) -> Execution:
        started = time.monotonic()
        msg_id = self.client.execute(code, stop_on_error=False)
        messages: list[tuple[float, dict[str, Any]]] = []
        deadline = started + timeout
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise TimeoutError(f"no idle status within {timeout} s for {code!r}") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            messages.append((time.monotonic(), msg))
            if on_message is not None:
                on_message(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        while True:  # a reply to an earlier request (a kernel_info that wait_for_ready sent twice) is not ours
            reply = self.client.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if reply["parent_header"].get("msg_id") == msg_id:
                return Execution(reply, messages, started)

    def shutdown(self, now: bool = False) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=now)


#: What most kernel tests start with: the extension, and a short grace so stops are quick.
LOAD = "%load_ext execmagic\n%config ExecMagics.kill_grace = 0.5"


def loaded(kernel: Kernel, setup: str = LOAD) -> Iterator[Kernel]:
    """A module fixture's body (``yield from loaded(Kernel())``): ``kernel`` with ``setup`` run, shut
    down afterwards, and proven to leave no process behind (its watchdog included)."""
    from processes import assert_none_left

    try:
        assert kernel.execute(setup).status == "ok"
        yield kernel
    finally:
        kernel.shutdown()
    assert_none_left(KERNEL_TOKEN_VAR, kernel.token, wait=3)
