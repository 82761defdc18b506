"""What a tool call answers, whether its handler awaits or not: one path for both."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ccwire import (
    AuditLog,
    ClaudeAgentOptions,
    ToolContext,
    ToolError,
    create_sdk_mcp_server,
    prompt,
    resource,
    tool,
)
from ccwire.testing import FakeCLI
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


def twins(body: Callable[[dict[str, Any]], Any]) -> tuple[Any, Any]:
    """The same tool twice: ``now`` never awaits, ``later`` awaits a checkpoint first."""

    @tool("now", "d", {"n": int})
    async def now(args: dict[str, Any]) -> Any:
        return body(args)

    @tool("later", "d", {"n": int})
    async def later(args: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        return body(args)

    return now, later


async def call(fake: FakeCLI, name: str, arguments: Any, mid: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}
    response = await fake.request("mcp_message", server_name="s", message=message)
    assert response["subtype"] == "success", response
    return dict(response["response"]["mcp_response"])


def plain(args: dict[str, Any]) -> Any:
    return f"n={args['n']}"


def tool_error(args: dict[str, Any]) -> Any:
    raise ToolError(f"no {args['n']}")


def crash(args: dict[str, Any]) -> Any:
    raise KeyError("sk-ant-api03-" + "x" * 40)  # the text reaches the model: masked


def cancels_itself(args: dict[str, Any]) -> Any:
    raise anyio.get_cancelled_exc_class()


def structured(args: dict[str, Any]) -> Any:
    return {"content": [{"type": "text", "text": "t"}], "structuredContent": {"n": args["n"]}}


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        (plain, {"n": 1}),
        (plain, {"n": "not a number"}),  # refused by the schema
        (plain, None),
        (tool_error, {"n": 2}),
        (crash, {"n": 3}),
        (cancels_itself, {"n": 4}),
        (structured, {"n": 5}),
    ],
)
async def test_the_same_answer_whether_the_handler_awaits_or_not(
    body: Callable[[dict[str, Any]], Any], arguments: Any
) -> None:
    now, later = twins(body)
    server = create_sdk_mcp_server("s", tools=[now, later])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        first = await call(fake, "now", arguments)
        second = await call(fake, "later", arguments)
        after = await call(fake, "now", {"n": 9}, mid=2)  # the session goes on
    assert json.dumps(first).replace("'now'", "'later'") == json.dumps(second)
    assert after["id"] == 2 and "result" in after
    if body is crash:
        assert "sk-ant-api03" not in json.dumps(first)


@resource("config://app")
def app_config() -> str:
    return "debug=0"


@prompt("review", "Review some code")
def review(code: str) -> str:
    return f"Review {code}"


async def test_a_call_cancelled_before_it_ran_is_not_run_but_answered_either_way() -> None:
    # not run; answered with an error saying why (a client that cancelled the call
    # ignores it; one that reused the id of a request it cancelled is not left waiting,
    # nor is the control request that carried it): a tool call with an error result, a
    # resource read or a prompt with a JSON-RPC error
    now, later = twins(plain)
    server = create_sdk_mcp_server(
        "s", tools=[now, later], resources=[app_config], prompts=[review]
    )
    requests = [
        ("tools/call", {"name": "now", "arguments": {"n": 1}}),
        ("tools/call", {"name": "later", "arguments": {"n": 2}}),
        ("resources/read", {"uri": "config://app"}),
        ("prompts/get", {"name": "review", "arguments": {"code": "x"}}),
    ]
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        for mid, (method, params) in enumerate(requests, 1):
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
            cancel["params"] = {"requestId": mid}  # type: ignore[assignment]
            await fake.request("mcp_message", server_name="s", message=cancel)
            message = {"jsonrpc": "2.0", "id": mid, "method": method, "params": params}
            with anyio.fail_after(5):  # (the CLI would wait for ever)
                response = await fake.request("mcp_message", server_name="s", message=message)
            assert response["subtype"] == "success", response
            answer = response["response"]["mcp_response"]
            assert answer["id"] == mid
            if method == "tools/call":
                assert answer["result"]["isError"] is True, params
                text = answer["result"]["content"][0]["text"]
            else:
                assert "result" not in answer and answer["error"]["code"] == -32600, method
                text = answer["error"]["message"]
            assert "notifications/cancelled" in text and method.split("/")[0][:-1] in text.lower()
        # the cancellations were used up: the same ids are served again
        for mid, (method, params) in enumerate(requests, 1):
            message = {"jsonrpc": "2.0", "id": mid, "method": method, "params": params}
            response = await fake.request("mcp_message", server_name="s", message=message)
            answer = response["response"]["mcp_response"]
            assert "error" not in answer and not answer["result"].get("isError"), answer


async def test_a_withdrawal_cancels_the_call_it_names_and_no_other() -> None:
    # the tasks serving requests are reused and share one cancel scope per task: a call
    # withdrawn while it runs is cancelled; withdrawing or cancelling (by MCP id) a call
    # already answered cancels nothing, not the call the same task serves next
    gates = {n: anyio.Event() for n in (1, 3)}
    cancelled: list[int] = []

    @tool("wait", "d", {"n": int})
    async def wait(args: dict[str, Any]) -> str:
        try:
            await gates[args["n"]].wait()
        except anyio.get_cancelled_exc_class():
            cancelled.append(args["n"])
            raise
        return f"done {args['n']}"

    async def start(fake: FakeCLI, name: str, mid: int) -> str:
        params = {"name": name, "arguments": {"n": mid}}
        message = {"jsonrpc": "2.0", "id": mid, "method": "tools/call", "params": params}
        return await fake.start_request("mcp_message", server_name="s", message=message)

    now, _ = twins(plain)
    server = create_sdk_mcp_server("s", tools=[wait, now])
    async with connected(ClaudeAgentOptions(mcp_servers={"s": server})) as (_, fake):
        first = await start(fake, "wait", 1)
        await fake.request("no_such_subtype")  # a round trip: the call runs
        await fake.cancel(first)
        quick = await start(fake, "now", 2)
        assert (await fake.response_to(quick))["subtype"] == "success"
        third = await start(fake, "wait", 3)  # on the task that answered the quick one
        await fake.request("no_such_subtype")
        await fake.cancel(quick)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled"}
        cancel["params"] = {"requestId": 2}  # type: ignore[assignment]
        await fake.request("mcp_message", server_name="s", message=cancel)
        gates[3].set()
        answer = await fake.response_to(third)
    assert answer["response"]["mcp_response"]["result"]["content"][0]["text"] == "done 3"
    assert cancelled == [1]
    assert not any(
        f.get("type") == "control_response" and f["response"]["request_id"] == first
        for f in fake.received
    )


async def test_a_tool_with_a_context_and_the_audit_log() -> None:
    @tool("where", "d", {})
    async def where(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"{ctx.tool_name} {ctx.tool_use_id}"

    buf = io.StringIO()
    server = create_sdk_mcp_server("s", tools=[where])
    opts = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=AuditLog(buf))
    async with connected(opts) as (_, fake):
        params = {"name": "where", "arguments": {}, "_meta": {"claudecode/toolUseId": "tu_1"}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        response = await fake.request("mcp_message", server_name="s", message=message)
    result = response["response"]["mcp_response"]["result"]
    assert result == {"content": [{"type": "text", "text": "where tu_1"}]}
    (record,) = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert record["what"] == "where" and record["outcome"] == "ok"
