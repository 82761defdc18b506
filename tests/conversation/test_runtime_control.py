"""The runtime control methods of ``ClaudeSDKClient`` over a scripted fake CLI.

Each method is called through the public client; the fake CLI checks the exact
control request it receives, answers as CLI 2.1.330 does, and the test checks the
typed result. Refusals are typed errors.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ControlProtocolError,
    FileContents,
    FileSuggestions,
    HookEventInfo,
    HookListingEntry,
    HooksListing,
    OptionsError,
    PermissionRuleInfo,
    PermissionRules,
    PluginReload,
    RepoRootRegistration,
    SessionUsage,
    SlashCommand,
    TaskOutput,
    UnsupportedFeatureError,
    UsageReport,
    create_sdk_mcp_server,
)
from ccwire.testing import FakeCLI, memory_transport_pair

pytestmark = pytest.mark.anyio

CAPABILITIES = [
    "interrupt_receipt_v1",
    "mcp_read_resource_v1",
    "mcp_call_result_not_for_model_v1",
    "mcp_call_check_permissions_v1",
    "mcp_call_soft_error_result_v1",
    "reload_plugins_refuse_if_busy_v1",
]


@asynccontextmanager
async def connected(
    init: Mapping[str, Any] | None = None, options: ClaudeAgentOptions | None = None
) -> AsyncIterator[tuple[ClaudeSDKClient, FakeCLI]]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    answer = init or {
        "commands": [],
        "capabilities": CAPABILITIES,
        "claude_code_version": "2.1.330",
    }
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, answer)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options or ClaudeAgentOptions(), transport=transport) as c:
                yield c, fake


async def exchange(
    fake: FakeCLI,
    call: Awaitable[Any],
    subtype: str,
    *,
    answer: Mapping[str, Any] | None = None,
    error: str | None = None,
    error_code: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Run ``call`` while the fake CLI answers the one ``subtype`` request it sends.

    Returns the call's result and the request body the CLI received.
    """
    seen: dict[str, Any] = {}

    async def cli() -> None:
        frame = await fake.receive("control_request", subtype)
        seen.update(frame["request"])
        rid = frame["request_id"]
        if error is None:
            await fake.respond(rid, answer)
            return
        response: dict[str, Any] = {"subtype": "error", "request_id": rid, "error": error}
        if error_code is not None:
            response["error_code"] = error_code
        await fake.send({"type": "control_response", "response": response})

    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(cli)
        try:
            result = await call
        except Exception as exc:  # re-raised outside the task group, not as a group
            failure = exc
    if failure is not None:
        raise failure
    return result, seen


Call = Callable[[ClaudeSDKClient], Awaitable[Any]]

USAGE_ANSWER = {
    "session": {
        "total_cost_usd": 0.0006,
        "total_api_duration_ms": 12,
        "total_duration_ms": 267,
        "total_lines_added": 3,
        "total_lines_removed": 1,
        "model_usage": {"claude-sonnet-4-5": {"inputTokens": 100, "outputTokens": 20}},
    },
    "subscription_type": None,
    "rate_limits_available": False,
    "rate_limits": None,
    "behaviors": None,
}

HOOKS_ANSWER = {
    "events": [
        {"name": "PreToolUse", "summary": "Before tool execution", "supportsMatcher": True,
         "hookCount": 1},
    ],
    "hooks": [
        {"event": "PreToolUse", "matcher": "Bash", "source": "flagSettings",
         "sourceLabel": "Startup settings (--settings option)", "type": "command",
         "displayText": "true", "commandText": "true", "contentLabel": "Command"},
    ],
    "eventCatalog": [
        {"name": "PreToolUse", "summary": "Before tool execution", "supportsMatcher": True},
        {"name": "Stop", "summary": "Right before Claude concludes", "supportsMatcher": False},
    ],
    "policy": {"disabledByPolicy": False, "managedOnly": False},
}  # fmt: skip

RULES_ANSWER = {
    "state": {
        "rules": [
            {"behavior": "allow", "source": "cliArg", "rule": "Grep",
             "description": {"prefix": "Any use of the ", "emphasis": "Grep"},
             "editability": "session"},
            {"behavior": "deny", "source": "flagSettings", "rule": "Read(./secret)",
             "editability": "readonly"},
        ],
        "workspaceDirectories": [{"path": "/w/other", "source": "localSettings"}],
        "originalCwd": "/w",
        "managedOnly": False,
    }
}  # fmt: skip

# (id, call, subtype, the exact request the CLI receives, the CLI's answer, the result)
CASES: list[tuple[str, Call, str, dict[str, Any], dict[str, Any] | None, Any]] = [
    (
        "mcp_call",
        lambda c: c.mcp_call(
            "mcp__fs__read",
            {"path": "/a"},
            timeout_ms=500,
            result_not_for_model=True,
            check_permissions=False,
        ),
        "mcp_call",
        {
            "tool": "mcp__fs__read",
            "arguments": {"path": "/a"},
            "timeout_ms": 500,
            "result_not_for_model": True,
            "check_permissions": False,
        },
        {"content": [{"type": "text", "text": "data"}], "isError": False},
        {"content": [{"type": "text", "text": "data"}], "isError": False},
    ),
    (
        "mcp_call_soft_error_result",
        lambda c: c.mcp_call("mcp__fs__read", {"path": "/gone"}, soft_error_result=True),
        "mcp_call",
        {"tool": "mcp__fs__read", "arguments": {"path": "/gone"}, "soft_error_result": True},
        {"content": [{"type": "text", "text": "no such file"}], "isError": True},
        {"content": [{"type": "text", "text": "no such file"}], "isError": True},
    ),
    (
        "mcp_call_minimal",
        lambda c: c.mcp_call("mcp__fs__list"),
        "mcp_call",
        {"tool": "mcp__fs__list"},
        {"content": []},
        {"content": []},
    ),
    (
        "mcp_read_resource",
        lambda c: c.mcp_read_resource("ui", "ui://panel"),
        "mcp_read_resource",
        {"serverName": "ui", "uri": "ui://panel"},
        {"contents": [{"uri": "ui://panel", "mimeType": "text/html", "text": "<p>"}, "junk"]},
        [{"uri": "ui://panel", "mimeType": "text/html", "text": "<p>"}],
    ),
    (
        "background_tasks",
        lambda c: c.background_tasks("toolu_1"),
        "background_tasks",
        {"tool_use_id": "toolu_1"},
        {"backgrounded": True},
        True,
    ),
    (
        "background_tasks_all_none_moved",
        lambda c: c.background_tasks(),
        "background_tasks",
        {},
        None,  # 2.1.330 answers without a payload when nothing was running
        False,
    ),
    (
        "get_task_output",
        lambda c: c.get_task_output("task_9"),
        "get_task_output",
        {"task_id": "task_9"},
        {"output": "line\n", "total_bytes": 900, "truncated": True},
        TaskOutput(output="line\n", total_bytes=900, truncated=True),
    ),
    (
        "cancel_async_message",
        lambda c: c.cancel_async_message("00000000-0000-4000-8000-000000000001"),
        "cancel_async_message",
        {"message_uuid": "00000000-0000-4000-8000-000000000001"},
        {"cancelled": False},
        False,
    ),
    (
        "update_settings",
        lambda c: c.update_settings("localSettings", {"model": "opus"}),
        "update_settings",
        {"source": "localSettings", "settings": {"model": "opus"}},
        None,
        None,
    ),
    (
        "rename_session",
        lambda c: c.rename_session("Refactor parser"),
        "rename_session",
        {"title": "Refactor parser"},
        None,
        None,
    ),
    (
        "reload_plugins",
        lambda c: c.reload_plugins(refuse_if_busy=True),
        "reload_plugins",
        {"refuse_if_busy": True},
        {
            "commands": [{"name": "review", "description": "Review", "argumentHint": "<pr>"}],
            "agents": [{"name": "helper"}],
            "plugins": [{"name": "p", "path": "/p"}],
            "mcpServers": [{"name": "s"}],
            "error_count": 1,
        },
        PluginReload(
            commands=(SlashCommand("review", "Review", "<pr>"),),
            agents=({"name": "helper"},),
            plugins=({"name": "p", "path": "/p"},),
            mcp_servers=({"name": "s"},),
            error_count=1,
        ),
    ),
    (
        "reload_skills",
        lambda c: c.reload_skills(),
        "reload_skills",
        {},
        {"skills": [{"name": "pdf", "description": "PDFs", "argumentHint": ""}]},
        [SlashCommand("pdf", "PDFs")],
    ),
    (
        "get_usage",
        lambda c: c.get_usage(),
        "get_usage",
        {},
        USAGE_ANSWER,
        UsageReport(
            session=SessionUsage(
                total_cost_usd=0.0006,
                total_api_duration_ms=12,
                total_duration_ms=267,
                total_lines_added=3,
                total_lines_removed=1,
                model_usage={"claude-sonnet-4-5": {"inputTokens": 100, "outputTokens": 20}},
            ),
        ),
    ),
    (
        "get_usage_skip_behaviors",
        lambda c: c.get_usage(skip_behaviors=True),
        "get_usage",
        {"skip_behaviors": True},
        {"session": {}, "rate_limits_available": True, "rate_limits": {"five_hour": {}}},
        UsageReport(
            session=SessionUsage(), rate_limits_available=True, rate_limits={"five_hour": {}}
        ),
    ),
    (
        "list_permission_rules",
        lambda c: c.list_permission_rules(),
        "list_permission_rules",
        {},
        RULES_ANSWER,
        PermissionRules(
            rules=(
                PermissionRuleInfo(
                    "Grep",
                    "allow",
                    source="cliArg",
                    editability="session",
                    description={"prefix": "Any use of the ", "emphasis": "Grep"},
                ),
                PermissionRuleInfo(
                    "Read(./secret)", "deny", source="flagSettings", editability="readonly"
                ),
            ),
            workspace_directories=({"path": "/w/other", "source": "localSettings"},),
            original_cwd="/w",
            managed_only=False,
        ),
    ),
    (
        "set_color",
        lambda c: c.set_color("purple"),
        "set_color",
        {"color": "purple"},
        None,
        None,
    ),
    (
        "seed_read_state",
        lambda c: c.seed_read_state(Path("/w/a.py"), 1_700_000_000_123),
        "seed_read_state",
        {"path": str(Path("/w/a.py")), "mtime": 1_700_000_000_123},
        None,
        None,
    ),
    (
        "read_file",
        lambda c: c.read_file("/w/hello.txt"),
        "read_file",
        {"path": "/w/hello.txt"},
        {
            "contents": "hi there\n",
            "absPath": "/w/hello.txt",
            "lossy": False,
            "requested_path": "/w/hello.txt",
        },
        FileContents("hi there\n", abs_path="/w/hello.txt", lossy=False),
    ),
    (
        "read_file_base64_truncated",
        lambda c: c.read_file(Path("/w/hello.txt"), max_bytes=3, encoding="base64"),
        "read_file",
        {"path": str(Path("/w/hello.txt")), "max_bytes": 3, "encoding": "base64"},
        {"contents": "aGkg", "absPath": "/w/hello.txt", "truncated": True, "encoding": "base64"},
        FileContents("aGkg", abs_path="/w/hello.txt", truncated=True, encoding="base64"),
    ),
    (
        "register_repo_root",
        lambda c: c.register_repo_root(
            "/w/sub", reload_claude_md=True, reload_plugins=False, reload_skills=True
        ),
        "register_repo_root",
        {
            "directory": "/w/sub",
            "reload_claude_md": True,
            "reload_plugins": False,
            "reload_skills": True,
        },
        {"directory": "/w/sub"},
        RepoRootRegistration("/w/sub"),
    ),
    (
        "reload_output_styles",
        lambda c: c.reload_output_styles(),
        "reload_output_styles",
        {},
        {"available_output_styles": ["default", "Concise", 7]},
        ["default", "Concise"],
    ),
    (
        "get_hooks_listing",
        lambda c: c.get_hooks_listing(),
        "get_hooks_listing",
        {},
        HOOKS_ANSWER,
        HooksListing(
            events=(HookEventInfo("PreToolUse", "Before tool execution", True, 1),),
            hooks=(
                HookListingEntry(
                    "PreToolUse",
                    matcher="Bash",
                    source="flagSettings",
                    source_label="Startup settings (--settings option)",
                    type="command",
                    display_text="true",
                ),
            ),
            event_catalog=(
                HookEventInfo("PreToolUse", "Before tool execution", True),
                HookEventInfo("Stop", "Right before Claude concludes", False),
            ),
            policy={"disabledByPolicy": False, "managedOnly": False},
        ),
    ),
    (
        "file_suggestions",
        lambda c: c.file_suggestions("hel"),
        "file_suggestions",
        {"query": "hel"},
        {"suggestions": [{"path": "hello.txt"}, {"path": "src/help.py"}], "cwd": "/w"},
        FileSuggestions(paths=("hello.txt", "src/help.py"), cwd="/w"),
    ),
    (
        "set_has_subscribers",
        lambda c: c.set_has_subscribers(True),
        "set_has_subscribers",
        {"has_subscribers": True},
        None,
        None,
    ),
    (
        "set_has_subscribers_unknown",
        lambda c: c.set_has_subscribers(None),
        "set_has_subscribers",
        {"has_subscribers": None},
        None,
        None,
    ),
]


@pytest.mark.parametrize(
    ("call", "subtype", "request_fields", "answer", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
async def test_request_on_the_wire_and_typed_result(
    call: Call,
    subtype: str,
    request_fields: dict[str, Any],
    answer: dict[str, Any] | None,
    expected: Any,
) -> None:
    async with connected() as (client, fake):
        result, request = await exchange(fake, call(client), subtype, answer=answer)
    assert request == {"subtype": subtype, **request_fields}
    assert result == expected
    assert type(result) is type(expected)
    if hasattr(result, "raw"):  # the CLI's whole answer is kept
        assert result.raw == (answer or {})


async def test_typed_results_keep_unmodelled_fields_in_raw() -> None:
    answer = {**USAGE_ANSWER, "future_field": {"x": 1}}
    async with connected() as (client, fake):
        usage, _ = await exchange(fake, client.get_usage(), "get_usage", answer=answer)
        rules, _ = await exchange(
            fake, client.list_permission_rules(), "list_permission_rules", answer=RULES_ANSWER
        )
    assert usage.raw["future_field"] == {"x": 1}
    assert usage.session.model_usage["claude-sonnet-4-5"]["outputTokens"] == 20
    assert rules.rules[0].raw["description"]["emphasis"] == "Grep"
    assert "Read(./secret)" in repr(rules)  # the rules show in the repr, raw does not


async def test_file_contents_as_bytes() -> None:
    text = FileContents("héllo")
    assert text.as_bytes() == "héllo".encode()
    blob = FileContents(base64.b64encode(b"\x00\xff").decode(), encoding="base64")
    assert blob.as_bytes() == b"\x00\xff"


async def test_lenient_decoding_of_odd_answers() -> None:
    async with connected() as (client, fake):
        usage, _ = await exchange(fake, client.get_usage(), "get_usage", answer={"session": 3})
        files, _ = await exchange(
            fake,
            client.file_suggestions("x"),
            "file_suggestions",
            answer={"suggestions": [{"path": 1}, "x", {"path": "ok"}]},
        )
        hooks, _ = await exchange(fake, client.get_hooks_listing(), "get_hooks_listing")
    assert usage == UsageReport(session=SessionUsage())
    assert files == FileSuggestions(paths=("ok",))
    assert hooks == HooksListing()


# ---------------------------------------------------------------------- refusals


async def test_unknown_request_is_unsupported_feature_error() -> None:
    # what CLI 2.1.330 answers to set_color on a stdio connection
    async with connected() as (client, fake):
        with pytest.raises(UnsupportedFeatureError, match="set_color") as info:
            await exchange(
                fake,
                client.set_color("red"),
                "set_color",
                error="Unsupported control request subtype: set_color",
                error_code="unsupported_request",
            )
    assert info.value.subtype == "set_color"
    assert "2.1.330" in str(info.value)


async def test_other_refusals_are_control_protocol_errors() -> None:
    async with connected() as (client, fake):
        with pytest.raises(ControlProtocolError, match="read denied: /etc/shadow") as denied:
            await exchange(
                fake, client.read_file("/etc/shadow"), "read_file", error="read denied: /etc/shadow"
            )
        with pytest.raises(ControlProtocolError, match="not a subdirectory") as outside:
            await exchange(
                fake,
                client.register_repo_root("/elsewhere"),
                "register_repo_root",
                error="register_repo_root: /elsewhere is not a subdirectory of the session's "
                "working directory",
            )
        # the connection stays usable after a refusal
        styles, _ = await exchange(
            fake,
            client.reload_output_styles(),
            "reload_output_styles",
            answer={"available_output_styles": ["default"]},
        )
    assert not isinstance(denied.value, UnsupportedFeatureError)
    assert denied.value.subtype == "read_file"
    assert not isinstance(outside.value, UnsupportedFeatureError)
    assert styles == ["default"]


async def test_capability_gated_requests_are_refused_before_sending() -> None:
    # A CLI whose initialize answer has no capabilities predates them (< 2.1.205).
    legacy = {"commands": [], "claude_code_version": "2.1.197"}
    async with connected(init=legacy) as (client, fake):
        with pytest.raises(UnsupportedFeatureError, match="mcp_read_resource_v1"):
            await client.mcp_read_resource("ui", "ui://x")
        with pytest.raises(UnsupportedFeatureError, match="mcp_call_result_not_for_model_v1"):
            await client.mcp_call("mcp__a__b", result_not_for_model=True)
        with pytest.raises(UnsupportedFeatureError, match="mcp_call_check_permissions_v1"):
            await client.mcp_call("mcp__a__b", check_permissions=True)
        with pytest.raises(UnsupportedFeatureError, match="mcp_call_soft_error_result_v1"):
            await client.mcp_call("mcp__a__b", soft_error_result=True)
        with pytest.raises(UnsupportedFeatureError, match="reload_plugins_refuse_if_busy_v1"):
            await client.reload_plugins(refuse_if_busy=True)
        # without the gated field the request goes out
        answer, request = await exchange(
            fake, client.mcp_call("mcp__a__b"), "mcp_call", answer={"content": []}
        )
    assert request == {"subtype": "mcp_call", "tool": "mcp__a__b"}
    assert answer == {"content": []}
    sent = [f["request"]["subtype"] for f in fake.received if f.get("type") == "control_request"]
    assert sent == ["initialize", "mcp_call"]


LEGACY_INIT = {"commands": [], "account": {}, "pid": 4242}
"""CLI 2.1.197's initialize answer: no capabilities, no version."""


def sent_subtypes(fake: FakeCLI) -> list[str]:
    return [f["request"]["subtype"] for f in fake.received if f.get("type") == "control_request"]


@pytest.mark.parametrize("init", [None, LEGACY_INIT])
async def test_an_unknown_permission_mode_is_refused_before_sending(
    init: dict[str, Any] | None,
) -> None:
    # CLI 2.1.197 accepts and echoes any string; 2.1.330 answers invalid_mode
    async with connected(init=init) as (client, fake):
        with pytest.raises(ControlProtocolError) as refused:
            await client.set_permission_mode("bogus")  # type: ignore[arg-type]
        changed, request = await exchange(
            fake, client.set_permission_mode("plan"), "set_permission_mode", answer={"mode": "plan"}
        )
    assert not isinstance(refused.value, UnsupportedFeatureError)
    assert refused.value.error_code == "invalid_mode"
    assert refused.value.subtype == "set_permission_mode"
    assert str(refused.value) == (
        "unknown permission mode 'bogus'; expected one of default, acceptEdits, plan, "
        "bypassPermissions, dontAsk, auto"
    )
    assert request == {"subtype": "set_permission_mode", "mode": "plan"}
    assert changed.mode == "plan"
    assert sent_subtypes(fake) == ["initialize", "set_permission_mode"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        # a bare TypeError ("'int' object is not iterable", "... is not a mapping")
        (lambda c: c.mcp_set_servers(5), "MCP servers must be given as a dict"),
        (lambda c: c.add_mcp_servers([]), "MCP servers must be given as a dict"),
        # sent, and failed in the CLI ("Spread syntax requires ...iterable")
        (lambda c: c.mcp_set_servers({"a": {"type": "stdio"}}), r"\['a'\] needs a 'command'"),
        (lambda c: c.apply_flag_settings(5), "settings must be a dict, not int"),
        (lambda c: c.update_settings("userSettings", [("a", 1)]), "settings must be a dict"),
        (lambda c: c.read_file(5), "path must be a str or a Path, not int"),
        (lambda c: c.register_repo_root(None), "directory must be a str or a Path"),
        # sent, and taken by the CLI
        (lambda c: c.set_max_thinking_tokens(-5), "max_thinking_tokens cannot be negative"),
        (lambda c: c.set_max_thinking_tokens("5"), "max_thinking_tokens must be an int"),
        (lambda c: c.set_max_thinking_tokens(5, display="full"), "display must be one of"),
        (lambda c: c.remove_mcp_servers(5), "MCP server names are str, not int"),  # ignored
    ],
)
async def test_arguments_of_the_wrong_shape_are_refused_before_sending(
    call: Callable[[ClaudeSDKClient], Awaitable[object]], match: str
) -> None:
    async with connected() as (client, fake):
        with pytest.raises(OptionsError, match=match):
            await call(client)
    assert sent_subtypes(fake) == ["initialize"]


def with_servers() -> ClaudeAgentOptions:
    demo = create_sdk_mcp_server("demo")
    return ClaudeAgentOptions(
        mcp_servers={"demo": demo, "ext": {"type": "stdio", "command": "ext-server"}}
    )


async def test_toggling_an_in_process_server_needs_a_cli_with_capabilities() -> None:
    async with connected(init=LEGACY_INIT, options=with_servers()) as (client, fake):
        for enabled in (False, True):
            with pytest.raises(UnsupportedFeatureError, match="mcp_toggle") as refused:
                await client.mcp_toggle("demo", enabled)
        # a server the CLI dials itself toggles on any CLI
        _, request = await exchange(fake, client.mcp_toggle("ext", False), "mcp_toggle")
        await fake.send(
            {
                "type": "system",
                "subtype": "init",
                "session_id": "s",
                "claude_code_version": "2.1.197",
            }
        )
        await fake.request("no_such_subtype")  # a round trip: the init has been read
        with pytest.raises(UnsupportedFeatureError, match=r"CLI \(2\.1\.197\)"):
            await client.mcp_toggle("demo", False)
    assert refused.value.subtype == "mcp_toggle"
    assert str(refused.value) == (
        "mcp_toggle of the in-process MCP server 'demo' is not supported by the connected "
        "Claude Code CLI (a version before 2.1.205: it reports no capabilities): it "
        "acknowledges disabling an in-process server but keeps using it, and fails to "
        "re-enable one; upgrade the CLI"
    )
    assert request == {"subtype": "mcp_toggle", "serverName": "ext", "enabled": False}
    assert sent_subtypes(fake) == ["initialize", "mcp_toggle"]


async def test_toggling_an_in_process_server_on_a_cli_with_capabilities() -> None:
    async with connected(options=with_servers()) as (client, fake):
        result, request = await exchange(fake, client.mcp_toggle("demo", False), "mcp_toggle")
    assert result is None
    assert request == {"subtype": "mcp_toggle", "serverName": "demo", "enabled": False}
