"""The options the TypeScript SDK added, translated as its ProcessTransport and
``initialize`` do (read from ``@anthropic-ai/claude-agent-sdk`` 0.3.330's ``sdk.mjs``):
the same flags, spelled the same way, and the same ``initialize`` fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccwire import SYSTEM_PROMPT_DYNAMIC_BOUNDARY, AgentDefinition, UserDialogResult
from ccwire._conversation.argv import (
    agents_to_wire,
    build_argv,
    build_initialize_fields,
)
from ccwire._conversation.cli_env import build_env
from ccwire._conversation.options import ClaudeAgentOptions

PREFIX = ["claude", "--output-format", "stream-json", "--verbose"]
SUFFIX = ["--input-format", "stream-json"]


def flags(options: ClaudeAgentOptions) -> list[str]:
    """The option flags after the default (empty) system prompt."""
    result = build_argv(options, cli_path="claude")
    assert result[:4] == PREFIX and result[-2:] == SUFFIX
    assert result[4:5] == ["--system-prompt="]
    return result[5:-2]


def init(options: ClaudeAgentOptions) -> dict[str, Any]:
    return build_initialize_fields(options, None)


async def show_dialog(request: Any, context: Any) -> UserDialogResult:
    return UserDialogResult("cancelled")


# --------------------------------------------------------------------- flags


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"agent": "code-reviewer"}, ["--agent=code-reviewer"]),
        ({"persist_session": False}, ["--no-session-persistence"]),
        ({"persist_session": True}, []),
        ({"permission_prompts": "none"}, ["--permission-prompts=none"]),
        ({"permission_prompts": "host"}, ["--permission-prompts=host"]),
        ({"allow_dangerously_skip_permissions": True}, ["--allow-dangerously-skip-permissions"]),
        ({"debug": True}, ["--debug"]),
        ({"debug_file": "/tmp/d.log"}, ["--debug-file=/tmp/d.log"]),
        ({"debug": True, "debug_file": Path("/tmp/d.log")}, ["--debug-file=/tmp/d.log"]),
        ({"project_config_root": "/repo"}, ["--project-config-root=/repo"]),
    ],
)
def test_each_option_is_the_flag_the_typescript_sdk_passes(
    options: dict[str, Any], expected: list[str]
) -> None:
    assert flags(ClaudeAgentOptions(**options)) == expected
    assert init(ClaudeAgentOptions(**options)) == {"hooks": None}  # nothing in initialize


def test_the_flags_come_after_the_permission_mode() -> None:
    options = ClaudeAgentOptions(
        permission_mode="bypassPermissions",
        allow_dangerously_skip_permissions=True,
        permission_prompts="none",
    )
    assert flags(options) == [
        "--permission-mode=bypassPermissions",
        "--permission-prompts=none",
        "--allow-dangerously-skip-permissions",
    ]


def test_managed_settings_go_on_the_command_line_as_json() -> None:
    managed = {"sandbox": {"network": {"allowManagedDomainsOnly": True}}}
    options = ClaudeAgentOptions(managed_settings=managed)
    got = flags(options)
    assert got[:1] == ["--managed-settings"] and json.loads(got[1]) == managed
    assert len(got) == 2 and "managedSettings" not in init(options)


def test_settings_may_be_a_dict_as_the_typescript_sdks_settings_object() -> None:
    settings = {"model": "m", "env": {"TOKEN": "sk-secret-value"}}
    options = ClaudeAgentOptions(settings=settings)
    argv = build_argv(options, cli_path="claude")
    value = argv[argv.index("--settings") + 1]
    # JSON text, as the TypeScript SDK sends it (or the 0600 file a secret goes to)
    text = Path(value).read_text("utf-8") if not value.startswith("{") else value
    assert json.loads(text) == settings
    assert "sk-secret-value" not in repr(options)
    with_sandbox = ClaudeAgentOptions(settings={"model": "m"}, sandbox={"enabled": True})
    got = flags(with_sandbox)
    assert json.loads(got[got.index("--settings") + 1]) == {
        "model": "m",
        "sandbox": {"enabled": True},
    }


def test_managed_settings_that_may_hold_secrets_travel_in_initialize() -> None:
    managed = {"env": {"HTTPS_PROXY": "http://user:pw@proxy:3128"}}
    options = ClaudeAgentOptions(managed_settings=managed)
    # the TypeScript SDK's managedSettingsDelivery: 'initialize': nothing on argv
    assert flags(options) == ["--await-initialize", "--managed-settings-in-initialize"]
    assert init(options)["managedSettings"] == managed
    assert "pw@" not in repr(options)


def test_plugins_by_flag_or_in_initialize() -> None:
    plugins: Any = [
        {"type": "local", "path": "/p/a"},
        {"type": "local", "path": "/p/b", "skip_mcp_discovery": True},
    ]
    by_flag = ClaudeAgentOptions(plugins=plugins)
    assert flags(by_flag) == ["--plugin-dir=/p/a", "--plugin-dir-no-mcp=/p/b"]
    assert "plugins" not in init(by_flag)
    in_init = ClaudeAgentOptions(plugins=plugins, plugin_delivery="initialize")
    assert flags(in_init) == ["--await-initialize"]
    assert init(in_init)["plugins"] == [
        {"type": "local", "path": "/p/a"},
        {"type": "local", "path": "/p/b", "skipMcpDiscovery": True},
    ]
    # no plugins: nothing to wait for
    assert flags(ClaudeAgentOptions(plugin_delivery="initialize")) == []


def test_mcp_servers_by_flag_or_in_initialize() -> None:
    servers: Any = {"ext": {"command": "srv", "env": {"TOKEN": "s3cret"}}}
    in_init = ClaudeAgentOptions(mcp_servers=servers, mcp_servers_delivery="initialize")
    argv = flags(in_init)
    assert argv == ["--await-initialize"] and "s3cret" not in " ".join(argv)
    assert init(in_init)["mcpServers"] == servers
    by_flag = ClaudeAgentOptions(mcp_servers=servers)
    assert flags(by_flag)[0] == "--mcp-config" and "mcpServers" not in init(by_flag)


def test_several_initialize_deliveries_wait_once() -> None:
    options = ClaudeAgentOptions(
        plugins=[{"type": "local", "path": "/p"}],
        plugin_delivery="initialize",
        mcp_servers={"ext": {"command": "srv"}},
        mcp_servers_delivery="initialize",
        managed_settings={"env": {"A": "b"}},
    )
    assert flags(options) == ["--await-initialize", "--managed-settings-in-initialize"]
    assert {"plugins", "mcpServers", "managedSettings"} <= set(init(options))


# ------------------------------------------------------------- initialize fields


def test_each_initialize_option_is_the_field_the_typescript_sdk_sends() -> None:
    options = ClaudeAgentOptions(
        title="Release notes",
        tool_aliases={"Bash": "mcp__workspace__bash"},
        plan_mode_instructions="Write the plan as a checklist.",
        prompt_suggestions=True,
        agent_progress_summaries=False,
        per_task_stop_affordance=True,
        on_user_dialog=show_dialog,
        supported_dialog_kinds=["refusal_fallback_prompt"],
    )
    assert init(options) == {
        "hooks": None,
        "title": "Release notes",
        "toolAliases": {"Bash": "mcp__workspace__bash"},
        "planModeInstructions": "Write the plan as a checklist.",
        "promptSuggestions": True,
        "agentProgressSummaries": False,
        "perTaskStopAffordance": True,
        "supportedDialogKinds": ["refusal_fallback_prompt"],
    }
    assert flags(options) == []


def test_a_list_system_prompt_travels_in_initialize_with_its_boundary() -> None:
    blocks = ["You are a release bot.", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Today is Monday."]
    options = ClaudeAgentOptions(system_prompt=blocks)
    argv = build_argv(options, cli_path="claude")
    assert not [arg for arg in argv[1:] if arg.startswith("--system-prompt")]
    assert init(options)["systemPrompt"] == blocks
    custom = ClaudeAgentOptions(
        system_prompt={"type": "custom", "prompt": blocks, "snapshot": False}
    )
    assert init(custom)["systemPrompt"] == blocks and init(custom)["systemPromptSnapshot"] is False
    custom_argv = build_argv(custom, cli_path="claude")
    assert not [arg for arg in custom_argv[1:] if arg.startswith("--system-prompt")]
    # a string prompt stays on the command line, as before
    assert "systemPrompt" not in init(ClaudeAgentOptions(system_prompt="plain"))
    with pytest.raises(TypeError, match="blocks must be strings"):
        init(ClaudeAgentOptions(system_prompt=["ok", 3]))  # type: ignore[list-item]


def test_the_newer_agent_definition_fields() -> None:
    agent = AgentDefinition(
        description="reviews",
        prompt="You review.",
        auto_compact_window=50_000,
        omit_claude_md=True,
        observer="auditor",
        observer_message="Be brief.",
        critical_system_reminder_experimental="Never push.",
    )
    assert agent.autoCompactWindow == 50_000 and agent.omit_claude_md is True
    assert agents_to_wire({"r": agent})["r"] == {
        "description": "reviews",
        "prompt": "You review.",
        "autoCompactWindow": 50_000,
        "omitClaudeMd": True,
        "observer": "auditor",
        "observerMessage": "Be brief.",
        "criticalSystemReminder_EXPERIMENTAL": "Never push.",
    }
    with pytest.raises(ValueError, match="disagree"):
        AgentDefinition("d", "p", omitClaudeMd=True, omit_claude_md=False)


def test_tool_config_sets_the_cli_variable() -> None:
    options = ClaudeAgentOptions(tool_config={"ask_user_question": {"preview_format": "html"}})
    env = build_env(options, base_env={})
    assert env["CLAUDE_CODE_QUESTION_PREVIEW_FORMAT"] == "html"
    assert "CLAUDE_CODE_QUESTION_PREVIEW_FORMAT" not in build_env(ClaudeAgentOptions(), base_env={})


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"supported_dialog_kinds": ["x"]}, "needs on_user_dialog"),
        ({"plugin_delivery": "stdin"}, "plugin_delivery must be"),
        ({"mcp_servers_delivery": "file"}, "mcp_servers_delivery must be"),
        ({"permission_prompts": "nobody"}, "permission_prompts must be"),
    ],
)
def test_bad_combinations_are_refused_at_construction(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ClaudeAgentOptions(**options)


def test_a_store_needs_the_session_on_disk() -> None:
    from ccwire import InMemorySessionStore

    with pytest.raises(ValueError, match="persist_session=False"):
        ClaudeAgentOptions(session_store=InMemorySessionStore(), persist_session=False)
