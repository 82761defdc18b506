"""The client and protocol layers over the in-memory transport, with a scripted fake CLI."""

from __future__ import annotations

import asyncio
import gc
import logging
import pickle
import re
import sys
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anyio
import pytest

import ccwire._conversation.client
from ccwire import (
    CLI_ENV_ALLOWLIST,
    AssistantMessage,
    CallbackError,
    CcwireError,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    ControlProtocolError,
    ControlTimeoutError,
    HookMatcher,
    Message,
    MessageDecodeError,
    NoPromptError,
    OptionsError,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    RawMessage,
    ResultError,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolUseBlock,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


@tool("greet", "Greet someone by name", {"name": str})
async def greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}! Welcome."}]}


async def test_initialize_carries_hooks_and_returns_server_info() -> None:
    async def hook(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> dict[str, Any]:
        return {}

    opts = ClaudeAgentOptions(
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook], timeout=5)]}
    )
    async with connected(opts, init={"capabilities": ["x_v1"], "pid": 7}) as (client, fake):
        info = await client.get_server_info()
    init = next(f for f in fake.received if f.get("type") == "control_request")
    assert init["request"]["hooks"] == {
        "PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"], "timeout": 5}]
    }
    assert info is not None and info["pid"] == 7


async def test_a_client_used_without_async_with_says_how_to_connect() -> None:
    client = ClaudeSDKClient()
    expected = r"not connected: use `async with ClaudeSDKClient\(options\) as client:`"
    with pytest.raises(CLIConnectionError, match=expected):
        await client.query("hi")
    with pytest.raises(CLIConnectionError, match=expected):
        await client.receive_response().__anext__()


def test_a_client_used_with_a_plain_with_says_async_with() -> None:
    client: Any = ClaudeSDKClient()
    expected = r"use `async with ClaudeSDKClient\(options\) as client:`"
    with pytest.raises(TypeError, match=expected), client:
        pass  # pragma: no cover: never entered


async def _allow_all(
    name: str, inp: dict[str, Any], ctx: ToolPermissionContext
) -> PermissionResultAllow:
    return PermissionResultAllow()


def _denied(name: str) -> dict[str, Any]:
    return {"tool_name": name, "tool_use_id": "toolu_1", "tool_input": {"name": "Al"}}


async def test_an_in_process_tool_refused_for_want_of_a_grant_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An in-process tool left out of ``allowed_tools``, with no ``can_use_tool``: the CLI
    refuses every call ("you haven't granted it yet", to the model) and the program was
    told nothing. Now one WARNING per tool names the fix; a tool of another server, or a
    caller that answers permission prompts itself, is left alone."""
    server = create_sdk_mcp_server("demo_tools", tools=[greet])
    denials = [_denied("mcp__demo_tools__greet"), _denied("mcp__other__x"), _denied("Bash")]
    for opts, told in [
        (ClaudeAgentOptions(mcp_servers={"demo_tools": server}), True),
        (ClaudeAgentOptions(mcp_servers={"demo_tools": server}, can_use_tool=_allow_all), False),
        (ClaudeAgentOptions(mcp_servers={"demo_tools": server}, permission_mode="plan"), False),
    ]:
        caplog.clear()
        async with connected(opts) as (client, fake):
            for turn in ("one", "two"):
                await client.query(turn)
                p = await fake.receive("user")
                await fake.result("no", user_message_uuids=[p["uuid"]], permission_denials=denials)
                [m async for m in client.receive_response()]
        logged = [r.getMessage() for r in caplog.records if "refused to call" in r.getMessage()]
        assert logged == (
            [
                "ccwire: the CLI refused to call the in-process tool 'mcp__demo_tools__greet': "
                "it asks for permission, and nothing in the options grants it. Allow it with "
                "allowed_tools=['mcp__demo_tools__greet'] (or 'mcp__demo_tools__*' for every "
                "tool of the server), or decide each call with can_use_tool"
            ]
            if told
            else []
        )


async def test_a_client_without_credentials_is_told_what_to_do_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The README's client without a key: each answer is the CLI's "Not logged in ·
    Please run /login" (an AssistantMessage with error "authentication_failed"), which
    names neither ANTHROPIC_API_KEY nor a way to run without one; one WARNING does."""
    not_logged_in = {"type": "text", "text": "Not logged in · Please run /login"}
    async with connected() as (client, fake):
        for turn in ("one", "two"):
            await client.query(turn)
            p = await fake.receive("user")
            await fake.send(
                {
                    "type": "assistant",
                    "message": {"role": "assistant", "content": [not_logged_in]},
                    "error": "authentication_failed",
                    "parent_tool_use_id": None,
                    "session_id": fake.session_id,
                }
            )
            await fake.result(not_logged_in["text"], is_error=True, user_message_uuids=[p["uuid"]])
            got = [m async for m in client.receive_response()]
            assert isinstance(got[0], AssistantMessage) and got[0].error == "authentication_failed"
    assert [r.getMessage() for r in caplog.records if "API key" in r.getMessage()] == [
        "ccwire: Claude Code found no usable API key or login. Set ANTHROPIC_API_KEY in the "
        "environment or in ClaudeAgentOptions(env=...), or log in with Claude Code's /login; "
        "to run without a key, point the CLI at ccwire.testing.ScriptedModel. `ccwire "
        "doctor` checks the setup"
    ]


async def test_a_cli_that_cannot_reach_the_api_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No network (or a wrong ANTHROPIC_BASE_URL): the CLI retries its request 10 times,
    each wait longer, for minutes, before the turn fails; a caller reading only results
    saw nothing meanwhile. Its first retry with no response is one WARNING; a retry
    with an HTTP status (overloaded, rate limited) is the API at work, not logged."""

    def retry(attempt: int, status: int | None) -> dict[str, Any]:
        return {
            "type": "system",
            "subtype": "api_retry",
            "attempt": attempt,
            "max_retries": 10,
            "retry_delay_ms": 500,
            "error_status": status,
            "error": "unknown" if status is None else "overloaded",
            "session_id": "s",
            "uuid": str(uuid.uuid4()),
        }

    for frames, told in [([retry(1, 529), retry(2, 529)], False), ([retry(1, None)], True)]:
        caplog.clear()
        opts = ClaudeAgentOptions(env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
        async with connected(opts) as (client, fake):
            for turn in ("one", "two"):
                await client.query(turn)
                p = await fake.receive("user")
                for frame in [*frames, retry(2, None)] if told else frames:
                    await fake.send(frame)
                await fake.result("no", is_error=True, user_message_uuids=[p["uuid"]])
                got = [m async for m in client.receive_response()]
                assert [m.subtype for m in got if isinstance(m, SystemMessage)] == ["api_retry"] * (
                    len(frames) + told
                )  # yielded as ever
        logged = [r.getMessage() for r in caplog.records if "reach" in r.getMessage()]
        assert logged == (
            [
                "ccwire: the CLI cannot reach the model's API at http://127.0.0.1:9 (no "
                "response; retry 1 of 10, each wait longer): the turn fails if none gets "
                "through. Check the network, a proxy or ANTHROPIC_BASE_URL; "
                "CLAUDE_CODE_MAX_RETRIES (in the environment or options.env) sets how many "
                "retries"
            ]
            if told
            else []
        )


async def test_an_allowed_tool_of_a_server_the_session_lacks_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``allowed_tools=["mcp__calc__add"]`` with no "calc" in ``mcp_servers``: the model
    never saw the tool and the program was told nothing. The init frame lists the
    session's servers (the CLI's settings' too), so a rule for none of them is logged."""
    opts = ClaudeAgentOptions(
        allowed_tools=["mcp__calc__add", "mcp__calc__sub", "mcp__files__read", "mcp__*", "Read"]
    )
    async with connected(opts) as (client, fake):
        for turn in ("one", "two"):
            await client.query(turn)
            p = await fake.receive("user")
            servers = [{"name": "files", "status": "connected"}]
            await fake.send({"type": "system", "subtype": "init", "mcp_servers": servers})
            await fake.result("ok", user_message_uuids=[p["uuid"]])
            [m async for m in client.receive_response()]
    assert [r.getMessage() for r in caplog.records if "no MCP server" in r.getMessage()] == [
        "ccwire: allowed_tools names 'mcp__calc__add', but this session has no MCP server "
        "'calc': add it to mcp_servers, e.g. mcp_servers={'calc': create_sdk_mcp_server("
        "'calc', tools=[...])} (the key names the server's tools)"
    ]


async def test_greet_flow_over_fake_cli() -> None:
    server = create_sdk_mcp_server("demo_tools", tools=[greet])
    seen: list[tuple[str, dict[str, Any], str | None]] = []

    async def can_use_tool(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        seen.append((name, inp, ctx.tool_use_id))
        return PermissionResultAllow()

    opts = ClaudeAgentOptions(mcp_servers={"demo_tools": server}, can_use_tool=can_use_tool)
    async with connected(opts) as (client, fake):
        init = await fake.mcp(
            "demo_tools", "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}
        )
        assert init["response"]["mcp_response"]["result"]["serverInfo"]["name"] == "demo_tools"
        ack = await fake.mcp("demo_tools", "notifications/initialized", notify=True)
        assert ack["response"] == {"mcp_response": {"jsonrpc": "2.0", "result": {}}}
        listed = await fake.mcp("demo_tools", "tools/list")
        assert [t["name"] for t in listed["response"]["mcp_response"]["result"]["tools"]] == [
            "greet"
        ]

        await client.query("Greet Alice")
        prompt = await fake.receive("user")
        assert prompt["message"] == {"role": "user", "content": "Greet Alice"}
        await fake.init(["mcp__demo_tools__greet"])
        await fake.assistant(
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "mcp__demo_tools__greet",
                "input": {"name": "Alice"},
            }
        )
        perm = await fake.request(
            "can_use_tool",
            tool_name="mcp__demo_tools__greet",
            input={"name": "Alice"},
            tool_use_id="toolu_1",
            permission_suggestions=[],
        )
        assert perm["response"] == {"behavior": "allow", "updatedInput": {"name": "Alice"}}
        call = await fake.mcp(
            "demo_tools",
            "tools/call",
            {
                "name": "greet",
                "arguments": {"name": "Alice"},
                "_meta": {"claudecode/toolUseId": "toolu_1", "progressToken": 3},
            },
        )
        assert call["response"]["mcp_response"]["result"] == {
            "content": [{"type": "text", "text": "Hello, Alice! Welcome."}]
        }
        await fake.tool_result("toolu_1", [{"type": "text", "text": "Hello, Alice! Welcome."}])
        await fake.assistant({"type": "text", "text": "I greeted Alice."})
        await fake.result("I greeted Alice.", user_message_uuids=[prompt["uuid"]])

        messages = [m async for m in client.receive_response()]
    kinds = [type(m).__name__ for m in messages]
    assert kinds == [
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    use = messages[1]
    assert isinstance(use, AssistantMessage) and isinstance(use.content[0], ToolUseBlock)
    assert use.content[0].id == "toolu_1"
    assert seen == [("mcp__demo_tools__greet", {"name": "Alice"}, "toolu_1")]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "I greeted Alice."


async def test_permission_deny_and_rewrite() -> None:
    async def decide(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        if inp.get("name") == "Mallory":
            return PermissionResultDeny(message="not Mallory", interrupt=True)
        return PermissionResultAllow(updated_input={"name": "Bob"})

    async with connected(ClaudeAgentOptions(can_use_tool=decide)) as (_, fake):
        deny = await fake.request(
            "can_use_tool", tool_name="t", input={"name": "Mallory"}, tool_use_id="a"
        )
        allow = await fake.request(
            "can_use_tool", tool_name="t", input={"name": "Alice"}, tool_use_id="b"
        )
    assert deny["response"] == {"behavior": "deny", "message": "not Mallory", "interrupt": True}
    assert allow["response"] == {"behavior": "allow", "updatedInput": {"name": "Bob"}}


async def test_callback_errors_become_error_answers() -> None:
    async def broken(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        raise RuntimeError("policy store offline")

    async def wrong_type(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> Any:
        return ["not", "a", "dict"]

    opts = ClaudeAgentOptions(
        can_use_tool=broken, hooks={"Stop": [HookMatcher(hooks=[wrong_type])]}
    )
    async with connected(opts) as (_, fake):
        perm = await fake.request("can_use_tool", tool_name="t", input={}, tool_use_id="a")
        hook = await fake.request(
            "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
        )
        unknown_hook = await fake.request("hook_callback", callback_id="hook_99", input={})
        unknown = await fake.request("no_such_subtype")
    assert perm == {
        "subtype": "error",
        "request_id": perm["request_id"],
        "error": "policy store offline",
    }
    assert hook["subtype"] == "error" and "expected a dict" in hook["error"]
    assert unknown_hook["subtype"] == "error" and "hook_99" in unknown_hook["error"]
    assert unknown["error"] == "Unsupported control request subtype: no_such_subtype"


@pytest.mark.anyio
async def test_callback_requests_without_callbacks_get_the_same_error_answers() -> None:
    # a session with no hooks and no can_use_tool loads the callback code only when such a
    # request arrives; the answers are those of a session that has callbacks
    async with connected(ClaudeAgentOptions()) as (_, fake):
        perm = await fake.request("can_use_tool", tool_name="t", input={}, tool_use_id="a")
        again = await fake.request("can_use_tool", tool_name="t", input={}, tool_use_id="b")
        hook = await fake.request("hook_callback", callback_id="hook_0", input={})
    for answer in (perm, again):
        assert answer["subtype"] == "error"
        assert answer["error"] == "canUseTool callback is not provided"
    assert hook["subtype"] == "error" and "hook_0" in hook["error"]


async def test_hook_output_keywords_and_timeout() -> None:
    async def stop_it(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> dict[str, Any]:
        return {"continue_": False, "stopReason": "enough", "async_": False}

    async def hangs(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    opts = ClaudeAgentOptions(
        hooks={
            "PreToolUse": [HookMatcher(hooks=[stop_it])],
            "PostToolUse": [HookMatcher(hooks=[hangs], timeout=0.05)],
        }
    )
    async with connected(opts) as (_, fake):
        out = await fake.request("hook_callback", callback_id="hook_0", input={}, tool_use_id="t")
        late = await fake.request("hook_callback", callback_id="hook_1", input={})
    assert out["response"] == {"continue": False, "stopReason": "enough", "async": False}
    assert late["subtype"] == "error" and "timed out" in late["error"]


async def test_cancel_request_cancels_pending_permission_callback() -> None:
    started = anyio.Event()
    signalled: list[bool] = []

    async def slow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            signalled.append(ctx.signal.is_set())
        raise AssertionError

    async with connected(ClaudeAgentOptions(can_use_tool=slow)) as (_client, fake):
        rid = await fake.start_request("can_use_tool", tool_name="t", input={}, tool_use_id="x")
        with anyio.fail_after(5):
            await started.wait()
        await fake.cancel(rid)
        # the SDK writes nothing for the withdrawn request; the next request is answered
        answer = await fake.request("no_such_subtype")
        assert answer["subtype"] == "error"
        assert all(f.get("response", {}).get("request_id") != rid for f in fake.received)
    assert signalled == [True]


async def test_a_request_repeated_under_an_id_still_owed_is_served_once() -> None:
    asked: list[str] = []
    release = anyio.Event()

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(name)
        await release.wait()
        return PermissionResultAllow(updated_input={"asked": name})

    async with connected(ClaudeAgentOptions(can_use_tool=ask)) as (_client, fake):
        for name in ("Bash", "Write"):
            body: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": name}
            body.update(input={}, tool_use_id="u")
            await fake.send({"type": "control_request", "request_id": "dup", "request": body})
        await fake.request("no_such_subtype")  # a round trip: both lines were read
        release.set()
        answer = await fake.response_to("dup")
        await fake.request("no_such_subtype")  # a second answer would be in by now
    assert asked == ["Bash"]
    assert answer["response"]["updatedInput"] == {"asked": "Bash"}
    answers = [f for f in fake.received if f.get("response", {}).get("request_id") == "dup"]
    assert len(answers) == 1


@pytest.mark.parametrize("anyio_backend", ["trio"])  # asyncio's loop itself re-raises it
async def test_a_callback_raising_keyboard_interrupt_ends_the_stream_instead_of_hanging() -> None:
    reported: list[CallbackError] = []

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        raise KeyboardInterrupt

    options = ClaudeAgentOptions(can_use_tool=ask, on_callback_error=reported.append)
    async with connected(options) as (client, fake):
        await fake.start_request("can_use_tool", tool_name="Bash", input={}, tool_use_id="u")
        with anyio.fail_after(5), pytest.raises(CLIConnectionError) as caught:
            async for _ in client.receive_messages():
                pass
        with anyio.fail_after(5), pytest.raises(CLIConnectionError):  # and every request
            await client.interrupt()
    assert "a task of the CLI connection failed: KeyboardInterrupt()" in str(caught.value)
    # the callback that stopped it is named first (it would be lost in the traceback)
    ((error,),) = [reported]
    assert error.kind == "can_use_tool" and isinstance(error.__cause__, KeyboardInterrupt)
    assert "raised KeyboardInterrupt; the connection stops" in str(error)


async def test_disconnect_from_another_task_ends_its_readers_and_waiters() -> None:
    ended: list[str] = []
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.receive("user")

        async def read() -> None:
            async for _ in client.receive_messages():
                pass
            ended.append("reader")

        async def interrupt() -> None:
            with pytest.raises(CLIConnectionError) as caught:
                await client.interrupt()
            ended.append(str(caught.value))

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(interrupt)
            await fake.receive("control_request", "interrupt")  # never answered
            await client.disconnect()
    # the waiter is told who ended the connection: not the CLI, which still ran
    assert sorted(ended) == [
        "reader",
        "the connection was closed before the CLI answered this request",
    ]


async def test_a_callback_that_disconnects_its_client_is_not_held_up() -> None:
    # disconnect() waited for the connection's tasks to end, the callback's own among
    # them: 10 s, the bound of that wait
    returned = anyio.Event()
    clients: list[ClaudeSDKClient] = []

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await clients[0].disconnect()
        returned.set()
        return PermissionResultAllow()

    async with connected(ClaudeAgentOptions(can_use_tool=ask)) as (client, fake):
        clients.append(client)
        await fake.start_request("can_use_tool", tool_name="Bash", input={}, tool_use_id="u")
        with anyio.fail_after(5):
            await returned.wait()
    with pytest.raises(CLIConnectionError, match="not connected"):
        await client.query("again")


async def test_unknown_sdk_server_gets_jsonrpc_error() -> None:
    async with connected() as (_, fake):
        resp = await fake.mcp("nope", "tools/list")
    err = resp["response"]["mcp_response"]["error"]
    assert err["code"] == -32601 and "nope" in err["message"]


async def test_unknown_and_malformed_lines_are_surfaced_not_dropped() -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.send({"type": "tool_progress", "tool_use_id": "t1", "elapsed_time_seconds": 1})
        await fake.peer.send_raw(b'{"type": "assistant", broken\n')
        await fake.assistant({"type": "text", "text": "ok"}, {"type": "mystery_block", "x": 1})
        await fake.result("ok")
        first = []
        with pytest.raises(MessageDecodeError):
            async for m in client.receive_response():
                first.append(m)
        rest = [m async for m in client.receive_response()]
    assert isinstance(first[0], RawMessage) and first[0].type == "tool_progress"
    assert isinstance(rest[0], AssistantMessage)
    assert isinstance(rest[0].content[0], TextBlock)
    assert type(rest[0].content[1]).__name__ == "UnknownBlock"
    assert rest[0].content[1].raw["x"] == 1
    assert isinstance(rest[-1], ResultMessage)


async def test_absurd_lines_are_decode_errors_not_a_dead_connection() -> None:
    deep = b'{"type":"assistant","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    huge_cost = b'{"type":"result","subtype":"success","total_cost_usd":1' + b"0" * 400 + b"}\n"
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.peer.send_raw(deep)
        await fake.peer.send_raw(huge_cost)
        await fake.result("still here")
        errors: list[MessageDecodeError] = []
        while True:
            try:
                final = [m async for m in client.receive_response()]
                break
            except MessageDecodeError as exc:
                errors.append(exc)
    assert [("nested deeper than" in str(e), "malformed" in str(e)) for e in errors] == [
        (True, False),
        (False, True),
    ]
    assert isinstance(final[-1], ResultMessage) and final[-1].result == "still here"


async def test_cli_exit_mid_turn_fails_every_waiter_with_process_error() -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.receive("user")

        errors: list[BaseException] = []

        async def wait_interrupt() -> None:
            try:
                await client.interrupt()
            except ProcessError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_interrupt)
            await fake.receive("control_request", "interrupt")
            await fake.exit(2, "fatal: out of cheese")
            with pytest.raises(ProcessError) as info:
                async for _ in client.receive_response():
                    pass
        assert info.value.exit_code == 2 and "out of cheese" in str(info.value.stderr)
        assert len(errors) == 1 and isinstance(errors[0], ProcessError)
        with pytest.raises(ProcessError):
            await client.set_model("x")


@pytest.mark.parametrize("output_begun", [False, True])
async def test_a_clean_exit_before_the_turns_result_is_a_process_error(
    output_begun: bool,
) -> None:
    """Exit code 0 with a prompt still owed its result used to end the response (and
    `query()`) as if nothing were missing: the result was lost without a word."""
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        if output_begun:
            await fake.assistant({"type": "text", "text": "half an answer"})
        await fake.exit(0, "bye")
        seen: list[str] = []
        with pytest.raises(ProcessError) as info:
            async for m in client.receive_response():
                seen.append(type(m).__name__)
    assert seen == (["AssistantMessage"] if output_begun else [])
    assert info.value.exit_code == 0 and info.value.stderr == "bye"
    assert str(info.value).startswith("the Claude Code CLI exited before the result of the turn")

    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def cli() -> None:
        await fake.handshake()
        await fake.receive("user")
        await fake.exit(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(cli)
        with anyio.fail_after(10), pytest.raises(ProcessError, match="before the result"):
            async for _ in query(prompt="hi", transport=transport):
                pass


async def test_a_clean_exit_owing_nothing_and_our_own_close_mid_turn_stay_clean() -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        await fake.result("done")
        assert [type(m).__name__ async for m in client.receive_response()] == ["ResultMessage"]
        await fake.exit(0)
        assert [m async for m in client.receive_messages()] == []
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        await fake.assistant({"type": "text", "text": "half an answer"})
        async for m in client.receive_response():
            assert isinstance(m, AssistantMessage)
            break
    # leaving the block closed the CLI mid-turn: ours, so no error for the turn cut short


async def test_a_frame_the_cli_reads_without_answering_is_owed_nothing() -> None:
    """``keep_alive`` and ``control_cancel_request`` frames in a prompt stream were
    stamped with a uuid and owed an answer, which the CLI (2.1.330: no lifecycle, no
    result for them) never gives: `query()` never ended the CLI's input and waited for
    ever after the last result."""
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "keep_alive"}
        yield {"type": "control_cancel_request", "request_id": "nothing-pending"}
        yield {"type": "user", "message": {"role": "user", "content": "hi"}}

    async def lifecycle(uid: str, state: str) -> None:
        await fake.send({"type": "command_lifecycle", "command_uuid": uid, "state": state})

    async def cli() -> None:
        await fake.handshake()
        prompt = await fake.receive("user")
        await lifecycle(prompt["uuid"], "queued")
        await lifecycle(prompt["uuid"], "started")
        await fake.result("done")
        await lifecycle(prompt["uuid"], "completed")
        await fake.state("idle")
        await fake.expect_eof()  # nothing owed: the input ends
        await fake.exit(0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(cli)
        with anyio.fail_after(10):
            got = [m async for m in query(prompt=prompts(), transport=transport)]
    assert isinstance(got[-1], ResultMessage) and got[-1].result == "done"
    unanswered = [f for f in fake.received if f["type"] in ("keep_alive", "control_cancel_request")]
    assert unanswered == [  # sent as given: no uuid of ours
        {"type": "keep_alive"},
        {"type": "control_cancel_request", "request_id": "nothing-pending"},
    ]


async def test_a_stream_of_frames_that_are_no_prompts_leaves_no_reader_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An ``assistant``, ``system`` or unknown frame in a prompt stream starts no turn
    (CLI 2.1.330 answers none of them); each was owed a result, so `receive_response()`
    waited for ever. Now they are sent as given, owed nothing: with no prompt ever sent,
    `NoPromptError` after NO_PROMPT_SECONDS."""
    monkeypatch.setattr(ccwire._conversation.client, "NO_PROMPT_SECONDS", 0.2)
    frames: list[dict[str, Any]] = [
        {"type": "assistant", "message": {"role": "assistant", "content": "x"}},
        {"type": "system", "subtype": "note"},
        {"type": "no_such_frame"},
    ]

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        for frame in frames:
            yield frame

    async with connected() as (client, fake):
        await client.query(prompts())
        with anyio.fail_after(5), pytest.raises(NoPromptError):
            async for _ in client.receive_response():
                pass  # pragma: no cover
        sent = [await fake.receive(frame["type"]) for frame in frames]
    assert sent == frames  # as given: no uuid of ours


async def test_control_errors_and_timeouts_are_typed() -> None:
    opts = ClaudeAgentOptions(control_timeout=0.1)
    async with connected(opts) as (client, fake):
        async with anyio.create_task_group() as tg:

            async def refuse() -> None:
                req = await fake.receive("control_request", "set_permission_mode")
                await fake.respond_error(req["request_id"], "bad mode")

            tg.start_soon(refuse)
            with pytest.raises(ControlProtocolError, match="bad mode"):
                await client.set_permission_mode("plan")
        with pytest.raises(ControlTimeoutError):
            await client.set_model("never-answered")
        withdrawn = await fake.receive("control_cancel_request")
    assert withdrawn["request_id"].startswith("req_")


async def test_merged_prompts_then_receive_response_waits_for_the_next_turn() -> None:
    # two prompts merged into one turn: one result; a second receive_response() waits
    # for the next messages (as the reference SDK does) and ends with the next result
    async with connected() as (client, fake):
        await client.query("one")
        await client.query("two")
        p1 = await fake.receive("user")
        p2 = await fake.receive("user")
        await fake.state("running")
        await fake.result("both", user_message_uuids=[p1["uuid"], p2["uuid"]])
        await fake.state("idle")
        first = [m async for m in client.receive_response()]
        second: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def read_second() -> None:
                second.extend([m async for m in client.receive_response()])

            tg.start_soon(read_second)
            await client.query("three")
            p3 = await fake.receive("user")
            await fake.assistant({"type": "text", "text": "third"})
            await fake.result("three", user_message_uuids=[p3["uuid"]])
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "both"
    assert [type(m).__name__ for m in second] == ["AssistantMessage", "ResultMessage"]
    assert second[-1].result == "three"


async def test_receive_response_before_any_prompt_waits_for_the_next_message() -> None:
    # the reference's streaming pattern: receive_response() in a loop under a timeout;
    # with nothing pending it waits (it does not spin) until the timeout
    async with connected() as (client, fake):
        got: list[Any] = []
        with anyio.move_on_after(0.3) as scope:
            async for m in client.receive_response():
                got.append(m)
        assert scope.cancelled_caught and got == []
        async with anyio.create_task_group() as tg:
            received: list[Any] = []

            async def read() -> None:
                received.extend([m async for m in client.receive_response()])

            tg.start_soon(read)
            await fake.assistant({"type": "text", "text": "unprompted"})
            await fake.result("late")
    assert [type(m).__name__ for m in received] == ["AssistantMessage", "ResultMessage"]


async def test_receive_response_with_no_prompt_ever_sent_says_await(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``client.query("hi")`` without ``await`` sends nothing: receive_response() then
    waited forever (as the reference does); now, after NO_PROMPT_SECONDS with no prompt
    sent, being sent or answered, `NoPromptError` says to await. A prompt sent by
    another task meanwhile, a prompt stream still to yield its first prompt and
    messages that come unprompted are all waited for as before."""
    monkeypatch.setattr(ccwire._conversation.client, "NO_PROMPT_SECONDS", 0.2)
    async with connected() as (client, fake):
        with pytest.raises(NoPromptError, match=r"did you forget `await` before `client\.query"):
            async for _ in client.receive_response():
                pass  # pragma: no cover
        assert fake.received[-1]["type"] != "user"  # nothing was sent
        got: list[Any] = []
        async with anyio.create_task_group() as tg:  # another task sends the prompt

            async def read() -> None:
                got.extend([m async for m in client.receive_response()])

            tg.start_soon(read)
            await client.query("hi")
            await fake.receive("user")
            await fake.result("answered")
        assert [type(m) for m in got] == [ResultMessage]

    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    release = anyio.Event()

    async def prompts() -> AsyncIterator[str]:
        await release.wait()
        yield "late"

    client = ClaudeSDKClient(transport=transport)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(fake.handshake)
            await client.connect(prompts())
        try:
            with anyio.move_on_after(0.5) as waited:  # longer than NO_PROMPT_SECONDS
                async for _ in client.receive_response():
                    pass  # pragma: no cover
            assert waited.cancelled_caught  # the stream's prompt is on its way: no error
            release.set()
            await fake.receive("user")
            await fake.result("late")
            assert [type(m) async for m in client.receive_response()] == [ResultMessage]
        finally:
            await client.disconnect()


async def test_receive_response_after_every_prompt_was_answered_warns_and_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``receive_response()`` a second time for one prompt waited forever without a
    word; now, once every prompt is answered and the CLI is idle for NO_PROMPT_SECONDS,
    a warning says so, and it waits on (as the reference does): a prompt another task
    sends later is answered. A CLI still at work after its result ("running": a
    background agent may start a turn) gives no warning."""
    monkeypatch.setattr(ccwire._conversation.client, "NO_PROMPT_SECONDS", 0.2)
    warned = anyio.Event()

    class Flag(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "every prompt sent on this connection answered" in record.getMessage():
                warned.set()

    flag = Flag()
    logging.getLogger("ccwire").addHandler(flag)
    got: list[Any] = []
    try:
        async with connected() as (client, fake):
            await client.query("hi")
            prompt = await fake.receive("user")
            await fake.state("running")
            await fake.result("answered", user_message_uuids=[prompt["uuid"]])
            assert [type(m) async for m in client.receive_response()] == [ResultMessage]
            async with anyio.create_task_group() as tg:

                async def read() -> None:
                    got.extend([m async for m in client.receive_response()])

                tg.start_soon(read)
                with anyio.move_on_after(0.5):  # longer than NO_PROMPT_SECONDS
                    await warned.wait()
                assert not warned.is_set()  # the CLI is still at work: no warning
                await fake.state("idle")
                with anyio.fail_after(5):
                    await warned.wait()
                assert got == []  # it waits on
                await client.query("again")  # another task's prompt
                again = await fake.receive("user")
                await fake.result("second", user_message_uuids=[again["uuid"]])
    finally:
        logging.getLogger("ccwire").removeHandler(flag)
    assert [type(m) for m in got] == [ResultMessage]
    assert got[0].result == "second"


def test_no_prompt_error_pickles() -> None:
    error = NoPromptError(3.0)
    copy = pickle.loads(pickle.dumps(error))  # (it failed: "Unknown format code")
    assert (type(copy), str(copy), copy.seconds) == (NoPromptError, str(error), 3.0)


async def test_idle_before_the_result_does_not_shift_turns() -> None:
    # the CLI may report idle before the turn's result frame: each receive_response()
    # still ends with its own turn's result
    async with connected() as (client, fake):
        results = []
        for n in range(3):
            await client.query(f"turn {n}")
            p = await fake.receive("user")
            await fake.state("running")
            await fake.assistant({"type": "text", "text": f"answer {n}"})
            await fake.state("idle")  # before the result
            await fake.result(f"result {n}", user_message_uuids=[p["uuid"]])
            got = [m async for m in client.receive_response()]
            assert [type(m).__name__ for m in got] == ["AssistantMessage", "ResultMessage"]
            final = got[-1]
            assert isinstance(final, ResultMessage)
            results.append(final.result)
    assert results == ["result 0", "result 1", "result 2"]


async def test_session_state_frames_are_tracked_not_surfaced() -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        p = await fake.receive("user")
        await fake.state("running")
        await fake.assistant({"type": "text", "text": "hello"})
        await fake.result("hello", user_message_uuids=[p["uuid"]])
        msgs = [m async for m in client.receive_response()]
    assert [type(m).__name__ for m in msgs] == ["AssistantMessage", "ResultMessage"]


async def test_query_one_shot_closes_stdin_after_the_answer() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    collected: list[Any] = []

    async def cli_side() -> None:
        await fake.handshake()
        p = await fake.receive("user")
        assert p["session_id"] == ""
        await fake.assistant({"type": "text", "text": "4"})
        await fake.result("4", user_message_uuids=[p["uuid"]])
        await fake.expect_eof()
        await fake.exit(0)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            async for m in query(prompt="2+2?", transport=transport):
                collected.append(m)
    assert isinstance(collected[-1], ResultMessage) and collected[-1].result == "4"


async def test_query_error_result_then_exit_1_raises_result_error() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def cli_side() -> None:
        await fake.handshake()
        p = await fake.receive("user")
        await fake.result(
            "API Error: 404 model not found",
            is_error=True,
            user_message_uuids=[p["uuid"]],
            api_error_status=404,
            terminal_reason="api_error",
        )
        await fake.expect_eof()
        await fake.exit(1, "")

    got: list[Any] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            with pytest.raises(ResultError) as info:
                async for m in query(prompt="x", transport=transport):
                    got.append(m)
    assert isinstance(got[-1], ResultMessage) and got[-1].is_error  # yielded first
    error = info.value
    assert isinstance(error, ProcessError) and error.exit_code == 1
    assert str(error).startswith(
        "Claude Code returned an error result: API Error: 404 model not found"
    )
    assert (error.subtype, error.api_error_status, error.terminal_reason) == (
        "success",
        404,
        "api_error",
    )
    assert error.result == "API Error: 404 model not found" and error.errors == []
    assert error.data["is_error"] is True and error.session_id == got[-1].session_id


@pytest.mark.parametrize(
    ("result", "status"),
    [("Not logged in · Please run /login", None), ("Invalid API key · Fix external API key", 401)],
)
async def test_a_result_error_for_missing_credentials_says_what_to_do(
    result: str, status: int | None
) -> None:
    """Without a key, query() ended with "Not logged in · Please run /login (exit code:
    1)": the CLI's own words, though the CLI a user installed for ccwire is not on PATH,
    and nothing named ANTHROPIC_API_KEY or the way to run without one."""
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def cli_side() -> None:
        await fake.handshake()
        p = await fake.receive("user")
        await fake.result(
            result,
            is_error=True,
            user_message_uuids=[p["uuid"]],
            api_error_status=status,
            terminal_reason="api_error",
        )
        await fake.expect_eof()
        await fake.exit(1, "")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            with pytest.raises(ResultError) as info:
                async for _ in query(prompt="x", transport=transport):
                    pass
    assert str(info.value) == (
        f"Claude Code returned an error result: {result} (the CLI found no usable API key "
        "or login). Set ANTHROPIC_API_KEY in the environment or in "
        "ClaudeAgentOptions(env=...), or log in with Claude Code's /login; to run without "
        "a key, point the CLI at ccwire.testing.ScriptedModel. `ccwire doctor` checks the "
        "setup (exit code: 1)"
    )
    assert info.value.result == result  # the result itself is kept as the CLI wrote it


async def test_a_crash_after_more_output_is_a_plain_process_error() -> None:
    # an error result followed by more conversation: a later exit is a fresh crash
    async with connected() as (client, fake):
        await client.query("x")
        p = await fake.receive("user")
        await fake.result("bad", is_error=True, user_message_uuids=[p["uuid"]])
        await fake.assistant({"type": "text", "text": "moving on"})
        await fake.exit(3, "crash")
        seen: list[str] = []
        with pytest.raises(ProcessError) as info:
            async for m in client.receive_messages():
                seen.append(type(m).__name__)
    assert seen == ["ResultMessage", "AssistantMessage"]
    assert not isinstance(info.value, ResultError) and info.value.exit_code == 3


async def test_query_streaming_prompts_wait_for_answers() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    answered = anyio.Event()

    async def prompts() -> AsyncIterator[str]:
        yield "first"
        with anyio.fail_after(5):
            await answered.wait()
        yield "second"

    async def cli_side() -> None:
        await fake.handshake()
        for text in ("first", "second"):
            p = await fake.receive("user")
            assert p["message"]["content"] == text
            await fake.result(text, user_message_uuids=[p["uuid"]])
            answered.set()
        await fake.expect_eof()
        await fake.exit(0)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            results = [
                m.result
                async for m in query(prompt=prompts(), transport=transport)
                if isinstance(m, ResultMessage)
            ]
    assert results == ["first", "second"]


@pytest.mark.parametrize(
    ("raised", "expected", "words"),
    [
        (RuntimeError("the prompt source broke"), RuntimeError, "the prompt source broke"),
        # its own cancellation exception: a failure, not a cancellation of the connection
        (asyncio.CancelledError("broke"), CcwireError, "prompt stream raised CancelledError"),
    ],
)
async def test_a_failing_prompt_stream_given_to_connect_is_raised_to_the_reader(
    raised: BaseException, expected: type[BaseException], words: str
) -> None:
    # it was a background task's failure: logged, the connection's tasks all cancelled,
    # and the reader left waiting forever
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    read_first = anyio.Event()

    async def prompts() -> AsyncIterator[str]:
        yield "first"
        await read_first.wait()
        raise raised

    client = ClaudeSDKClient(transport=transport)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(fake.handshake)
            await client.connect(prompts())
        try:
            prompt = await fake.receive("user")
            assert prompt["message"]["content"] == "first"
            await fake.result("one")
            assert [type(m) async for m in client.receive_response()] == [ResultMessage]
            read_first.set()
            with pytest.raises(expected, match=words):
                async for _ in client.receive_messages():
                    pass  # pragma: no cover
            # the conversation goes on
            await client.query("second")
            assert (await fake.receive("user"))["message"]["content"] == "second"
            await fake.result("two")
            got = [m async for m in client.receive_response()]
            assert isinstance(got[-1], ResultMessage) and got[-1].result == "two"
        finally:
            await client.disconnect()


@pytest.mark.parametrize("prompt", [["hi"], b"hi", None, {"type": "user"}])
async def test_a_prompt_of_the_wrong_type_is_refused_before_the_cli_starts(
    prompt: Any, tmp_path: Any
) -> None:
    # the CLI given cannot start: a prompt checked only once it had would fail with that
    nowhere = ClaudeAgentOptions(cli_path=str(tmp_path / "no-claude"))
    with pytest.raises(TypeError, match="prompt must be a str or an async iterable"):
        async for _ in query(prompt=prompt, options=nowhere):
            pass  # pragma: no cover
    if prompt is not None:  # connect(None) means no first prompt
        with pytest.raises(TypeError, match="prompt must be a str or an async iterable"):
            await ClaudeSDKClient(nowhere).connect(prompt)
    async with connected() as (client, _):
        if not isinstance(prompt, list):  # a list of content blocks is a prompt here
            with pytest.raises(TypeError, match="prompt must be a str, a list of content"):
                await client.query(prompt)


@pytest.mark.parametrize(
    ("blocks", "words"),
    [
        (["hi"], r"prompt\[0\] is not a content block: a content block is a dict, not str"),
        ([{"type": "text", "text": "ok"}, 5], r"prompt\[1\] .* not int"),
        ([{"text": "no type"}], "its 'type' must be a string, got None"),
        ([{"type": "text", "text": 5}], "a text block's 'text' must be a string, got 5"),
    ],
)
async def test_a_list_that_is_not_content_blocks_is_refused_before_it_is_sent(
    blocks: list[Any], words: str
) -> None:
    # the CLI takes such a prompt without a word and never answers it
    async with connected() as (client, fake):
        with pytest.raises(OptionsError, match=words):
            await client.query(blocks)
        await client.query([{"type": "text", "text": "fine"}])
        prompt = await fake.receive("user")
    assert prompt["message"]["content"] == [{"type": "text", "text": "fine"}]  # the first


@pytest.mark.parametrize(
    "item",
    [
        5,
        None,
        ["hi"],
        # frames CLI 2.1.330 exits on ("Expected message role 'user'", "Missing request
        # on control_request"), which used to be sent, ending the conversation
        {"type": "user"},
        {"type": "user", "message": "hello"},
        {"type": "user", "message": {"role": "assistant", "content": "hi"}},
        {"type": "control_request", "request_id": "x"},
    ],
)
async def test_a_streamed_prompt_that_is_not_one_is_refused_before_it_is_sent(item: Any) -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def prompts() -> AsyncIterator[Any]:
        yield "first"
        yield item

    async def cli_side() -> None:
        await fake.handshake()
        prompt = await fake.receive("user")
        await fake.result("one", user_message_uuids=[prompt["uuid"]])
        await fake.expect_eof()

    got: list[Any] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            refused = r"a prompt must be a str|not a content block|a prompt frame the CLI would"
            with pytest.raises(OptionsError, match=refused):
                async for message in query(prompt=prompts(), transport=transport):
                    got.append(message)
    assert [type(m) for m in got] == [ResultMessage]
    assert [f["message"]["content"] for f in fake.received if f.get("type") == "user"] == ["first"]


async def test_options_of_another_sdk_are_refused_by_name() -> None:
    # mid-migration, the options imported from claude_agent_sdk: it failed with
    # AttributeError: 'ClaudeAgentOptions' object has no attribute 'can_use_tool'
    foreign = type("ClaudeAgentOptions", (), {"__module__": "claude_agent_sdk.types"})()
    match = r"ccwire\.ClaudeAgentOptions .*not claude_agent_sdk\.types\.ClaudeAgentOptions"
    with pytest.raises(TypeError, match=match):
        ClaudeSDKClient(foreign)
    with pytest.raises(TypeError, match=match):
        async for _ in query(prompt="hi", options=foreign):
            pass  # pragma: no cover
    with pytest.raises(TypeError, match=r"not builtins\.dict"):
        ClaudeSDKClient({"model": "opus"})  # type: ignore[arg-type]


async def test_not_connected_errors_are_typed() -> None:
    client = ClaudeSDKClient()
    with pytest.raises(CLIConnectionError):
        await client.query("hi")
    with pytest.raises(CLIConnectionError):
        await client.interrupt()


async def test_a_100_mb_message_is_read_with_default_settings() -> None:
    big = "x" * (100 * 1024 * 1024)
    async with connected() as (client, fake):
        await client.query("big please")
        p = await fake.receive("user")
        await fake.assistant({"type": "text", "text": big})
        await fake.result("ok", user_message_uuids=[p["uuid"]])
        messages = [m async for m in client.receive_response()]
    first = messages[0]
    assert isinstance(first, AssistantMessage)
    block = first.content[0]
    assert isinstance(block, TextBlock) and len(block.text) == len(big)
    assert isinstance(messages[-1], ResultMessage)


async def test_missing_cli_is_a_clear_typed_error(tmp_path: Any) -> None:
    from ccwire import CLINotFoundError

    options = ClaudeAgentOptions(cli_path=str(tmp_path / "no-such-claude"))
    with pytest.raises(CLINotFoundError, match="npm install"):
        await ClaudeSDKClient(options).connect()


async def test_initialize_without_answer_times_out_and_cleans_up() -> None:
    transport, peer = memory_transport_pair()
    client = ClaudeSDKClient(ClaudeAgentOptions(initialize_timeout=0.1), transport=transport)
    with anyio.fail_after(5), pytest.raises(ControlTimeoutError, match="initialize"):
        await client.connect()
    assert peer.stdin_closed
    with pytest.raises(CLIConnectionError):
        await client.query("hi")


@pytest.mark.parametrize(("env", "limit"), [("50", 0.05), ("10", 0.02), ("5e1", 0.02)])
async def test_claude_code_stream_close_timeout_makes_initialize_wait_longer(
    monkeypatch: pytest.MonkeyPatch, env: str, limit: float
) -> None:
    # as in the reference: the variable (milliseconds) only ever lengthens the wait;
    # a value that is not a plain integer is ignored
    monkeypatch.setenv("CLAUDE_CODE_STREAM_CLOSE_TIMEOUT", env)
    transport, _peer = memory_transport_pair()
    client = ClaudeSDKClient(ClaudeAgentOptions(initialize_timeout=0.02), transport=transport)
    with anyio.fail_after(5), pytest.raises(ControlTimeoutError) as caught:
        await client.connect()
    assert caught.value.timeout == limit


async def test_cli_dying_during_initialize_raises_process_error() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    client = ClaudeSDKClient(transport=transport)

    async def die() -> None:
        await fake.receive("control_request", "initialize")
        await fake.exit(1, "Error: bad flag --nope")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(die)
            with pytest.raises(ProcessError) as info:
                await client.connect()
    assert info.value.exit_code == 1
    assert "bad flag" in str(info.value.stderr)


async def test_query_closed_early_with_aclosing_stops_the_cli() -> None:
    from contextlib import aclosing

    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)

    async def cli_side() -> None:
        await fake.handshake()
        await fake.receive("user")
        await fake.assistant({"type": "text", "text": "partial"})
        await fake.expect_eof()

    gc.collect()  # what earlier tests of this process left: only this test's is checked
    with anyio.fail_after(5), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with anyio.create_task_group() as tg:
            tg.start_soon(cli_side)
            async with aclosing(query(prompt="long job", transport=transport)) as stream:
                async for message in stream:
                    assert isinstance(message, AssistantMessage)
                    break
        gc.collect()
    assert peer.stdin_closed
    # every generator of ccwire's was closed with it (trio warns of one left to the collector)
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_plain_with_says_to_use_async_with() -> None:
    # Python's own words were "... does not support the context manager protocol"; it
    # was then a bare TypeError: now in the exception tree, and still a TypeError
    started: list[Any] = []

    def spawner(spawn: Any) -> Any:
        started.append(spawn)  # pragma: no cover: never started

    options = ClaudeAgentOptions(cli_path="claude", spawn_claude_code_process=spawner)
    plain: Any = ClaudeSDKClient(options)
    with (
        pytest.raises(
            CcwireError, match=r"^ClaudeSDKClient is an async context manager: use "
        ) as caught,
        plain,
    ):
        pass  # pragma: no cover: never entered
    assert isinstance(caught.value, TypeError)
    assert type(caught.value).__name__ == "AsyncOnlyError"
    run = r"inside an `async def`, run with `anyio.run\(main\)` or `asyncio.run\(main\(\)\)`"
    assert re.search(run, str(caught.value))
    assert started == []  # no CLI was started


async def test_transcript_mirror_frames_surface_typed() -> None:
    from ccwire import TranscriptMirrorMessage

    entries = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": []}},
    ]
    path = "/home/u/.claude/projects/-w/00000000-0000-4000-8000-000000000000.jsonl"
    async with connected(ClaudeAgentOptions(session_mirror=True)) as (client, fake):
        await client.query("hi")
        p = await fake.receive("user")
        await fake.send({"type": "transcript_mirror", "filePath": path, "entries": entries[:1]})
        await fake.assistant({"type": "text", "text": "hello"})
        await fake.send({"type": "transcript_mirror", "filePath": path, "entries": entries[1:]})
        await fake.result("hello", user_message_uuids=[p["uuid"]])
        messages = [m async for m in client.receive_response()]
    mirrors = [m for m in messages if isinstance(m, TranscriptMirrorMessage)]
    assert [type(m).__name__ for m in messages] == [
        "TranscriptMirrorMessage",
        "AssistantMessage",
        "TranscriptMirrorMessage",
        "ResultMessage",
    ]
    assert [m.file_path for m in mirrors] == [path, path]
    assert [e for m in mirrors for e in m.entries] == entries
    assert isinstance(mirrors[0], RawMessage) and mirrors[0].type == "transcript_mirror"


# ------------------------------------------------------------- spawning the CLI

SECRET = "sk-ant-do-not-leak-0123456789"


def _fake_cli_script(tmp_path: Any, body: str) -> str:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


async def test_user_env_and_argv_reach_the_subprocess_spawn(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ccwire._conversation.subprocess_cli as subprocess_cli  # where a session's CLI starts

    spawned: dict[str, Any] = {}

    class Spawned(Exception):
        pass

    class RecordingTransport:
        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            spawned.update(kwargs, argv=argv)
            raise Spawned

    monkeypatch.setattr(subprocess_cli, "SubprocessTransport", RecordingTransport)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "inherited-key")
    monkeypatch.setenv("CCWIRE_TEST_UNRELATED_SECRET", "must-not-reach-the-cli")
    monkeypatch.setenv("CLAUDECODE", "1")
    cli = _fake_cli_script(tmp_path, "exit 0")
    options = ClaudeAgentOptions(
        cli_path=cli, user="nobody", env={"MINE": "m"}, cwd=tmp_path,
        inherit_env=CLI_ENV_ALLOWLIST,
    )  # fmt: skip
    with anyio.fail_after(5), pytest.raises(Spawned):
        await ClaudeSDKClient(options).connect()
    assert spawned["user"] == "nobody"
    assert spawned["argv"][0] == cli
    assert spawned["cwd"] == tmp_path
    env = spawned["env"]
    assert env["ANTHROPIC_API_KEY"] == "inherited-key" and env["MINE"] == "m"
    assert "CCWIRE_TEST_UNRELATED_SECRET" not in env and "CLAUDECODE" not in env

    spawned.clear()
    options = ClaudeAgentOptions(cli_path=cli)  # the default: the whole environment
    with anyio.fail_after(5), pytest.raises(Spawned):
        await ClaudeSDKClient(options).connect()
    assert spawned["user"] is None
    assert spawned["env"]["CCWIRE_TEST_UNRELATED_SECRET"] == "must-not-reach-the-cli"
    assert "CLAUDECODE" not in spawned["env"]
    assert "must-not-reach-the-cli" not in " ".join(spawned["argv"])  # never on argv


def _assert_no_secret(exc: BaseException) -> None:
    import traceback

    text = "".join(traceback.format_exception(exc))  # with every chained cause
    assert SECRET not in text and SECRET not in repr(exc)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell script as the CLI")
async def test_spawn_failures_never_quote_env_values(tmp_path: Any) -> None:
    secret_env = {"ANTHROPIC_API_KEY": SECRET, "OTHER_TOKEN": SECRET}
    # the CLI exits at once: ProcessError with its exit code and stderr
    dies = _fake_cli_script(tmp_path, 'read line; echo "Error: unknown option --nope" >&2; exit 3')
    options = ClaudeAgentOptions(cli_path=dies, env=secret_env)
    with anyio.fail_after(10), pytest.raises(ProcessError) as died:
        await ClaudeSDKClient(options).connect()
    assert died.value.exit_code == 3 and "unknown option" in str(died.value.stderr)
    _assert_no_secret(died.value)
    assert SECRET in repr(options.env) and SECRET not in repr(options)

    failures: list[BaseException] = []
    for bad in (
        ClaudeAgentOptions(cli_path=dies, env=secret_env, cwd=tmp_path / "missing"),
        ClaudeAgentOptions(cli_path=dies, env=secret_env, user="no-such-user-ccwire"),
    ):
        with anyio.fail_after(10), pytest.raises(CLIConnectionError) as info:
            await ClaudeSDKClient(bad).connect()
        failures.append(info.value)
    nul = ClaudeAgentOptions(cli_path=dies, env={**secret_env, "NUL": SECRET + "\0"})
    with anyio.fail_after(10), pytest.raises(OptionsError, match="'NUL'") as refused:
        await ClaudeSDKClient(nul).connect()  # refused before anything starts
    failures.append(refused.value)
    for exc in failures:
        _assert_no_secret(exc)
    assert "does not exist" in str(failures[0])


# The reference SDK sends prompts without a uuid, so the frames of their turns name no
# prompt: ``user_message_uuid(s)`` stay None and are absent from a system frame's data
# (its plugin_example.py prints those keys, include_partial_messages.py the messages).
# ccwire stamps each prompt to know when it is answered, and hides its own stamps.


_Turn = tuple[SystemMessage, SystemMessage, StreamEvent, AssistantMessage, ResultMessage]


def _split_turn(messages: list[Message]) -> _Turn:
    init, status, event, assistant, result = messages
    assert isinstance(init, SystemMessage) and isinstance(status, SystemMessage)
    assert isinstance(event, StreamEvent) and isinstance(assistant, AssistantMessage)
    assert isinstance(result, ResultMessage)
    return init, status, event, assistant, result


def _turn_frames(session_id: str, uids: list[str]) -> list[dict[str, Any]]:
    """A turn's frames as CLI 2.1.330 writes them for prompts that carry ``uids``."""
    named = {"user_message_uuid": uids[-1], "user_message_uuids": uids}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
               "content": [{"type": "text", "text": "hi"}], "stop_reason": None}  # fmt: skip
    return [
        {"type": "system", "subtype": "init", "session_id": session_id,
         "capabilities": ["msg_lifecycle_v1"], "user_message_uuids": uids},
        {"type": "system", "subtype": "status", "status": "requesting",
         "session_id": session_id, "user_message_uuids": uids},
        {"type": "stream_event", "uuid": "e1", "session_id": session_id,
         "event": {"type": "message_start"}, "parent_tool_use_id": None, **named},
        {"type": "assistant", "message": message, "parent_tool_use_id": None,
         "session_id": session_id, "uuid": "a1", **named},
        {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
         "duration_api_ms": 1, "num_turns": 1, "result": "hi", "session_id": session_id,
         "total_cost_usd": 0.0, "usage": {}, "uuid": "r1", "user_message_uuids": uids},
    ]  # fmt: skip


async def test_the_prompt_uuids_ccwire_stamps_are_not_shown() -> None:
    async with connected() as (client, fake):
        stamped = await client.query("hello")
        prompt = await fake.receive("user")
        assert stamped is not None and prompt["uuid"] == stamped
        made = uuid.UUID(stamped)  # a random UUID, as uuid.uuid4() makes them
        assert str(made) == stamped and made.version == 4 and made.variant == uuid.RFC_4122
        for frame in _turn_frames(fake.session_id, [stamped]):
            await fake.send(frame)
        messages = [m async for m in client.receive_response()]
        # the stamp still does its work: the result settled the prompt it names, on a
        # CLI that reports lifecycles (where a result naming nothing settles nothing)
        assert not client._connection().owes_answer
    init, status, event, assistant, result = _split_turn(messages)
    assert init.data == {"type": "system", "subtype": "init", "session_id": fake.session_id,
                         "capabilities": ["msg_lifecycle_v1"]}  # fmt: skip
    assert "user_message_uuids" not in status.data
    turn: tuple[StreamEvent | AssistantMessage | ResultMessage, ...] = (event, assistant, result)
    for m in turn:
        assert (m.user_message_uuid, m.user_message_uuids) == (None, None), m
        assert stamped not in repr(m) and stamped not in str(m.raw)
    assert repr(assistant).endswith("user_message_uuid=None, user_message_uuids=None)")


async def test_prompt_uuids_the_caller_gives_are_shown() -> None:
    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": "hi"},
               "parent_tool_use_id": None, "session_id": "default", "uuid": "mine"}  # fmt: skip

    async with connected() as (client, fake):
        await client.query(prompts())
        assert (await fake.receive("user"))["uuid"] == "mine"
        stamped = await client.query("and another")  # merged into the same turn
        assert stamped is not None and (await fake.receive("user"))["uuid"] == stamped
        for frame in _turn_frames(fake.session_id, ["mine", stamped]):
            await fake.send(frame)
        messages = [m async for m in client.receive_response()]
        assert not client._connection().owes_answer
    init, status, event, assistant, result = _split_turn(messages)
    assert init.data["user_message_uuids"] == status.data["user_message_uuids"] == ["mine"]
    turn: tuple[StreamEvent | AssistantMessage | ResultMessage, ...] = (event, assistant, result)
    for m in turn:
        assert m.user_message_uuids == ["mine"]
    assert event.user_message_uuid is None and assistant.user_message_uuid is None


async def test_an_mcp_config_given_as_a_path_like_connects() -> None:
    """A ``--mcp-config`` file given as any ``os.PathLike`` (not only a ``Path``) is
    passed to the CLI as a path, with no in-process servers behind it."""

    class ConfigPath:
        def __fspath__(self) -> str:
            return "/x/mcp.json"

    for config in (ConfigPath(), "/x/mcp.json"):
        options = ClaudeAgentOptions(mcp_servers=config)  # type: ignore[arg-type]
        async with connected(options) as (client, _fake):  # it raised TypeError
            assert await client.get_server_info() is not None
