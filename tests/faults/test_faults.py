"""Every fault ends in a documented state: nothing lost, nothing hangs, nothing leaks.

The CLI is ``fault_cli.py`` run as a real subprocess. Each test is bounded by
``anyio.fail_after`` and wrapped in :func:`no_leaks` (no child process left running or
unreaped, no task left behind). The documented end states:

* the CLI dies mid-turn / mid-tool-call / mid-permission: the messages it wrote before
  dying are delivered, then :class:`~ccwire.ProcessError` with its exit code (negative
  for a signal) and the tail of its stderr; running callbacks are cancelled (their
  ``signal`` is set) and every pending request fails at once;
* it dies or never answers during ``initialize``: ``connect()`` raises ProcessError /
  :class:`~ccwire.ControlTimeoutError`;
* it writes garbage: non-JSON lines are skipped (logged), a torn JSON line is raised
  as :class:`~ccwire.MessageDecodeError` where it occurred and the stream goes on,
  unknown message types arrive as :class:`~ccwire.RawMessage`, a control response for
  an unknown id is ignored;
* a callback raises, hangs past its timeout or returns the wrong type: the CLI gets an
  error answer (``isError`` for tools), the session goes on.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, get_args

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    CallbackError,
    CcwireError,
    ClaudeSDKClient,
    CLIConnectionError,
    CLIJSONDecodeError,
    ControlTimeoutError,
    HookMatcher,
    Message,
    MessageDecodeError,
    PermissionResultAllow,
    ProcessError,
    RawMessage,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire._conversation import connection
from ccwire._transport.subprocess import SubprocessTransport

from .conftest import FaultOptions, no_leaks

pytestmark = pytest.mark.anyio
LIMIT = 30  # seconds any one test may take, whatever happens


async def _marker() -> AsyncIterator[dict[str, Any]]:
    yield {"type": "marker"}


async def collect(client: ClaudeSDKClient) -> list[Message | CcwireError]:
    """Every message of the response; decode errors are kept in place, the end error last."""
    items: list[Message | CcwireError] = []
    while True:
        try:
            async for message in client.receive_response():
                items.append(message)
            return items
        except MessageDecodeError as exc:
            items.append(exc)
        except CcwireError as exc:
            items.append(exc)
            return items


def kinds(items: list[Any]) -> list[str]:
    return [type(i).__name__ for i in items]


# ------------------------------------------------------------------ the CLI dies


@pytest.mark.parametrize(("how", "code"), [("exit", 2), ("kill", -9)])
async def test_cli_dies_mid_turn(fault_options: FaultOptions, how: str, code: int) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options(f"{how}_mid_turn")) as client:
                await client.query("hi")
                items = await collect(client)
                with pytest.raises(ProcessError):  # the end, again: no waiting for an answer
                    await client.interrupt()  # that cannot come
    assert kinds(items) == ["SystemMessage", "AssistantMessage", "ProcessError"]
    first = items[1]
    assert isinstance(first, AssistantMessage) and first.content == [TextBlock("half an answer")]
    err = items[-1]
    assert isinstance(err, ProcessError)
    assert err.exit_code == code
    assert "fatal: mid-turn" in str(err.stderr) and "fatal: mid-turn" in str(err)


@pytest.mark.parametrize(("how", "code"), [("exit", 2), ("kill", -9)])
async def test_cli_dies_mid_tool_call(fault_options: FaultOptions, how: str, code: int) -> None:
    started, ended = anyio.Event(), anyio.Event()

    @tool("block", "Blocks until cancelled", {})
    async def block(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.set()
        raise AssertionError

    server = create_sdk_mcp_server("s", tools=[block])
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            options = fault_options(f"{how}_mid_tool", mcp_servers={"s": server})
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                await started.wait()
                await client.query(_marker())
                items = await collect(client)
                await ended.wait()  # the running tool was cancelled
    err = items[-1]
    assert isinstance(err, ProcessError) and err.exit_code == code
    assert "fatal: mid-tool-call" in str(err.stderr)


@pytest.mark.parametrize(("how", "code"), [("exit", 2), ("kill", -9)])
async def test_cli_dies_mid_permission(fault_options: FaultOptions, how: str, code: int) -> None:
    started = anyio.Event()
    signalled: list[bool] = []

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            signalled.append(ctx.signal.is_set())
        raise AssertionError

    async with no_leaks():
        with anyio.fail_after(LIMIT):
            options = fault_options(f"{how}_mid_permission", can_use_tool=ask)
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                await started.wait()
                await client.query(_marker())
                items = await collect(client)
    err = items[-1]
    assert isinstance(err, ProcessError) and err.exit_code == code
    assert "fatal: mid-permission" in str(err.stderr)
    assert signalled == [True]


@pytest.mark.parametrize(("how", "code"), [("exit", 1), ("kill", -9)])
async def test_cli_dies_during_initialize(fault_options: FaultOptions, how: str, code: int) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(ProcessError) as info:
            async with ClaudeSDKClient(fault_options(f"{how}_during_initialize")):
                pytest.fail("connected to a CLI that died")
    assert info.value.exit_code == code
    assert "fatal: cannot initialize" in str(info.value.stderr)


async def test_cli_never_answers_initialize(fault_options: FaultOptions) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(ControlTimeoutError) as info:
            async with ClaudeSDKClient(fault_options("never_initialize", initialize_timeout=0.5)):
                pytest.fail("connected without an initialize answer")
    assert info.value.subtype == "initialize" and info.value.timeout == 0.5


@pytest.mark.parametrize("ended_by", ["initialize_timeout", "caller_timeout"])
async def test_a_cli_hung_before_initialize_is_not_given_the_close_grace(
    fault_options: FaultOptions, ended_by: str
) -> None:
    # it has no session to save: SIGTERM at once, not 5 s after its input ends; also
    # when the caller gives up first (it waited out the grace: 5 s past its deadline)
    timeout = 0.5 if ended_by == "initialize_timeout" else 60
    error = ControlTimeoutError if ended_by == "initialize_timeout" else TimeoutError
    async with no_leaks():
        start = anyio.current_time()
        with pytest.raises(error), anyio.fail_after(LIMIT if timeout == 0.5 else 0.5):
            async with ClaudeSDKClient(
                fault_options("hangs_at_initialize", initialize_timeout=timeout)
            ):
                pytest.fail("connected without an initialize answer")
        assert anyio.current_time() - start < 3


async def test_cli_dies_while_we_wait_for_a_control_answer(fault_options: FaultOptions) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):  # far below control_timeout: the waiter is released
            async with ClaudeSDKClient(
                fault_options("exit_on_interrupt", control_timeout=3600)
            ) as client:
                await client.query("hi")
                with pytest.raises(ProcessError) as info:
                    await client.interrupt()
    assert info.value.exit_code == 4
    assert "fatal: interrupted badly" in str(info.value.stderr)


# --------------------------------------------------------------- bad output


async def test_garbage_unknown_types_and_unknown_ids(
    fault_options: FaultOptions, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="ccwire")
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options("garbage")) as client:
                await client.query("hi")
                items = await collect(client)
    assert kinds(items) == [
        "SystemMessage",
        "MessageDecodeError",  # the torn JSON line, where it occurred
        "RawMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    raw = items[2]
    assert isinstance(raw, RawMessage) and raw.type == "brand_new_type"
    assert raw.data["payload"] == {"x": 1}
    noise = [r for r in caplog.records if "non-JSON line" in r.getMessage()]
    assert len(noise) == 3  # text, binary junk and a JSON array: skipped, logged


async def test_partial_lines_and_a_final_line_without_newline(
    fault_options: FaultOptions,
) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options("partial_lines")) as client:
                await client.query("hi")
                items = await collect(client)
    assert kinds(items) == ["SystemMessage", "AssistantMessage", "ResultMessage"]
    said = items[1]
    assert isinstance(said, AssistantMessage)
    assert said.content == [TextBlock("héllo wörld ✓")]


async def test_a_200_mb_line_arrives_whole(fault_options: FaultOptions) -> None:
    size = 200_000_000
    async with no_leaks():
        with anyio.fail_after(LIMIT * 2):
            async with ClaudeSDKClient(fault_options("huge_line", size)) as client:
                await client.query("hi")
                lengths, last = [], None
                async for message in client.receive_response():
                    if isinstance(message, AssistantMessage):
                        block = message.content[0]
                        assert isinstance(block, TextBlock)
                        lengths.append(len(block.text))
                    last = message
                    del message
    assert lengths == [size]
    assert isinstance(last, ResultMessage)


async def test_a_line_over_max_buffer_size_is_a_typed_error(fault_options: FaultOptions) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            options = fault_options("huge_line", 20_000_000, max_buffer_size=1_000_000)
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                items = await collect(client)
                # the CLI, blocked writing the rest of a line nobody can read, is not
                # given the 5 s it has to exit after its input ends (closing is shielded)
                closing = anyio.current_time()
                await client.disconnect()
                assert anyio.current_time() - closing < 2
    err, end = items[-2:]
    # what the reference raises for it: its users' `except CLIJSONDecodeError` catches it
    assert isinstance(err, CLIJSONDecodeError) and isinstance(err, MessageDecodeError)
    assert "exceeds max_line_bytes (1000000 bytes)" in str(err)
    assert str(pickle.loads(pickle.dumps(err))) == str(err)
    assert isinstance(end, CLIConnectionError) and end.__cause__ is err


async def test_50_mb_of_stderr_then_exit(fault_options: FaultOptions) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(ProcessError) as info:
            async with ClaudeSDKClient(fault_options("stderr_flood_exit")):
                pytest.fail("connected to a CLI that exited")
    err = info.value
    assert err.exit_code == 3
    assert str(err.stderr).endswith("LAST STDERR LINE")
    assert len(str(err.stderr)) <= 64 * 1024  # the tail is bounded


async def test_50_mb_of_stderr_does_not_stall_the_session(fault_options: FaultOptions) -> None:
    lines: list[int] = []
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            options = fault_options("stderr_flood_ok", stderr=lambda line: lines.append(len(line)))
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                items = await collect(client)
    assert kinds(items) == ["AssistantMessage", "ResultMessage"]
    assert len(lines) == 50_000_000 // 1024 + 1


# ------------------------------------------------------------ the end of a session


@pytest.mark.parametrize("how", ["term", "ignore_term", "child", "closed_stdout", "stderr"])
async def test_a_cli_that_lingers_after_its_result_is_stopped(
    fault_options: FaultOptions, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A one-shot query whose CLI does not end its output once its input is closed (it
    lingers, ignores SIGTERM, leaves a child holding stdout, closes stdout and stays, or
    floods stderr) ends normally shortly after: the CLI is stopped, and what it wrote is
    yielded."""
    monkeypatch.setattr(connection, "END_GRACE", 0.3)
    options = fault_options("linger", how)
    assert options.cli_path is not None
    transport = SubprocessTransport(
        [str(options.cli_path)], env={**os.environ, **options.env}, terminate_grace=0.3
    )
    async with no_leaks():
        with anyio.fail_after(10):
            started = anyio.current_time()
            items = [m async for m in query(prompt="hi", options=options, transport=transport)]
            took = anyio.current_time() - started
    items = [m for m in items if not isinstance(m, SystemMessage)]  # session states
    texts = [m.content[0].text for m in items if isinstance(m, AssistantMessage)]  # type: ignore[union-attr]
    assert kinds(items) == ["AssistantMessage", "ResultMessage", "AssistantMessage"]
    assert texts == ["hello", "after the end of input"]
    assert took < 5


def test_the_end_grace_makes_room_for_session_end_hooks() -> None:
    env_var = connection.SESSION_END_HOOKS_TIMEOUT_ENV
    assert connection.end_grace({}, {}) == connection.END_GRACE
    assert connection.end_grace({env_var: "30000"}, {}) == 31
    assert connection.end_grace({}, {env_var: "20000"}) == 21
    assert connection.end_grace({env_var: "100"}, {env_var: "20000"}) == connection.END_GRACE
    assert connection.end_grace({env_var: "soon"}, {}) == connection.END_GRACE


async def test_closing_a_stopped_cli_does_not_wait_out_its_sigterm(
    fault_options: FaultOptions,
) -> None:
    """A CLI stopped by SIGSTOP gets SIGCONT with its SIGTERM: it ends at once, instead
    of when SIGKILL comes ``terminate_grace`` s later."""
    options = fault_options("plain")
    assert options.cli_path is not None
    transport = SubprocessTransport(
        [str(options.cli_path)],
        env={**os.environ, **options.env},
        close_grace=0.2,
        terminate_grace=5,
    )
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(options, transport=transport) as client:
                await client.query("hi")
                assert kinds(await collect(client))[-1] == "ResultMessage"
                assert transport.pid is not None
                os.kill(transport.pid, signal.SIGSTOP)
                closing = anyio.current_time()
            took = anyio.current_time() - closing
    assert took < 3
    info = transport.exit_info
    assert info is not None and info.returncode == -signal.SIGTERM


# ------------------------------------------------------------ stdin and backpressure


async def test_stdin_closes_under_us(fault_options: FaultOptions) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options("stdin_closes")) as client:
                await client.query("hi")
                async with aclosing(client.receive_messages()) as messages:  # left early
                    async for message in messages:
                        if isinstance(message, SystemMessage) and message.subtype == "stdin_closed":
                            break
                # the input is gone; the CLI may have exited meanwhile (ProcessError)
                with pytest.raises((CLIConnectionError, ProcessError)):
                    await client.query("are you there?")
                rest: list[object] = []
                try:
                    async for message in client.receive_messages():
                        rest.append(message)
                except CcwireError as exc:  # the documented end: typed, never a hang
                    rest.append(exc)
    assert all(isinstance(m, (*get_args(Message), CcwireError)) for m in rest)


async def test_tools_are_served_while_nobody_reads_messages(fault_options: FaultOptions) -> None:
    count = 60  # 60 x 20 kB of messages: far more than the pipe holds
    done = anyio.Event()
    calls: list[int] = []

    @tool("count", "Counts its calls", {"i": int})
    async def counter(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args["i"])
        if len(calls) == count:
            done.set()
        return {"content": [{"type": "text", "text": "ok"}]}

    server = create_sdk_mcp_server("s", tools=[counter])
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            options = fault_options("slow_reader", count, mcp_servers={"s": server})
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                await done.wait()  # every call answered before anything was read
                items = await collect(client)
    assert calls == list(range(count))
    texts = [m.content[0].text for m in items if isinstance(m, AssistantMessage)]  # type: ignore[union-attr]
    assert [t.split(":")[0] for t in texts] == [str(i) for i in range(count)]
    assert isinstance(items[-1], ResultMessage)


# ---------------------------------------------------------------- callbacks


async def test_callbacks_that_raise_hang_or_return_wrong_types(
    fault_options: FaultOptions,
) -> None:
    @tool("raises", "Raises", {})
    async def raises(args: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("tool bug")

    @tool("hangs", "Hangs past its timeout", {}, timeout=0.3)
    async def hangs(args: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    @tool("wrong_type", "Returns nonsense", {})
    async def wrong_type(args: dict[str, Any]) -> Any:
        return {"content": 5}

    cancelled: list[bool] = []

    async def can_use_tool(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        if name == "raise":
            raise RuntimeError("policy bug")
        if name == "wrong":
            return "yes"
        if name == "hang":
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.append(ctx.signal.is_set())
        return PermissionResultAllow()

    async def hook_raises(inp: Any, tid: Any, ctx: Any) -> Any:
        raise ValueError("hook bug")

    async def hook_hangs(inp: Any, tid: Any, ctx: Any) -> Any:
        await anyio.sleep_forever()

    async def hook_wrong(inp: Any, tid: Any, ctx: Any) -> Any:
        return ["not", "a", "dict"]

    reported: list[CallbackError] = []
    server = create_sdk_mcp_server("s", tools=[raises, hangs, wrong_type])
    options = fault_options(
        "callbacks",
        mcp_servers={"s": server},
        can_use_tool=can_use_tool,
        hooks={
            "Stop": [
                HookMatcher(hooks=[hook_raises]),
                HookMatcher(hooks=[hook_hangs], timeout=0.3),
                HookMatcher(hooks=[hook_wrong]),
            ]
        },
        on_callback_error=reported.append,
    )
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                items = await collect(client)
    final = items[-1]
    assert isinstance(final, ResultMessage) and final.result == "callbacks done"
    got = final.structured_output
    assert isinstance(got, dict)

    def tool_text(key: str) -> str:
        result = got[key]["response"]["mcp_response"]["result"]
        assert result["isError"] is True
        return str(result["content"][0]["text"])

    assert tool_text("raises") == "tool bug"
    assert "timed out" in tool_text("hangs")
    assert "invalid content" in tool_text("wrong_type")
    for key in ("perm_raise", "perm_wrong", "hook_0", "hook_1", "hook_2"):
        assert got[key]["subtype"] == "error", key
    assert "policy bug" in got["perm_raise"]["error"]
    assert "timed out" in got["hook_1"]["error"]
    assert got["perm_ok"]["response"] == {"behavior": "allow", "updatedInput": {"x": 1}}
    assert cancelled == [True]  # withdrawn by the CLI: cancelled, never answered
    assert sorted(e.kind for e in reported) == ["can_use_tool"] * 2 + ["hook"] * 3
    assert any(e.timed_out for e in reported)
