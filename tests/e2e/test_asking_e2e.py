"""A tool asking its client, in-process under the real Claude Code CLI.

What CLI 2.1.330 does with a server's requests sent in ``mcp_message`` control
requests: it answers ``ping``, and refuses ``elicitation/create``,
``sampling/createMessage`` and ``roots/list`` with -32601 (it declares no client
capabilities to SDK servers).  ``ctx.elicit()`` and ``ctx.sample()`` therefore raise
`UnsupportedFeatureError` at once, and the model reads why.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import McpError, ToolContext, create_sdk_mcp_server, query, tool
from ccwire.testing import ScriptedModel, text, tool_use
from tests.e2e.conftest import old_cli

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(old_cli(), reason="server requests travel from CLI 2.1.205 on"),
]

ELICIT: dict[str, Any] = {
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {}},
}
SAMPLE: dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
          "maxTokens": 5}  # fmt: skip


async def test_the_cli_answers_ping_and_refuses_elicitation_and_sampling(
    model: ScriptedModel, make_options: Any
) -> None:
    seen: dict[str, Any] = {}

    @tool("ask", "Ask the client", {})
    async def ask(args: dict[str, Any], ctx: ToolContext) -> str:
        assert ctx.request is not None
        seen["capabilities"] = ctx.client_capabilities
        seen["ping"] = dict(await ctx.request("ping", {}, 30))
        asks: list[tuple[str, dict[str, Any]]] = [
            ("elicitation/create", ELICIT), ("sampling/createMessage", SAMPLE), ("roots/list", {}),
        ]  # fmt: skip
        for method, params in asks:
            with pytest.raises(McpError) as refused:
                await ctx.request(method, params, 30)
            seen[method] = refused.value.code
        await ctx.elicit("Your name?", {"name": str})
        return "unreachable"

    server = create_sdk_mcp_server("asker", tools=[ask])
    model.add(tool_use("mcp__asker__ask", {}), text("done"))
    options = make_options(mcp_servers={"asker": server}, allowed_tools=["mcp__asker__ask"])
    with anyio.fail_after(120):
        _ = [m async for m in query(prompt="go", options=options)]
    assert seen == {
        "capabilities": {},
        "ping": {},
        "elicitation/create": -32601,
        "sampling/createMessage": -32601,
        "roots/list": -32601,
    }
    (outcome,) = model.turn_requests[1].tool_results()
    assert outcome.is_error
    assert outcome.content.startswith("elicitation/create: the client")
