"""Faults at fleet scale on the local executor, with the fake CLI (``fake_cli.py``): a
results disk that fails, a stop inside ``async for``, a CLI that crashes, and what a
batch holds per task. Every test runs on asyncio and trio and is bounded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ccwire.batch import BatchError, BatchResult, BatchState, read_results, run_batch

from .conftest import FakeOptions, Holds, fake_cli_processes

pytestmark = pytest.mark.anyio
LIMIT = 60  # seconds any one batch may take here


def echo_tasks(count: int) -> list[dict[str, Any]]:
    return [{"id": f"t{i:03d}", "prompt": f"echo {i}"} for i in range(count)]


def ids_on_disk(path: Path) -> list[str]:
    """The ids of a results file whose every line is whole, valid JSON."""
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "a torn last line"
    return [json.loads(line)["id"] for line in raw.decode().splitlines()]


async def test_a_results_disk_that_fails_is_a_batch_error_naming_the_file_and_the_cause(
    fake_options: FakeOptions, holds: Holds
) -> None:
    # /dev/full: every write fails with ENOSPC, as on a full disk; four sessions run
    # when the first result cannot be written
    run = run_batch(echo_tasks(12), options=fake_options(), concurrency=4, output="/dev/full")
    seen: list[BatchResult] = []
    with anyio.fail_after(LIMIT), pytest.raises(BatchError) as caught:
        async with run as results:
            async for result in results:
                seen.append(result)
    error = caught.value
    assert "'/dev/full'" in str(error) and "No space left on device" in str(error)
    assert isinstance(error.__cause__, OSError)
    assert seen == []  # nothing was yielded that is not on disk
    assert run.state is BatchState.FAILED
    assert fake_cli_processes(holds) == []


async def test_stop_inside_async_for_ends_the_batch_and_a_rerun_runs_exactly_the_rest(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    tasks = echo_tasks(20)
    out = tmp_path / "out.jsonl"
    seen: list[str] = []
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=3, output=out) as run:
            async for result in run:
                seen.append(result.id)
                if len(seen) == 5:
                    run.stop()  # no raw cancellation may come out of this block
    assert run.state is BatchState.STOPPED
    first = ids_on_disk(out)
    assert set(seen) <= set(first) and len(set(first)) == len(first) < len(tasks)

    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=3, output=out) as run:
            rest = [result.id async for result in run]
    assert run.state is BatchState.COMPLETED
    assert sorted(rest) == sorted({t["id"] for t in tasks} - set(first))
    assert sorted(ids_on_disk(out)) == [t["id"] for t in tasks]  # every id once


async def test_a_crashed_task_keeps_the_exit_code_and_the_stderr_tail_masked(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    tasks = [{"id": "boom", "prompt": "crash now"}, {"id": "fine", "prompt": "echo ok"}]
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), retries=0, output=out) as results:
            got = {r.id: r for r in await results.collect()}
    assert got["fine"].ok and got["fine"].cost_known
    boom = got["boom"]
    assert (boom.ok, boom.error_kind, boom.exit_code, boom.attempts) == (False, "crash", 3, 1)
    assert not boom.cost_known  # it died before saying what it spent: not "$0"
    assert boom.session_id is not None
    tail = boom.stderr or ""
    assert tail.endswith("fatal: the end of the story")
    assert "ANTHROPIC_API_KEY=***" in tail and "sk-ant-api03" not in tail  # masked
    assert "trace line 39" in tail and "trace line 0\n" not in tail  # the tail, bounded
    assert len(tail.splitlines()) <= 20
    assert {r.id: r for r in read_results(out)}["boom"] == boom  # and so on disk


async def test_file_descriptors_do_not_grow_with_the_number_of_tasks(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    me = psutil.Process()

    async def batch(count: int, name: str, events: Any = None) -> None:
        with anyio.fail_after(LIMIT * 2):
            async with run_batch(echo_tasks(count), options=fake_options(), concurrency=4,
                                 output=tmp_path / name, events=events) as results:  # fmt: skip
                assert len(await results.collect()) == count

    await batch(4, "warm-up.jsonl")  # the loop's own descriptors, opened once
    before = me.num_fds()
    peak = [before]
    await batch(48, "out.jsonl", lambda _: peak.__setitem__(0, max(peak[0], me.num_fds())))
    assert me.num_fds() <= before
    assert peak[0] - before <= 4 * 8  # a few pipes per running session, whatever the count
