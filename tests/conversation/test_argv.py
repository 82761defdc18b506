"""Tests of the pure options-to-CLI translation (argv and CLI environment)."""

from __future__ import annotations

import json
import os
import uuid
import warnings
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire._conversation.argv import (
    SPILL_THRESHOLD,
    agents_to_wire,
    build_argv,
    build_initialize_fields,
    build_mcp_config,
    json_schema_in_initialize,
    sdk_servers,
)
from ccwire._conversation.cli_env import build_env, inherited_env, sdk_version
from ccwire._conversation.options import CLI_ENV_ALLOWLIST, AgentDefinition, ClaudeAgentOptions
from ccwire._core.errors import CLIConnectionError, OptionsError
from ccwire._wire.permission_types import (
    PermissionResult,
    PermissionResultAllow,
    ToolPermissionContext,
)

PREFIX = ["claude", "--output-format", "stream-json", "--verbose"]
SUFFIX = ["--input-format", "stream-json"]
EMPTY_PROMPT = ["--system-prompt="]


async def allow_all(
    name: str, data: dict[str, Any], ctx: ToolPermissionContext
) -> PermissionResult:
    """A permission callback that allows everything."""
    return PermissionResultAllow()


class DummyServer:
    """Stands in for a live in-process MCP server."""


def argv(options: ClaudeAgentOptions, spill_dir: str | None = None) -> list[str]:
    """The full argv, after checking the fixed prefix and suffix."""
    result = build_argv(options, cli_path="claude", spill_dir=spill_dir)
    assert result[:4] == PREFIX
    assert result[-2:] == SUFFIX
    return result


def flags(options: ClaudeAgentOptions) -> list[str]:
    """The option flags after the default (empty) system prompt."""
    result = argv(options)
    assert result[4:5] == EMPTY_PROMPT
    return result[5:-2]


def sdk_config(name: str, instance: object, **extra: Any) -> Any:
    """An ``sdk`` server config with a dummy instance."""
    return {"type": "sdk", "name": name, "instance": instance, **extra}


# ------------------------------------------------------------------ fixed parts


def test_default_argv_is_exact() -> None:
    assert build_argv(ClaudeAgentOptions(), cli_path="/bin/claude") == [
        "/bin/claude",
        "--output-format",
        "stream-json",
        "--verbose",
        "--system-prompt=",
        "--input-format",
        "stream-json",
    ]


# ---------------------------------------------------------------- system prompt


def test_system_prompt_text() -> None:
    assert argv(ClaudeAgentOptions(system_prompt="Be brief."))[4:-2] == [
        "--system-prompt=Be brief.",
    ]


def test_system_prompt_preset_gives_no_flag() -> None:
    o = ClaudeAgentOptions(system_prompt={"type": "preset", "preset": "claude_code"})
    assert argv(o)[4:-2] == []


def test_system_prompt_preset_append() -> None:
    o = ClaudeAgentOptions(
        system_prompt={"type": "preset", "preset": "claude_code", "append": "Extra."}
    )
    assert argv(o)[4:-2] == ["--append-system-prompt=Extra."]


def test_system_prompt_file() -> None:
    o = ClaudeAgentOptions(system_prompt={"type": "file", "path": "/p/prompt.md"})
    assert argv(o)[4:-2] == ["--system-prompt-file=/p/prompt.md"]


def test_system_prompt_custom() -> None:
    o = ClaudeAgentOptions(system_prompt={"type": "custom", "prompt": "P", "snapshot": True})
    assert argv(o)[4:-2] == ["--system-prompt=P"]


def test_system_prompt_unknown_type() -> None:
    bad: Any = {"type": "weird"}
    with pytest.raises(ValueError, match="system_prompt"):
        build_argv(ClaudeAgentOptions(system_prompt=bad), cli_path="claude")


# ----------------------------------------------------------------------- tools


def test_tools_list() -> None:
    assert flags(ClaudeAgentOptions(tools=["Read", "Bash"])) == ["--tools=Read,Bash"]


def test_tools_empty_list() -> None:
    assert flags(ClaudeAgentOptions(tools=[])) == ["--tools="]


def test_tools_preset() -> None:
    o = ClaudeAgentOptions(tools={"type": "preset", "preset": "claude_code"})
    assert flags(o) == ["--tools=default"]


def test_allowed_tools() -> None:
    o = ClaudeAgentOptions(allowed_tools=["Read", "Bash(npm test:*)"])
    assert flags(o) == ["--allowedTools=Read,Bash(npm test:*)"]


def test_disallowed_tools() -> None:
    o = ClaudeAgentOptions(disallowed_tools=["Write", "Edit"])
    assert flags(o) == ["--disallowedTools=Write,Edit"]


async def _greet(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": []}


RULE_FLAGS = {"allowed_tools": "--allowedTools", "disallowed_tools": "--disallowedTools"}


@pytest.mark.parametrize("option", ["allowed_tools", "disallowed_tools"])
def test_a_bare_in_process_tool_name_is_warned_about_with_its_full_name(option: str) -> None:
    """The CLI matches in-process tools as ``mcp__<server>__<tool>``: a bare ``greet``
    matches nothing (the tool would ask, or not be denied), so it is warned about; the
    flag is still passed as given, as the reference SDK passes it."""
    greet = ccwire.tool("greet", "Greet someone", {"name": str})(_greet)
    servers: Any = {"demo": ccwire.create_sdk_mcp_server("demo", tools=[greet])}
    rules: dict[str, Any] = {option: ["Read", "greet"]}
    bare = ClaudeAgentOptions(mcp_servers=servers, **rules)
    with pytest.warns(UserWarning, match="matches nothing") as caught:
        argv = build_argv(bare, cli_path="claude", spill_dir=None)
    assert [str(w.message) for w in caught] == [
        f"{option} names 'greet', a tool of the in-process server 'demo', which matches "
        "nothing: the CLI knows it as 'mcp__demo__greet' (or 'mcp__demo__*' for all the "
        "server's tools)"
    ]
    assert f"{RULE_FLAGS[option]}=Read,greet" in argv
    for also in ("mcp__demo__greet", "mcp__demo__*", "mcp__demo"):
        both_rules: dict[str, Any] = {option: ["greet", also]}
        both = ClaudeAgentOptions(mcp_servers=servers, **both_rules)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            argv = build_argv(both, cli_path="claude", spill_dir=None)
            assert f"{RULE_FLAGS[option]}=greet,{also}" in argv


@pytest.mark.parametrize("option", ["allowed_tools", "disallowed_tools"])
def test_a_misspelt_in_process_tool_rule_is_warned_about_with_the_near_name(option: str) -> None:
    """``mcp__demo__greeet`` matches nothing; the tool would ask for permission (or not
    be denied) with no word of why, so the near miss is named. A rule far from every
    in-process tool (another server's, a pattern, a tool a live tool set adds later) is
    left alone."""
    greet = ccwire.tool("greet", "Greet someone", {"name": str})(_greet)
    servers: Any = {
        "demo": ccwire.create_sdk_mcp_server("demo", tools=[greet]),
        "demo2": ccwire.create_sdk_mcp_server("demo2", tools=[greet]),
    }
    for typo in ("mcp__demo__greeet", "mcp__dmeo__greet"):
        rules: dict[str, Any] = {option: ["Read", typo]}
        with pytest.warns(UserWarning, match="did you mean") as caught:
            argv = build_argv(
                ClaudeAgentOptions(mcp_servers=servers, **rules), cli_path="claude", spill_dir=None
            )
        assert [str(w.message) for w in caught] == [
            f"{option} names {typo!r}, which matches no tool of the in-process servers: "
            "did you mean 'mcp__demo__greet'?"
        ]
        assert f"{RULE_FLAGS[option]}=Read,{typo}" in argv
    fine_rules = ("mcp__demo__greet", "mcp__demo2__greet", "mcp__demo__*", "mcp__demo__wait")
    for fine in (*fine_rules, "mcp__github__create_issue", "mcp__dyn__greet"):
        ok: dict[str, Any] = {option: [fine]}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            build_argv(
                ClaudeAgentOptions(mcp_servers=servers, **ok), cli_path="claude", spill_dir=None
            )


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("mcp_demo_greet", ""),  # one underscore where the CLI has two
        ("mcp__demo_greet", ""),
        (
            "mcp__made__greet",  # the name the server was made with, not its key
            " (the CLI names a server's tools by its key in mcp_servers, 'demo', not by "
            "the name it was made with, 'made')",
        ),
    ],
)
def test_a_rule_with_the_wrong_separators_or_server_name_is_warned_about(
    rule: str, why: str
) -> None:
    """A first script writes ``mcp_demo_greet``, or names the server as it was made
    (``create_sdk_mcp_server("made")``) while ``mcp_servers`` registers it under
    another key: either matched nothing, and the tool asked for permission in silence."""
    greet = ccwire.tool("greet", "Greet someone", {"name": str})(_greet)
    servers: Any = {"demo": ccwire.create_sdk_mcp_server("made", tools=[greet])}
    options = ClaudeAgentOptions(mcp_servers=servers, allowed_tools=[rule])
    with pytest.warns(UserWarning, match="did you mean") as caught:
        build_argv(options, cli_path="claude", spill_dir=None)
    assert [str(w.message) for w in caught] == [
        f"allowed_tools names {rule!r}, which matches no tool of the in-process servers: "
        f"did you mean 'mcp__demo__greet'?{why}"
    ]
    for fine in ("mcp__demo__greet", "mcp__demo", "mcp__demo__*", "mcp_other_tool", "Read"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            build_argv(
                ClaudeAgentOptions(mcp_servers=servers, allowed_tools=[fine]),
                cli_path="claude",
                spill_dir=None,
            )


def test_skills_all_appends_skill_and_default_sources() -> None:
    o = ClaudeAgentOptions(allowed_tools=["Read"], skills="all")
    assert flags(o) == ["--allowedTools=Read,Skill", "--setting-sources=user,project"]


def test_skills_list_appends_each() -> None:
    o = ClaudeAgentOptions(skills=["pdf", "my-plugin:docx"], setting_sources=["project"])
    assert flags(o) == [
        "--allowedTools=Skill(pdf),Skill(my-plugin:docx)",
        "--setting-sources=project",
    ]


def test_skills_not_duplicated_in_allowed_tools() -> None:
    o = ClaudeAgentOptions(allowed_tools=["Skill"], skills="all", setting_sources=[])
    assert flags(o) == ["--allowedTools=Skill", "--setting-sources="]


def test_skill_name_checked_again_after_mutation() -> None:
    o = ClaudeAgentOptions(skills=["ok"])
    assert o.skills is not None
    o.skills = ["bad,name"]
    with pytest.raises(ValueError, match="skill name"):
        build_argv(o, cli_path="claude")


# ---------------------------------------------------------------- model/limits


def test_max_turns() -> None:
    assert flags(ClaudeAgentOptions(max_turns=5)) == ["--max-turns=5"]


def test_max_turns_zero_is_omitted() -> None:
    assert flags(ClaudeAgentOptions(max_turns=0)) == []


def test_max_budget_usd() -> None:
    assert flags(ClaudeAgentOptions(max_budget_usd=1.5)) == ["--max-budget-usd=1.5"]


def test_task_budget() -> None:
    assert flags(ClaudeAgentOptions(task_budget={"total": 5000})) == ["--task-budget=5000"]


def test_model() -> None:
    assert flags(ClaudeAgentOptions(model="opus")) == ["--model=opus"]


def test_fallback_model() -> None:
    assert flags(ClaudeAgentOptions(fallback_model="haiku")) == ["--fallback-model=haiku"]


def test_betas() -> None:
    o = ClaudeAgentOptions(betas=["context-1m-2025-08-07", "b2"])
    assert flags(o) == ["--betas=context-1m-2025-08-07,b2"]


def test_effort() -> None:
    assert flags(ClaudeAgentOptions(effort="xhigh")) == ["--effort=xhigh"]


def test_thinking_adaptive() -> None:
    assert flags(ClaudeAgentOptions(thinking={"type": "adaptive"})) == ["--thinking=adaptive"]


def test_thinking_adaptive_display() -> None:
    o = ClaudeAgentOptions(thinking={"type": "adaptive", "display": "summarized"})
    assert flags(o) == ["--thinking=adaptive", "--thinking-display=summarized"]


def test_thinking_enabled() -> None:
    o = ClaudeAgentOptions(thinking={"type": "enabled", "budget_tokens": 2048})
    assert flags(o) == ["--max-thinking-tokens=2048"]


def test_thinking_enabled_display() -> None:
    o = ClaudeAgentOptions(thinking={"type": "enabled", "budget_tokens": 10, "display": "omitted"})
    assert flags(o) == ["--max-thinking-tokens=10", "--thinking-display=omitted"]


def test_thinking_disabled() -> None:
    assert flags(ClaudeAgentOptions(thinking={"type": "disabled"})) == ["--thinking=disabled"]


def test_max_thinking_tokens_when_thinking_unset() -> None:
    assert flags(ClaudeAgentOptions(max_thinking_tokens=999)) == ["--max-thinking-tokens=999"]


def test_max_thinking_tokens_ignored_when_thinking_set() -> None:
    o = ClaudeAgentOptions(thinking={"type": "disabled"}, max_thinking_tokens=999)
    assert flags(o) == ["--thinking=disabled"]


def test_thinking_unknown_type() -> None:
    bad: Any = {"type": "sometimes"}
    with pytest.raises(ValueError, match="thinking"):
        build_argv(ClaudeAgentOptions(thinking=bad), cli_path="claude")


def test_output_format_json_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    o = ClaudeAgentOptions(output_format={"type": "json_schema", "schema": schema})
    result = flags(o)
    assert result[0].startswith("--json-schema=")
    assert json.loads(result[0].removeprefix("--json-schema=")) == schema
    assert len(result) == 1
    # a short schema travels on argv only, as the reference SDK sends it
    assert not json_schema_in_initialize(o)
    assert build_initialize_fields(o, None) == {"hooks": None}


def test_output_format_bad_type() -> None:
    bad: Any = {"type": "xml", "schema": {}}
    with pytest.raises(ValueError, match="output_format"):
        build_argv(ClaudeAgentOptions(output_format=bad), cli_path="claude")


# ----------------------------------------------------------------- permissions


def test_permission_mode() -> None:
    o = ClaudeAgentOptions(permission_mode="acceptEdits")
    assert flags(o) == ["--permission-mode=acceptEdits"]


def test_can_use_tool_uses_stdio() -> None:
    o = ClaudeAgentOptions(can_use_tool=allow_all)
    assert flags(o) == ["--permission-prompt-tool=stdio"]


def test_permission_prompt_tool_name() -> None:
    o = ClaudeAgentOptions(permission_prompt_tool_name="mcp__perm__ask")
    assert flags(o) == ["--permission-prompt-tool=mcp__perm__ask"]


def test_both_permission_routes_rejected_after_mutation() -> None:
    o = ClaudeAgentOptions(can_use_tool=allow_all)
    o.permission_prompt_tool_name = "mcp__x__y"
    with pytest.raises(ValueError, match="mutually exclusive"):
        build_argv(o, cli_path="claude")


# -------------------------------------------------------------------- sessions


def test_continue_conversation() -> None:
    assert flags(ClaudeAgentOptions(continue_conversation=True)) == ["--continue"]


def test_resume() -> None:
    assert flags(ClaudeAgentOptions(resume="-abc")) == ["--resume=-abc"]


def test_session_id() -> None:
    assert flags(ClaudeAgentOptions(session_id="u-1")) == ["--session-id=u-1"]


def test_fork_session() -> None:
    assert flags(ClaudeAgentOptions(fork_session=True)) == ["--fork-session"]


def test_resume_session_at() -> None:
    assert flags(ClaudeAgentOptions(resume_session_at="m-9")) == ["--resume-session-at=m-9"]


def test_resume_drops_turn() -> None:
    assert flags(ClaudeAgentOptions(resume_drops_turn="m-8")) == ["--resume-drops-turn=m-8"]


# -------------------------------------------------------------------- settings


def test_settings_passed_unchanged_without_sandbox() -> None:
    assert flags(ClaudeAgentOptions(settings="conf/s.json")) == ["--settings", "conf/s.json"]


def test_sandbox_alone() -> None:
    result = flags(ClaudeAgentOptions(sandbox={"enabled": True}))
    assert result[0] == "--settings"
    assert json.loads(result[1]) == {"sandbox": {"enabled": True}}


def test_settings_json_text_merged_with_sandbox() -> None:
    o = ClaudeAgentOptions(
        settings=' {"model": "x", "sandbox": {"old": 1}} ',
        sandbox={"enabled": True, "excludedCommands": ["git"]},
    )
    result = flags(o)
    assert result[0] == "--settings"
    assert json.loads(result[1]) == {
        "model": "x",
        "sandbox": {"enabled": True, "excludedCommands": ["git"]},
    }


def test_settings_file_relative_to_cwd_merged_with_sandbox(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "s.json").write_text('\ufeff{"permissions": {"allow": ["Read"]}}')
    o = ClaudeAgentOptions(settings="conf/s.json", sandbox={"enabled": False}, cwd=tmp_path)
    result = flags(o)
    assert result[0] == "--settings"
    assert json.loads(result[1]) == {
        "permissions": {"allow": ["Read"]},
        "sandbox": {"enabled": False},
    }


def test_unreadable_settings_file_is_an_error(tmp_path: Path) -> None:
    o = ClaudeAgentOptions(settings="missing.json", sandbox={"enabled": True}, cwd=tmp_path)
    with pytest.raises(CLIConnectionError, match=r"missing\.json") as info:
        build_argv(o, cli_path="claude")
    assert isinstance(info.value.__cause__, OSError)


def test_invalid_settings_json_is_an_error(tmp_path: Path) -> None:
    # (invalid JSON text is refused with the options: test_options)
    (tmp_path / "s.json").write_text("{not json}")
    o = ClaudeAgentOptions(settings=str(tmp_path / "s.json"), sandbox={"enabled": True})
    with pytest.raises(CLIConnectionError, match="JSON"):
        build_argv(o, cli_path="claude")


def test_settings_must_be_an_object(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text("[1, 2]")
    o = ClaudeAgentOptions(settings=str(tmp_path / "s.json"), sandbox={"enabled": True})
    with pytest.raises(CLIConnectionError, match="JSON object"):
        build_argv(o, cli_path="claude")


def test_setting_sources() -> None:
    o = ClaudeAgentOptions(setting_sources=["user", "project", "local"])
    assert flags(o) == ["--setting-sources=user,project,local"]


def test_setting_sources_empty() -> None:
    assert flags(ClaudeAgentOptions(setting_sources=[])) == ["--setting-sources="]


def test_add_dirs_repeated() -> None:
    o = ClaudeAgentOptions(add_dirs=["/a", Path("/b")])
    assert flags(o) == ["--add-dir=/a", "--add-dir=/b"]


# ------------------------------------------------------------------------- MCP


def test_mcp_servers_dict_strips_instance() -> None:
    stdio: Any = {"command": "npx", "args": ["-y", "@x/fs"]}
    o = ClaudeAgentOptions(mcp_servers={"calc": sdk_config("calc", DummyServer()), "fs": stdio})
    result = flags(o)
    assert result[0] == "--mcp-config"
    assert json.loads(result[1]) == {
        "mcpServers": {
            "calc": {"type": "sdk", "name": "calc"},
            "fs": {"command": "npx", "args": ["-y", "@x/fs"]},
        }
    }
    assert len(result) == 2


def test_mcp_servers_string_passed_through() -> None:
    assert flags(ClaudeAgentOptions(mcp_servers="/x/mcp.json")) == ["--mcp-config", "/x/mcp.json"]


def test_mcp_servers_path_passed_through() -> None:
    o = ClaudeAgentOptions(mcp_servers=Path("/x/mcp.json"))
    assert flags(o) == ["--mcp-config", "/x/mcp.json"]


def test_strict_mcp_config() -> None:
    assert flags(ClaudeAgentOptions(strict_mcp_config=True)) == ["--strict-mcp-config"]


def test_build_mcp_config_keeps_other_sdk_fields() -> None:
    instance = DummyServer()
    cfg = sdk_config("calc", instance, timeout=5000)
    assert build_mcp_config({"c": cfg}) == {
        "mcpServers": {"c": {"type": "sdk", "name": "calc", "timeout": 5000}}
    }
    assert cfg["instance"] is instance  # the caller's config is not modified


def test_build_mcp_config_empty_and_passthrough() -> None:
    assert build_mcp_config({}) is None
    assert build_mcp_config(None) is None
    assert build_mcp_config("") is None
    assert build_mcp_config('{"mcpServers": {}}') == '{"mcpServers": {}}'
    assert build_mcp_config(Path("m.json")) == "m.json"


def test_build_mcp_config_rejects_non_dict_entry() -> None:
    bad: Any = {"x": ["not", "a", "dict"]}
    with pytest.raises(TypeError, match="mcp_servers"):
        build_mcp_config(bad)


def test_sdk_servers_picks_instances() -> None:
    a: Any = DummyServer()
    b: Any = DummyServer()
    servers: Any = {
        "a": sdk_config("a", a),
        "ext": {"type": "http", "url": "https://h"},
        "b": sdk_config("bee", b),
    }
    found = sdk_servers(servers)
    assert list(found) == ["a", "b"]
    assert found["a"] is a
    assert found["b"] is b


def test_sdk_servers_from_path_or_none() -> None:
    assert sdk_servers("/x/mcp.json") == {}
    assert sdk_servers(Path("m.json")) == {}
    assert sdk_servers(None) == {}


def test_sdk_server_without_instance_is_an_error() -> None:
    bad: Any = {"s": {"type": "sdk", "name": "s"}}
    with pytest.raises(ValueError, match="instance"):
        sdk_servers(bad)


# ---------------------------------------------------------------- output flags


def test_include_partial_messages() -> None:
    o = ClaudeAgentOptions(include_partial_messages=True)
    assert flags(o) == ["--include-partial-messages"]


def test_include_hook_events() -> None:
    assert flags(ClaudeAgentOptions(include_hook_events=True)) == ["--include-hook-events"]


def test_session_mirror() -> None:
    assert flags(ClaudeAgentOptions(session_mirror=True)) == ["--session-mirror"]
    assert "--session-mirror" not in argv(ClaudeAgentOptions())


def test_plugins_repeated() -> None:
    o = ClaudeAgentOptions(
        plugins=[{"type": "local", "path": "./p1"}, {"type": "local", "path": "/p2"}]
    )
    assert flags(o) == ["--plugin-dir=./p1", "--plugin-dir=/p2"]


def test_plugins_non_local_rejected() -> None:
    bad: Any = {"type": "remote", "path": "x"}
    with pytest.raises(ValueError, match="plugin"):
        build_argv(ClaudeAgentOptions(plugins=[bad]), cli_path="claude")


# ------------------------------------------------------------------ extra args


def test_extra_args_three_forms_last_before_input_format() -> None:
    o = ClaudeAgentOptions(
        model="m",
        extra_args={"replay-user-messages": None, "debug-file": "/tmp/d", "offset": "-3"},
    )
    assert flags(o) == [
        "--model=m",
        "--replay-user-messages",
        "--debug-file",
        "/tmp/d",
        "--offset=-3",
    ]


def test_extra_args_numbers_are_given_as_text_as_the_reference_gives_them() -> None:
    # a number failed with an AttributeError at connect ('int' has no 'startswith')
    o = ClaudeAgentOptions(extra_args={"max-thinking-tokens": 2048, "offset": -3})  # type: ignore[dict-item]
    assert flags(o) == ["--max-thinking-tokens", "2048", "--offset=-3"]


def test_extra_args_leading_dashes_are_not_doubled() -> None:
    assert flags(ClaudeAgentOptions(extra_args={"--debug": None})) == ["--debug"]


# ------------------------------------------------- value forms (claude-agent-sdk 0.2.190)

DASHED = ["--help", "-p", "--version", "--model=other-model"]
"""Values that begin with dashes, spelt like the CLI's own options."""

ATTACHED: list[tuple[Callable[[Any], dict[str, Any]], str]] = [
    (lambda v: {"system_prompt": v}, "--system-prompt"),
    (lambda v: {"system_prompt": {"type": "custom", "prompt": v}}, "--system-prompt"),
    (
        lambda v: {"system_prompt": {"type": "preset", "preset": "claude_code", "append": v}},
        "--append-system-prompt",
    ),
    (lambda v: {"system_prompt": {"type": "file", "path": v}}, "--system-prompt-file"),
    (lambda v: {"tools": [v]}, "--tools"),
    (lambda v: {"allowed_tools": [v]}, "--allowedTools"),
    (lambda v: {"disallowed_tools": [v]}, "--disallowedTools"),
    (lambda v: {"model": v}, "--model"),
    (lambda v: {"fallback_model": v}, "--fallback-model"),
    (lambda v: {"betas": [v]}, "--betas"),
    (lambda v: {"permission_prompt_tool_name": v}, "--permission-prompt-tool"),
    (lambda v: {"add_dirs": [v]}, "--add-dir"),
    (lambda v: {"plugins": [{"type": "local", "path": v}]}, "--plugin-dir"),
    (lambda v: {"thinking": {"type": "adaptive", "display": v}}, "--thinking-display"),
    (lambda v: {"effort": v}, "--effort"),
    (lambda v: {"resume": v}, "--resume"),
    (lambda v: {"session_id": v}, "--session-id"),
    (lambda v: {"resume": "r", "resume_session_at": v}, "--resume-session-at"),
    (lambda v: {"resume": "r", "resume_drops_turn": v}, "--resume-drops-turn"),
    (lambda v: {"setting_sources": [v]}, "--setting-sources"),
    (lambda v: {"agent": v}, "--agent"),
    (lambda v: {"mcp_servers": v}, "--mcp-config"),
    (lambda v: {"extra_args": {"future-flag": v}}, "--future-flag"),
]
"""Each option with a value, and the flag that carries it."""


class TextEnum(str, Enum):
    """Python 3.11 and later format a member as ``TextEnum.DASHED`` in an f-string."""

    DASHED = "--some-text"
    PLAIN = "some-text"


def attached(result: list[str], flag: str) -> list[str]:
    """The values ``flag`` got as ``--flag=value`` arguments (never as a separate one)."""
    assert flag not in result, f"{flag} was passed with its value as a separate argument"
    return [arg.removeprefix(f"{flag}=") for arg in result if arg.startswith(f"{flag}=")]


@pytest.mark.parametrize("value", DASHED)
@pytest.mark.parametrize(("option", "flag"), ATTACHED, ids=[flag for _, flag in ATTACHED])
def test_a_dash_leading_value_is_attached_to_its_flag(
    option: Callable[[Any], dict[str, Any]], flag: str, value: str
) -> None:
    """As claude-agent-sdk 0.2.190 sends it: a value that looks like an option (a prompt,
    a model, a path) is read by the CLI as the value, never as an option of its own."""
    result = argv(ClaudeAgentOptions(**option(value)))
    assert attached(result, flag) == [value]
    assert value not in result


def test_every_value_is_attached_when_all_options_are_set() -> None:
    value = "--help"
    thinking: Any = {"type": "enabled", "budget_tokens": 2000, "display": value}
    options = ClaudeAgentOptions(
        system_prompt=value,
        tools=[value],
        allowed_tools=[value],
        disallowed_tools=[value],
        max_turns=3,
        max_budget_usd=1.5,
        task_budget={"total": 1000},
        model=value,
        fallback_model="-p",
        betas=[value],
        permission_prompt_tool_name=value,
        permission_mode="plan",
        resume=value,
        session_id=value,
        settings=value,
        add_dirs=[value, value],
        mcp_servers=value,
        resume_session_at=value,
        resume_drops_turn=value,
        setting_sources=[value],  # type: ignore[list-item]
        plugins=[{"type": "local", "path": value}],
        extra_args={"future-flag": value, "bool-flag": None},
        thinking=thinking,
        effort=value,  # type: ignore[arg-type]
        output_format={"type": "json_schema", "schema": {"type": "object"}},
    )
    result = build_argv(options, cli_path="claude")[1:]
    assert value not in result
    # on their own: the stream-json formats, and the --settings path with its "./"
    assert [arg for arg in result if not arg.startswith("--")] == [
        "stream-json",
        "./" + value,
        "stream-json",
    ]
    assert sorted(arg.split("=", 1)[0] for arg in result if "=" in arg) == sorted(
        [
            *["--system-prompt", "--tools", "--allowedTools", "--disallowedTools"],
            *["--max-turns", "--max-budget-usd", "--task-budget", "--model"],
            *["--fallback-model", "--betas", "--permission-prompt-tool", "--permission-mode"],
            *["--resume", "--session-id", "--add-dir", "--add-dir", "--mcp-config"],
            *["--resume-session-at", "--resume-drops-turn", "--setting-sources"],
            *["--plugin-dir", "--future-flag", "--max-thinking-tokens", "--thinking-display"],
            *["--effort", "--json-schema"],
        ]
    )


def test_ordinary_values_of_mcp_config_settings_and_extra_args_are_separate() -> None:
    """Only these take their value as a second argument: ``--settings`` always (Claude
    Code 2.0.69 and earlier ignore ``--settings=``), ``--mcp-config`` and ``extra_args``
    unless the value begins with a dash (an extra flag may take no value, and the CLI
    refuses ``--flag=value`` for such a flag)."""
    settings = '{"permissions": {"deny": ["Bash"]}}'
    servers: Any = {"server": {"type": "stdio", "command": "/path/to/server"}}
    options = ClaudeAgentOptions(
        system_prompt="You are helpful.",
        model="claude-sonnet-4-5",
        settings=settings,
        add_dirs=["/tmp/a", "/tmp/b"],
        mcp_servers=servers,
        extra_args={"future-flag": "plain", "bool-flag": None},
    )
    result = argv(options)
    mcp_config = json.dumps({"mcpServers": servers}, ensure_ascii=False)
    assert [arg for arg in result[1:] if not arg.startswith("--")] == [
        "stream-json",
        settings,
        mcp_config,
        "plain",
        "stream-json",
    ]
    assert attached(result, "--add-dir") == ["/tmp/a", "/tmp/b"]
    assert result[result.index("--settings") + 1] == settings
    assert result[result.index("--future-flag") + 1] == "plain"


@pytest.mark.parametrize("path", ["-settings.json", *DASHED])
def test_a_dash_leading_settings_path_gets_a_dot_slash(path: str) -> None:
    settings: Any
    for settings in (path, Path(path)):
        result = flags(ClaudeAgentOptions(settings=settings))
        assert result == ["--settings", "./" + path]


def test_a_path_like_value_gives_its_file_system_text() -> None:
    class PathLike:
        def __fspath__(self) -> str:
            return "file/system/text"

        def __str__(self) -> str:
            return "other text"

    where: Any = PathLike()
    result = flags(
        ClaudeAgentOptions(
            plugins=[{"type": "local", "path": where}],
            add_dirs=[where],
            settings=where,
            extra_args={"future-flag": where},
        )
    )
    assert "other text" not in result
    assert "--plugin-dir=file/system/text" in result
    assert "--add-dir=file/system/text" in result
    assert result[result.index("--settings") + 1] == "file/system/text"
    assert result[result.index("--future-flag") + 1] == "file/system/text"
    session_id: Any = uuid.UUID(int=1)  # anything else: its str()
    assert flags(ClaudeAgentOptions(session_id=session_id)) == [f"--session-id={session_id}"]


@pytest.mark.parametrize(("option", "flag"), ATTACHED, ids=[flag for _, flag in ATTACHED])
def test_a_str_enum_member_keeps_its_text(
    option: Callable[[Any], dict[str, Any]], flag: str
) -> None:
    """Not ``TextEnum.DASHED``, which an f-string gives on Python 3.11 and later."""
    assert attached(argv(ClaudeAgentOptions(**option(TextEnum.DASHED))), flag) == ["--some-text"]
    result = argv(
        ClaudeAgentOptions(
            resume=TextEnum.PLAIN,
            settings=TextEnum.PLAIN,
            mcp_servers=TextEnum.PLAIN,
            extra_args={"future-flag": TextEnum.PLAIN},
        )
    )
    assert "--resume=some-text" in result
    sent = [os.fsencode(arg) for arg in result]  # as the process gets them
    for separate in ("--settings", "--mcp-config", "--future-flag"):
        assert sent[sent.index(separate.encode()) + 1] == b"some-text"


@pytest.mark.parametrize(
    ("option", "flag"),
    [
        ({"system_prompt": {"type": "preset", "append": None}}, "--append-system-prompt"),
        ({"system_prompt": {"type": "custom", "prompt": None}}, "--system-prompt"),
        ({"system_prompt": {"type": "file", "path": None}}, "--system-prompt-file"),
        ({"plugins": [{"type": "local", "path": None}]}, "--plugin-dir"),
        ({"thinking": {"type": "adaptive", "display": None}}, "--thinking-display"),
        ({"system_prompt": {"type": "preset", "append": ["a", "b"]}}, "--append-system-prompt"),
        ({"system_prompt": {"type": "file", "path": {"p": 1}}}, "--system-prompt-file"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_none_or_a_container_as_a_value_raises_naming_the_flag(
    option: dict[str, Any], flag: str
) -> None:
    """Not the text ``None`` (or a repr) as the value, nor the flag silently left out:
    a `CLIConnectionError` naming the flag, as claude-agent-sdk 0.2.190 raises."""
    with pytest.raises(CLIConnectionError, match=flag):
        build_argv(ClaudeAgentOptions(**option), cli_path="claude")


def test_an_empty_append_or_resume_drops_turn_is_passed_not_dropped() -> None:
    """The CLI gets the empty value, as from the reference SDK: an empty
    ``resume_drops_turn`` is refused there as malformed, not silently disarmed."""
    preset: Any = {"type": "preset", "preset": "claude_code", "append": ""}
    assert argv(ClaudeAgentOptions(system_prompt=preset))[4:-2] == ["--append-system-prompt="]
    assert flags(ClaudeAgentOptions(resume="r", resume_drops_turn="")) == [
        "--resume=r",
        "--resume-drops-turn=",
    ]


# ------------------------------------------------------------------ full order


def test_full_argv_order() -> None:
    o = ClaudeAgentOptions(
        system_prompt="S",
        tools=["Read"],
        allowed_tools=["Read"],
        max_turns=2,
        max_budget_usd=3.0,
        disallowed_tools=["Bash"],
        model="opus",
        fallback_model="sonnet",
        betas=["b"],
        can_use_tool=allow_all,
        permission_mode="plan",
        continue_conversation=True,
        resume="r",
        session_id="s",
        fork_session=True,
        resume_session_at="m",
        settings="s.json",
        setting_sources=["user"],
        add_dirs=["/d"],
        mcp_servers="m.json",
        strict_mcp_config=True,
        include_partial_messages=True,
        include_hook_events=True,
        session_mirror=True,
        plugins=[{"type": "local", "path": "/p"}],
        thinking={"type": "adaptive"},
        effort="low",
        extra_args={"x": None},
    )
    assert build_argv(o, cli_path="claude") == [
        *PREFIX,
        *["--system-prompt=S", "--tools=Read", "--allowedTools=Read"],
        *["--max-turns=2", "--max-budget-usd=3.0", "--disallowedTools=Bash"],
        *["--model=opus", "--fallback-model=sonnet", "--betas=b"],
        *["--permission-prompt-tool=stdio", "--permission-mode=plan"],
        *["--continue", "--resume=r", "--session-id=s", "--fork-session"],
        *["--resume-session-at=m", "--settings", "s.json", "--setting-sources=user"],
        *["--add-dir=/d", "--mcp-config", "m.json", "--strict-mcp-config"],
        *["--include-partial-messages", "--include-hook-events", "--session-mirror"],
        *["--plugin-dir=/p"],
        *["--thinking=adaptive", "--effort=low", "--x"],
        *SUFFIX,
    ]


# ----------------------------------------------------------------------- spill


def _read(path: str) -> str:
    with open(path, encoding="utf-8", newline="") as fh:
        return fh.read()


def test_long_system_prompt_spills_to_file(tmp_path: Path) -> None:
    prompt = "x" * (SPILL_THRESHOLD + 1)
    result = argv(ClaudeAgentOptions(system_prompt=prompt), spill_dir=str(tmp_path))
    assert result[4] == "--system-prompt-file"  # the path stands alone (see SSHSpawner)
    path = result[5]
    assert os.path.dirname(path) == str(tmp_path)
    assert _read(path) == prompt
    assert prompt not in result


def test_long_custom_prompt_spills_to_file(tmp_path: Path) -> None:
    prompt = "é\n" * SPILL_THRESHOLD  # multi-byte: over the threshold in bytes
    o = ClaudeAgentOptions(system_prompt={"type": "custom", "prompt": prompt})
    result = argv(o, spill_dir=str(tmp_path))
    assert result[4] == "--system-prompt-file"
    assert _read(result[5]) == prompt


def test_value_at_threshold_stays_inline(tmp_path: Path) -> None:
    prompt = "y" * SPILL_THRESHOLD
    result = argv(ClaudeAgentOptions(system_prompt=prompt), spill_dir=str(tmp_path))
    assert result[4] == f"--system-prompt={prompt}"
    assert list(tmp_path.iterdir()) == []


def test_no_spill_without_spill_dir() -> None:
    prompt = "z" * (SPILL_THRESHOLD + 10)
    assert argv(ClaudeAgentOptions(system_prompt=prompt))[4] == f"--system-prompt={prompt}"


def test_long_mcp_config_spills_to_file(tmp_path: Path) -> None:
    stdio: Any = {"command": "srv", "args": ["a" * SPILL_THRESHOLD]}
    o = ClaudeAgentOptions(mcp_servers={"big": stdio, "calc": sdk_config("calc", DummyServer())})
    result = argv(o, spill_dir=str(tmp_path))
    i = result.index("--mcp-config")
    content = _read(result[i + 1])
    assert json.loads(content) == {
        "mcpServers": {"big": stdio, "calc": {"type": "sdk", "name": "calc"}}
    }
    assert os.path.dirname(result[i + 1]) == str(tmp_path)
    assert (os.stat(result[i + 1]).st_mode & 0o777) == 0o600


def test_long_settings_spills_to_file(tmp_path: Path) -> None:
    o = ClaudeAgentOptions(
        settings=json.dumps({"env": {"K": "v" * SPILL_THRESHOLD}}), sandbox={"enabled": True}
    )
    result = argv(o, spill_dir=str(tmp_path))
    i = result.index("--settings")
    assert json.loads(_read(result[i + 1])) == {
        "env": {"K": "v" * SPILL_THRESHOLD},
        "sandbox": {"enabled": True},
    }


@pytest.mark.parametrize("with_spill_dir", [True, False])
def test_long_json_schema_goes_in_initialize_not_argv(tmp_path: Path, with_spill_dir: bool) -> None:
    # The CLI takes only JSON text on --json-schema ("--json-schema is not valid JSON" for
    # a path), so a schema too long for argv travels as initialize jsonSchema instead.
    schema = {"type": "object", "description": "d" * SPILL_THRESHOLD}
    o = ClaudeAgentOptions(output_format={"type": "json_schema", "schema": schema})
    result = argv(o, spill_dir=str(tmp_path) if with_spill_dir else None)
    assert not [arg for arg in result if arg.startswith("--json-schema")]
    assert all("d" * 100 not in arg for arg in result)
    assert list(tmp_path.iterdir()) == []  # nothing spilled to a file
    assert json_schema_in_initialize(o)
    assert build_initialize_fields(o, None) == {"hooks": None, "jsonSchema": schema}


def test_json_schema_at_threshold_stays_on_argv() -> None:
    overhead = len(json.dumps({"description": ""}))
    schema = {"description": "é" * ((SPILL_THRESHOLD - overhead) // 2)}  # counted in bytes
    text = json.dumps(schema, ensure_ascii=False)
    assert len(text.encode("utf-8")) <= SPILL_THRESHOLD
    o = ClaudeAgentOptions(output_format={"type": "json_schema", "schema": schema})
    assert flags(o) == [f"--json-schema={text}"]
    assert "jsonSchema" not in build_initialize_fields(o, None)
    bigger: Any = {"type": "json_schema", "schema": {"description": "é" * SPILL_THRESHOLD}}
    assert flags(ClaudeAgentOptions(output_format=bigger)) == []


def test_long_json_schema_must_still_be_json() -> None:
    bad: Any = {"type": "json_schema", "schema": {"x": {1, 2}}}
    with pytest.raises(ValueError, match="output_format schema"):
        build_initialize_fields(ClaudeAgentOptions(output_format=bad), None)


def test_several_spills_use_distinct_files(tmp_path: Path) -> None:
    big = "q" * (SPILL_THRESHOLD + 1)
    o = ClaudeAgentOptions(
        system_prompt=big,
        settings=json.dumps({"description": big}),
        sandbox={"enabled": True},
    )
    result = argv(o, spill_dir=str(tmp_path))
    paths = [result[5], result[result.index("--settings") + 1]]
    assert len(set(paths)) == 2
    assert len(list(tmp_path.iterdir())) == 2
    again = argv(o, spill_dir=str(tmp_path))  # reusing the directory is fine
    assert again[5] not in paths
    assert _read(again[5]) == big


# ---------------------------------------------------------------------- agents


def test_agents_to_wire_camel_case_and_none_dropped() -> None:
    agent = AgentDefinition(
        description="Reviews code",
        prompt="You review",
        tools=("Read", "Grep"),
        disallowed_tools=["Bash"],
        model="sonnet",
        skills=["pdf"],
        memory="project",
        mcp_servers=["fs", {"calc": sdk_config("calc", DummyServer())}],
        initial_prompt="start",
        max_turns=4,
        background=False,
        effort="high",
        permission_mode="plan",
    )
    assert agents_to_wire({"reviewer": agent, "min": AgentDefinition("d", "p")}) == {
        "reviewer": {
            "description": "Reviews code",
            "prompt": "You review",
            "tools": ["Read", "Grep"],
            "disallowedTools": ["Bash"],
            "model": "sonnet",
            "skills": ["pdf"],
            "memory": "project",
            "mcpServers": ["fs", {"calc": {"type": "sdk", "name": "calc"}}],
            "initialPrompt": "start",
            "maxTurns": 4,
            "background": False,
            "effort": "high",
            "permissionMode": "plan",
        },
        "min": {"description": "d", "prompt": "p"},
    }


def test_agents_to_wire_empty_and_bad() -> None:
    assert agents_to_wire(None) == {}
    assert agents_to_wire({}) == {}
    bad: Any = {"x": {"description": "d", "prompt": "p"}}
    with pytest.raises(TypeError, match="AgentDefinition"):
        agents_to_wire(bad)


def test_agents_never_on_argv() -> None:
    o = ClaudeAgentOptions(agents={"a": AgentDefinition("desc", "prompt-text")})
    result = build_argv(o, cli_path="claude")
    assert "prompt-text" not in " ".join(result)
    assert "--agents" not in result


# ------------------------------------------------------------------ initialize


def test_initialize_fields_default() -> None:
    assert build_initialize_fields(ClaudeAgentOptions(), None) == {"hooks": None}


def test_initialize_fields_hooks_passed_through() -> None:
    hooks = {"Stop": [{"matcher": None, "hookCallbackIds": ["hook_0"]}]}
    assert build_initialize_fields(ClaudeAgentOptions(), hooks) == {"hooks": hooks}
    assert build_initialize_fields(ClaudeAgentOptions(), {}) == {"hooks": None}


def test_initialize_fields_all() -> None:
    o = ClaudeAgentOptions(
        agents={"a": AgentDefinition("d", "p", model="haiku")},
        system_prompt={
            "type": "preset",
            "preset": "claude_code",
            "exclude_dynamic_sections": True,
            "snapshot": False,
        },
        skills=["pdf", "x:docx"],
        forward_subagent_text=False,
    )
    assert build_initialize_fields(o, None) == {
        "hooks": None,
        "agents": {"a": {"description": "d", "prompt": "p", "model": "haiku"}},
        "excludeDynamicSections": True,
        "systemPromptSnapshot": False,
        "skills": ["pdf", "x:docx"],
        "forwardSubagentText": False,
    }


def test_initialize_fields_custom_prompt_snapshot() -> None:
    o = ClaudeAgentOptions(system_prompt={"type": "custom", "prompt": "P", "snapshot": True})
    assert build_initialize_fields(o, None) == {"hooks": None, "systemPromptSnapshot": True}


def test_initialize_fields_skills_all_is_no_filter() -> None:
    assert build_initialize_fields(ClaudeAgentOptions(skills="all"), None) == {"hooks": None}


# ------------------------------------------------------------------------- env


def test_env_layering_and_claudecode_removed() -> None:
    base = {"PATH": "/bin", "CLAUDECODE": "1", "KEEP": "k", "SHARED": "base"}
    o = ClaudeAgentOptions(env={"SHARED": "mine", "NEW": "n"}, inherit_env=True)
    env = build_env(o, base_env=base)
    assert "CLAUDECODE" not in env
    assert env["PATH"] == "/bin"
    assert env["KEEP"] == "k"
    assert env["SHARED"] == "mine"
    assert env["NEW"] == "n"
    assert env["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py"
    assert env["CLAUDE_AGENT_SDK_VERSION"] == sdk_version()
    assert env["CLAUDE_CODE_SDK_READS_SESSION_STATE"] == "1"
    assert "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING" not in env
    assert "PWD" not in env
    assert base["CLAUDECODE"] == "1"  # the base is not modified


def test_env_entrypoint_overridable_version_not() -> None:
    o = ClaudeAgentOptions(
        env={"CLAUDE_CODE_ENTRYPOINT": "custom", "CLAUDE_AGENT_SDK_VERSION": "9.9"}
    )
    env = build_env(o, base_env={})
    assert env["CLAUDE_CODE_ENTRYPOINT"] == "custom"
    assert env["CLAUDE_AGENT_SDK_VERSION"] == sdk_version()


def test_env_reads_session_state_respects_caller() -> None:
    o = ClaudeAgentOptions(env={"CLAUDE_CODE_SDK_READS_SESSION_STATE": "0"})
    assert build_env(o, base_env={})["CLAUDE_CODE_SDK_READS_SESSION_STATE"] == "0"
    inherited = {"CLAUDE_CODE_SDK_READS_SESSION_STATE": "0"}
    env = build_env(ClaudeAgentOptions(), base_env=inherited)
    assert env["CLAUDE_CODE_SDK_READS_SESSION_STATE"] == "0"


def test_env_file_checkpointing() -> None:
    env = build_env(ClaudeAgentOptions(enable_file_checkpointing=True), base_env={})
    assert env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] == "true"


def test_env_pwd_from_cwd() -> None:
    env = build_env(ClaudeAgentOptions(cwd=Path("/work/x")), base_env={"PWD": "/old"})
    assert env["PWD"] == "/work/x"


def test_env_client_app() -> None:
    env = build_env(ClaudeAgentOptions(client_app="my-app/1.0"), base_env={})
    assert env["CLAUDE_AGENT_SDK_CLIENT_APP"] == "my-app/1.0"


def test_env_rejects_non_string_values() -> None:
    bad: Any = {"N": 1}
    with pytest.raises(TypeError, match="env"):
        build_env(ClaudeAgentOptions(env=bad), base_env={})


@pytest.mark.parametrize("env", [{"A=B": "x"}, {"": "x"}, {"A\0B": "x"}, {"A": "x\0secret"}])
def test_env_rejects_what_no_process_environment_holds(env: dict[str, str]) -> None:
    """Named in a typed error before anything starts (the OS refused it at the spawn,
    with a message naming nothing); never the value."""
    with pytest.raises(OptionsError, match="env") as caught:
        build_env(ClaudeAgentOptions(env=env), base_env={})
    assert repr(next(iter(env))) in str(caught.value) and "secret" not in str(caught.value)
    assert build_env(ClaudeAgentOptions(env={"A-B": "x", "1A": "y"}), base_env={})["A-B"] == "x"


@pytest.mark.parametrize("env", [{"A": "x\ud800"}, {"A\udfff": "x"}])
def test_env_rejects_a_lone_surrogate_no_process_environment_holds(env: dict[str, str]) -> None:
    """It used to reach the spawn: a `CLIConnectionError` saying the CLI could not start."""
    with pytest.raises(OptionsError, match="lone surrogate") as caught:
        build_env(ClaudeAgentOptions(env=env), base_env={})
    assert repr(next(iter(env))) in str(caught.value)
    undecodable_byte = os.fsdecode(b"x\xff")  # 'x\udcff': the OS takes it as the byte
    assert build_env(ClaudeAgentOptions(env={"A": undecodable_byte}), base_env={})["A"]


@pytest.mark.parametrize(
    ("option", "flag", "bad"),
    [
        ({"system_prompt": "be {}"}, "--system-prompt", "\ud800"),
        ({"system_prompt": "be {}"}, "--system-prompt", "\0"),
        ({"settings": '{{"model": "{}"}}'}, "--settings", "\ud800"),
        ({"mcp_servers": {"s": {"command": "x", "args": ["{}"]}}}, "--mcp-config", "\ud800"),
        ({"model": "claude{}"}, "--model", "\0"),
        ({"extra_args": {"debug": "a{}"}}, "--debug", "\ud800"),
        ({"extra_args": {"debug": "-a{}"}}, "--debug", "\0"),
        ({"add_dirs": ["/tmp/{}"]}, "--add-dir", "\0"),
    ],
)
def test_a_value_no_command_line_carries_is_refused_naming_its_flag(
    option: dict[str, Any], flag: str, bad: str
) -> None:
    """A lone surrogate used to raise a bare `UnicodeEncodeError` (settings, system
    prompt, MCP config); it and a NUL elsewhere reached the spawn (a
    `CLIConnectionError` naming nothing). Now an `OptionsError` names the flag, never
    the value. (JSON values escape a NUL: ``"\\u0000"`` is carried.)"""

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("{}", bad).replace("{{", "{").replace("}}", "}")
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        return [fill(v) for v in value]

    with pytest.raises(OptionsError, match=f"the value of {flag} holds") as caught:
        build_argv(ClaudeAgentOptions(**fill(option)), cli_path="claude")
    assert "no command line can carry it" in str(caught.value)


def test_a_spilled_value_no_file_carries_is_refused(tmp_path: Path) -> None:
    prompt = "x" * (SPILL_THRESHOLD + 1) + "\ud800"
    with pytest.raises(OptionsError, match="the system-prompt holds '\\\\ud800'"):
        build_argv(ClaudeAgentOptions(system_prompt=prompt), cli_path="c", spill_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_sdk_version_is_cached_string() -> None:
    assert isinstance(sdk_version(), str)
    assert sdk_version() is sdk_version()
    assert sdk_version() != ""


# ------------------------------------------------------------ inherited environment

HOST_ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LOGNAME": "u",
    "SHELL": "/bin/bash",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_CTYPE": "C",
    "TERM": "xterm",
    "TZ": "UTC",
    "TMPDIR": "/tmp",
    "XDG_CONFIG_HOME": "/home/u/.config",
    "ANTHROPIC_API_KEY": "sk-ant-host",
    "ANTHROPIC_BASE_URL": "https://api",
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "CLAUDE_CONFIG_DIR": "/cfg",
    "CLAUDECODE": "1",
    "AWS_REGION": "us-east-1",
    "AWS_PROFILE": "p",
    "GOOGLE_APPLICATION_CREDENTIALS": "/adc.json",
    "CLOUD_ML_REGION": "us-east5",
    "VERTEX_REGION_CLAUDE_3_5_HAIKU": "us-central1",
    "HTTPS_PROXY": "http://proxy:3128",
    "https_proxy": "http://proxy:3128",
    "NO_PROXY": "localhost",
    "no_proxy": "localhost",
    "NODE_EXTRA_CA_CERTS": "/ca.pem",
    "SSL_CERT_FILE": "/cert.pem",
    "SSL_CERT_DIR": "/certs",
    "DISABLE_TELEMETRY": "1",
    "MCP_TIMEOUT": "30000",
    "ENABLE_TOOL_SEARCH": "false",
    # not for the CLI
    "GITHUB_TOKEN": "ghp-secret",
    "DATABASE_URL": "postgres://user:pw@db/app",
    "OPENAI_API_KEY": "sk-openai",
    "MY_APP_SECRET": "s3cret",
    "XDGNOT": "x",  # a prefix pattern needs its underscore
    "LCX": "x",
}
NOT_FOR_CLI = {"CLAUDECODE", "GITHUB_TOKEN", "DATABASE_URL", "OPENAI_API_KEY", "MY_APP_SECRET"}
NOT_FOR_CLI |= {"XDGNOT", "LCX"}
CLI_NEEDS = set(HOST_ENV) - NOT_FOR_CLI
OWN = {"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_AGENT_SDK_VERSION", "CLAUDE_CODE_SDK_READS_SESSION_STATE"}


def test_env_default_inherits_everything_as_the_reference_does() -> None:
    o = ClaudeAgentOptions(env={"MINE": "m"})
    env = build_env(o, base_env={**HOST_ENV, "IS_SANDBOX": "1"})
    assert set(env) == (set(HOST_ENV) - {"CLAUDECODE"}) | OWN | {"MINE", "IS_SANDBOX"}
    assert env["GITHUB_TOKEN"] == "ghp-secret" and env["IS_SANDBOX"] == "1"


def test_env_allowlist_inherits_only_what_the_cli_needs() -> None:
    o = ClaudeAgentOptions(env={"MINE": "m"}, inherit_env=CLI_ENV_ALLOWLIST)
    env = build_env(o, base_env=HOST_ENV)
    assert set(env) == CLI_NEEDS | OWN | {"MINE"}
    assert all(env[k] == HOST_ENV[k] for k in CLI_NEEDS)
    assert "ghp-secret" not in env.values() and "s3cret" not in env.values()


def test_env_default_list_covers_the_documented_names() -> None:
    for name in (
        *("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_NUMERIC", "TERM", "TZ"),
        *("TMPDIR", "TMP", "TEMP", "XDG_RUNTIME_DIR", "ANTHROPIC_AUTH_TOKEN"),
        *("CLAUDE_CODE_USE_VERTEX", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"),
        *("GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_REGION", "VERTEX_REGION_X"),
        *("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"),
        *("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "DISABLE_AUTOUPDATER"),
        *("MCP_TOOL_TIMEOUT", "ENABLE_TOOL_SEARCH"),
        *("USERPROFILE", "APPDATA", "LOCALAPPDATA", "SYSTEMROOT", "COMSPEC", "PATHEXT"),
    ):
        assert inherited_env({name: "v"}, CLI_ENV_ALLOWLIST) == {name: "v"}, name
    assert inherited_env({"CLAUDECODE": "1"}, CLI_ENV_ALLOWLIST) == {}


def test_env_never_inherits_claudecode_nor_an_outer_sessions_label() -> None:
    outer = {**HOST_ENV, "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP": "outer-app"}
    for inherit in (True, CLI_ENV_ALLOWLIST, ["CLAUDE*"]):
        env = build_env(ClaudeAgentOptions(inherit_env=inherit), base_env=outer)
        assert "CLAUDECODE" not in env and "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP" not in env


def test_env_inherit_false_takes_nothing() -> None:
    o = ClaudeAgentOptions(inherit_env=False, env={"PATH": "/only", "ANTHROPIC_API_KEY": "k"})
    env = build_env(o, base_env=HOST_ENV)
    assert set(env) == OWN | {"PATH", "ANTHROPIC_API_KEY"}
    assert env["PATH"] == "/only" and env["ANTHROPIC_API_KEY"] == "k"


def test_env_inherit_explicit_names_and_patterns() -> None:
    o = ClaudeAgentOptions(inherit_env=("PATH", "MY_APP_*", "CLAUDECODE", "LC_?TYPE"))
    env = build_env(o, base_env=HOST_ENV)
    assert set(env) == OWN | {"PATH", "MY_APP_SECRET", "LC_CTYPE"}
    extended = ClaudeAgentOptions(inherit_env=[*CLI_ENV_ALLOWLIST, "GITHUB_TOKEN"])
    assert set(build_env(extended, base_env=HOST_ENV)) == CLI_NEEDS | OWN | {"GITHUB_TOKEN"}


def test_env_inherit_iterable_is_kept_and_reusable() -> None:
    o = ClaudeAgentOptions(inherit_env=(name for name in ["PATH", "HOME"]))
    assert o.inherit_env == ("PATH", "HOME")
    first = build_env(o, base_env=HOST_ENV)
    assert build_env(o, base_env=HOST_ENV) == first
    assert set(first) == OWN | {"PATH", "HOME"}


def test_env_user_values_win_over_inherited_ones() -> None:
    o = ClaudeAgentOptions(env={"ANTHROPIC_API_KEY": "mine"})
    assert build_env(o, base_env=HOST_ENV)["ANTHROPIC_API_KEY"] == "mine"


@pytest.mark.parametrize("bad", ["PATH", b"PATH", 3, ["PATH", 1], ["PATH", ""]])
def test_env_inherit_rejects_bad_values(bad: Any) -> None:
    with pytest.raises(TypeError, match="inherit_env"):
        ClaudeAgentOptions(inherit_env=bad)
    o = ClaudeAgentOptions()
    o.inherit_env = bad  # assigned later: caught when the environment is built
    with pytest.raises(TypeError, match="inherit_env"):
        build_env(o, base_env=HOST_ENV)


def test_env_inherit_case_insensitive_matching_for_windows() -> None:
    host = {"Path": "C:/x", "SystemRoot": "C:/W", "Other": "o"}
    assert inherited_env(host, ("PATH", "SYSTEMROOT"), ignore_case=True) == {
        "Path": "C:/x",
        "SystemRoot": "C:/W",
    }
    assert inherited_env(host, ("PATH",), ignore_case=False) == {}


def test_env_errors_never_quote_values() -> None:
    bad: Any = {"TOKEN": b"sk-bytes-secret"}
    with pytest.raises(TypeError) as info:
        build_env(ClaudeAgentOptions(env=bad), base_env={})
    assert "sk-bytes-secret" not in str(info.value) and "TOKEN" in str(info.value)


def test_mcp_servers_any_path_like_passed_through() -> None:
    class ConfigPath:  # an os.PathLike that is not a pathlib.Path
        def __fspath__(self) -> str:
            return "/x/mcp.json"

    o = ClaudeAgentOptions(mcp_servers=ConfigPath())  # type: ignore[arg-type]
    assert flags(o) == ["--mcp-config", "/x/mcp.json"]
    assert sdk_servers(ConfigPath()) == {}  # type: ignore[arg-type]
    assert sdk_servers(Path("/x/mcp.json")) == {}
