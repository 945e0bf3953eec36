"""The MCP server's call runner on its own, in an event loop as the SDK runs it: what a cancel stops,
and what each cancelled call's record says."""

from __future__ import annotations

import asyncio
import os

import anyio
import pytest

from execmagic.agents.mcp_calls import CallLog, CallRunner
from execmagic.agents.tools import Toolbox
from mcp_faults import running_under, until

pytestmark = pytest.mark.timeout(60)


def runner(engine, **options):
    return CallRunner(Toolbox(engine, sandbox="off", grace=0.3), CallLog(), **options)


async def started(call, task_group_calls, predicate, what):
    """Start ``call`` (a coroutine function) in the group and wait until ``predicate()``."""
    task_group_calls.start_soon(call)
    await until(predicate, 30, what)


def test_a_call_cancelled_while_waiting_its_turn_never_runs(engine, tmp_path):
    calls = runner(engine, max_calls=1)
    second = tmp_path / "second-ran"

    async def main():
        async with anyio.create_task_group() as group:
            await started(lambda: calls("Bash", {"command": "exec sleep 318"}), group,
                          lambda: "sleep 318" in running_under(os.getpid()), "the first call to run")
            waiting = asyncio.ensure_future(calls("Bash", {"command": f"touch {second}"}))
            await until(lambda: len(getattr(calls._slots, "_waiters", None) or ()) == 1, 10,
                        "the second call to wait its turn")  # the semaphore's own queue: no public look at it
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            group.cancel_scope.cancel()  # and the first one too
        await until(lambda: "sleep 318" not in running_under(os.getpid()), 10, "the first call's command to stop")

    anyio.run(main)
    waited, ran = calls.log.latest()
    assert (waited.cancelled, waited.outcome, waited.duration_ms < 5000) == (
        True, "cancelled by the client before it started", True)
    assert (ran.cancelled, ran.outcome) == (True, "cancelled by the client: its command was stopped")
    assert not second.exists()


def test_a_command_deaf_to_interrupts_is_killed_within_the_grace(engine):
    """`trap '' INT TERM` in the command and every child: SIGKILL after the grace, and the handler has
    waited for it before the cancel goes on."""
    calls = runner(engine)
    tree = {"sleep 319", "sleep 320"}

    async def main():
        async with anyio.create_task_group() as group:
            await started(lambda: calls("Bash", {"command": "trap '' INT TERM; sleep 319 & sleep 320; wait"}), group,
                          lambda: running_under(os.getpid()) >= tree, "the deaf tree to run")
            group.cancel_scope.cancel()
        assert not tree & running_under(os.getpid())  # gone by the time the cancel went through

    anyio.run(main)
    (call,) = calls.log.latest()
    assert call.cancelled and call.outcome == "cancelled by the client: its command was stopped"


def test_a_background_shell_a_cancelled_call_started_runs_on(engine):
    calls = runner(engine)

    async def main():
        answer = await calls("Bash", {"command": "exec sleep 321", "run_in_background": True})
        async with anyio.create_task_group() as group:
            await started(lambda: calls("Bash", {"command": "sleep 322"}), group,
                          lambda: "sleep 322" in running_under(os.getpid()), "the foreground call to run")
            group.cancel_scope.cancel()
        return answer["shell_id"]

    shell_id = anyio.run(main)
    try:
        assert engine.shells.info(shell_id).running and "sleep 321" in running_under(os.getpid())
    finally:
        engine.shells.kill_all()
