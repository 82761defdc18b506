"""The control surface end to end: runtime requests, permissions, agents, structured output,
partial messages, and in-process and external MCP servers, against the real CLI."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    AgentDefinition,
    AssistantMessage,
    CallbackError,
    ClaudeSDKClient,
    ControlProtocolError,
    InterruptResult,
    McpServerState,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultError,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMirrorMessage,
    UnsupportedFeatureError,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire._conversation.argv import build_argv
from ccwire.testing import ModelRequest, ScriptedModel, reply, text, tool_use

from .conftest import NEW_CLI, cli_version
from .helpers import EXT_SERVER, content_blocks, greet, one_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60


def _tool_results_seen(model: ScriptedModel) -> list[str]:
    return [r.content for req in model.turn_requests for r in req.tool_results()]


# ----------------------------------------------------------------- runtime requests


async def test_model_permission_mode_and_thinking_at_runtime(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("one"), text("two"))
    options = make_options(mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])})
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            idle = await client.interrupt()
            mode = await client.set_permission_mode("acceptEdits")
            changed = await client.set_model("claude-haiku-4-5")
            await client.set_max_thinking_tokens(2048)
            first = await one_turn(client, "hello")
            init = next(m for m in first if isinstance(m, SystemMessage) and m.subtype == "init")
            reset = await client.set_model(None)
            await one_turn(client, "again")
    assert isinstance(idle, InterruptResult) and idle.still_queued == ()
    assert mode.mode == "acceptEdits" and init.data["permissionMode"] == "acceptEdits"
    assert init.data["model"] == "claude-haiku-4-5"
    one, two = model.turn_requests
    assert one.model == "claude-haiku-4-5" and two.model != "claude-haiku-4-5"
    assert one.body["thinking"]["budget_tokens"] == 2048
    if cli_version() >= NEW_CLI:  # older CLIs acknowledge without naming the model
        assert changed.model == "claude-haiku-4-5" and reset.model == two.model
    else:
        assert changed.model is None and reset.model is None


async def test_refusals_are_typed_errors(model: ScriptedModel, make_options: Any) -> None:
    options = make_options(mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])})
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            with pytest.raises(UnsupportedFeatureError, match="no_such_request"):
                await client.send_control_request("no_such_request")
            with pytest.raises(ControlProtocolError, match="Server not found: nope"):
                await client.mcp_toggle("nope", False)
            with pytest.raises(ControlProtocolError, match="nope"):
                await client.mcp_reconnect("nope")
            dry = await client.rewind_files("00000000-0000-4000-8000-000000000001", dry_run=True)
            with pytest.raises(ControlProtocolError, match="rewind"):
                await client.rewind_files("00000000-0000-4000-8000-000000000001")
            if cli_version() >= NEW_CLI:
                with pytest.raises(ControlProtocolError) as bad_mode:
                    await client.set_permission_mode("bogus")  # type: ignore[arg-type]
                assert bad_mode.value.error_code == "invalid_mode"
    assert dry.can_rewind is False and dry.error == "File rewinding is not enabled."


async def test_rewind_files_restores_what_a_turn_wrote(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    options = make_options(enable_file_checkpointing=True, allowed_tools=["Write"])
    target = Path(options.cwd) / "notes.txt"
    model.add(
        tool_use("Write", {"file_path": str(target), "content": "written by the agent\n"}),
        text("wrote it"),
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            prompt_id = await client.query("write the notes")
            assert prompt_id is not None
            turn = [m async for m in client.receive_response()]
            assert isinstance(turn[-1], ResultMessage) and not turn[-1].is_error
            assert target.read_text() == "written by the agent\n"
            dry = await client.rewind_files(prompt_id, dry_run=True)
            done = await client.rewind_files(prompt_id)
    # the dry run says what would change; the rewind itself only acknowledges
    assert dry.can_rewind is True and dry.files_changed == (str(target),)
    assert done.can_rewind is True
    assert not target.exists()  # the file the turn created is gone again


async def test_mcp_status_toggle_context_and_settings(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("ready"))
    options = make_options(mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])})
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await one_turn(client, "hi")  # the SDK server is connected by now
            before = await client.mcp_status()
            disabled: list[McpServerState] = []
            if cli_version() >= NEW_CLI:  # older CLIs do not toggle in-process servers
                await client.mcp_toggle("demo", False)
                disabled = await client.mcp_status()
                await client.mcp_toggle("demo", True)
            usage = await client.get_context_usage()
            settings = await client.get_settings()
            await client.apply_flag_settings({"permissions": {"deny": ["Bash(rm:*)"]}})
            after_apply = await client.get_settings()
            await client.stop_task("no-such-task")  # unknown ids are not an error
            version = await client.get_cli_version()
            cost = await client.get_session_cost()
    (demo,) = [s for s in before if s.name == "demo"]
    assert demo.status == "connected" and [t.name for t in demo.tools] == ["greet"]
    if cli_version() >= NEW_CLI:
        assert [s.status for s in disabled if s.name == "demo"] == ["disabled"]
    assert usage.categories and usage.max_tokens > 0
    assert any(c.tokens > 0 for c in usage.categories)
    assert "model" in settings.applied
    assert after_apply.effective.get("permissions", {}).get("deny") == ["Bash(rm:*)"]
    assert version.version == ".".join(map(str, cli_version()))
    assert "$" in cost


async def test_capabilities_gate_features_per_cli(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("ready"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            before = client.supports("interrupt_cancel_queued_v1")
            await one_turn(client, "hi")
            after = client.supports("interrupt_cancel_queued_v1")
            if cli_version() >= NEW_CLI:
                cancelled = await client.interrupt(cancel_queued=True)
                models = await client.list_models()
            else:
                with pytest.raises(UnsupportedFeatureError, match="interrupt_cancel_queued_v1"):
                    await client.interrupt(cancel_queued=True)
                with pytest.raises(UnsupportedFeatureError, match="list_models"):
                    await client.list_models()
    assert client.cli_version == ".".join(map(str, cli_version()))
    if cli_version() >= NEW_CLI:
        assert before is None and after is True  # unknown until the first system/init
        assert cancelled.cancelled == () and models and models[0].value
    else:
        assert before is False and after is False  # no capabilities at all: an old CLI


# ------------------------------------------------------------------- permissions


async def test_interrupt_cancels_a_pending_permission_callback(
    model: ScriptedModel, make_options: Any
) -> None:
    waiting = anyio.Event()
    outcome: list[str] = []

    async def slow_decision(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        waiting.set()
        try:
            await anyio.sleep_forever()
        finally:
            outcome.append("signalled" if ctx.signal.is_set() else "not signalled")
        raise AssertionError("unreachable")

    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("after interrupt"))
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        can_use_tool=slow_decision,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("greet Ann")
            await waiting.wait()
            answer = await client.interrupt()
            messages = [m async for m in client.receive_response()]
            follow_up = await one_turn(client, "still there?")
    assert outcome == ["signalled"]  # control_cancel_request reached the callback
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "error_during_execution"
    assert [d.get("tool_name") for d in final.permission_denials or []] == ["mcp__demo__greet"]
    assert answer.still_queued == ()
    assert isinstance(follow_up[-1], ResultMessage) and follow_up[-1].result == "after interrupt"


async def test_a_permission_callback_that_never_decides_is_denied_after_its_timeout(
    model: ScriptedModel, make_options: Any
) -> None:
    signalled: list[bool] = []
    reported: list[CallbackError] = []

    async def never_decides(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        try:
            await anyio.sleep_forever()
        finally:
            signalled.append(ctx.signal.is_set())
        raise AssertionError("unreachable")

    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("went on without it"))
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        can_use_tool=never_decides,
        can_use_tool_timeout=0.5,
        on_callback_error=reported.append,
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="greet Ann", options=options)]
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "went on without it"
    assert [d.get("tool_name") for d in final.permission_denials or []] == ["mcp__demo__greet"]
    (result,) = content_blocks(messages, ToolResultBlock)
    assert result.is_error and "did not decide within 0.5 s" in str(result.content)
    assert signalled == [True]
    assert [(e.kind, e.timed_out) for e in reported] == [("can_use_tool", True)]


async def test_deny_with_interrupt_stops_the_turn(model: ScriptedModel, make_options: Any) -> None:
    async def deny_and_stop(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultDeny:
        return PermissionResultDeny(message="stop right there", interrupt=True)

    model.add(tool_use("mcp__demo__greet", {"name": "Ann"}), text("never said"))
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        can_use_tool=deny_and_stop,
    )
    messages: list[Any] = []
    with anyio.fail_after(TIMEOUT), pytest.raises(ResultError) as info:
        async for m in query(prompt="greet Ann", options=options):
            messages.append(m)
    final = messages[-1]  # the error result is yielded, then the CLI's exit raises
    assert isinstance(final, ResultMessage) and final.is_error
    assert final.subtype == "error_during_execution"
    assert info.value.subtype == "error_during_execution" and info.value.exit_code == 1
    assert info.value.session_id == final.session_id
    assert len(model.turn_requests) == 1 and model.remaining == 1  # the model was not asked again
    assert any(b.is_error for b in content_blocks(messages, ToolResultBlock))


async def test_suggestions_arrive_typed_and_updates_are_applied(
    model: ScriptedModel, make_options: Any
) -> None:
    asked: list[ToolPermissionContext] = []

    async def allow_always(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(ctx)
        # keep the suggested rule for this session only (not in a settings file)
        session_only = [dataclasses.replace(s, destination="session") for s in ctx.suggestions]
        return PermissionResultAllow(updated_permissions=session_only)

    model.add(
        tool_use("mcp__demo__greet", {"name": "Ann"}),
        tool_use("mcp__demo__greet", {"name": "Bob"}),
        text("done"),
    )
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        can_use_tool=allow_always,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await one_turn(client, "greet twice")
            rules = await client.list_permission_rules() if cli_version() >= NEW_CLI else None
    assert len(asked) == 1  # the rule added with the first answer covered the second call
    (suggestion,) = asked[0].suggestions
    assert suggestion.type == "addRules" and suggestion.behavior == "allow"
    assert suggestion.rules is not None and suggestion.rules[0].tool_name == "mcp__demo__greet"
    assert _tool_results_seen(model) == ["Hello, Ann!", "Hello, Bob!"]
    if rules is not None:
        assert "mcp__demo__greet" in str(rules)


# ------------------------------------------------------------------------ agents


async def test_subagent_messages_carry_the_agent_tool_use_id(
    model: ScriptedModel, make_options: Any
) -> None:
    agents = {
        "greeter": AgentDefinition(
            description="Greets people using the greet tool",
            prompt="You are the greeter subagent.",
            tools=["mcp__demo__greet"],
            model="inherit",
        )
    }
    # The subagent's model requests are served by the same scripted model; route each
    # request to the main or the subagent script (the subagent is offered only its tools).
    main_script: list[Any] = [text("The greeter greeted Ann.")]
    sub_script: list[Any] = [tool_use("mcp__demo__greet", {"name": "Ann"}), text("Greeted Ann.")]

    def first_turn(request: ModelRequest) -> Any:
        spec = next(t for t in request.tools if t["name"] in ("Agent", "Task"))
        call: dict[str, Any] = {
            "subagent_type": "greeter",
            "description": "Greet Ann",
            "prompt": "Greet Ann.",
        }
        if "run_in_background" in spec["input_schema"].get("properties", {}):
            call["run_in_background"] = False  # newer CLIs run agents in the background
        return tool_use(spec["name"], call, id="toolu_agent_call_1")

    def route(request: ModelRequest) -> Any:
        is_main = any(name in ("Agent", "Task") for name in request.tool_names)
        return (main_script if is_main else sub_script).pop(0)

    model.add(first_turn, route, route, route)
    options = make_options(
        agents=agents,
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        allowed_tools=["mcp__demo__greet"],
    )
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="have the greeter greet Ann", options=options)]
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "greeter" in init.data["agents"]
    sub = [
        m
        for m in messages
        if isinstance(m, (AssistantMessage, UserMessage))
        and m.parent_tool_use_id == "toolu_agent_call_1"
    ]
    assert any(isinstance(m, AssistantMessage) for m in sub)
    assert any(
        isinstance(b, ToolUseBlock) and b.name == "mcp__demo__greet"
        for m in sub
        for b in (m.content if isinstance(m.content, list) else [])
    )
    subagent_request = model.turn_requests[1]
    assert "You are the greeter subagent." in subagent_request.system
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "The greeter greeted Ann."


# ------------------------------------------------- structured output, partial messages


async def test_structured_output_via_json_schema(model: ScriptedModel, make_options: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
    }
    model.add(tool_use("StructuredOutput", {"city": "Paris", "population": 2100000}), text("done"))
    options = make_options(output_format={"type": "json_schema", "schema": schema})
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="biggest city in France?", options=options)]
    assert "StructuredOutput" in model.turn_requests[0].tool_names
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "success"
    assert final.structured_output == {"city": "Paris", "population": 2100000}


async def test_structured_output_with_a_schema_too_long_for_argv(
    model: ScriptedModel, make_options: Any
) -> None:
    # The CLI takes only JSON text on --json-schema (a file path is "not valid JSON"),
    # so a schema over SPILL_THRESHOLD bytes travels as initialize jsonSchema instead.
    description = "The largest city. " + "d" * 120_000
    schema = {
        "type": "object",
        "description": description,
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
    }
    assert len(json.dumps(schema)) > 100 * 1024
    model.add(tool_use("StructuredOutput", {"city": "Lyon", "population": 520000}), text("done"))
    options = make_options(output_format={"type": "json_schema", "schema": schema})
    argv = build_argv(options, cli_path="claude")
    assert not [arg for arg in argv if arg.startswith("--json-schema")]
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="second city of France?", options=options)]
    offered = {t["name"]: t for t in model.turn_requests[0].tools}
    assert offered["StructuredOutput"]["input_schema"]["description"] == description
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "success"
    assert final.structured_output == {"city": "Lyon", "population": 520000}


async def test_session_mirror_delivers_the_transcript(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("mirrored answer"))
    options = make_options(session_mirror=True)
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            messages = await one_turn(client, "mirror me")
            session_id = client.session_id
    mirrors = [m for m in messages if isinstance(m, TranscriptMirrorMessage)]
    assert mirrors, "no transcript_mirror frame arrived"
    assert all(m.file_path.endswith(f"{session_id}.jsonl") for m in mirrors)
    entries = [e for m in mirrors for e in m.entries]
    kinds = [e.get("type") for e in entries]
    assert "user" in kinds and "assistant" in kinds
    assert "mirrored answer" in json.dumps(entries)
    assert isinstance(messages[-1], ResultMessage)


async def test_more_runtime_requests_against_the_real_cli(
    model: ScriptedModel, make_options: Any
) -> None:
    if cli_version() < NEW_CLI:
        pytest.skip("these requests need CLI 2.1.330")
    model.add(text("hi"))
    options = make_options(allowed_tools=["Grep"])
    work = Path(options.cwd)
    (work / "notes.txt").write_text("hello notes\n", encoding="utf-8")
    (work / "repo").mkdir()
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await one_turn(client, "hello")
            contents = await client.read_file(work / "notes.txt")
            head = await client.read_file(work / "notes.txt", max_bytes=5, encoding="base64")
            await client.seed_read_state(work / "notes.txt", 0)
            root = await client.register_repo_root(work / "repo")
            styles = await client.reload_output_styles()
            hooks = await client.get_hooks_listing()
            await client.file_suggestions("notes")
            await client.set_has_subscribers(True)
            usage = await client.get_usage()
            rules = await client.list_permission_rules()
            with pytest.raises(ControlProtocolError, match="read denied"):
                await client.read_file(work / "missing.txt")
            with pytest.raises(UnsupportedFeatureError, match="set_color"):
                await client.set_color("red")  # not offered on a stdio connection
    assert contents.contents == "hello notes\n" and contents.truncated is False
    assert head.as_bytes() == b"hello" and head.truncated is True
    assert root.directory is not None and root.directory.endswith("repo")
    assert "default" in styles
    assert any(e.name == "PreToolUse" for e in hooks.event_catalog)
    assert usage.session.total_cost_usd > 0 and usage.session.model_usage
    assert [(r.rule, r.behavior, r.source) for r in rules.rules] == [("Grep", "allow", "cliArg")]


async def test_partial_messages_arrive_as_stream_events(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("streamed reply"))
    options = make_options(include_partial_messages=True)
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="stream please", options=options)]
    events = [m for m in messages if isinstance(m, StreamEvent)]
    kinds = [e.event.get("type") for e in events]
    assert kinds[0] == "message_start" and "message_stop" in kinds
    deltas = "".join(
        e.event["delta"]["text"]
        for e in events
        if e.event.get("type") == "content_block_delta"
        and e.event["delta"].get("type") == "text_delta"
    )
    assert deltas == "streamed reply"
    assert [b.text for b in content_blocks(messages, TextBlock)] == ["streamed reply"]


# -------------------------------------------------------------------- MCP servers


async def test_in_process_server_added_and_removed_during_a_session(
    model: ScriptedModel, make_options: Any
) -> None:
    @tool("shout", "Shout a word", {"word": str})
    async def shout(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": args["word"].upper() + "!"}]}

    model.add(
        reply(tool_use("mcp__loud__shout", {"word": "hey"})),
        text("shouted"),
        text("gone"),
    )
    options = make_options(
        mcp_servers={"demo": create_sdk_mcp_server("demo", tools=[greet])},
        allowed_tools=["mcp__loud__shout"],
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            added = await client.add_mcp_servers(
                {"loud": create_sdk_mcp_server("loud", tools=[shout])}
            )
            first = await one_turn(client, "shout hey")
            status = {s.name: s.status for s in await client.mcp_status()}
            removed = await client.remove_mcp_servers("loud")
            await one_turn(client, "and now?")
            after = {s.name for s in await client.mcp_status()}
    assert added.added == ("loud",) and added.errors == {}
    assert status == {"demo": "connected", "loud": "connected"}
    assert _tool_results_seen(model)[0] == "HEY!"
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "shouted"
    assert removed.removed == ("loud",) and after == {"demo"}
    assert "mcp__loud__shout" not in model.turn_requests[-1].tool_names


@pytest.mark.skipif(
    bool(cli_version()) and cli_version() < NEW_CLI,
    reason="tools/list_changed re-listing needs CLI 2.1.330 (older CLIs acknowledge the "
    "notification but never fetch the new tool list)",
)
async def test_tool_added_mid_turn_is_offered_at_once(
    model: ScriptedModel, make_options: Any
) -> None:
    entered, release = anyio.Event(), anyio.Event()

    @tool("wait", "Wait for the test", {})
    async def wait(args: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"content": [{"type": "text", "text": "waited"}]}

    @tool("late", "A tool that appears mid-session", {})
    async def late(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "late tool ran"}]}

    config = create_sdk_mcp_server("dyn", tools=[wait])
    server = config["instance"]
    model.add(tool_use("mcp__dyn__wait", {}), tool_use("mcp__dyn__late", {}), text("done"))
    options = make_options(
        mcp_servers={"dyn": config}, allowed_tools=["mcp__dyn__wait", "mcp__dyn__late"]
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("use the new tool")
            await entered.wait()
            server.add_tool(late)
            await server.notify_tools_changed()  # acknowledged: the CLI re-lists now
            # each mcp_status is a round trip to the CLI; it lists the tools it now holds
            while not any(
                t.name == "late"
                for status in await client.mcp_status()
                if status.name == "dyn"
                for t in status.tools
            ):
                pass
            release.set()
            messages = [m async for m in client.receive_response()]
    assert "mcp__dyn__late" not in model.turn_requests[0].tool_names
    assert "mcp__dyn__late" in model.turn_requests[1].tool_names
    assert _tool_results_seen(model) == ["waited", "late tool ran"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"


@asynccontextmanager
async def external_server(kind: str) -> AsyncIterator[str]:
    """Start the fixture MCP server over ``kind`` (http or sse); yields its URL."""
    process = await anyio.open_process([sys.executable, str(EXT_SERVER), kind])
    try:
        assert process.stdout is not None
        with anyio.fail_after(30):
            line = b""
            async for chunk in process.stdout:
                line += chunk
                if b"\n" in line:
                    break
        port = int(line.split()[1])
        path = "/mcp" if kind == "http" else "/sse"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        with anyio.CancelScope(shield=True):
            with suppress(ProcessLookupError):  # it has already exited
                process.terminate()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
            await process.aclose()


async def _call_external(model: ScriptedModel, options: Any, server: str) -> list[Message]:
    model.add(
        reply(
            tool_use(f"mcp__{server}__multiply", {"a": 6, "b": 7}),
        ),
        tool_use(f"mcp__{server}__where", {}),
        text("computed"),
    )
    with anyio.fail_after(TIMEOUT):
        return [m async for m in query(prompt="multiply 6 by 7", options=options)]


async def test_external_stdio_server(model: ScriptedModel, make_options: Any) -> None:
    options = make_options(
        mcp_servers={
            "ext": {"type": "stdio", "command": sys.executable, "args": [str(EXT_SERVER)]}
        },
        allowed_tools=["mcp__ext__multiply", "mcp__ext__where"],
    )
    messages = await _call_external(model, options, "ext")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "ext" in [s["name"] for s in init.data["mcp_servers"]]
    seen = _tool_results_seen(model)
    assert seen[0] == "6 * 7 = 42" and seen[1].endswith("over stdio")
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "computed"


@pytest.mark.parametrize("kind", ["http", "sse"])
async def test_external_network_server_on_loopback(
    model: ScriptedModel, make_options: Any, kind: str
) -> None:
    async with external_server(kind) as url:
        options = make_options(
            mcp_servers={"net": {"type": kind, "url": url}},
            allowed_tools=["mcp__net__multiply", "mcp__net__where"],
        )
        messages = await _call_external(model, options, "net")
    seen = _tool_results_seen(model)
    assert seen[0] == "6 * 7 = 42" and seen[1].endswith(f"over {kind}")
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "computed"


async def test_external_server_added_with_mcp_set_servers(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(tool_use("mcp__late__multiply", {"a": 3, "b": 5}), text("fifteen"))
    options = make_options(allowed_tools=["mcp__late__multiply"])
    async with external_server("http") as url:
        with anyio.fail_after(TIMEOUT):
            async with ClaudeSDKClient(options) as client:
                result = await client.mcp_set_servers({"late": {"type": "http", "url": url}})
                messages = await one_turn(client, "multiply 3 by 5")
                (late,) = [s for s in await client.mcp_status() if s.name == "late"]
    assert result.added == ("late",)
    assert late.status == "connected" and {t.name for t in late.tools} == {"multiply", "where"}
    assert _tool_results_seen(model) == ["3 * 5 = 15"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "fifteen"
