"""A connection is not tied to the task or cancel scope that opened it.

- ``connect()`` inside ``anyio.fail_after(...)`` and ``disconnect()`` outside it;
- ``connect()`` in one task and ``disconnect()`` in another, also while it connects;
- a second ``connect()`` while the first runs;
- ``break`` out of ``async for m in query(...)`` without ``aclosing``: the generator
  is closed by its finalizer, and the caller's task is never cancelled by it.
"""

from __future__ import annotations

import asyncio
import gc

import anyio
import psutil
import pytest

from ccwire import AssistantMessage, ClaudeSDKClient, CLIConnectionError, ResultMessage, query

from .conftest import FAULT_CLI, FaultOptions, no_leaks

pytestmark = pytest.mark.anyio


def _fault_clis() -> list[psutil.Process]:
    out = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and str(FAULT_CLI) in " ".join(
                child.cmdline()
            ):
                out.append(child)
        except psutil.NoSuchProcess:
            continue
    return out


async def test_connect_inside_fail_after_and_disconnect_outside(
    fault_options: FaultOptions,
) -> None:
    async with no_leaks():
        client = ClaudeSDKClient(fault_options("plain"))
        with anyio.fail_after(10):
            await client.connect()
        with anyio.fail_after(10):
            await client.query("hi")
            messages = [m async for m in client.receive_response()]
        await client.disconnect()  # outside the scope connect() ran in: no RuntimeError
    assert isinstance(messages[-1], ResultMessage)


async def test_connect_in_one_task_and_disconnect_in_another(
    fault_options: FaultOptions,
) -> None:
    client = ClaudeSDKClient(fault_options("plain"))
    async with no_leaks():
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.connect)
            await client.query("hi")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    break
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.disconnect)
    assert not _fault_clis()


async def test_disconnect_while_another_task_connects_stops_that_connect(
    fault_options: FaultOptions,
) -> None:
    # disconnect() did nothing: connect() went on, and either connected (the client then
    # ran a CLI nobody would stop) or waited out initialize_timeout; a second connect()
    # meanwhile started a second CLI, which the first one's disconnect() never stopped
    client = ClaudeSDKClient(fault_options("never_initialize", initialize_timeout=60))
    errors: list[Exception] = []

    async def connect() -> None:
        try:
            await client.connect()
        except CLIConnectionError as exc:
            errors.append(exc)

    async with no_leaks():
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(connect)
                await anyio.wait_all_tasks_blocked()  # connect() waits for the CLI
                with pytest.raises(CLIConnectionError, match="already connecting"):
                    await client.connect()
                await client.disconnect()
                assert not _fault_clis()  # stopped when disconnect() returns
        with pytest.raises(CLIConnectionError, match="not connected"):
            await client.query("hi")
    assert [str(e) for e in errors] == ["disconnect() was called while connecting"]


async def test_a_connect_that_times_out_leaves_nothing_behind(
    fault_options: FaultOptions,
) -> None:
    async with no_leaks():
        with pytest.raises(TimeoutError), anyio.fail_after(1):
            async with ClaudeSDKClient(fault_options("never_initialize")):
                pytest.fail("connected to a CLI that never answers initialize")
    assert not _fault_clis()


def test_a_query_left_open_when_the_event_loop_ends_is_closed_quietly(
    fault_options: FaultOptions,
) -> None:
    """``asyncio.run()`` closes every async generator still open at its end, all at
    once: the query's own and the ones inside it. None may find another one closing
    it ("aclose(): asynchronous generator is already running")."""
    errors: list[str] = []
    kept: list[object] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: errors.append(repr(context))
        )
        messages = query(prompt="hi", options=fault_options("plain"))
        async for message in messages:
            if isinstance(message, AssistantMessage):
                break
        kept.append(messages)  # still open when the loop ends

    asyncio.run(main())
    assert errors == []
    assert not _fault_clis()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_break_without_aclosing_does_not_cancel_the_caller(
    fault_options: FaultOptions,
) -> None:
    """asyncio closes an abandoned async generator from its own finalizer task."""
    with anyio.fail_after(20):
        messages = query(prompt="hi", options=fault_options("plain"))
        async for message in messages:
            if isinstance(message, AssistantMessage):
                break
        assert _fault_clis()  # the generator is suspended: its CLI still runs
        del messages, message
        gc.collect()  # the finalizer schedules the generator's aclose()
        while True:  # poll the process table (waiting on the child would reap it)
            if not _fault_clis():
                break
            await anyio.sleep(0.05)
        # the caller's task carries on: were the generator's cleanup to cancel a scope
        # of this task, the next checkpoints would raise
        for _ in range(20):
            await anyio.sleep(0.01)


# the first loop's pipe objects for the CLI are left to the garbage collector (nothing
# can close them once their loop is gone): their __del__ warns
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_client_used_in_a_second_event_loop(fault_options: FaultOptions, backend: str) -> None:
    """Code that runs each step in its own ``asyncio.run()`` (a web handler, a CLI
    command): the client connected in the first loop. A query in a later loop says why
    it cannot work, and ``disconnect()`` there stops the CLI without raising, as
    claude-agent-sdk's does (ccwire's raised a ``SpawnError``, and its query failed with
    "the CLI connection's tasks were cancelled")."""
    client = ClaudeSDKClient(fault_options("plain"))

    async def first() -> list[ResultMessage]:
        with anyio.fail_after(10):
            await client.connect()
            await client.query("hi")
            return [m async for m in client.receive_response() if isinstance(m, ResultMessage)]

    async def second() -> None:
        with anyio.fail_after(10):
            await client.query("again")

    async def server_info() -> object:
        return await client.get_server_info()  # what connect() cached: no loop needed

    async def disconnect() -> None:
        with anyio.fail_after(10):
            await client.disconnect()

    assert len(anyio.run(first, backend=backend)) == 1
    with pytest.raises(CLIConnectionError, match="connected in a different event loop"):
        anyio.run(second, backend=backend)
    assert anyio.run(server_info, backend=backend) is not None
    anyio.run(disconnect, backend=backend)
    _, alive = psutil.wait_procs(_fault_clis(), timeout=10)  # killed: it ends at once
    assert alive == []
    gc.collect()  # (the stranded pipe objects warn here, where the filters apply)
