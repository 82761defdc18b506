"""The Ray executor on a local Ray instance (2 CPUs): the same scripted batch gives the same
results as the local executor; tools travel by reference, with a clear error when a
worker cannot import them."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

import ccwire
from ccwire import ClaudeAgentOptions
from ccwire.batch import BatchResult, BatchTask, RetryPolicy, read_results, run_batch
from ccwire.testing import ModelRequest, ScriptedModel, text

from . import worker_faults
from .scripted import BatchScript, first_prompt

ray = pytest.importorskip("ray", reason="the Ray test needs `pip install 'ccwire[ray]'`")

QUICK = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)
TASKS: list[dict[str, Any]] = [
    {"id": "echo", "prompt": "hello there"},
    {"id": "tool", "prompt": "add 20 22", "metadata": {"expected": "42"}},
    {"id": "rate", "prompt": "rate limited once"},
    {"id": "turns", "prompt": "add 1 1", "max_turns": 1},
    {"id": "more", "prompt": "one more"},
]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance with the machine's 2 CPUs, for this module; its workers
    import this checkout's tests and the ccwire under test (not another install)."""
    repo = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join([repo, str(Path(ccwire.__file__).resolve().parents[1])])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
    try:
        yield
    finally:
        ray.shutdown()


def outcome(r: BatchResult) -> tuple[Any, ...]:
    """What must not depend on the executor (session ids and timings do)."""
    return (r.id, r.ok, r.result, r.is_error, r.subtype, r.num_turns, r.tool_calls,
            r.attempts, r.error_kind, dict(r.metadata))  # fmt: skip


async def run(executor: str, cli_path: str, tmp_path: Path, tools: list[str]) -> list[BatchResult]:
    with ScriptedModel(default=BatchScript()) as model:
        home = tmp_path / f"home-{executor}"
        home.mkdir(exist_ok=True)
        opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(home), cwd=str(tmp_path),
                                  allowed_tools=["mcp__calc"])  # fmt: skip
        out = tmp_path / f"{executor}.jsonl"
        async with run_batch(TASKS, options=opts, concurrency=2, executor=executor,  # type: ignore[arg-type]
                             retries=QUICK, output=out, tools=tools) as results:  # fmt: skip
            got = await results.collect()
    assert sorted(outcome(r) for r in read_results(out)) == sorted(outcome(r) for r in got)
    return got


@pytest.mark.anyio
async def test_ray_gives_the_same_results_as_local(
    local_ray: None, cli_path: str, tmp_path: Path
) -> None:
    tools = ["tests.batch.calc_tools:server"]
    local = await run("local", cli_path, tmp_path, tools)
    on_ray = await run("ray", cli_path, tmp_path, tools)
    assert sorted(map(outcome, on_ray)) == sorted(map(outcome, local))
    by_id = {r.id: r for r in on_ray}
    assert by_id["tool"].result == "sum: 42"
    assert by_id["rate"].attempts == 2
    assert by_id["turns"].subtype == "error_max_turns"
    assert len({r.session_id for r in on_ray}) == len(TASKS)


@pytest.mark.anyio
async def test_tools_a_worker_cannot_import_fail_clearly(
    local_ray: None, cli_path: str, tmp_path: Path
) -> None:
    only_here = tmp_path / "only_here"
    only_here.mkdir()
    (only_here / "driver_only_tools.py").write_text("from tests.batch.calc_tools import server\n")
    sys.path.insert(0, str(only_here))
    try:
        got = await run("ray", cli_path, tmp_path, ["driver_only_tools:server"])
    finally:
        sys.path.remove(str(only_here))
    assert {r.id for r in got} == {t["id"] for t in TASKS}
    for r in got:
        assert (r.ok, r.error_kind) == (False, "config")
        assert "cannot import 'driver_only_tools' on the Ray worker" in (r.error or "")


def batch_actors() -> list[str]:
    """The batch actors Ray still has alive (the executor names them ``ccwire-batch-*``)."""
    return [name for name in ray.util.list_named_actors() if name.startswith("ccwire-batch-")]


def marked_processes(mark: str) -> list[psutil.Process]:
    """The live processes started with ``CCWIRE_TEST_MARK=mark`` in their environment."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if (
                proc.status() != psutil.STATUS_ZOMBIE
                and proc.environ().get("CCWIRE_TEST_MARK") == mark
            ):
                found.append(proc)
    return found


class HeldScript(BatchScript):
    """`BatchScript`, except that ``hold ...`` prompts get no answer until `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.held = 0
        self._arrived = threading.Condition()
        self._release = threading.Event()

    def __call__(self, request: ModelRequest) -> Any:
        if not first_prompt(request).startswith("hold"):
            return super().__call__(request)
        with self._arrived:
            self.held += 1
            self._arrived.notify_all()
        self._release.wait(60)
        return text("released")

    def wait_held(self, count: int) -> bool:
        with self._arrived:
            return self._arrived.wait_for(lambda: self.held >= count, timeout=60)

    def release(self) -> None:
        self._release.set()


@pytest.mark.anyio
async def test_cancelling_a_batch_ends_its_sessions_and_actors(
    local_ray: None, cli_path: str, tmp_path: Path
) -> None:
    mark = uuid.uuid4().hex
    script = HeldScript()
    tasks = [{"id": f"hold{i}", "prompt": f"hold {i}"} for i in range(3)]
    tasks += [{"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(3)]
    out = tmp_path / "cancelled.jsonl"
    got: list[BatchResult] = []
    with ScriptedModel(default=script) as model:
        env = model.env(tmp_path, extra={"CCWIRE_TEST_MARK": mark})
        opts = ClaudeAgentOptions(cli_path=cli_path, cwd=str(tmp_path), env=env)
        try:
            # 4 in flight on 2 actors of 2 sessions: the 3 held sessions stay, the echoes
            # go through the fourth slot one after another
            batch = run_batch(tasks, options=opts, concurrency=4, executor="ray",
                              sessions_per_actor=2, num_cpus=0.5, output=out)  # fmt: skip
            async with batch as results:
                async for result in results:
                    got.append(result)
                    if len(got) == 3:
                        assert await anyio.to_thread.run_sync(script.wait_held, 3)
                        assert len(batch_actors()) == 2
                        assert len(marked_processes(mark)) >= 3  # the held sessions' CLIs
                        break  # leaving the block cancels the batch
            assert batch_actors() == []
            assert marked_processes(mark) == []
        finally:
            script.release()
    assert sorted(r.id for r in got) == ["echo0", "echo1", "echo2"]
    assert all(r.ok for r in got)
    assert sorted(r.id for r in read_results(out)) == ["echo0", "echo1", "echo2"]


@pytest.mark.anyio
async def test_an_actor_crash_fails_its_tasks_and_the_batch_goes_on(
    local_ray: None, cli_path: str, tmp_path: Path
) -> None:
    # one actor runs `hold` and `exit_worker` together; the second kills the actor's
    # process once the first runs; the echoes run on the actor that replaces it
    tasks: list[Any] = [
        BatchTask(id="held", run=worker_faults.hold),
        BatchTask(id="exit", run=worker_faults.exit_worker),
        *({"id": f"echo{i}", "prompt": f"echo {i}"} for i in range(3)),
    ]
    with ScriptedModel(default=BatchScript()) as model:
        opts = ClaudeAgentOptions(cli_path=cli_path, cwd=str(tmp_path), env=model.env(tmp_path))
        async with run_batch(tasks, options=opts, concurrency=2, executor="ray",
                             sessions_per_actor=2, retries=QUICK) as results:  # fmt: skip
            got = {r.id: r for r in await results.collect()}
    assert sorted(got) == ["echo0", "echo1", "echo2", "exit", "held"]
    for task_id in ("held", "exit"):
        r = got[task_id]
        assert (r.ok, r.error_kind, r.attempts) == (False, "crash", 1)
        assert (r.error or "").startswith("the Ray actor running it died")
    for i in range(3):
        assert got[f"echo{i}"].ok and got[f"echo{i}"].result == f"echo: echo {i}"
    assert batch_actors() == []
