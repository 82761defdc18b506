"""completion/complete, resource subscriptions and logging/setLevel on SDK servers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ccwire import ToolContext, ToolDefinitionError, create_sdk_mcp_server, prompt, resource, tool
from ccwire._mcp.server import SdkMcpServer

pytestmark = pytest.mark.anyio

LANGUAGES = ["python", "pascal", "go", "Perl"]


async def users(value: str, context: Mapping[str, str]) -> list[str]:
    org = context.get("org", "all")
    return [f"{org}-{i}" for i in range(150) if str(i).startswith(value)]


@prompt("review", "Review code", complete={"language": LANGUAGES})
def review(code: str, language: str = "python") -> str:
    return f"Review this {language}: {code}"


@resource("orgs://{org}/users/{user_id}", complete={"user_id": users, "org": lambda v, c: ["acme"]})
def user(org: str, user_id: str) -> str:
    return f"{org}/{user_id}"


@resource("memo://today")
def memo() -> str:
    return "today"


@tool("chatty", "Logs at every level", {})
async def chatty(args: dict[str, Any], ctx: ToolContext) -> str:
    sent = [await ctx.log(level, level) for level in ("debug", "info", "warning", "error")]
    return str(sum(sent))


def make() -> SdkMcpServer:
    return create_sdk_mcp_server(
        "features", tools=[chatty], resources=[user, memo], prompts=[review]
    )["instance"]


async def call(server: SdkMcpServer, method: str, params: Any = None, **kw: Any) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = await server.handle(message, **kw)
    assert reply is not None
    return reply


async def test_capabilities_advertise_completions_and_subscriptions() -> None:
    init = {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    caps = (await call(make(), "initialize", init))["result"]["capabilities"]
    assert caps["completions"] == {}
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    bare = create_sdk_mcp_server("bare", tools=[chatty])["instance"]
    assert "completions" not in (await call(bare, "initialize", init))["result"]["capabilities"]


async def test_prompt_arguments_complete_from_a_list_by_prefix() -> None:
    server = make()
    params = {"ref": {"type": "ref/prompt", "name": "review"},
              "argument": {"name": "language", "value": "p"}}  # fmt: skip
    got = (await call(server, "completion/complete", params))["result"]["completion"]
    assert got == {"values": ["python", "pascal", "Perl"], "total": 3, "hasMore": False}
    params["argument"] = {"name": "code", "value": "x"}  # no completer: nothing offered
    got = (await call(server, "completion/complete", params))["result"]["completion"]
    assert got["values"] == []


async def test_template_variables_complete_with_context_and_at_most_100() -> None:
    server = make()
    params = {"ref": {"type": "ref/resource", "uri": "orgs://{org}/users/{user_id}"},
              "argument": {"name": "user_id", "value": ""},
              "context": {"arguments": {"org": "acme"}}}  # fmt: skip
    got = (await call(server, "completion/complete", params))["result"]["completion"]
    assert len(got["values"]) == 100 and got["total"] == 150 and got["hasMore"] is True
    assert got["values"][0] == "acme-0"
    params["argument"] = {"name": "org", "value": "a"}
    got = (await call(server, "completion/complete", params))["result"]["completion"]
    assert got["values"] == ["acme"]


@pytest.mark.parametrize(
    "params",
    [
        {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"value": ""}},
        {"ref": {"type": "ref/resource", "uri": "x://"}, "argument": {"name": "a", "value": ""}},
    ],
)
async def test_bad_completion_requests_get_invalid_params(params: dict[str, Any]) -> None:
    assert (await call(make(), "completion/complete", params))["error"]["code"] == -32602


def test_completers_are_checked_at_definition() -> None:
    with pytest.raises(ToolDefinitionError, match="unknown argument"):
        prompt("p", complete={"nope": ["x"]})(lambda code: code)
    with pytest.raises(ToolDefinitionError, match="must be strings"):
        resource("a://{x}", complete={"x": [1, 2]})(lambda x: x)  # type: ignore[list-item]


async def test_subscribed_sessions_are_told_of_updates_until_they_unsubscribe() -> None:
    server = make()
    seen: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}

    async def sink_a(message: dict[str, Any]) -> None:
        seen["a"].append(message)

    async def sink_b(message: dict[str, Any]) -> None:
        seen["b"].append(message)

    assert "result" in await call(server, "resources/subscribe", {"uri": "memo://today"},
                                  send=sink_a)  # fmt: skip
    assert "result" in await call(server, "resources/subscribe", {"uri": "memo://today"},
                                  send=sink_b)  # fmt: skip
    assert await server.notify_resource_updated("memo://today") == 2
    assert await server.notify_resource_updated("orgs://acme/users/1") == 0
    await call(server, "resources/unsubscribe", {"uri": "memo://today"}, send=sink_a)
    assert await server.notify_resource_updated("memo://today", title="Today") == 1
    update = {"jsonrpc": "2.0", "method": "notifications/resources/updated"}
    assert seen["a"] == [{**update, "params": {"uri": "memo://today"}}]
    assert seen["b"][-1] == {**update, "params": {"uri": "memo://today", "title": "Today"}}
    assert (await call(server, "resources/subscribe", {}, send=sink_a))["error"]["code"] == -32602


async def test_set_level_filters_the_log_messages_of_tool_calls() -> None:
    server = make()
    logs: list[str] = []

    async def sink(message: dict[str, Any]) -> None:
        logs.append(message["params"]["level"])

    await call(server, "logging/setLevel", {"level": "warning"}, send=sink)
    done = await call(server, "tools/call", {"name": "chatty", "arguments": {}}, send=sink)
    assert done["result"]["content"][0]["text"] == "2"
    assert logs == ["warning", "error"]
