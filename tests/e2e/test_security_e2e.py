"""Security defaults against the real CLI: nothing in ccwire approves a tool on its own."""

from __future__ import annotations

import hashlib
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ccwire import (
    ClaudeSDKClient,
    ResultMessage,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire._conversation.argv import build_argv
from ccwire.testing import ScriptedModel, text, tool_use

from .helpers import EXT_SERVER

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
    flags = {arg.split("=", 1)[0] for arg in argv}
    assert "--permission-mode" not in flags and "--allowedTools" not in flags
    assert "--permission-prompt-tool" not in flags
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


SECRET = "sk-ant-api03-e2eSecretValue_0123456789abcdef"
# the server checks that the secret reached it (by digest: the secret itself stays off
# every command line), then runs the fixture server
CHECK = (
    "import hashlib, os, runpy, sys; "
    "assert hashlib.sha256(os.environ['EXT_SECRET'].encode()).hexdigest() == sys.argv[1]; "
    "sys.argv = [sys.argv[2]]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _cli_command_lines() -> list[list[str]]:
    found = []
    for child in psutil.Process().children(recursive=True):
        with suppress(psutil.Error):
            cmdline = child.cmdline()
            if "stream-json" in cmdline:
                found.append(cmdline)
    return found


async def test_mcp_server_secrets_never_reach_the_cli_command_line(
    model: ScriptedModel, make_options: Any
) -> None:
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    options = make_options(
        mcp_servers={
            "ext": {
                "type": "stdio",
                "command": sys.executable,
                "args": ["-c", CHECK, digest, str(EXT_SERVER)],
                "env": {"EXT_SECRET": SECRET},
            },
            "remote": {
                "type": "http",
                "url": "http://user:urlpassword@127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer headersecret"},
            },
        },
        allowed_tools=["mcp__ext__multiply"],
    )
    model.add(tool_use("mcp__ext__multiply", {"a": 6, "b": 7}), text("computed"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            (argv,) = _cli_command_lines()
            await client.query("multiply")
            messages = [m async for m in client.receive_response()]
    line = " ".join(argv)
    for secret in (SECRET, "urlpassword", "headersecret"):
        assert secret not in line
    # the CLI read its MCP config from the 0600 file, removed when the client closed
    config = Path(argv[argv.index("--mcp-config") + 1])
    assert config.name.startswith("mcp-config-") and not await anyio.Path(config).exists()
    # and the server got its secret through that file: it ran the tool
    seen = [r.content for req in model.turn_requests for r in req.tool_results()]
    assert seen == ["6 * 7 = 42"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "computed"
