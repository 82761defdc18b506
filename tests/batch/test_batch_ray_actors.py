"""The Ray worker's side without Ray: `SessionHost`, the body of each batch actor, driven
in this process the way Ray drives it (its methods on an asyncio loop, `run` iterated as
the streaming generator), with the fake CLI (``fake_cli.py``) and the mini CLI that
parks spares (``tests/fixtures/mini_cli.py``). Ray runs async actors on asyncio only."""

from __future__ import annotations

import json
import shlex
import sys
import threading
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ccwire import ClaudeAgentOptions, McpStdioServerConfig
from ccwire._batch import ray_actors
from ccwire._batch.ray_actors import SessionHost, worker_options
from ccwire._batch.tasks import BatchTask
from ccwire.batch import BatchConfigError, BatchResult, RetryPolicy

from . import calc_tools
from .calc_tools import HOOKS
from .conftest import FakeOptions, Holds, fake_cli_processes
from .spawners import counting

pytestmark = pytest.mark.anyio
LIMIT = 60
MINI_CLI = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"


@pytest.fixture
def anyio_backend() -> str:
    """Ray runs async actors on asyncio."""
    return "asyncio"


def shared(options: ClaudeAgentOptions, **refs: Any) -> dict[str, Any]:
    """What the driver gives each actor (see ``feed_ray``)."""
    return {"options": options, "policy": RetryPolicy(max_attempts=1), "tools": (),
            "hooks": None, "spawn": None, "spares": 0, **refs}  # fmt: skip


async def drain(host: SessionHost, task: BatchTask, *, ack: bool = True) -> list[dict[str, Any]]:
    """Run `task` on `host` as the driver does, acknowledging each report that the
    session acted (`SessionHost.ack`) or, with ``ack=False``, none."""
    items = []
    with anyio.fail_after(LIMIT):
        async for item in host.run(task, seed=1):
            items.append(item)
            key = item.get("progress", {}).get("ack")
            if key is not None and ack:
                await host.ack(key)
    return items


async def acknowledged(host: SessionHost, task: BatchTask, *, ack: bool) -> BatchResult:
    """The result of `task` run by `drain`."""
    *_, last = await drain(host, task, ack=ack)
    return BatchResult.from_json(last["result"])


def test_worker_options_import_the_references_on_the_worker() -> None:
    stdio: McpStdioServerConfig = {"type": "stdio", "command": "files-server"}
    options = worker_options(shared(
        ClaudeAgentOptions(mcp_servers={"files": stdio}),
        tools=("tests.batch.calc_tools:server",), hooks="tests.batch.calc_tools:HOOKS",
        spawn="tests.batch.spawners:counting",
    ))  # fmt: skip
    assert isinstance(options.mcp_servers, dict)
    assert options.mcp_servers["files"] == stdio  # the batch's own servers stay
    assert options.mcp_servers["calc"]["type"] == "sdk"
    assert options.hooks == HOOKS
    assert options.spawn_claude_code_process is counting
    plain = ClaudeAgentOptions(model="m")
    assert worker_options(shared(plain)) == plain  # nothing to add


def test_tools_need_a_dict_of_servers_on_the_worker_too() -> None:
    with pytest.raises(BatchConfigError, match="mcp_servers to be a dict"):
        worker_options(shared(ClaudeAgentOptions(mcp_servers="servers.json"),
                              tools=("tests.batch.calc_tools:server",)))  # fmt: skip


async def test_a_task_whose_caller_goes_away_is_cancelled_with_its_cli(
    fake_options: FakeOptions, holds: Holds
) -> None:
    host = SessionHost(shared(fake_options()))
    stream = host.run(BatchTask(id="t", prompt="hold t"), seed=1)
    assert isinstance(stream, AsyncGenerator)  # what Ray iterates, and closes
    with anyio.fail_after(LIMIT):
        first = await stream.__anext__()
        assert first == {"progress": {"attempt": 1, "session_id": None, "acted": False}}
        await anyio.to_thread.run_sync(holds.wait_for, 1)
        await stream.aclose()  # Ray closes the generator: the driver cancelled the task
    assert fake_cli_processes(holds) == []


async def test_an_actor_with_spares_starts_tasks_on_them_and_ends_them_on_stop(
    tmp_path: Path,
) -> None:
    wrapper = tmp_path / "claude"
    wrapper.write_text(
        "#!/bin/sh\nMINI_RESULT=report exec "
        f'{shlex.quote(sys.executable)} {shlex.quote(str(MINI_CLI))} "$@"\n'
    )
    wrapper.chmod(0o755)
    (tmp_path / "home").mkdir()
    options = ClaudeAgentOptions(cli_path=str(wrapper), env={"HOME": str(tmp_path / "home")},
                                 initialize_timeout=20)  # fmt: skip
    host = SessionHost(shared(options, spares=1))
    reports = []
    for n in range(2):
        *_, last = await drain(host, BatchTask(id=f"t{n}", prompt="hi"))
        result = BatchResult.from_json(last["result"])
        assert result.ok, result.error
        reports.append(json.loads(result.result or ""))
    assert all(report["claimed"] for report in reports)  # each on a spare booted before
    spares = tmp_path / "home" / ".claude" / "spares"
    with anyio.fail_after(LIMIT):
        assert await host.stop(LIMIT) == 0
    assert list(spares.iterdir()) == []  # the spare parked for a next task ended too


async def test_an_actor_records_how_long_a_task_blocked_its_loop(fake_options: FakeOptions) -> None:
    # the actor's own watchdog: the result says how long the task held the loop, and
    # where (it ran past its limit of 1 s, so it is a timeout even though it returned)
    async def naps(client: Any) -> str:
        time.sleep(1.6)  # noqa: ASYNC251 - the mistake this test makes
        return "rested"

    host = SessionHost(shared(fake_options()))
    *_, last = await drain(host, BatchTask(id="naps", run=naps, timeout=1))
    result = BatchResult.from_json(last["result"])
    assert (result.ok, result.error_kind, result.output) == (False, "timeout", "rested")
    assert 1.2 < result.blocked_s < 5 and "in naps" in (result.error or "")
    with anyio.fail_after(LIMIT):
        await host.stop(LIMIT)
    assert not [t for t in threading.enumerate() if t.name == "ccwire loop watchdog"]


@pytest.mark.parametrize("act", ["act", "act-late"])
async def test_a_tool_runs_only_once_the_driver_acknowledged_that_the_session_acted(
    fake_options: FakeOptions, holds: Holds, monkeypatch: pytest.MonkeyPatch, act: str
) -> None:
    # the actor's gate holds the tool call (the fake's wait: the tool running) until the
    # driver's `ack`, and the user's own PreToolUse hook behind it; without the `ack`
    # in time, the tool is denied, the hook never asked, and the task fails as lost
    monkeypatch.setattr(ray_actors, "ACK_SECONDS", 0.5)
    monkeypatch.setattr(calc_tools, "SEEN", [])
    holds.release(forever=True)
    host = SessionHost(shared(fake_options(), hooks="tests.batch.calc_tools:SEEING"))
    unheard = await acknowledged(host, BatchTask(id="t", prompt=f"{act} 1"), ack=False)
    assert (unheard.ok, unheard.error_kind, unheard.retryable) == (False, "lost", False)
    assert "did not acknowledge" in (unheard.error or "")
    assert holds.arrived == [] and calc_tools.SEEN == []  # the tool never ran
    heard = await acknowledged(host, BatchTask(id="t", prompt=f"{act} 2"), ack=True)
    assert (heard.ok, heard.result) == (True, f"echo: {act} 2")
    assert [hello["prompt"] for hello in holds.arrived] == [f"{act} 2"]
    assert calc_tools.SEEN == ["Bash"]  # the user's hook ran, once the gate let it
    with anyio.fail_after(LIMIT):
        await host.stop(LIMIT)


async def test_a_task_function_starts_only_once_the_driver_acknowledged_it(
    fake_options: FakeOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_actors, "ACK_SECONDS", 0.5)
    started: list[str] = []

    async def work(client: Any) -> str:
        started.append("work")
        return "done"

    host = SessionHost(shared(fake_options()))
    unheard = await acknowledged(host, BatchTask(id="f", run=work), ack=False)
    assert (unheard.ok, unheard.error_kind, unheard.retryable) == (False, "lost", False)
    assert started == []
    heard = await acknowledged(host, BatchTask(id="f", run=work), ack=True)
    assert (heard.ok, heard.output, started) == (True, "done", ["work"])
    with anyio.fail_after(LIMIT):
        await host.stop(LIMIT)
