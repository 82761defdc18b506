"""The runtime methods the TypeScript SDK's ``Query`` has, over the fake CLI: each sends
the request it sends (read from ``@anthropic-ai/claude-agent-sdk`` 0.3.330) or reads the
``initialize`` answer as it does."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    AccountInfo,
    AgentInfo,
    ClaudeAgentOptions,
    HookMatcher,
    PermissionResultAllow,
    SlashCommand,
    ToolPermissionContext,
)
from tests.conversation.test_runtime_control import connected, exchange

pytestmark = pytest.mark.anyio

INIT = {
    "commands": [
        {"name": "usage", "description": "Show usage", "argumentHint": "", "aliases": ["cost"],
         "builtin": True},
    ],
    "agents": [
        {"name": "Explore", "description": "Explores code", "model": "haiku"},
        {"name": "reviewer", "description": "Reviews"},
    ],
    "models": [
        {"value": "sonnet", "displayName": "Sonnet", "description": "Fast",
         "resolvedModel": "claude-sonnet-5", "supportsEffort": True,
         "supportedEffortLevels": ["low", "high"], "supportsAdaptiveThinking": True,
         "supportsFastMode": False, "supportsAutoMode": True},
    ],
    "account": {"email": "a@b.c", "organization": "Org", "subscriptionType": "max",
                "tokenSource": "claude.ai", "apiKeySource": "none", "apiProvider": "firstParty"},
    "capabilities": ["reload_plugins_refuse_if_busy_v1"],
    "claude_code_version": "2.1.330",
}  # fmt: skip


async def test_what_initialize_reported_typed() -> None:
    async with connected(INIT) as (client, _):
        commands = await client.supported_commands()
        agents = await client.supported_agents()
        models = await client.supported_models()
        account = await client.account_info()
        result = await client.initialization_result()
    assert commands == [SlashCommand("usage", "Show usage", "", aliases=("cost",), builtin=True)]
    assert agents == [
        AgentInfo("Explore", "Explores code", "haiku"),
        AgentInfo("reviewer", "Reviews"),
    ]
    (model,) = models
    assert (model.value, model.resolved_model, model.supported_effort_levels) == (
        "sonnet",
        "claude-sonnet-5",
        ("low", "high"),
    )
    assert (model.supports_effort, model.supports_fast_mode, model.supports_auto_mode) == (
        True,
        False,
        True,
    )
    assert account == AccountInfo(
        email="a@b.c",
        organization="Org",
        subscription_type="max",
        token_source="claude.ai",
        api_key_source="none",
        api_provider="firstParty",
    )
    assert result["claude_code_version"] == "2.1.330"


async def test_supported_commands_follow_commands_changed() -> None:
    async with connected(INIT) as (client, fake):
        await fake.send(
            {
                "type": "system",
                "subtype": "commands_changed",
                "commands": [{"name": "deploy", "description": "Ship it", "argumentHint": "<env>"}],
                "uuid": "u1",
                "session_id": fake.session_id,
            }
        )
        await fake.result()
        [m async for m in client.receive_response()]
        commands = await client.supported_commands()
    assert commands == [SlashCommand("deploy", "Ship it", "<env>")]


async def test_set_mcp_permission_mode_override() -> None:
    async with connected(INIT) as (client, fake):
        warning, sent = await exchange(
            fake,
            client.set_mcp_permission_mode_override("githb", "default"),
            "set_mcp_permission_mode_override",
            answer={"warning": "no MCP server named githb"},
        )
        cleared, sent_clear = await exchange(
            fake,
            client.set_mcp_permission_mode_override("github", None),
            "set_mcp_permission_mode_override",
        )
    assert sent == {
        "subtype": "set_mcp_permission_mode_override",
        "serverName": "githb",
        "mode": "default",
    }
    assert warning == "no MCP server named githb"
    assert sent_clear["mode"] is None and cleared is None


async def test_reload_plugins_adds_plugins_and_holds_on_cache_impact() -> None:
    impact = {"mcp_servers_added": ["plugin:notes:db"], "mcp_servers_removed": [],
              "lsp_tool_change": None}  # fmt: skip
    async with connected(INIT) as (client, fake):
        reload, sent = await exchange(
            fake,
            client.reload_plugins(
                add_plugins=[{"type": "local", "path": "/p/notes", "skip_mcp_discovery": True}],
                hold_on_cache_impact=True,
            ),
            "reload_plugins",
            answer={"commands": [], "agents": [], "plugins": [], "mcpServers": [],
                    "error_count": 0, "held": True, "cache_impact": impact},
        )  # fmt: skip
        _, plain = await exchange(
            fake,
            client.reload_plugins(add_plugins=[], hold_on_cache_impact=False),
            "reload_plugins",
            answer={
                "commands": [],
                "agents": [],
                "plugins": [],
                "mcpServers": [],
                "error_count": 0,
            },
        )
    assert sent == {
        "subtype": "reload_plugins",
        "hold_on_cache_impact": True,
        "add_plugins": [{"type": "local", "path": "/p/notes", "skipMcpDiscovery": True}],
    }
    assert reload.held is True and reload.cache_impact == impact
    assert plain == {"subtype": "reload_plugins"}  # false and empty are not sent


async def _reinitialize_listing(client: Any, fake: Any, pending: list[Any]) -> Any:
    """Run ``client.reinitialize()`` while the fake CLI answers it listing ``pending``."""
    first_init = next(f for f in fake.received if f.get("type") == "control_request")

    async def cli() -> None:
        frame = await fake.receive("control_request", "initialize")
        assert frame["request"] == first_init["request"]  # the same fields again
        await fake.send(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": frame["request_id"],
                    "response": {**INIT, "hooks_applied": True},
                    "pending_permission_requests": pending,
                    "pending_user_dialog_requests": [],
                },
            }
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(cli)
        return await client.reinitialize()


def _permission_request(rid: str) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": rid,
        "request": {"subtype": "can_use_tool", "tool_name": "Read", "input": {"f": 1}},
    }


async def test_reinitialize_sends_the_same_initialize_and_serves_pending_requests_again() -> None:
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(ctx.request_id)
        return PermissionResultAllow()

    async def hook(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        return {}

    options = ClaudeAgentOptions(
        can_use_tool=can_use_tool, hooks={"Stop": [HookMatcher(hooks=[hook])]}, title="T"
    )
    async with connected(INIT, options) as (client, fake):
        info = await _reinitialize_listing(client, fake, [_permission_request("lost")])
        answer = await fake.response_to("lost")  # its first answer was lost: served again
        assert info["hooks_applied"] is True
        assert (await client.initialization_result())["hooks_applied"] is True
    assert answer["subtype"] == "success" and asked == ["lost"]


async def test_a_pending_request_being_answered_is_not_served_twice() -> None:
    asked: list[str] = []
    release = anyio.Event()

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(ctx.request_id)
        await release.wait()
        return PermissionResultAllow()

    async with connected(INIT, ClaudeAgentOptions(can_use_tool=can_use_tool)) as (client, fake):
        await fake.send(_permission_request("busy"))
        await _reinitialize_listing(client, fake, [_permission_request("busy")])
        release.set()
        answer = await fake.response_to("busy")
        # the later request is answered after anything the redelivery could have written
        assert (await fake.request("no_such_subtype"))["subtype"] == "error"
    assert answer["subtype"] == "success" and asked == ["busy"]
    answers = [f for f in fake.received if f.get("response", {}).get("request_id") == "busy"]
    assert len(answers) == 1  # one answer: the redelivery did not serve it again
