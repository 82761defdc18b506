"""`run_batch` through the real CLI 2.1.330 and the scripted model: results, retries of
429/529, final model errors, task functions, tools by reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccwire import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage
from ccwire.batch import BatchResult, RetryPolicy, read_results, run_batch
from ccwire.testing import ScriptedModel

from .scripted import BatchScript

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
