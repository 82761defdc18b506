"""One task's sessions on the local executor: how each way a CLI fails to start or to
finish is classified and retried, callbacks that fail, subagent tool calls, and a task
function cancelled by the batch. Small stand-in CLIs (shell and Python scripts) and the
fake CLI of ``fake_cli.py``; every test runs on asyncio and trio and is bounded."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import anyio
import pytest

from ccwire import AssistantMessage, ClaudeAgentOptions, ClaudeSDKClient, TextBlock, ToolUseBlock
from ccwire._batch.session import Attempt, run_task, stderr_tail
from ccwire._batch.tasks import BatchTask
from ccwire.batch import BatchResult, RetryPolicy, read_results, run_batch

from .conftest import FakeOptions, Holds

LIMIT = 60

# answers the handshake, then ends (exit 0) when the prompt comes, without a result
NO_RESULT_CLI = """\
import json, sys
for line in sys.stdin:
    frame = json.loads(line)
    if frame.get("type") == "control_request":
        answer = {"subtype": "success", "request_id": frame["request_id"], "response": {}}
        print(json.dumps({"type": "control_response", "response": answer}), flush=True)
    elif frame.get("type") == "user":
        print(json.dumps({"type": "system", "subtype": "init", "session_id": "s-1"}), flush=True)
        sys.exit(0)
"""


def script(directory: Path, name: str, body: str) -> str:
    path = directory / name
    path.write_text(body)
    path.chmod(0o755)
    return str(path)


def quick(attempts: int) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=0.001, max_delay=0.002)


async def one(options: ClaudeAgentOptions, attempts: int = 3) -> BatchResult:
    with anyio.fail_after(LIMIT):
        async with run_batch([{"id": "t", "prompt": "echo hi"}], options=options,
                             retries=quick(attempts)) as batch:  # fmt: skip
            (result,) = await batch.collect()
    return result


@pytest.mark.anyio
async def test_a_cli_that_does_not_exist_is_a_config_error_never_retried(tmp_path: Path) -> None:
    result = await one(ClaudeAgentOptions(cli_path=str(tmp_path / "no-claude")))
    assert (result.ok, result.error_kind, result.retryable, result.attempts) == (
        False, "config", False, 1,
    )  # fmt: skip
    assert result.error is not None and "does not exist" in result.error


@pytest.mark.anyio
async def test_a_working_directory_that_does_not_exist_fails_the_start(tmp_path: Path) -> None:
    cli = script(tmp_path, "claude", "#!/bin/sh\nexit 3\n")
    result = await one(ClaudeAgentOptions(cli_path=cli, cwd=str(tmp_path / "gone")))
    assert (result.ok, result.error_kind, result.retryable, result.attempts) == (
        False, "start", True, 3,
    )  # fmt: skip
    assert result.exit_code is None  # no process ran: no exit status to report
    assert result.error is not None and "does not exist" in result.error


@pytest.mark.anyio
async def test_a_cli_that_never_answers_the_handshake_fails_the_start(tmp_path: Path) -> None:
    cli = script(tmp_path, "claude", "#!/bin/sh\nexec cat >/dev/null\n")  # silent till stdin ends
    result = await one(ClaudeAgentOptions(cli_path=cli, initialize_timeout=0.3), attempts=2)
    assert (result.ok, result.error_kind, result.retryable, result.attempts) == (
        False, "start", True, 2,
    )  # fmt: skip
    assert result.error is not None and result.error.startswith("ControlTimeoutError: ")


@pytest.mark.anyio
async def test_a_session_that_ends_without_a_result_is_a_crash(tmp_path: Path) -> None:
    cli = script(tmp_path, "claude", f"#!{sys.executable}\n{NO_RESULT_CLI}")
    result = await one(ClaudeAgentOptions(cli_path=cli))
    assert (result.ok, result.error_kind, result.retryable, result.attempts) == (
        False, "crash", False, 1,
    )  # fmt: skip
    # its CLI exited 0 with the prompt owed a result: a ProcessError, with the exit status
    assert result.error == "the Claude Code CLI exited before the result of the turn (exit code: 0)"
    assert result.exit_code == 0 and result.session_id == "s-1"


@pytest.mark.anyio
async def test_a_progress_callback_that_fails_is_logged_and_the_task_goes_on(
    fake_options: FakeOptions, holds: Holds, caplog: pytest.LogCaptureFixture
) -> None:
    holds.release(forever=True)  # `act`: a tool call, then on at once
    told: list[tuple[int, str | None, bool]] = []

    def progress(number: int, attempt: Attempt) -> None:
        told.append((number, attempt.session_id, attempt.acted))
        raise RuntimeError("driver gone")

    with anyio.fail_after(LIMIT), caplog.at_level(logging.ERROR, "ccwire.batch"):
        result = await run_task(BatchTask(id="t", prompt="act now"), fake_options(),
                                quick(1), progress=progress, attempts_before=2)  # fmt: skip
    assert result.ok and result.attempts == 3 and result.tool_calls == 1
    # the attempt's start, then its session id, then its first tool call
    assert told == [(3, None, False), (3, result.session_id, False), (3, result.session_id, True)]
    assert sum("progress callback failed" in r.getMessage() for r in caplog.records) == 3


def test_tool_calls_of_a_subagent_mean_acted_but_are_not_the_model_s_own() -> None:
    changes: list[tuple[str | None, bool]] = []
    attempt = Attempt(on_change=lambda a: changes.append((a.session_id, a.acted)))
    call = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "ls"})
    attempt.observe(AssistantMessage(content=[call], model="m", parent_tool_use_id="toolu_0",
                                     session_id="s"))  # fmt: skip
    assert (attempt.tool_calls, attempt.acted) == (0, True)
    attempt.observe(AssistantMessage(content=[call, TextBlock("x")], model="m", session_id="s"))
    assert attempt.tool_calls == 1
    assert changes == [("s", True)]  # told once: nothing changed the second time


@pytest.mark.parametrize("text", [None, "", " \n\t\n"])
def test_a_blank_stderr_leaves_no_tail(text: str | None) -> None:
    assert stderr_tail(text) is None


@pytest.mark.anyio
async def test_an_interrupting_budget_cancels_a_running_task_function_unrecorded(
    fake_options: FakeOptions, tmp_path: Path
) -> None:
    waiting = anyio.Event()

    async def forever(client: ClaudeSDKClient) -> str:
        waiting.set()
        await anyio.sleep_forever()
        return "never"

    async def paid(client: ClaudeSDKClient) -> str:
        await waiting.wait()  # the other task function runs: then spend the budget
        await client.query("pay 0.01 paid")
        async for _ in client.receive_response():
            pass
        return "done"

    # the first task runs alone (no cost is known yet), then both functions start
    first = {"id": "first", "prompt": "echo first"}
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT):
        async with run_batch([first, forever, paid], options=fake_options(), concurrency=2,
                             output=out, max_cost_usd=0.005,
                             on_budget="interrupt") as batch:  # fmt: skip
            got = await batch.collect()
    assert batch.interrupted
    assert [(r.id, r.ok, r.output) for r in got] == [("first", True, None),
                                                     ("paid", True, "done")]  # fmt: skip
    assert [r.id for r in read_results(out)] == ["first", "paid"]  # `forever` runs next time
