"""The options the TypeScript SDK added, on the real CLI (offline, scripted model): each
does what the CLI is asked to do. Several share a session, to keep the tier fast."""

from __future__ import annotations

import json
import sys
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
    AgentDefinition,
    ClaudeSDKClient,
    PermissionResultAllow,
    PromptSuggestionMessage,
    ResultMessage,
    SessionTitleChangedMessage,
    ToolPermissionContext,
    create_sdk_mcp_server,
)
from ccwire.testing import ScriptedModel, text, tool_use

from .helpers import EXT_SERVER, greet, one_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60


# can_use_tool is there to show it is never asked; allowed_tools lets the greeting run
@pytest.mark.filterwarnings("ignore::ccwire.CanUseToolShadowedWarning")
async def test_prompt_aliases_permissions_settings_debug_and_no_persistence(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    model.add(
        tool_use("Greeter", {"name": "Ann"}),  # an alias of mcp__demo__greet
        tool_use("Write", {"file_path": "out.txt", "content": "x"}),  # would prompt
        text("done"),
    )
    asked: list[str] = []

    async def can_use_tool(name: str, data: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.append(name)
        return PermissionResultAllow()

    debug_log = tmp_path / "debug.log"
    options = make_options(
        system_prompt=["You are STATIC.", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Today is DYNAMIC."],
        tool_aliases={"Greeter": "mcp__demo__greet"},
        mcp_servers={
            "demo": create_sdk_mcp_server("demo", tools=[greet]),
            "ext": {"command": sys.executable, "args": [str(EXT_SERVER)]},
        },
        mcp_servers_delivery="initialize",
        allowed_tools=["mcp__demo__greet"],
        permission_prompts="none",
        can_use_tool=can_use_tool,
        managed_settings={"permissions": {"deny": ["WebFetch"]}},
        debug_file=str(debug_log),
        persist_session=False,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            messages = await one_turn(client, "greet Ann, then write a file")
            settings = await client.get_settings()
            servers = {s.name: s.status for s in await client.mcp_status()}
            info = await client.get_server_info()
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    first, second, third = model.turn_requests
    # the list prompt: its blocks, without the boundary marker
    assert "You are STATIC.\n\nToday is DYNAMIC." in first.system
    assert SYSTEM_PROMPT_DYNAMIC_BOUNDARY not in json.dumps(first.body)
    # the alias ran the in-process tool
    assert [r.content for r in second.tool_results()] == ["Hello, Ann!"]
    # nobody answers prompts: Write was denied without asking can_use_tool
    (denied,) = third.tool_results()
    assert denied.is_error and "no approval surface" in denied.content and asked == []
    # managed settings: WebFetch is gone, and the policy tier shows it
    assert "WebFetch" not in first.tool_names and "mcp__demo__greet" in first.tool_names
    assert settings.effective["permissions"]["deny"] == ["WebFetch"]
    # the MCP servers came in initialize
    assert info is not None and info["mcp_servers_applied"] is True
    assert servers == {"demo": "connected", "ext": "connected"}
    assert debug_log.stat().st_size > 0
    home = Path(options.env["HOME"])
    assert not list((home / ".claude" / "projects").rglob("*.jsonl"))  # no transcript


async def test_agent_plugins_in_initialize_project_root_and_plan_instructions(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "notes", "version": "1.0"}')
    (plugin / "commands").mkdir()
    (plugin / "commands" / "tidy.md").write_text("---\ndescription: tidy up\n---\nTidy.")
    root = tmp_path / "checkout"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["WebSearch"]}}')
    model.add(text("planned"))
    options = make_options(
        agents={
            "planner": AgentDefinition(
                description="plans",
                prompt="You are THE PLANNER.",
                omit_claude_md=True,
                auto_compact_window=150_000,
            )
        },
        agent="planner",
        plugins=[{"type": "local", "path": str(plugin)}],
        plugin_delivery="initialize",
        project_config_root=str(root),
        setting_sources=["project"],
        permission_mode="plan",
        plan_mode_instructions="Write the plan as a CHECKLIST-7.",
        title="Planning",
        prompt_suggestions=True,
        agent_progress_summaries=True,
        per_task_stop_affordance=True,
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            messages = await one_turn(client, "plan it")
            info = await client.get_server_info()
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    (request,) = model.turn_requests
    assert "You are THE PLANNER." in request.system  # the main-thread agent
    assert "CHECKLIST-7" in json.dumps(request.body["messages"])  # the plan-mode reminder
    assert "WebSearch" not in request.tool_names  # the checkout's project settings
    assert info is not None and info["plugins_applied"] is True
    assert "notes:tidy" in [c["name"] for c in info["commands"]]
    titles = [m.title for m in messages if isinstance(m, SessionTitleChangedMessage)]
    assert titles == ["Planning"]


async def test_prompt_suggestions_arrive_after_the_result(
    model: ScriptedModel, make_options: Any
) -> None:
    # none on the first turn; after the second, the CLI asks the model for a suggestion
    model.add(text("one"), text("two"), text("Run the test suite again"))
    options = make_options(prompt_suggestions=True)
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await one_turn(client, "first")
            second = await one_turn(client, "second")
            assert isinstance(second[-1], ResultMessage)
            suggestion: PromptSuggestionMessage | None = None
            async with aclosing(client.receive_messages()) as messages:  # left early
                async for message in messages:
                    if isinstance(message, PromptSuggestionMessage):
                        suggestion = message
                        break
    assert suggestion is not None and suggestion.suggestion == "Run the test suite again"
    assert len(model.turn_requests) == 3
