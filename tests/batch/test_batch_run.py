"""`run_batch` on the local executor: arguments refused up front, task sources that are
async or fail, references resolved for the sessions, a failure after a stop, and
results files that fail when the batch closes or cannot hold a result. The fake CLI of
``fake_cli.py``; every async test runs on asyncio and trio and is bounded."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import ClaudeSDKClient
from ccwire.batch import (
    BatchConfigError,
    BatchError,
    BatchEvent,
    BatchInputError,
    BatchState,
    BatchTask,
    ResultsWriteError,
    read_results,
    run_batch,
)

from .conftest import FakeOptions, Holds, fake_cli_processes

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

pytestmark = pytest.mark.anyio
LIMIT = 60


def echo(count: int) -> list[dict[str, str]]:
    return [{"id": f"t{i}", "prompt": f"echo {i}"} for i in range(count)]


async def test_tasks_from_an_async_iterable(fake_options: FakeOptions) -> None:
    async def source() -> AsyncIterator[dict[str, str]]:
        for task in echo(3):
            await anyio.lowlevel.checkpoint()
            yield task

    with anyio.fail_after(LIMIT):
        async with run_batch(source(), options=fake_options(), concurrency=2) as batch:
            got = await batch.collect()
    assert sorted((r.id, r.result) for r in got) == [(f"t{i}", f"echo: echo {i}") for i in range(3)]
    assert batch.state is BatchState.COMPLETED


async def test_a_task_iterable_that_raises_is_an_input_error_after_what_ran(
    fake_options: FakeOptions,
) -> None:
    def source() -> Iterator[dict[str, str]]:
        yield from echo(2)
        raise RuntimeError("the database went away")

    got: list[str] = []
    with anyio.fail_after(LIMIT), pytest.raises(BatchInputError, match="the task iterable raised"):
        async with run_batch(source(), options=fake_options()) as batch:
            async for result in batch:
                got.append(result.id)
    assert "the database went away" in str(batch.error)
    assert sorted(got) == ["t0", "t1"]  # the tasks taken before still ran
    assert batch.state is BatchState.FAILED


async def test_tools_need_a_dict_of_servers_to_join(fake_options: FakeOptions) -> None:
    options = fake_options(mcp_servers="servers.json")  # a config file: nothing to add to
    with anyio.fail_after(LIMIT), pytest.raises(BatchConfigError, match="mcp_servers to be a dict"):
        async with run_batch(echo(1), options=options,
                             tools=["tests.batch.calc_tools:server"]) as batch:  # fmt: skip
            await batch.collect()
    assert (batch.state, batch.submitted) == (BatchState.FAILED, 0)


async def test_hooks_by_reference_reach_every_session(fake_options: FakeOptions) -> None:
    from tests.batch.calc_tools import HOOKS

    seen: list[Any] = []

    async def look(client: ClaudeSDKClient) -> str:
        seen.append(client.options.hooks)
        return "looked"

    with anyio.fail_after(LIMIT):
        async with run_batch([look], options=fake_options(),
                             hooks="tests.batch.calc_tools:HOOKS") as batch:  # fmt: skip
            (result,) = await batch.collect()
    assert (result.ok, result.output) == (True, "looked")
    assert seen == [HOOKS]


async def test_a_task_that_fails_after_the_batch_was_stopped_is_not_recorded(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    async def quits(client: ClaudeSDKClient) -> str:
        batch.stop()  # Ctrl-C, say: the CLIs may have got it too
        raise RuntimeError("interrupted half-way")

    out = tmp_path / "out.jsonl"
    batch = run_batch([quits], options=fake_options(), output=out)
    with anyio.fail_after(LIMIT):
        async with batch:
            got = await batch.collect()
    assert got == []
    assert batch.state is BatchState.STOPPED and batch.error is None
    assert list(read_results(out)) == []  # it runs again next time


async def test_a_batch_stopped_while_tasks_have_time_left_records_no_timeout(
    fake_options: FakeOptions, holds: Holds, tmp_path: Path
) -> None:
    async def stops(client: ClaudeSDKClient) -> None:
        await anyio.to_thread.run_sync(holds.wait_for, 1)  # the held session is running
        batch.stop()  # Ctrl-C, say: a cancellation of the batch, not of the time limit
        await anyio.sleep_forever()

    out = tmp_path / "out.jsonl"
    tasks: list[Any] = [{"id": "held", "prompt": "hold on"}, stops]
    batch = run_batch(tasks, options=fake_options(), output=out, task_timeout=30)
    with anyio.fail_after(LIMIT):
        async with batch:
            got = await batch.collect()
    assert got == []  # neither is a (timeout) result: both run again next time
    assert batch.state is BatchState.STOPPED and batch.error is None
    assert list(read_results(out)) == []
    assert fake_cli_processes(holds) == []


async def test_a_parquet_file_that_cannot_be_folded_fails_the_batch_and_keeps_the_journal(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "out.parquet"
    with anyio.fail_after(LIMIT), pytest.raises(ResultsWriteError) as caught:
        async with run_batch(echo(2), options=fake_options(), output=out) as batch:
            got = await batch.collect()
            (tmp_path / "out.parquet.tmp").mkdir()  # where the fold writes: it fails
    assert isinstance(caught.value.__cause__, IsADirectoryError)
    assert str(out) in str(caught.value)
    assert batch.state is BatchState.FAILED
    journal = tmp_path / "out.parquet.journal.jsonl"
    assert sorted(r.id for r in read_results(journal)) == sorted(r.id for r in got) == ["t0", "t1"]


async def test_metadata_json_cannot_hold_is_recorded_by_its_repr_and_the_batch_goes_on(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    # metadata whose keys JSON cannot have: the result is still recorded (it used to stop
    # the batch with a TypeError, every later task unrun)
    tasks = [
        {"id": "t", "prompt": "echo t", "metadata": {(1, 2): "pair"}},
        {"id": "u", "prompt": "echo u"},
    ]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), output=tmp_path / "o.jsonl") as batch:
            seen = [result.id async for result in batch]
    assert batch.state is BatchState.COMPLETED
    assert sorted(seen) == ["t", "u"]
    recorded = {r.id: r for r in read_results(tmp_path / "o.jsonl")}
    assert recorded["t"].ok and recorded["t"].metadata == {"unrecordable": "{(1, 2): 'pair'}"}
    assert recorded["u"].ok


@pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit, "group"])
async def test_a_task_function_raising_keyboard_interrupt_or_system_exit_stops_the_batch_and_raises_it(  # noqa: E501
    fake_options: FakeOptions, holds: Holds, tmp_path: Path, kind: Any
) -> None:
    echoed = anyio.Event()
    raised: BaseException = (
        BaseExceptionGroup("in a task group", [KeyboardInterrupt()])
        if kind == "group"
        else kind("from the task function")
    )

    def seen(event: BatchEvent) -> None:
        if event.kind == "finished" and event.task_id == "t0":
            echoed.set()

    async def boom(client: ClaudeSDKClient) -> None:
        await echoed.wait()  # t0's result is written
        await anyio.to_thread.run_sync(holds.wait_for, 1)  # the held session is running
        raise raised

    out = tmp_path / "out.jsonl"
    tasks: list[Any] = [*echo(1), {"id": "held", "prompt": "hold on"}, boom]
    batch = run_batch(tasks, options=fake_options(), output=out, concurrency=3, events=seen)
    got: list[str] = []
    with anyio.fail_after(LIMIT), pytest.raises(type(raised)) as caught:
        async with batch:
            async for result in batch:
                got.append(result.id)
    assert caught.value is raised  # as it is, as from any call (no BatchError around it)
    assert batch.error is raised and batch.state is BatchState.FAILED
    assert got == ["t0"]
    assert [r.id for r in read_results(out)] == ["t0"]  # held and boom run again next time
    assert fake_cli_processes(holds) == []  # the running session was stopped


async def test_other_base_exceptions_of_a_task_function_are_its_failure(
    fake_options: FakeOptions,
) -> None:
    class Custom(BaseException):
        pass

    async def exits(client: ClaudeSDKClient) -> None:
        raise GeneratorExit("closed")

    async def custom(client: ClaudeSDKClient) -> None:
        raise Custom("mine")

    with anyio.fail_after(LIMIT):
        async with run_batch([exits, custom, *echo(1)], options=fake_options()) as batch:
            got = {r.id: r for r in await batch.collect()}
    assert batch.state is BatchState.COMPLETED and batch.error is None
    assert (got["exits"].ok, got["exits"].error_kind) == (False, "exception")
    assert got["exits"].error == "GeneratorExit: closed"
    assert (got["custom"].error_kind, got["custom"].error) == ("exception", "Custom: mine")
    assert got["t0"].ok


async def test_a_task_function_cancelling_its_own_asyncio_task_is_its_failure(
    fake_options: FakeOptions, anyio_backend: str, tmp_path: Path
) -> None:
    # the native cancel ended the batch's task group quietly: the other tasks never
    # ran, nothing said so, and the batch claimed it had completed
    if anyio_backend != "asyncio":
        pytest.skip("an asyncio task's own cancel()")
    import asyncio

    async def cancels(client: ClaudeSDKClient) -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await anyio.sleep(LIMIT)

    async def after(client: ClaudeSDKClient) -> str:
        return "went on"

    out = tmp_path / "out.jsonl"
    tasks = [cancels, after, *echo(2)]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=1, output=out) as batch:
            got = {r.id: r for r in await batch.collect()}
    assert batch.state is BatchState.COMPLETED and batch.error is None
    assert sorted(got) == ["after", "cancels", "t0", "t1"]
    assert (got["cancels"].ok, got["cancels"].error_kind) == (False, "exception")
    assert got["after"].output == "went on" and got["t1"].ok
    assert sorted(r.id for r in read_results(out)) == sorted(got)


async def test_a_stopped_batch_stops_waiting_for_a_task_that_ignores_its_cancellation(
    fake_options: FakeOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a task function that shields itself from the stop held the results iteration (and
    # the caller) for ever; now it is waited for a bounded time, then the batch fails
    import ccwire._batch.run as batch_run

    monkeypatch.setattr(batch_run, "_CLOSE_SECONDS", 0.5)
    started, release = anyio.Event(), anyio.Event()

    async def stubborn(client: ClaudeSDKClient) -> str:
        started.set()
        with anyio.CancelScope(shield=True):
            await release.wait()
        return "late"

    host = None
    try:
        with anyio.fail_after(LIMIT), pytest.raises(BatchError, match="no longer waited for"):
            async with run_batch([stubborn], options=fake_options(), concurrency=1) as batch:
                host = batch._host  # (to let the task end before the test does)
                await started.wait()
                batch.stop()
                await batch.collect()
    finally:
        release.set()
        if host is not None:
            await host.aclose(LIMIT)  # the task returns, its session is closed
    assert batch.state is BatchState.FAILED


async def test_a_task_that_blocks_the_loop_is_seen_named_and_timed_out(
    fake_options: FakeOptions, holds: Holds, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # synchronous code in a task function holds the event loop: nothing can stop it, but
    # a watchdog thread sees it and where; once it yields (or returns) past its limit it
    # is a timeout; the held session, whose limit passed meanwhile, gets that time back
    async def blocker(client: ClaudeSDKClient) -> str:
        await anyio.to_thread.run_sync(holds.wait_for, 1)  # the held session is running
        time.sleep(4)  # noqa: ASYNC251 - the mistake: a blocking call in an async function
        holds.release(forever=True)
        return "done"

    tasks: list[Any] = [{"id": "held", "prompt": "hold on"}, BatchTask(id="blocker", run=blocker)]
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), output=out, task_timeout=3) as run:
            got = {r.id: r for r in await run.collect()}
    hog, held = got["blocker"], got["held"]
    assert (hog.ok, hog.error_kind, hog.output) == (False, "timeout", "done")
    assert 3.5 < hog.blocked_s < 10
    assert "blocked the event loop for" in (hog.error or "")
    line = blocker.__code__.co_firstlineno + 2  # the time.sleep
    assert f"test_batch_run.py:{line} in blocker" in (hog.error or "")
    assert (held.ok, held.blocked_s) == (True, 0), held.error  # was a timeout
    assert held.duration_s > 3  # past its limit, all but the time the blocker took
    assert {r.id: r for r in read_results(out)} == got
    assert any("task 'blocker' has blocked" in r.getMessage() for r in caplog.records)
    assert not [t for t in threading.enumerate() if t.name == "ccwire loop watchdog"]
    assert fake_cli_processes(holds) == []
