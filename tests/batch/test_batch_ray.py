"""The Ray executor on a local Ray instance (2 CPUs): the same scripted batch gives the same
results as the local executor; tools travel by reference, with a clear error when a
worker cannot import them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccwire import ClaudeAgentOptions
from ccwire.batch import BatchResult, RetryPolicy, read_results, run_batch
from ccwire.testing import ScriptedModel

from .scripted import BatchScript

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
    """A local Ray instance with the machine's 2 CPUs, for this module."""
    repo = str(Path(__file__).resolve().parents[2])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": repo}})  # fmt: skip
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
