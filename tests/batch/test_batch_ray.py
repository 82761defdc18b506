"""The Ray executor on a real three-node cluster on this machine (`ray.cluster_utils.Cluster`,
on 127.0.0.1: a head without CPUs and two workers of two), shared by the module:

* the same scripted batch gives the same results as the local executor (real CLI);
* a worker node removed mid-batch: its sessions run again on the other node, every
  task ends ok, every id once;
* an actor killed under a session that made a tool call: that task is reported with
  its session id, not run again; one that had not acted runs again;
* cancelling a batch ends its sessions, its actors and its driver's child process;
  tools a worker cannot import fail clearly;
* on a cluster of its own, the head node lost under a program's batch and a
  ``ccwire batch --ray``: both survive it, with every recorded result and
  `BatchProcessLostError`;
* a program's batch without a cluster runs on a Ray instance of its own;
* and, without the cluster, ``ccwire batch --ray ADDRESS`` for an address that does
  not answer is one clear error, in bounded time.

All but the first use the fake CLI (``fake_cli.py``). The batch's Ray driver is a child
process, the same whatever loop the program runs, so only the results and cancellation
run on trio too; the rest run once, on asyncio."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psutil
import pytest

import ccwire
from ccwire import ClaudeAgentOptions
from ccwire.batch import (
    BatchConfigError,
    BatchResult,
    BatchState,
    BatchTask,
    ResultsWriteError,
    RetryPolicy,
    read_results,
    run_batch,
)
from ccwire.testing import ScriptedModel

from .conftest import FakeOptions, Holds, fake_cli_processes, fake_cli_wrapper
from .scripted import BatchScript

# Ray reads this once, when it is imported: set in the fixture, it came too late and the
# cluster listened on the machine's address instead of 127.0.0.1
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray", reason="the Ray tests need `pip install 'ccwire[ray]'`")
cluster_utils = pytest.importorskip("ray.cluster_utils")

QUICK = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)
LIMIT = 120  # seconds any one batch may take here


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Three Ray nodes on 127.0.0.1 (a head without CPUs, two workers of 2 CPUs), joined
    by this process; their workers import this checkout's tests and ccwire."""
    repo = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join([repo, str(Path(ccwire.__file__).resolve().parents[1])])
    nodes = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    try:
        for _ in range(2):
            nodes.add_node(num_cpus=2)
        ray.init(address=nodes.address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
        nodes.wait_for_nodes()
        yield nodes
    finally:
        ray.shutdown()
        nodes.shutdown()


def batch_actors() -> list[str]:
    """The batch actors Ray still has alive (the executor names them ``ccwire-batch-*``)."""
    return [name for name in ray.util.list_named_actors() if name.startswith("ccwire-batch-")]


def driver_processes() -> list[psutil.Process]:
    """The batch's Ray driver processes (`ray_process`) still running under this one."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "ccwire._batch.ray_process" in " ".join(proc.cmdline()):
                found.append(proc)
    return found


def ids_on_disk(path: Path) -> list[str]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "a torn last line"
    return [json.loads(line)["id"] for line in raw.decode().splitlines()]


def outcome(r: BatchResult) -> tuple[Any, ...]:
    """What must not depend on the executor (session ids and timings do)."""
    return (r.id, r.ok, r.result, r.is_error, r.subtype, r.num_turns, r.tool_calls,
            r.attempts, r.error_kind, dict(r.metadata))  # fmt: skip


TASKS: list[dict[str, Any]] = [
    {"id": "echo", "prompt": "hello there"},
    {"id": "tool", "prompt": "add 20 22", "metadata": {"expected": "42"}},
    {"id": "rate", "prompt": "rate limited once"},
    {"id": "turns", "prompt": "add 1 1", "max_turns": 1},
    {"id": "more", "prompt": "one more"},
]


@pytest.mark.e2e
@pytest.mark.anyio
async def test_ray_gives_the_same_results_as_local(
    cluster: Any, cli_path: str, tmp_path: Path
) -> None:
    async def run(executor: str) -> list[BatchResult]:
        with ScriptedModel(default=BatchScript()) as model:
            home = tmp_path / f"home-{executor}"
            home.mkdir(exist_ok=True)
            opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(home), cwd=str(tmp_path),
                                      allowed_tools=["mcp__calc"])  # fmt: skip
            out = tmp_path / f"{executor}.jsonl"
            tools = ["tests.batch.calc_tools:server"]
            kind: Any = executor
            with anyio.fail_after(LIMIT):
                async with run_batch(TASKS, options=opts, concurrency=2, executor=kind,
                                     retries=QUICK, output=out, tools=tools) as batch:  # fmt: skip
                    got = await batch.collect()
        assert sorted(map(outcome, read_results(out))) == sorted(map(outcome, got))
        return got

    local = await run("local")
    on_ray = await run("ray")
    assert sorted(map(outcome, on_ray)) == sorted(map(outcome, local))
    by_id = {r.id: r for r in on_ray}
    assert by_id["tool"].result == "sum: 42"
    assert by_id["rate"].attempts == 2
    assert by_id["turns"].subtype == "error_max_turns"
    assert len({r.session_id for r in on_ray}) == len(TASKS)


def node_of(pid: int, cluster: Any) -> Any:
    """The worker node of `cluster` whose raylet started process `pid` (a Ray worker)."""
    raylets = {
        node.all_processes[ray._private.ray_constants.PROCESS_TYPE_RAYLET][0].process.pid: node
        for node in cluster.worker_nodes
    }
    for parent in psutil.Process(pid).parents():
        if parent.pid in raylets:
            return raylets[parent.pid]
    raise AssertionError(f"process {pid} belongs to no worker node")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_a_node_lost_mid_batch_runs_its_sessions_again_elsewhere(
    cluster: Any, fake_options: FakeOptions, holds: Holds, tmp_path: Path
) -> None:
    # four sessions wait, on two actors of two sessions; then the node holding the most
    # of them is removed, and everything is let go
    tasks = [{"id": f"hold{i}", "prompt": f"hold {i}"} for i in range(4)]
    tasks += [{"id": f"echo{i:02d}", "prompt": f"echo {i}"} for i in range(16)]
    out = tmp_path / "out.jsonl"
    got: list[BatchResult] = []
    removed: list[Any] = []

    async def remove_a_node() -> None:
        waiting = await anyio.to_thread.run_sync(holds.wait_for, 4)
        by_node: dict[Any, int] = {}
        for hello in waiting:
            node = node_of(hello["ppid"], cluster)
            by_node[node] = by_node.get(node, 0) + 1
        node = max(by_node, key=lambda n: by_node[n])
        removed.append(by_node[node])
        await anyio.to_thread.run_sync(cluster.remove_node, node)
        holds.release(forever=True)

    try:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(remove_a_node)
                async with run_batch(tasks, options=fake_options(), concurrency=4, executor="ray",
                                     sessions_per_actor=2, num_cpus=0.5, retries=QUICK,
                                     output=out) as run:  # fmt: skip
                    got = await run.collect()
        assert run.state is BatchState.COMPLETED
        assert sorted(r.id for r in got) == sorted(t["id"] for t in tasks)  # each id once
        assert sorted(ids_on_disk(out)) == sorted(t["id"] for t in tasks)
        assert all(r.ok for r in got), [r.error for r in got if not r.ok]
        again = [r for r in got if r.attempts > 1]
        assert len(again) == removed[0] >= 1  # the lost sessions, and only they, ran twice
        assert all(r.id.startswith("hold") and r.attempts == 2 for r in again)
        assert batch_actors() == []
        assert fake_cli_processes(holds) == []
    finally:
        if cluster.worker_nodes and len(cluster.worker_nodes) < 2:
            cluster.add_node(num_cpus=2)  # the next tests get two workers again
            cluster.wait_for_nodes()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
@pytest.mark.parametrize("act", ["act", "act-late"])
async def test_an_actor_lost_under_a_session_that_acted_reports_it_for_resuming(
    cluster: Any, fake_options: FakeOptions, holds: Holds, tmp_path: Path, act: str
) -> None:
    # one actor runs `act` (a tool call, then waits: the tool runs) and `hold` (waits
    # without acting); its process is killed as soon as the tool runs: `hold` runs
    # again, `act` is reported with its session id. The driver knew it acted before
    # the tool ran, even when the tool call's message reaches the SDK only after the
    # tool ran (`act-late`): the kill never finds the driver uninformed.
    tasks = [{"id": "act", "prompt": f"{act} 0"}, {"id": "hold", "prompt": "hold 1"}]
    tasks += [{"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    sessions: dict[str, str] = {}

    async def kill_the_actor() -> None:
        waiting = await anyio.to_thread.run_sync(holds.wait_for, 2)
        sessions.update({hello["prompt"]: hello["sid"] for hello in waiting})
        assert len({hello["ppid"] for hello in waiting}) == 1  # one actor process
        psutil.Process(waiting[0]["ppid"]).kill()
        holds.release(forever=True)

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_the_actor)
            async with run_batch(tasks, options=fake_options(), concurrency=2, executor="ray",
                                 sessions_per_actor=2, num_cpus=0.5, retries=QUICK,
                                 output=out) as run:  # fmt: skip
                got = {r.id: r for r in await run.collect()}
    assert sorted(got) == sorted(t["id"] for t in tasks)
    acted = got["act"]
    assert (acted.ok, acted.error_kind, acted.retryable, acted.attempts) == (
        False, "lost", False, 1), acted.error  # fmt: skip
    assert not acted.cost_known and not got["hold"].cost_known  # what the lost attempts spent
    assert all(got[f"echo{i}"].cost_known for i in range(3))
    assert acted.session_id == sessions[f"{act} 0"]
    assert "may have acted" in (acted.error or "") and acted.session_id in (acted.error or "")
    assert (got["hold"].ok, got["hold"].attempts) == (True, 2)
    assert all(got[f"echo{i}"].ok for i in range(3))
    assert {r.id: r for r in read_results(out)} == got
    assert batch_actors() == []


@pytest.mark.anyio
async def test_cancelling_a_batch_ends_its_sessions_and_actors(
    cluster: Any, fake_options: FakeOptions, holds: Holds, tmp_path: Path
) -> None:
    tasks = [{"id": f"hold{i}", "prompt": f"hold {i}"} for i in range(3)]
    tasks += [{"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(3)]
    out = tmp_path / "cancelled.jsonl"
    got: list[BatchResult] = []
    # 4 in flight on 2 actors of 2 sessions: the 3 held sessions stay, the echoes go
    # through the fourth slot one after another
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=4, executor="ray",
                             sessions_per_actor=2, num_cpus=0.5, output=out) as run:  # fmt: skip
            async for result in run:
                got.append(result)
                if len(got) == 3:
                    await anyio.to_thread.run_sync(holds.wait_for, 3)
                    assert len(batch_actors()) == 2
                    assert len(fake_cli_processes(holds)) == 3
                    assert len(driver_processes()) == 1
                    break  # leaving the block cancels the batch
    assert run.state is BatchState.STOPPED
    assert batch_actors() == []
    assert driver_processes() == []  # the driver's child process ended with the batch
    assert fake_cli_processes(holds) == []
    assert sorted(r.id for r in got) == ["echo0", "echo1", "echo2"]
    assert sorted(ids_on_disk(out)) == ["echo0", "echo1", "echo2"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_the_actor_stops_a_task_past_its_time_limit_and_the_batch_goes_on(
    cluster: Any, fake_options: FakeOptions, holds: Holds, tmp_path: Path
) -> None:
    async def waits(client: Any) -> None:  # a task function that hangs (sent by value)
        import anyio

        await anyio.sleep_forever()

    tasks: list[Any] = [{"id": "held", "prompt": "hold on"}, BatchTask(id="waits", run=waits)]
    tasks += [{"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=2, executor="ray",
                             sessions_per_actor=2, num_cpus=0.5, retries=QUICK,
                             output=out, task_timeout=2) as run:  # fmt: skip
            got = {r.id: r for r in await run.collect()}
    assert run.state is BatchState.COMPLETED
    for task_id in ("held", "waits"):
        r = got[task_id]
        assert (r.ok, r.error_kind, r.attempts, r.retryable) == (False, "timeout", 1, False)
        assert r.error == "the task did not finish within its time limit of 2 s"
    assert not got["held"].cost_known and got["waits"].cost_known  # cut mid-turn, or idle
    assert all(got[f"echo{i}"].ok for i in range(3))
    assert {r.id: r for r in read_results(out)} == got
    assert len(holds.arrived) == 1  # not run again
    assert fake_cli_processes(holds) == []  # the actor ended its CLI
    assert batch_actors() == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_an_actor_whose_loop_a_task_blocks_is_killed_and_the_task_timed_out(
    cluster: Any, fake_options: FakeOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # synchronous code in a task function blocks its actor's event loop: the actor cannot
    # stop it, so the driver, finding the task overdue and the actor deaf to a ping,
    # kills the actor; the task fails with timeout, the echoes stuck beside it run again
    from ccwire._batch import ray_executor

    monkeypatch.setattr(ray_executor, "OVERDUE_SECONDS", 0.5)
    monkeypatch.setattr(ray_executor, "UNRESPONSIVE_SECONDS", 2.0)

    async def blocks(client: Any) -> None:  # sent by value
        import time

        time.sleep(600)  # noqa: ASYNC251 - the mistake this test makes

    # the echoes' limit passes too while they wait behind it on its actor: they run again
    tasks: list[Any] = [BatchTask(id="blocks", run=blocks, timeout=2)]
    tasks += [{"id": f"echo{i}", "prompt": f"echo {i}", "timeout": 3} for i in range(6)]
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=4, executor="ray",
                             sessions_per_actor=2, num_cpus=0.5, retries=QUICK,
                             output=out) as run:  # fmt: skip
            got = {r.id: r for r in await run.collect()}
    assert run.state is BatchState.COMPLETED
    hog = got["blocks"]
    assert (hog.ok, hog.error_kind, hog.retryable, hog.cost_known) == (False, "timeout", False,
                                                                      False)  # fmt: skip
    assert "time limit of 2 s" in (hog.error or "") and "did not answer" in (hog.error or "")
    assert hog.blocked_s > 0
    assert all(got[f"echo{i}"].ok for i in range(6)), [r.error for r in got.values()]
    assert any(got[f"echo{i}"].attempts == 2 for i in range(6))  # the one beside it
    assert {r.id: r for r in read_results(out)} == got
    assert batch_actors() == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_tools_a_worker_cannot_import_fail_clearly(
    cluster: Any, fake_options: FakeOptions, tmp_path: Path
) -> None:
    only_here = tmp_path / "only_here"
    only_here.mkdir()
    (only_here / "driver_only_tools.py").write_text("from tests.batch.calc_tools import server\n")
    sys.path.insert(0, str(only_here))
    try:
        with anyio.fail_after(LIMIT):
            async with run_batch(TASKS, options=fake_options(), concurrency=2, executor="ray",
                                 tools=["driver_only_tools:server"]) as results:  # fmt: skip
                got = await results.collect()
    finally:
        sys.path.remove(str(only_here))
    assert {r.id for r in got} == {t["id"] for t in TASKS}
    for r in got:
        assert (r.ok, r.error_kind) == (False, "config")
        assert "cannot import 'driver_only_tools' on the Ray worker" in (r.error or "")


class LockedStore:
    """A session store holding a lock: an in-process object no Ray worker can receive."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    async def append(self, *_: object) -> None: ...

    async def load(self, *_: object) -> None: ...


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_no_room_and_what_cannot_be_pickled_fail_clearly(
    cluster: Any, fake_options: FakeOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ccwire._batch import ray_executor

    monkeypatch.setattr(ray_executor, "PLACE_SECONDS", 1.0)
    out = tmp_path / "out.jsonl"
    # no node has 3 CPUs: no actor can ever start (as when every node that could is lost)
    with (
        anyio.fail_after(LIMIT),
        pytest.raises(BatchConfigError, match="no Ray node alive could host"),
    ):
        async with run_batch(TASKS, options=fake_options(), concurrency=2, executor="ray",
                             num_cpus=3, output=out) as run:  # fmt: skip
            await run.collect()
    assert run.state is BatchState.FAILED
    assert "one needs 3 CPU" in str(run.error)
    # options that cannot be pickled: refused before any actor starts
    with anyio.fail_after(LIMIT), pytest.raises(BatchConfigError) as refused:
        async with run_batch(TASKS, options=fake_options(session_store=LockedStore()),
                             concurrency=2, executor="ray", output=out) as run:  # fmt: skip
            await run.collect()
    assert str(refused.value).startswith("the batch options cannot be sent to the Ray workers")
    assert "cannot pickle '_thread.lock' object" in str(refused.value)
    assert out.read_text() == ""  # nothing ran
    # a task function that cannot be pickled fails alone; the others run
    lock = threading.Lock()

    async def locked(client: Any) -> None:
        with lock:
            return None

    tasks: list[Any] = [*TASKS[:2], BatchTask(id="locked", run=locked)]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=2, executor="ray",
                             num_cpus=0.5, output=out) as run:  # fmt: skip
            got = {r.id: r for r in await run.collect()}
    assert run.state is BatchState.COMPLETED
    assert sorted(got) == ["echo", "locked", "tool"]
    assert (got["locked"].ok, got["locked"].error_kind) == (False, "config")
    assert "cannot pickle '_thread.lock' object" in (got["locked"].error or "")
    assert got["echo"].ok and got["tool"].ok
    assert sorted(ids_on_disk(out)) == ["echo", "locked", "tool"]
    assert batch_actors() == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_a_task_source_that_waits_for_results_is_fed_as_they_come(
    cluster: Any, fake_options: FakeOptions
) -> None:
    # each task is sent once the previous result arrived: the batch must go on
    # collecting while its source waits (it waited on the source, and so forever)
    send, receive = anyio.create_memory_object_stream[dict[str, str]](1)
    got: list[str] = []
    with anyio.fail_after(LIMIT):
        async with send, run_batch(receive, options=fake_options(), concurrency=2,
                                   executor="ray", num_cpus=0.5) as run:  # fmt: skip
            await send.send({"id": "t0", "prompt": "echo 0"})
            async for result in run:
                got.append(result.id)
                if len(got) < 3:
                    await send.send({"id": f"t{len(got)}", "prompt": f"echo {len(got)}"})
                else:
                    send.close()
    assert got == ["t0", "t1", "t2"]
    assert run.state is BatchState.COMPLETED


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_a_reader_that_reads_nothing_yet_holds_no_running_session_back(
    cluster: Any, fake_options: FakeOptions, holds: Holds
) -> None:
    # the reader takes no result until `act`'s tool ran. `echo 0` and `echo 1` fill its
    # buffer (concurrency 2); `echo 2` ends beside `hold`, and `act` starts in its
    # place. The child driving Ray was answered for `echo 2` only once the reader took
    # it: held, it neither started `act` nor acknowledged a tool call (a session's
    # tool waits for that, then is denied)
    tasks = [{"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(2)]
    tasks += [{"id": "hold", "prompt": "hold 1"}, {"id": "echo2", "prompt": "echo 2"},
              {"id": "act", "prompt": "act 0"}]  # fmt: skip
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=2, executor="ray",
                             sessions_per_actor=2, num_cpus=0.5) as run:  # fmt: skip
            waiting = await anyio.to_thread.run_sync(holds.wait_for, 2, 45.0)
            holds.release(forever=True)
            got = {r.id: r for r in await run.collect()}
    assert sorted(hello["prompt"] for hello in waiting) == ["act 0", "hold 1"]
    assert sorted(got) == sorted(t["id"] for t in tasks)
    assert all(r.ok and r.attempts == 1 for r in got.values()), got
    assert got["act"].tool_calls == 1


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_a_budget_holds_tasks_back_while_the_running_ones_would_spend_it(
    cluster: Any, fake_options: FakeOptions
) -> None:
    # each fake session costs $0.001: for a budget of $0.006, with four sessions at once a
    # task started each time one ended while the budget was not spent (9 were recorded)
    tasks = [{"id": f"t{i}", "prompt": f"echo {i}"} for i in range(12)]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=4, executor="ray",
                             num_cpus=0.5, max_cost_usd=0.006) as run:  # fmt: skip
            got = await run.collect()
    assert len(got) == 6 and sum(r.cost_usd for r in got) == pytest.approx(0.006)
    assert run.over_budget() and run.state is BatchState.STOPPED  # six tasks left unrun
    # a budget worth one task: while no cost was known, four started at once (the
    # driver's child started a first wave); now the first runs alone, and spends it
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=fake_options(), concurrency=4, executor="ray",
                             num_cpus=0.5, max_cost_usd=0.001) as run:  # fmt: skip
            got = await run.collect()
    assert [r.id for r in got] == ["t0"] and run.submitted == 1


@pytest.mark.parametrize("listening", [False, True], ids=["refused", "silent"])
def test_a_ray_address_that_does_not_answer_is_one_error_in_bounded_time(
    tmp_path: Path, holds: Holds, listening: bool
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "prompt": "echo a"}\n')
    address = "127.0.0.1:9"  # nothing listens there
    server = None
    held: list[Any] = []
    if listening:  # something listens, and never says a word: not a Ray cluster
        import socket

        server = socket.create_server(("127.0.0.1", 0))
        address = f"127.0.0.1:{server.getsockname()[1]}"

        def hold(server: socket.socket) -> None:
            while True:
                try:
                    held.append(server.accept()[0])
                except OSError:  # shut down
                    return

        holder = threading.Thread(target=hold, args=(server,), daemon=True)
        holder.start()
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ccwire", "batch", str(tasks), "-o", str(tmp_path / "o.jsonl"),
             "--offline", "--cli-path", fake_cli_wrapper(tmp_path, holds), "--ray", address],
            capture_output=True, text=True, env=env, timeout=45,
        )  # fmt: skip
    finally:
        if server is not None:  # the accept() woken and ended before the socket is closed
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_RDWR)
            holder.join(10)
            server.close()
        for conn in held:
            conn.close()
    assert done.returncode == 2, done.stderr
    errors = [x for x in done.stderr.splitlines() if x.startswith("ccwire: error: ")]
    assert len(errors) == 1, done.stderr
    assert f"cannot join Ray at {address}" in errors[0]
    assert ("Connection refused" if not listening else "no answer within") in errors[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o.jsonl").read_text()  # nothing ran


def test_the_head_node_lost_mid_batch_a_program_and_the_command_survive_it(
    tmp_path: Path, holds: Holds
) -> None:
    """A cluster of its own (its head dies), two batches on it at once: Ray ends the
    process of a driver at once (exit 1, no Python code runs), but `run_batch` keeps
    its driver in a child process. A program calling ``run_batch(executor="ray")``
    gets every recorded result, then `BatchProcessLostError` (it was ended silently);
    ``ccwire batch --ray`` prints the summary of what was recorded and one error."""
    nodes = cluster_utils.Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    procs: list[subprocess.Popen[str]] = []
    tasks = tmp_path / "tasks.jsonl"  # -j 2: the holds start once the echoes are recorded
    lines = [{"id": f"e{i}", "prompt": f"echo {i}"} for i in range(2)]
    lines += [{"id": f"h{i}", "prompt": f"hold {i}"} for i in range(2)]
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out, program_out = tmp_path / "out.jsonl", tmp_path / "program.jsonl"
    scratch = tmp_path / "tmp"  # the temporary folders (the command's offline HOME)
    scratch.mkdir()
    cli = fake_cli_wrapper(tmp_path, holds)
    program = Path(__file__).with_name("batch_program.py")
    try:
        nodes.add_node(num_cpus=3)
        nodes.wait_for_nodes()
        for argv in (
            ["-m", "ccwire", "batch", str(tasks), "-o", str(out), "--offline", "--cli-path",
             cli, "--plain", "--ray", nodes.address, "-j", "2", "--num-cpus", "0.5"],
            [str(program), "trio", cli, str(program_out), nodes.address],  # 6 echoes, 3 holds
        ):  # fmt: skip
            procs.append(subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True,
                                          env={**os.environ, "TMPDIR": str(scratch)}))  # fmt: skip
        holds.wait_for(2 + 3)
        nodes.remove_node(nodes.head_node)
        (stdout, stderr), (said, program_err) = (p.communicate(timeout=LIMIT) for p in procs)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
        for node in list(nodes.worker_nodes):
            nodes.remove_node(node, allow_graceful=False)
    # the program: every result, then the typed error, raised in it (Ray's exit 1 said nothing)
    printed = [json.loads(x) for x in said.splitlines()]
    assert printed[-1]["raised"] == "BatchProcessLostError", program_err
    assert sorted(x["result"] for x in printed[:-1]) == [f"e{i}" for i in range(6)]
    assert sorted(ids_on_disk(program_out)) == [f"e{i}" for i in range(6)]
    message = printed[-1]["message"]
    assert "ended abruptly (exit code 1)" in message and "3 tasks have none" in message
    # the command: the summary, and one error
    assert procs[0].returncode == 1, stderr
    assert "tasks run                2 of 4" in stdout and "succeeded                2" in stdout
    errors = [x for x in stderr.splitlines() if x.startswith("ccwire: error: ")]
    assert len(errors) == 1, stderr
    assert "ended abruptly" in errors[0] and "2 tasks have none" in errors[0], errors
    assert sorted(ids_on_disk(out)) == ["e0", "e1"]
    assert not list(scratch.glob("ccwire-*"))  # nothing left behind
    # running again with the same results file runs exactly the tasks without a result
    assert sorted(ccwire.batch.finished_ids(program_out)) == [f"e{i}" for i in range(6)]


def test_a_batch_without_a_cluster_runs_on_a_ray_instance_of_its_own(
    tmp_path: Path, holds: Holds
) -> None:
    """``ray_address="local"`` (a program that joined no cluster): the driver's child
    starts a Ray instance of its own, and it stays up. Its processes got SIGKILL as soon
    as the thread that called ``ray.init`` ended (Ray's PR_SET_PDEATHSIG is per thread):
    no actor ever started, and a minute later Ray ended the driver."""
    holds.release(forever=True)  # the program's holds go on at once
    out = tmp_path / "out.jsonl"
    program = Path(__file__).with_name("batch_program.py")
    argv = [str(program), "asyncio", fake_cli_wrapper(tmp_path, holds), str(out), "local"]
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=LIMIT)
    printed = [json.loads(x) for x in done.stdout.splitlines()]
    assert done.returncode == 0, (printed, done.stderr[-2000:])
    ids = [*(f"e{i}" for i in range(6)), *(f"h{i}" for i in range(3))]
    assert sorted(x["result"] for x in printed) == sorted(ids)
    assert sorted(ids_on_disk(out)) == sorted(ids)


def test_a_driver_killed_leaves_nothing_of_the_ray_instance_it_started(
    tmp_path: Path, holds: Holds
) -> None:
    """The driver's child SIGKILLed under a program's batch on a Ray instance of its
    own: the program gets `BatchProcessLostError`, and nothing of that instance is
    left (its agents outlived the child by a minute or more, reparented: its clean-up
    never ran)."""
    out = tmp_path / "out.jsonl"
    program = Path(__file__).with_name("batch_program.py")
    argv = [str(program), "asyncio", fake_cli_wrapper(tmp_path, holds), str(out), "local"]
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        holds.wait_for(3)
        (child,) = [p for p in psutil.Process(proc.pid).children()
                    if "ccwire._batch.ray_process" in " ".join(p.cmdline())]  # fmt: skip
        group = [p for p in psutil.process_iter() if _in_group(p, child.pid)]
        assert len(group) > 1  # the child, and the instance it started
        child.kill()
        said, err = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
        proc.wait(10)
    printed = [json.loads(x) for x in said.splitlines()]
    assert printed[-1]["raised"] == "BatchProcessLostError", err[-2000:]
    assert "killed by SIGKILL" in printed[-1]["message"]
    left = [p for p in group if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], [p.cmdline() for p in left]


def _in_group(proc: psutil.Process, pgid: int) -> bool:
    try:
        return os.getpgid(proc.pid) == pgid
    except OSError:
        return False


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_spares_per_actor_and_a_spawner_by_reference(cluster: Any, tmp_path: Path) -> None:
    mini = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"  # parks and takes claims
    wrapper = tmp_path / "claude"
    wrapper.write_text(f'#!/bin/sh\nMINI_RESULT=report exec {sys.executable} {mini} "$@"\n')
    wrapper.chmod(0o755)
    for name in ("home", "marks", "work"):
        (tmp_path / name).mkdir()
    env = {"HOME": str(tmp_path / "home"), "SPAWN_MARKS": str(tmp_path / "marks")}
    opts = ClaudeAgentOptions(cli_path=str(wrapper), env=env, initialize_timeout=30)
    tasks = [{"id": f"t{i}", "prompt": "hi", "cwd": str(tmp_path / "work")} for i in range(4)]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=opts, concurrency=2, executor="ray", spares=1,
                             sessions_per_actor=1, spawn="tests.batch.spawners:counting",
                             retries=QUICK) as batch:  # fmt: skip
            results = await batch.collect()
    assert all(r.ok for r in results), [r.error for r in results]
    reports = [json.loads(r.result or "") for r in results]
    assert all(rep["claimed"] and rep["cwd"] == str(tmp_path / "work") for rep in reports)
    assert len({rep["pid"] for rep in reports}) == 4  # a spare per session, one per actor
    assert len(list((tmp_path / "marks").iterdir())) >= 4  # through the spawner, on workers
    assert not batch_actors()


def ray_driver_processes(mark: str) -> list[psutil.Process]:
    """The batch Ray driver processes (`ray_process`) on this machine whose environment
    carries ``mark`` (`RAY_DRIVER_MARK`): those of one test's commands, reparented or not,
    and not another test's (under `pytest -n`) or another run's."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if "ccwire._batch.ray_process" in " ".join(proc.cmdline()) and (
                proc.environ().get("RAY_DRIVER_MARK") == mark
            ):
                found.append(proc)
    return found


def gone(check: Any, timeout: float = 45) -> bool:
    """Whether `check()` becomes empty within `timeout` seconds (polled: the processes and
    actors of another process end on their own)."""
    deadline = time.monotonic() + timeout
    while check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def echoes_recorded(path: Path) -> set[str]:
    """The ids of the whole lines written so far (a line being written is not one yet)."""
    raw = path.read_bytes() if path.exists() else b""
    return {json.loads(line)["id"] for line in raw.split(b"\n")[:-1]}


def err_of(proc: subprocess.Popen[str]) -> str:
    """What a batch that had to be killed printed (for an assertion's message)."""
    proc.kill()
    return proc.communicate(timeout=LIMIT)[1]


def test_the_command_stopped_or_killed_leaves_nothing_and_a_rerun_finishes(
    cluster: Any, holds: Holds, tmp_path: Path
) -> None:
    # `ccwire batch --ray` with two held sessions running: SIGTERM stops it (143, the
    # echoes recorded); run again and SIGKILL it: its driver's child, the actors and
    # the CLIs end all the same; a third run finishes, every id once, exit code 0
    tasks = tmp_path / "tasks.jsonl"
    lines = [{"id": f"e{i}", "prompt": f"echo {i}"} for i in range(2)]
    lines += [{"id": f"h{i}", "prompt": f"hold {i}"} for i in range(2)]
    tasks.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    argv = [sys.executable, "-m", "ccwire", "batch", str(tasks), "-o", str(out), "--offline",
            "--cli-path", fake_cli_wrapper(tmp_path, holds), "--plain", "--ray",
            cluster.address, "-j", "4", "--num-cpus", "0.5"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_DRIVER_MARK"] = mark = str(tmp_path)  # the drivers inherit it

    def drivers() -> list[psutil.Process]:
        return ray_driver_processes(mark)

    def actors() -> list[Any]:
        return [a for a in ray.util.list_named_actors(all_namespaces=True)
                if a["name"].startswith("ccwire-batch-")]  # fmt: skip

    for signum, arrived in ((signal.SIGTERM, 2), (signal.SIGKILL, 4)):
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=env)  # fmt: skip
        try:
            holds.wait_for(arrived)  # the held sessions run (again, the second time)
            # the echoes run beside them: signal once both are on disk (whole lines)
            assert gone(lambda: {"e0", "e1"} - echoes_recorded(out), timeout=LIMIT), err_of(proc)
            assert len(drivers()) == 1, err_of(proc)  # found by its mark
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=LIMIT)
        finally:
            proc.kill()
        assert proc.returncode == -signum if signum == signal.SIGKILL else 128 + signum, err
        assert sorted(ids_on_disk(out)) == ["e0", "e1"], err  # the held ones: not recorded
        assert gone(drivers), "the batch's Ray driver outlived its caller"
        assert gone(actors), actors()
        assert gone(lambda: fake_cli_processes(holds))
    holds.release(forever=True)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=LIMIT)
    assert done.returncode == 0, done.stderr
    assert sorted(ids_on_disk(out)) == ["e0", "e1", "h0", "h1"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_workers_whose_otlp_endpoint_is_down_stop_waiting_and_the_spans_are_counted(
    cluster: Any, fake_options: FakeOptions
) -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="needs ccwire[otel]")
    # every export of the workers waits 60 s: a worker waits a second for the first, none
    # for the next ones, and the batch counts the spans that were not exported
    telemetry = ccwire.Telemetry(worker_setup="tests.batch.otel_down:setup")
    tasks = [{"id": f"t{i}", "prompt": f"echo {i}"} for i in range(6)]
    with anyio.fail_after(LIMIT):
        options = fake_options(telemetry=telemetry)
        async with run_batch(tasks, options=options, concurrency=2, executor="ray",
                             sessions_per_actor=2, num_cpus=0.5) as run:  # fmt: skip
            got = await run.collect()
    assert sorted(r.id for r in got) == [f"t{i}" for i in range(6)] and all(r.ok for r in got)
    assert run.spans_unexported >= 2 * len(tasks)  # each task's span and its session's


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the driver's child is the same
async def test_a_results_file_on_a_full_disk_stops_a_ray_batch_and_leaves_nothing(
    cluster: Any, fake_options: FakeOptions, holds: Holds
) -> None:
    # /dev/full (a character device: never replaced) takes no write, as a full disk: the
    # first result stops the batch, the held sessions are ended, so are the actors
    tasks = [{"id": f"hold{i}", "prompt": f"hold {i}"} for i in range(2)]
    tasks += [{"id": "echo", "prompt": "echo"}]
    with anyio.fail_after(LIMIT), pytest.raises(ResultsWriteError, match="No space left"):
        async with run_batch(tasks, options=fake_options(), concurrency=3, executor="ray",
                             sessions_per_actor=3, num_cpus=0.5,
                             output="/dev/full") as run:  # fmt: skip
            await run.collect()
    assert run.state is BatchState.FAILED
    assert batch_actors() == [] and driver_processes() == []
    assert fake_cli_processes(holds) == []
