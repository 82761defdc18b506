"""What the TypeScript SDK's ``tool()`` and ``createSdkMcpServer()`` also take: a search
hint, always-loaded tools, a CLI-side call timeout and per-tool permission policies (as
it sends them: ``_meta`` keys, and ``sdkMcpServerConfigs`` in ``initialize``), and
end-turn tools (the ``claude/endTurn`` result ``_meta`` the CLI reads)."""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import ClaudeAgentOptions, ToolDefinitionError, create_sdk_mcp_server, tool
from ccwire._conversation.argv import build_initialize_fields, build_mcp_config

pytestmark = pytest.mark.anyio


@tool("find", "Find things", {}, search_hint="lookup search", always_load=True)
async def find(args: dict[str, Any]) -> str:
    return "found"


@tool("finish", "Finish the task", {"ok": bool}, end_turn=True)
async def finish(args: dict[str, Any]) -> str:
    if not args["ok"]:
        raise ValueError("not done")
    return "finished"


@tool("plain", "Plain", {}, meta={"anthropic/alwaysLoad": False})
async def plain(args: dict[str, Any]) -> str:
    return "plain"


async def _call(server: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}}  # fmt: skip
    response = await server.handle(message)
    assert response is not None
    result: dict[str, Any] = response["result"]
    return result


async def _list(server: Any) -> dict[str, Any]:
    response = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response is not None
    return {t["name"]: t.get("_meta") for t in response["result"]["tools"]}


async def test_search_hint_and_always_load_are_the_typescript_meta_keys() -> None:
    server = create_sdk_mcp_server("s", tools=[find, plain])["instance"]
    listed = await _list(server)
    assert listed["find"] == {"anthropic/searchHint": "lookup search", "anthropic/alwaysLoad": True}
    assert listed["plain"] == {"anthropic/alwaysLoad": False}


async def test_a_server_that_always_loads_marks_every_tool_and_a_tool_may_opt_out() -> None:
    server = create_sdk_mcp_server("s", tools=[find, plain], always_load=True)["instance"]
    listed = await _list(server)
    assert listed["find"]["anthropic/alwaysLoad"] is True
    assert listed["plain"] == {"anthropic/alwaysLoad": False}  # its own value wins


async def test_an_end_turn_tools_successful_result_ends_the_turn() -> None:
    server = create_sdk_mcp_server("s", tools=[finish, find])["instance"]
    done = await _call(server, "finish", {"ok": True})
    assert done["_meta"] == {"claude/endTurn": True} and not done.get("isError")
    failed = await _call(server, "finish", {"ok": False})
    assert failed["isError"] is True and "claude/endTurn" not in failed.get("_meta", {})
    assert "_meta" not in await _call(server, "find", {})

    @tool("wait", "Wait", {}, end_turn=True, end_turn_honors_stop_hooks=True)
    async def wait(args: dict[str, Any]) -> Any:
        return {"content": [{"type": "text", "text": "ok"}], "_meta": {"mine": 1}}

    server = create_sdk_mcp_server("t", tools=[wait])["instance"]
    assert (await _call(server, "wait", {}))["_meta"] == {
        "claude/endTurn": True,
        "claude/endTurnHonorsStopHooks": True,
        "mine": 1,
    }


def test_timeout_and_tool_policies_travel_in_initialize_and_mcp_config() -> None:
    ops = create_sdk_mcp_server(
        "ops", tools=[find, plain], timeout_ms=30_000, tool_policies={"find": "always_ask"}
    )
    assert ops["timeout"] == 30_000
    assert ops["tools"] == [{"name": "find", "permission_policy": "always_ask"}]
    quiet = create_sdk_mcp_server("quiet", tools=[plain])
    options = ClaudeAgentOptions(mcp_servers={"ops": ops, "quiet": quiet})
    fields = build_initialize_fields(options, None)
    assert fields["sdkMcpServers"] == ["ops"]
    assert fields["sdkMcpServerConfigs"] == {
        "ops": {"timeout": 30_000, "tools": [{"name": "find", "permission_policy": "always_ask"}]}
    }
    config = build_mcp_config(options.mcp_servers)
    assert isinstance(config, dict)
    assert config["mcpServers"]["ops"] == {
        "type": "sdk",
        "name": "ops",
        "timeout": 30_000,
        "tools": [{"name": "find", "permission_policy": "always_ask"}],
    }
    assert "sdkMcpServers" not in build_initialize_fields(
        ClaudeAgentOptions(mcp_servers={"quiet": quiet}), None
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"timeout_ms": 0}, "timeout_ms must be a positive integer"),
        ({"timeout_ms": 1.5}, "timeout_ms must be a positive integer"),
        ({"tool_policies": {"nope": "always_deny"}}, "lacks"),
    ],
)
def test_bad_server_settings(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ToolDefinitionError, match=match):
        create_sdk_mcp_server("s", tools=[find], **kwargs)
