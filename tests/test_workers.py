"""The worker pool behind the CLI's control requests: reused tasks, never a job
waiting behind a busy one, and nothing left running once it is closed."""

from __future__ import annotations

import anyio
import pytest

from ccwire._protocol.workers import WorkerPool

pytestmark = pytest.mark.anyio


async def test_a_blocked_job_never_delays_the_next() -> None:
    order: list[str] = []
    release = anyio.Event()

    async def slow() -> None:
        await release.wait()
        order.append("slow")

    async def quick(tag: str) -> None:
        order.append(tag)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            pool = WorkerPool(tg)
            pool.submit(slow)
            await anyio.wait_all_tasks_blocked()
            pool.submit(quick, "a")
            pool.submit(quick, "b")
            await anyio.wait_all_tasks_blocked()
            assert order == ["a", "b"]  # ran while the first job was still blocked
            release.set()
            await anyio.wait_all_tasks_blocked()
            pool.close()
    assert order == ["a", "b", "slow"]


async def test_sequential_jobs_reuse_one_worker_and_close_ends_it() -> None:
    done: list[int] = []

    async def job(i: int) -> None:
        done.append(i)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            pool = WorkerPool(tg)
            for i in range(50):
                pool.submit(job, i)
                await anyio.wait_all_tasks_blocked()
            pool.close()  # the idle worker ends: the task group can exit
            pool.submit(job, 50)  # after close a job still runs, on a task of its own
    assert done == list(range(51))
    assert pool.workers == 1


async def test_concurrent_jobs_get_enough_workers() -> None:
    running = 0
    peak = 0
    gate = anyio.Event()

    async def job() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        running -= 1

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            pool = WorkerPool(tg)
            for _ in range(16):
                pool.submit(job)
            await anyio.wait_all_tasks_blocked()
            assert peak == 16
            gate.set()
            await anyio.wait_all_tasks_blocked()
            for _ in range(16):  # the 16 idle workers are reused, none started
                pool.submit(job)
            await anyio.wait_all_tasks_blocked()
            pool.close()
    assert pool.workers == 16


async def test_a_burst_of_quick_jobs_costs_two_workers_and_a_waiting_one_hands_on() -> None:
    """Sixteen jobs submitted at once whose handlers never wait run on one worker (a
    second is sent for the rest and finds the queue empty); when the first job waits,
    the second worker takes the next one at once."""
    done: list[int] = []
    release = anyio.Event()

    async def quick(i: int) -> None:
        done.append(i)

    async def slow() -> None:
        await release.wait()
        done.append(-1)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            pool = WorkerPool(tg)
            for i in range(16):
                pool.submit(quick, i)
            await anyio.wait_all_tasks_blocked()
            assert done == list(range(16))
            assert pool.workers == 2
            pool.submit(slow)
            pool.submit(quick, 16)
            pool.submit(quick, 17)
            await anyio.wait_all_tasks_blocked()
            assert done[16:] == [16, 17]  # not behind the waiting job
            release.set()
            await anyio.wait_all_tasks_blocked()
            assert done[-1] == -1
            pool.close()
    # the one that took job 16 sent a third on its way, in case job 16 waited
    assert pool.workers == 3
