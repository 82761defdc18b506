"""Security defaults against the real CLI: nothing in ccwire approves a tool on its own."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import ResultMessage, ToolResultBlock, UserMessage, create_sdk_mcp_server, query, tool
from ccwire._conversation.argv import build_argv
from ccwire.testing import ScriptedModel, text, tool_use

pytestmark = pytest.mark.anyio
TIMEOUT = 60


async def test_without_a_callback_or_allow_rule_no_tool_is_approved(
    model: ScriptedModel, make_options: Any
) -> None:
    ran: list[dict[str, Any]] = []

    @tool("wipe", "Wipe the disk", {"path": str})
    async def wipe(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args)
        return {"content": [{"type": "text", "text": "wiped"}]}

    model.add(tool_use("mcp__ops__wipe", {"path": "/"}), text("I could not wipe it."))
    options = make_options(mcp_servers={"ops": create_sdk_mcp_server("ops", tools=[wipe])})
    argv = build_argv(options, cli_path="claude")
    # ccwire adds no permission mode, no allow rule and no approver of its own
    assert "--permission-mode" not in argv and "--allowedTools" not in argv
    assert "--permission-prompt-tool" not in argv
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="wipe it", options=options)]
    assert ran == []  # the CLI's default mode refused it; nobody said yes
    results = [
        b
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert results and all(r.is_error for r in results)
    final = messages[-1]
    assert isinstance(final, ResultMessage)
    assert [d["tool_name"] for d in final.raw.get("permission_denials", [])] == ["mcp__ops__wipe"]
