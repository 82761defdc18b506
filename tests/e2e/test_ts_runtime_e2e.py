"""The runtime methods the TypeScript SDK's Query has, on the real CLI (offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import AgentDefinition, ClaudeSDKClient, HookMatcher, ResultMessage
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_initialize_answers_override_reinitialize_and_plugins(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "notes", "version": "1.0"}')
    (plugin / "commands").mkdir()
    (plugin / "commands" / "tidy.md").write_text("---\ndescription: tidy up\n---\nTidy.")
    stops: list[str] = []

    async def on_stop(data: Any, tool_use_id: str | None, ctx: Any) -> dict[str, Any]:
        stops.append(data["hook_event_name"])
        return {}

    model.add(text("one"), text("two"))
    options = make_options(
        agents={"reviewer": AgentDefinition(description="Reviews code", prompt="Review.")},
        hooks={"Stop": [HookMatcher(hooks=[on_stop])]},
    )
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            agents = {a.name: a for a in await client.supported_agents()}
            models = await client.supported_models()
            account = await client.account_info()
            commands = await client.supported_commands()
            warning = await client.set_mcp_permission_mode_override("nowhere", "default")
            cleared = await client.set_mcp_permission_mode_override("nowhere", None)
            await client.query("one")
            [m async for m in client.receive_response()]
            again = await client.reinitialize()
            await client.query("two")  # the hook was registered again: it still fires
            last = [m async for m in client.receive_response()][-1]
            reload = await client.reload_plugins(
                add_plugins=[{"type": "local", "path": str(plugin)}]
            )
            after = [c.name for c in await client.supported_commands()]
    assert agents["reviewer"].description == "Reviews code"
    assert models and all(m.value for m in models)
    assert account.api_key_source == "ANTHROPIC_API_KEY" and account.api_provider == "firstParty"
    assert commands and all(c.name for c in commands)
    assert warning is not None and "override stored" in warning
    assert cleared is not None and "cleared" in cleared
    assert again["hooks_applied"] is True and isinstance(last, ResultMessage)
    assert stops == ["Stop", "Stop"]
    assert "notes:tidy" in [c.name for c in reload.commands]
    assert reload.error_count == 0 and "notes:tidy" in after
