"""`run_batch` through the real CLI 2.1.330 and the scripted model: results, retries of
429/529, final model errors, task functions, tools by reference."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ccwire import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage
from ccwire.batch import BatchResult, BatchState, BatchTask, RetryPolicy, read_results, run_batch
from ccwire.testing import ModelRequest, ScriptedModel, text

from .scripted import BatchScript, first_prompt

QUICK = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def script() -> BatchScript:
    return BatchScript()


@pytest.fixture
def options(script: BatchScript, cli_path: str, tmp_path: Path) -> Any:
    with ScriptedModel(default=script) as model:
        home = tmp_path / "home"
        home.mkdir()
        # silence_timeout: a CLI that hangs mid-turn fails its task with the cause
        # (CLISilenceError) instead of hanging the test until pytest's own timeout
        yield ClaudeAgentOptions(cli_path=cli_path, env=model.env(home), cwd=str(tmp_path),
                                 allowed_tools=["mcp__calc"], silence_timeout=60)  # fmt: skip


@pytest.mark.anyio
async def test_retries_only_what_is_retryable(
    options: ClaudeAgentOptions, script: BatchScript, tmp_path: Path
) -> None:
    tasks: list[dict[str, Any]] = [
        {"id": "rate", "prompt": "rate limited once"},
        {"id": "overload", "prompt": "overload twice"},
        {"id": "hopeless", "prompt": "hopeless case"},
        {"id": "turns", "prompt": "add 1 2", "max_turns": 1},
        {"id": "tool", "prompt": "add 2 3", "metadata": {"expected": "5"}},
    ]
    out = tmp_path / "out.jsonl"
    async with run_batch(tasks, options=options, concurrency=3, retries=QUICK, output=out,
                         tools=["tests.batch.calc_tools:server"]) as results:  # fmt: skip
        got = {r.id: r for r in await results.collect()}
    assert set(got) == {t["id"] for t in tasks}

    assert (got["rate"].ok, got["rate"].attempts, got["rate"].result) == (
        True, 2, "echo: rate limited once",
    )  # fmt: skip
    assert (got["overload"].ok, got["overload"].attempts) == (True, 3)
    hopeless = got["hopeless"]
    assert (hopeless.ok, hopeless.attempts, hopeless.error_kind, hopeless.retryable) == (
        False, 3, "api", True,
    )  # fmt: skip
    assert "529" in (hopeless.error or "")
    turns = got["turns"]  # the model's own error result: final at once
    assert (turns.ok, turns.attempts, turns.subtype, turns.error_kind) == (
        False, 1, "error_max_turns", "model",
    )  # fmt: skip
    tool = got["tool"]
    assert (tool.ok, tool.result, tool.tool_calls, tool.num_turns) == (True, "sum: 5", 1, 2)
    assert tool.metadata == {"expected": "5"}
    assert tool.session_id and tool.cost_usd > 0 and tool.usage["input_tokens"] > 0
    assert script.sessions == {
        "rate limited once": 2, "overload twice": 3, "hopeless case": 3,
        "add 1 2": 1, "add 2 3": 1,
    }  # fmt: skip
    assert {r.id: r for r in read_results(out)} == got


@pytest.mark.anyio
async def test_a_task_function_drives_its_own_session(options: ClaudeAgentOptions) -> None:
    async def two_turns(client: ClaudeSDKClient) -> list[str]:
        answers = []
        for prompt in ("first question", "second question"):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    answers.append(message.result or "")
        return answers

    async def broken(client: ClaudeSDKClient) -> None:
        raise RuntimeError("a bug in the task")

    tasks = [two_turns, broken, {"id": "plain", "prompt": "hello"}]
    async with run_batch(tasks, options=options, concurrency=3, retries=QUICK) as results:
        got: dict[str, BatchResult] = {r.id: r for r in await results.collect()}
    assert got["two_turns"].ok
    assert got["two_turns"].output == ["echo: first question", "echo: second question"]
    assert (got["broken"].ok, got["broken"].error_kind, got["broken"].attempts) == (
        False, "exception", 1,
    )  # fmt: skip
    assert got["broken"].error == "RuntimeError: a bug in the task"
    assert got["plain"].result == "echo: hello"


def cli_processes(home: Path) -> list[psutil.Process]:
    """The live CLI processes of one test (those with its offline HOME); zombies excluded."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and proc.environ().get("HOME") == str(home):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@pytest.mark.anyio
async def test_a_task_past_its_time_limit_is_stopped_recorded_and_the_batch_goes_on(
    cli_path: str, tmp_path: Path
) -> None:
    release = threading.Event()
    held: list[str] = []

    def step(request: ModelRequest) -> Any:
        prompt = first_prompt(request)
        if prompt.startswith("loop"):  # a session that never ends its turn
            held.append(prompt)
            release.wait(60)
        return text(f"echo: {prompt}")

    async def then_waits(client: ClaudeSDKClient) -> None:
        await client.query("one answer")  # a whole turn: its cost is known
        async for _ in client.receive_response():
            pass
        await anyio.sleep_forever()  # a task function that hangs

    tasks: list[Any] = [
        {"id": "loop", "prompt": "loop forever", "timeout": 3.5},
        BatchTask(id="then_waits", run=then_waits),  # the batch's limit
        {"id": "after", "prompt": "the next one"},
    ]
    out = tmp_path / "out.jsonl"
    home = tmp_path / "home"
    # the limits leave the CLI time to start (1-3 s here), so that each is reached where
    # the test means it to be (mid-turn for `loop`, after a whole turn for `then_waits`)
    # unless the machine is very busy; `after` runs in the slot the first of them frees
    with ScriptedModel(default=step) as model:
        try:
            opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(home), cwd=str(tmp_path))
            with anyio.fail_after(60):
                async with run_batch(tasks, options=opts, concurrency=2, retries=QUICK,
                                     output=out, task_timeout=5) as run:  # fmt: skip
                    got = {r.id: r for r in await run.collect()}
            assert cli_processes(home) == []  # every CLI was ended and reaped
        finally:
            release.set()
    assert run.state is BatchState.COMPLETED
    loop, waits = got["loop"], got["then_waits"]
    assert (loop.ok, loop.error_kind, loop.retryable, loop.attempts) == (False, "timeout", False, 1)
    assert loop.error == "the task did not finish within its time limit of 3.5 s"
    assert len(held) <= 1  # not run again (QUICK allows 3 attempts)
    assert 3.5 <= loop.duration_s < 3.5 + 15 and loop.cost_known
    if held:  # the CLI started within the limit (always, unless the machine is very busy):
        # its turn was interrupted, the CLI ended it with a result saying what it spent,
        # then exited at once (without the interrupt: 5 s more, and the cost unknown)
        assert loop.session_id and loop.subtype == "error_during_execution"
        assert loop.duration_s < 3.5 + 3
    assert (waits.ok, waits.error_kind, waits.attempts) == (False, "timeout", 1)
    assert "time limit of 5 s" in (waits.error or "") and waits.cost_known
    if waits.result is not None:  # its turn ended in time: its cost, nothing after
        assert waits.result == "echo: one answer" and waits.cost_usd > 0
    assert got["after"].ok and got["after"].result == "echo: the next one"
    assert {r.id: r for r in read_results(out)} == got
