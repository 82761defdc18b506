"""Sync handlers are isolated: each has its own thread budget, so a stuck one starves nobody."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest

from ccwire import SdkMcpServer, create_sdk_mcp_server, resource, tool
from ccwire._mcp.threads import DEFAULT_THREAD_BUDGET, ThreadBudget

pytestmark = pytest.mark.anyio

BOUND = 10  # seconds: only a hang reaches it


class Stuck:
    """Sync handlers that ignore their timeout until `release` is set."""

    def __init__(self, expected: int) -> None:
        self.release = threading.Event()
        self.entered: list[int] = []
        self.finished: list[int] = []
        self.all_in = anyio.Event()
        self.all_out = anyio.Event()
        self.expected = expected

    def _note(self, into: list[int], event: anyio.Event) -> None:
        into.append(1)
        if len(into) == self.expected:
            event.set()

    def block(self) -> str:
        anyio.from_thread.run_sync(self._note, self.entered, self.all_in)
        try:
            self.release.wait(BOUND * 3)
            return "late"
        finally:
            anyio.from_thread.run_sync(self._note, self.finished, self.all_out)


async def call(server: SdkMcpServer, name: str, req_id: int, **args: Any) -> dict[str, Any]:
    reply = await server.handle(
        {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": args},
        }
    )
    assert reply is not None and "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def make_server(stuck: Stuck, *, timeout: float | None) -> SdkMcpServer:
    @tool("stuck", "Never returns in time", {}, timeout=timeout)
    def stuck_tool(args: dict[str, Any]) -> str:
        return stuck.block()

    @tool("fine", "Returns at once", {})
    def fine(args: dict[str, Any]) -> str:
        return "ok"

    server: SdkMcpServer = create_sdk_mcp_server("s", tools=[stuck_tool, fine])["instance"]
    return server


async def test_stuck_sync_calls_do_not_take_the_threads_of_other_tools(
    anyio_backend: str,
) -> None:
    # the shared pool, shrunk so that a few stuck calls would exhaust it
    shared = 4
    anyio.to_thread.current_default_thread_limiter().total_tokens = shared
    stuck = Stuck(expected=shared)
    server = make_server(stuck, timeout=None)
    other = create_sdk_mcp_server("other", tools=[])["instance"]

    @resource("mem://{key}")
    def lookup(key: str) -> str:
        return f"value of {key}"

    other.add_resource(lookup)
    results: list[dict[str, Any]] = []

    async def run_stuck(i: int) -> None:
        results.append(await call(server, "stuck", 100 + i))

    async with anyio.create_task_group() as tg:
        for i in range(shared):
            tg.start_soon(run_stuck, i)
        with anyio.fail_after(BOUND):
            await stuck.all_in.wait()  # every shared thread is held by a stuck call
            # another tool of the same server, and a resource of another server, still run
            assert text_of(await call(server, "fine", 1)) == "ok"
            params = {"uri": "mem://k"}
            read = await other.handle(
                {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": params}
            )
            assert read is not None and read["result"]["contents"][0]["text"] == "value of k"
        stuck.release.set()
    assert [text_of(r) for r in results] == ["late"] * shared


async def test_a_handler_past_its_timeout_keeps_its_thread_until_it_returns(
    anyio_backend: str,
) -> None:
    stuck = Stuck(expected=DEFAULT_THREAD_BUDGET)
    server = make_server(stuck, timeout=0.05)
    with anyio.fail_after(BOUND):
        for i in range(DEFAULT_THREAD_BUDGET):
            timed_out = await call(server, "stuck", 10 + i)
            assert timed_out["isError"] and "timed out" in text_of(timed_out)
        await stuck.all_in.wait()
        # the budget is spent by threads that still run: one more call waits for a
        # thread, times out, and its handler never runs
        over = await call(server, "stuck", 99)
        assert over["isError"] and "timed out" in text_of(over)
        assert len(stuck.entered) == DEFAULT_THREAD_BUDGET
        # other tools are not affected
        assert text_of(await call(server, "fine", 1)) == "ok"
        stuck.release.set()
        await stuck.all_out.wait()
        # every thread returned: the budget is whole again
        assert text_of(await call(server, "stuck", 200)) == "late"
    assert len(stuck.entered) == DEFAULT_THREAD_BUDGET + 1


async def test_a_waiting_call_that_is_cancelled_leaves_the_queue(anyio_backend: str) -> None:
    budget = ThreadBudget(1, what="t")
    gate = threading.Event()
    ran: list[str] = []
    got: list[str] = []

    def work(tag: str) -> str:
        ran.append(tag)
        gate.wait(BOUND * 3)
        return tag

    async def run(tag: str, scope: anyio.CancelScope | None = None) -> None:
        with scope or anyio.CancelScope():
            got.append(await budget.run(work, tag))

    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "first")
            await anyio.wait_all_tasks_blocked()
            assert (budget.busy, budget.waiting) == (1, 0)
            abandoned = anyio.CancelScope()
            tg.start_soon(run, "cancelled", abandoned)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(run, "third")
            await anyio.wait_all_tasks_blocked()
            assert budget.waiting == 2
            abandoned.cancel()
            await anyio.wait_all_tasks_blocked()
            assert budget.waiting == 1
            gate.set()
        assert await budget.run(work, "after") == "after"
    assert got == ["first", "third"] and ran == [*got, "after"]
    assert (budget.busy, budget.waiting) == (0, 0)


def test_a_budget_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ThreadBudget(0)


async def test_an_abandoned_thread_hands_its_slot_to_the_next_call(anyio_backend: str) -> None:
    budget = ThreadBudget(1, what="t")
    gate = threading.Event()
    entered = anyio.Event()
    ran: list[str] = []

    def work(tag: str) -> str:
        ran.append(tag)
        if tag == "stuck":
            anyio.from_thread.run_sync(entered.set)
            gate.wait(BOUND * 3)
        return tag

    with anyio.fail_after(BOUND):
        with anyio.CancelScope() as abandoned:
            async with anyio.create_task_group() as tg:

                async def give_up() -> None:
                    await entered.wait()
                    abandoned.cancel()  # like a timeout: the thread keeps running

                tg.start_soon(give_up)
                await budget.run(work, "stuck")
        assert (budget.busy, budget.waiting) == (1, 0)  # the thread still counts
        async with anyio.create_task_group() as tg:
            got: list[str] = []

            async def next_call() -> None:
                got.append(await budget.run(work, "next"))

            tg.start_soon(next_call)
            await anyio.wait_all_tasks_blocked()
            assert budget.waiting == 1 and ran == ["stuck"]
            gate.set()  # the worker thread returns and wakes the waiter itself
    assert got == ["next"] and ran == ["stuck", "next"]
    assert (budget.busy, budget.waiting) == (0, 0)
