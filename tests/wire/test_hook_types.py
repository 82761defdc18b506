"""Typed hook inputs and outputs, and the CLI's matcher rules (protocol reference §6).

* every one of the 35 hook events decodes from its snake_case wire dict (§6.2) into its
  own class, with exact field values, unknown fields kept, missing ones defaulted, and
  a mapping view that behaves like the wire dict;
* every event-specific output encodes to the exact camelCase wire form of §6.3, the
  ``async``/``continue`` keywords are converted, and an output for another event is
  refused (also end to end through the fake CLI);
* :class:`ccwire.HookMatcher` follows the CLI's matcher rules (exact names, ``A|B``
  lists, regular expressions searched in the value, ``*``/None, the matcher value of
  each event), as read from the CLI 2.1.330 bundle.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, get_args

import anyio
import pytest

import ccwire
from ccwire import (
    AsyncHookOutput,
    BaseHookInput,
    CallbackError,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CwdChangedOutput,
    ElicitationOutput,
    ElicitationResultOutput,
    FileChangedOutput,
    HookEvent,
    HookMatcher,
    HookOutput,
    HookSpecificOutput,
    MessageDisplayOutput,
    NotificationOutput,
    PermissionDeniedOutput,
    PermissionRequestOutput,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    PostModelSwitchOutput,
    PostToolBatchOutput,
    PostToolUseFailureOutput,
    PostToolUseOutput,
    PreModelSwitchOutput,
    PreSkillShellCommandOutput,
    PreToolUseOutput,
    SessionStartOutput,
    SetupOutput,
    StopOutput,
    SubagentStartOutput,
    SubagentStopOutput,
    UnsupportedFeatureError,
    UserPromptExpansionOutput,
    UserPromptSubmitOutput,
    WorktreeCreateOutput,
    parse_hook_input,
)
from ccwire._wire.codec import encode_hook_result
from ccwire._wire.hook_input import HOOK_INPUT_TYPES
from ccwire._wire.hook_types import LEGACY_TOOL_NAMES, matcher_matches
from ccwire.testing import FakeCLI, memory_transport_pair

ALL_EVENTS = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "Interrupt",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
    "PreSkillShellCommand",
]
"""The 33 events of protocol reference §6.1, in its order, with Interrupt (the TypeScript
SDK 0.3.337's) and PreSkillShellCommand (the TypeScript SDK 0.3.332's, CLI 2.1.332 and
later) where the TypeScript SDK lists them."""

BASE = {
    "session_id": "4b1d2c7e-0000-4000-8000-000000000001",
    "transcript_path": "/home/u/.claude/projects/p/4b1d2c7e.jsonl",
    "cwd": "/work/repo",
    "permission_mode": "acceptEdits",
    "prompt_id": "prompt-7",
    "agent_id": "agent-3",
    "agent_type": "reviewer",
    "effort": {"level": "medium"},
}
"""The base fields every input carries (§6.2)."""

MCP = {"name": "calc", "source": "sdk"}
BG_TASK = {"id": "t1", "type": "local_bash", "status": "running", "description": "build"}
CRON = {"id": "c1", "schedule": "*/5 * * * *", "recurring": True, "prompt": "poll"}
SWITCH = {
    "from_model": "claude-opus-4-5",
    "to_model": "claude-haiku-4-5",
    "requested_model": "haiku",
    "source": "set_model",
    "context_tokens": 5120,
    "prompt_cache_warm": True,
    "cache_ttl": "5m",
    "estimated_cache_write_usd": 0.0125,
    "pricing": {"input": 1.0, "output": 5.0},
}
TASK = {
    "task_id": "task-9",
    "task_subject": "Write tests",
    "task_description": "All 33 events",
    "teammate_name": "ann",
    "team_name": "core",
}

# event -> (its public class name, the event-specific wire fields of §6.2 with sample
# values, the value the CLI tests matchers against or None when it ignores matchers).
# Matcher values follow the CLI's own switch over hook_event_name (CLI 2.1.330 bundle).
EVENTS: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "PreToolUse": (
        "PreToolUseHookInput",
        {
            "tool_name": "mcp__calc__add",
            "tool_input": {"a": 1, "b": 2},
            "tool_use_id": "toolu_01",
            "mcp_server": MCP,
        },
        "mcp__calc__add",
    ),
    "PostToolUse": (
        "PostToolUseHookInput",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "echo hi"},
            "tool_response": {"stdout": "hi\n", "stderr": "", "interrupted": False},
            "tool_use_id": "toolu_02",
            "duration_ms": 42,
        },
        "Bash",
    ),
    "PostToolUseFailure": (
        "PostToolUseFailureHookInput",
        {
            "tool_name": "Read",
            "tool_input": {"file_path": "/nope"},
            "tool_use_id": "toolu_03",
            "error": "File does not exist.",
            "is_interrupt": False,
            "duration_ms": 7,
        },
        "Read",
    ),
    "PostToolBatch": (
        "PostToolBatchHookInput",
        {
            "tool_calls": [
                {"tool_name": "Read", "tool_input": {"file_path": "/a"}, "tool_use_id": "t1"},
                {
                    "tool_name": "Grep",
                    "tool_input": {"pattern": "x"},
                    "tool_use_id": "t2",
                    "tool_response": "no matches",
                },
            ]
        },
        None,
    ),
    "Notification": (
        "NotificationHookInput",
        {
            "message": "Claude needs your permission",
            "title": "Permission",
            "notification_type": "permission_prompt",
        },
        "permission_prompt",
    ),
    "UserPromptSubmit": (
        "UserPromptSubmitHookInput",
        {"prompt": "fix the bug", "source": "sdk", "session_title": "Bug hunt"},
        None,
    ),
    "UserPromptExpansion": (
        "UserPromptExpansionHookInput",
        {
            "expansion_type": "slash_command",
            "command_name": "review",
            "command_args": "src/",
            "command_source": "projectSettings",
            "prompt": "Review src/ carefully",
        },
        "review",
    ),
    "SessionStart": (
        "SessionStartHookInput",
        {
            "source": "resume",
            "model": "claude-opus-4-5",
            "session_title": "Bug hunt",
            "seconds_since_last_response": 12.5,
            "context_tokens": 2048,
            "prompt_cache_likely_expired": False,
            "estimated_cache_write_usd": 0.02,
        },
        "resume",
    ),
    "SessionEnd": ("SessionEndHookInput", {"reason": "prompt_input_exit"}, "prompt_input_exit"),
    "Stop": (
        "StopHookInput",
        {
            "stop_hook_active": True,
            "last_assistant_message": "All done.",
            "background_tasks": [BG_TASK],
            "session_crons": [CRON],
        },
        None,
    ),
    "StopFailure": (
        "StopFailureHookInput",
        {
            "error": "rate_limit",
            "error_details": {"status": 429, "retry_after": 30},
            "last_assistant_message": "Working on it",
        },
        "rate_limit",
    ),
    "SubagentStart": (
        "SubagentStartHookInput",
        {"agent_id": "agent-5", "agent_type": "Explore"},
        "Explore",
    ),
    "SubagentStop": (
        "SubagentStopHookInput",
        {
            "stop_hook_active": False,
            "agent_id": "agent-5",
            "agent_transcript_path": "/home/u/.claude/projects/p/agent-5.jsonl",
            "agent_type": "Explore",
            "last_assistant_message": "Found 3 files",
            "background_tasks": [BG_TASK],
            "session_crons": [CRON],
        },
        "Explore",
    ),
    "PreCompact": (
        "PreCompactHookInput",
        {"trigger": "manual", "custom_instructions": "keep the plan"},
        "manual",
    ),
    "PostCompact": (
        "PostCompactHookInput",
        {"trigger": "auto", "compact_summary": "We fixed the parser."},
        "auto",
    ),
    "PreModelSwitch": ("PreModelSwitchHookInput", SWITCH, "claude-haiku-4-5"),
    "PostModelSwitch": ("PostModelSwitchHookInput", SWITCH, "claude-haiku-4-5"),
    "PermissionRequest": (
        "PermissionRequestHookInput",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "npm test"},
            "permission_suggestions": [
                {
                    "type": "addRules",
                    "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                    "behavior": "allow",
                    "destination": "localSettings",
                },
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            ],
        },
        "Bash",
    ),
    "PermissionDenied": (
        "PermissionDeniedHookInput",
        {
            "tool_name": "Write",
            "tool_input": {"file_path": "/etc/passwd", "content": ""},
            "tool_use_id": "toolu_04",
            "reason": "outside the workspace",
        },
        "Write",
    ),
    "Setup": ("SetupHookInput", {"trigger": "init"}, "init"),
    "TeammateIdle": ("TeammateIdleHookInput", {"teammate_name": "ann", "team_name": "core"}, None),
    "TaskCreated": ("TaskCreatedHookInput", TASK, None),
    "TaskCompleted": ("TaskCompletedHookInput", TASK, None),
    "Elicitation": (
        "ElicitationHookInput",
        {
            "mcp_server_name": "github",
            "message": "Pick a repository",
            "mode": "form",
            "url": "https://example.com/form",
            "elicitation_id": "el-1",
            "requested_schema": {"type": "object", "properties": {"repo": {"type": "string"}}},
        },
        "github",
    ),
    "ElicitationResult": (
        "ElicitationResultHookInput",
        {
            "mcp_server_name": "github",
            "elicitation_id": "el-1",
            "mode": "form",
            "action": "accept",
            "content": {"repo": "ccwire"},
        },
        "github",
    ),
    "ConfigChange": (
        "ConfigChangeHookInput",
        {"source": "project_settings", "file_path": "/work/repo/.claude/settings.json"},
        "project_settings",
    ),
    "WorktreeCreate": ("WorktreeCreateHookInput", {"name": "feature-x"}, None),
    "WorktreeRemove": ("WorktreeRemoveHookInput", {"worktree_path": "/work/wt/feature-x"}, None),
    "InstructionsLoaded": (
        "InstructionsLoadedHookInput",
        {
            "file_path": "/work/repo/CLAUDE.md",
            "memory_type": "Project",
            "load_reason": "session_start",
            "globs": ["src/**/*.py"],
            "trigger_file_path": "/work/repo/src/a.py",
            "parent_file_path": "/work/repo/.claude/rules.md",
        },
        "session_start",
    ),
    "CwdChanged": (
        "CwdChangedHookInput",
        {"old_cwd": "/work/repo", "new_cwd": "/work/repo/src"},
        None,
    ),
    "FileChanged": (
        "FileChangedHookInput",
        {"file_path": "/work/repo/.claude/settings.json", "event": "change"},
        "settings.json",  # the CLI matches FileChanged matchers against the base name
    ),
    "DirectoryAdded": (
        "DirectoryAddedHookInput",
        {"directory": "/work/other", "source": "add_dir_command"},
        "add_dir_command",
    ),
    "MessageDisplay": (
        "MessageDisplayHookInput",
        {"turn_id": "turn-1", "message_id": "msg_1", "index": 3, "final": True, "delta": "Hello"},
        None,
    ),
    "Interrupt": (
        "InterruptHookInput",
        {"source": "system", "reason": "permission_denied", "via": "client"},
        None,
    ),
    "PreSkillShellCommand": (
        "PreSkillShellCommandHookInput",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "git log -3"},
            "tool_use_id": "skill-shell-1",
            "command_name": "release-notes",
            "command_source": "projectSettings",
            "invoked_by": "claude",
        },
        "Bash",
    ),
}

SUGGESTIONS = (
    PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(tool_name="Bash", rule_content="npm test:*")],
        behavior="allow",
        destination="localSettings",
    ),
    PermissionUpdate(type="setMode", mode="acceptEdits", destination="session"),
)
"""The typed form of the PermissionRequest sample's ``permission_suggestions``."""


def wire(event: str, **extra: Any) -> dict[str, Any]:
    """The full wire input of ``event``: base fields, event fields and ``extra``."""
    return {**BASE, "hook_event_name": event, **EVENTS[event][1], **extra}


def expected_value(name: str, value: Any) -> Any:
    return SUGGESTIONS if name == "permission_suggestions" else value


# ------------------------------------------------------------------------ inputs


def test_the_35_events_each_have_their_own_public_input_class() -> None:
    assert len(ALL_EVENTS) == 35 and set(EVENTS) == set(ALL_EVENTS)
    assert list(get_args(HookEvent)) == ALL_EVENTS
    assert len(HOOK_INPUT_TYPES) == 35 and set(HOOK_INPUT_TYPES) == set(ALL_EVENTS)
    for event, (class_name, _, _) in EVENTS.items():
        cls = getattr(ccwire, class_name)
        assert HOOK_INPUT_TYPES[event] is cls and event == cls.EVENT
        assert issubclass(cls, BaseHookInput) and class_name in ccwire.__all__
    assert len(set(HOOK_INPUT_TYPES.values())) == 35


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_every_field_of_the_wire_input_decodes(event: str) -> None:
    class_name, specific, _ = EVENTS[event]
    data = wire(event)
    parsed = parse_hook_input(data)
    assert type(parsed) is getattr(ccwire, class_name)
    assert parsed.hook_event_name == event
    for name, value in data.items():
        assert getattr(parsed, name) == expected_value(name, value), name
    # every §6.2 field of the event is a typed attribute, not only a mapping key
    names = {f.name for f in dataclasses.fields(parsed)}
    assert set(BASE) | set(specific) | {"hook_event_name"} <= names
    assert parsed.raw is data


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_the_input_is_also_the_wire_dict(event: str) -> None:
    data = wire(event, future_field={"added": "in a newer CLI"})
    parsed = parse_hook_input(data)
    assert parsed == data and dict(parsed) == data and parsed != {**data, "cwd": "/elsewhere"}
    assert list(parsed) == list(data) and len(parsed) == len(data)
    assert parsed["cwd"] == "/work/repo" and parsed.get("no_such_key", "dflt") == "dflt"
    assert "future_field" in parsed and "no_such_key" not in parsed
    assert parsed["future_field"] == {"added": "in a newer CLI"}  # unknown: kept
    assert not hasattr(parsed, "future_field") and parsed.raw["future_field"] is not None
    assert dict(parsed.items()) == data and list(parsed.values()) == list(data.values())
    with pytest.raises(KeyError):
        parsed["no_such_key"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.cwd = "/elsewhere"  # type: ignore[misc]
    if event == "PermissionRequest":  # the mapping keeps the wire form, the attribute is typed
        assert parsed["permission_suggestions"] == data["permission_suggestions"]


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_missing_fields_take_their_defaults(event: str) -> None:
    parsed = parse_hook_input({"hook_event_name": event})
    assert type(parsed) is HOOK_INPUT_TYPES[event]
    assert parsed.raw == {"hook_event_name": event} and dict(parsed) == parsed.raw
    for f in dataclasses.fields(parsed):
        if f.name in ("hook_event_name", "raw"):
            continue
        factory: Any = f.default_factory
        default = f.default if f.default is not dataclasses.MISSING else factory()
        assert getattr(parsed, f.name) == default, f.name
    assert (parsed.session_id, parsed.transcript_path, parsed.cwd) == ("", "", "")
    assert (parsed.permission_mode, parsed.agent_id, parsed.effort) == (None, None, None)


def test_defaults_are_the_documented_empty_values() -> None:
    pre = parse_hook_input({"hook_event_name": "PreToolUse"})
    assert isinstance(pre, ccwire.PreToolUseHookInput)
    assert (pre.tool_name, pre.tool_input, pre.tool_use_id, pre.mcp_server) == ("", {}, None, None)
    post = parse_hook_input({"hook_event_name": "PostToolUse"})
    assert isinstance(post, ccwire.PostToolUseHookInput)
    assert (post.tool_response, post.duration_ms) == (None, None)
    stop = parse_hook_input({"hook_event_name": "Stop"})
    assert isinstance(stop, ccwire.StopHookInput)
    assert stop.stop_hook_active is False and stop.background_tasks is None
    req = parse_hook_input({"hook_event_name": "PermissionRequest"})
    assert isinstance(req, ccwire.PermissionRequestHookInput) and req.permission_suggestions == ()
    batch = parse_hook_input({"hook_event_name": "PostToolBatch"})
    assert isinstance(batch, ccwire.PostToolBatchHookInput) and tuple(batch.tool_calls) == ()
    shown = parse_hook_input({"hook_event_name": "MessageDisplay"})
    assert isinstance(shown, ccwire.MessageDisplayHookInput)
    assert (shown.index, shown.final, shown.delta) == (0, False, "")


def test_nulls_where_a_value_is_expected_keep_the_default() -> None:
    data = {
        "hook_event_name": "PreToolUse",
        "tool_name": None,
        "tool_input": None,
        "tool_use_id": None,
        "cwd": None,
    }
    parsed = parse_hook_input(data)
    assert isinstance(parsed, ccwire.PreToolUseHookInput)
    assert (parsed.tool_name, parsed.cwd) == ("", "")
    assert parsed.tool_use_id is None
    assert parsed["tool_input"] is None  # the mapping is the wire, unchanged
    noted = parse_hook_input(
        {"hook_event_name": "PermissionRequest", "permission_suggestions": None}
    )
    assert isinstance(noted, ccwire.PermissionRequestHookInput)
    assert noted.permission_suggestions == ()


def test_a_null_tool_input_keeps_its_default() -> None:
    parsed = parse_hook_input({"hook_event_name": "PreToolUse", "tool_input": None})
    assert isinstance(parsed, ccwire.PreToolUseHookInput)
    assert parsed.tool_input == {}
    assert parsed["tool_input"] is None  # the mapping is the wire, unchanged


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_a_null_takes_the_default_of_every_field_with_a_default_factory(event: str) -> None:
    cls = HOOK_INPUT_TYPES[event]
    made = {
        f.name: f.default_factory()
        for f in dataclasses.fields(cls)
        if f.name != "raw" and f.default_factory is not dataclasses.MISSING
    }
    parsed = parse_hook_input({"hook_event_name": event, **dict.fromkeys(made)})
    assert {name: getattr(parsed, name) for name in made} == made


def test_malformed_permission_suggestions_are_skipped_not_fatal() -> None:
    parsed = parse_hook_input(
        {
            "hook_event_name": "PermissionRequest",
            "permission_suggestions": [
                "not an object",
                {"type": "addDirectories", "directories": ["/x"], "destination": "session"},
            ],
        }
    )
    assert isinstance(parsed, ccwire.PermissionRequestHookInput)
    assert parsed.permission_suggestions == (
        PermissionUpdate(type="addDirectories", directories=["/x"], destination="session"),
    )


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"hook_event_name": "SomeFutureEvent", "session_id": "s", "new_field": 1},
        {"hook_event_name": 42, "cwd": "/w"},
    ],
)
def test_unknown_events_arrive_as_the_base_class(data: dict[str, Any]) -> None:
    parsed = parse_hook_input(data)
    assert type(parsed) is BaseHookInput and parsed == data
    assert parsed.matcher_value is None
    if data.get("hook_event_name") == "SomeFutureEvent":
        assert parsed.hook_event_name == "SomeFutureEvent" and parsed.session_id == "s"
        assert parsed["new_field"] == 1


def test_typed_inputs_narrow_with_isinstance() -> None:
    parsed = parse_hook_input(wire("PostToolUseFailure"))
    assert isinstance(parsed, ccwire.ToolHookInput)
    assert isinstance(parsed, ccwire.PostToolUseFailureHookInput)
    assert not isinstance(parsed, ccwire.PostToolUseHookInput)
    assert parsed.error == "File does not exist." and parsed.is_interrupt is False
    assert ccwire.HookInput is BaseHookInput


# ------------------------------------------------------------------ matcher values


@pytest.mark.parametrize("event", ALL_EVENTS)
def test_matcher_value_of_every_event(event: str) -> None:
    _, _, value = EVENTS[event]
    parsed = parse_hook_input(wire(event))
    assert parsed.matcher_value == value
    if value is None:  # the CLI ignores matchers for this event: every pattern runs
        assert HookMatcher(matcher="zz_never").matches(parsed)
    else:
        assert HookMatcher(matcher=value).matches(parsed)
        assert not HookMatcher(matcher="zz_never").matches(parsed)
    assert HookMatcher().matches(parsed) and HookMatcher(matcher="*").matches(parsed)


def _tool(name: str, event: str = "PreToolUse") -> dict[str, Any]:
    return {"hook_event_name": event, "tool_name": name, "tool_input": {}}


@pytest.mark.parametrize(
    ("pattern", "tool", "expected"),
    [
        # None, "" and "*" match every tool
        (None, "Bash", True),
        ("", "mcp__calc__add", True),
        ("*", "Write", True),
        # a bare name is an exact name: no substring, no prefix, case-sensitive
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("bash", "Bash", False),
        ("calc", "mcp__calc__add", False),
        ("mcp__calc", "mcp__calc__add", False),
        ("mcp__calc__add", "mcp__calc__add", True),
        # "A|B" is a list of exact names
        ("Write|Edit", "Edit", True),
        ("Write|Edit", "Write", True),
        ("Write|Edit", "MultiEdit", False),
        ("Write|Edit", "Read", False),
        # tool events also split on commas, and strip spaces
        ("Write, Edit", "Edit", True),
        ("Write , Edit", "Write", True),
        ("Write,Edit", "NotebookEdit", False),
        # anything else is a regular expression searched (not anchored) in the name
        ("mcp__calc__.*", "mcp__calc__add", True),
        ("mcp__calc__.*", "mcp__other__add", False),
        ("calc__(add|sub)", "mcp__calc__add", True),
        ("Notebook.*", "NotebookEdit", True),
        ("^Bash$", "Bash", True),
        ("^Bash$", "BashOutput", False),
        ("Edit$", "MultiEdit", True),
        # an invalid regular expression matches nothing
        ("mcp__[", "mcp__[", False),
        ("(Bash", "Bash", False),
    ],
)
def test_tool_matchers_follow_the_cli_rules(pattern: str | None, tool: str, expected: bool) -> None:
    data = _tool(tool)
    assert HookMatcher(matcher=pattern).matches(data) is expected
    assert HookMatcher(matcher=pattern).matches(parse_hook_input(data)) is expected
    for event in ("PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"):
        assert HookMatcher(matcher=pattern).matches(_tool(tool, event)) is expected


def test_commas_split_lists_only_for_the_events_the_cli_splits() -> None:
    # StopFailure is not one of them: "a,b" is then a regular expression
    failure = {"hook_event_name": "StopFailure", "error": "rate_limit"}
    assert HookMatcher(matcher="rate_limit|server_error").matches(failure)
    assert not HookMatcher(matcher="rate_limit,server_error").matches(failure)
    assert HookMatcher(matcher="rate_.*").matches(failure)
    # SessionStart is: "startup, resume" lists two sources
    start = {"hook_event_name": "SessionStart", "source": "resume"}
    assert HookMatcher(matcher="startup, resume").matches(start)
    assert not HookMatcher(matcher="startup, clear").matches(start)


def test_non_tool_events_match_their_own_value() -> None:
    note = {"hook_event_name": "Notification", "notification_type": "idle_prompt"}
    assert HookMatcher(matcher="idle_prompt|permission_prompt").matches(note)
    assert not HookMatcher(matcher="permission_prompt").matches(note)
    changed = {"hook_event_name": "FileChanged", "file_path": "/r/.claude/settings.json"}
    assert HookMatcher(matcher="settings.json").matches(changed)  # the base name
    assert HookMatcher(matcher=r"\.json$").matches(changed)
    assert not HookMatcher(matcher="claude").matches(changed)  # not the directory
    sub = {"hook_event_name": "SubagentStop", "agent_type": "Explore"}
    assert HookMatcher(matcher="Explore|Plan").matches(sub)
    assert not HookMatcher(matcher="Plan").matches(sub)


def test_events_without_a_matcher_value_run_every_matcher() -> None:
    for data in (
        {"hook_event_name": "Stop"},
        {"hook_event_name": "UserPromptSubmit", "prompt": "Bash"},
        {"hook_event_name": "TaskCreated", "task_id": "t"},
    ):
        assert HookMatcher(matcher="Bash").matches(data), data
        assert HookMatcher(matcher="(invalid").matches(data), data


def test_legacy_tool_names_in_matchers_match_the_renamed_tool() -> None:
    assert HookMatcher(matcher="Task").matches(_tool("Agent"))
    assert HookMatcher(matcher="KillShell|Read").matches(_tool("TaskStop"))


@pytest.mark.parametrize(
    ("legacy", "tool"),
    [
        ("Task", "Agent"),
        ("KillShell", "TaskStop"),
        ("KillBash", "TaskStop"),
        ("ListPeers", "ListAgents"),
        ("Brief", "SendUserMessage"),
        ("ListMcpResources", "ListMcpResourcesTool"),
        ("ReadMcpResource", "ReadMcpResourceTool"),
        ("ProposeGoal", "SetGoal"),
    ],
)
def test_each_legacy_name_the_cli_maps(legacy: str, tool: str) -> None:
    assert LEGACY_TOOL_NAMES[legacy] == tool
    assert matcher_matches(legacy, tool, event="PreToolUse")
    assert matcher_matches(f"Read|{legacy}", tool, event="PostToolUse")
    assert matcher_matches(f"Read, {legacy}", tool, event="PermissionRequest")  # wide lists
    assert matcher_matches(tool, tool, event="PreToolUse")  # the current name still works
    assert not matcher_matches(legacy, "Read", event="PreToolUse")


def test_legacy_names_only_rename_whole_names() -> None:
    # "Task" names Agent, not the other tools whose names start with Task
    for other in ("TaskStop", "TaskCreate", "TaskList", "Bash"):
        assert not HookMatcher(matcher="Task").matches(_tool(other)), other
    assert not HookMatcher(matcher="Agent").matches(_tool("TaskStop"))
    # a regular expression also matches a tool by its legacy name, as in the CLI
    assert HookMatcher(matcher="^Task$").matches(_tool("Agent"))
    assert HookMatcher(matcher="Kill(Shell|Bash)").matches(_tool("TaskStop"))
    assert not HookMatcher(matcher="^Task$").matches(_tool("TaskStop"))
    assert HookMatcher(matcher="^Task").matches(_tool("TaskStop"))  # its own name


def test_hook_matcher_defaults() -> None:
    matcher = HookMatcher()
    assert (matcher.matcher, tuple(matcher.hooks), matcher.timeout, matcher.on_failure) == (
        None,
        (),
        None,
        None,
    )


# ------------------------------------------------------------------------ outputs

ALLOW = PermissionResultAllow(
    updated_input={"command": "npm test -- --ci"},
    updated_permissions=[
        PermissionUpdate(
            type="addRules",
            rules=[PermissionRuleValue(tool_name="Bash", rule_content="npm test:*")],
            behavior="allow",
            destination="session",
        )
    ],
)

# event -> (the typed output with every field set, its exact hookSpecificOutput)
OUTPUTS: dict[str, tuple[HookSpecificOutput, dict[str, Any]]] = {
    "PreToolUse": (
        PreToolUseOutput(
            permission_decision="deny",
            permission_decision_reason="policy",
            updated_input={"command": "ls"},
            additional_context="ran through the guard",
        ),
        {
            "permissionDecision": "deny",
            "permissionDecisionReason": "policy",
            "updatedInput": {"command": "ls"},
            "additionalContext": "ran through the guard",
        },
    ),
    "PostToolUse": (
        PostToolUseOutput(
            additional_context="checked",
            updated_tool_output={"stdout": "redacted"},
            updated_mcp_tool_output=[{"type": "text", "text": "redacted"}],
            classifier_context="safe",
        ),
        {
            "additionalContext": "checked",
            "updatedToolOutput": {"stdout": "redacted"},
            "updatedMCPToolOutput": [{"type": "text", "text": "redacted"}],
            "classifierContext": "safe",
        },
    ),
    "PostToolUseFailure": (
        PostToolUseFailureOutput(additional_context="try --force"),
        {"additionalContext": "try --force"},
    ),
    "PostToolBatch": (
        PostToolBatchOutput(additional_context="batch ok"),
        {"additionalContext": "batch ok"},
    ),
    "Notification": (NotificationOutput(additional_context="seen"), {"additionalContext": "seen"}),
    "SubagentStart": (
        SubagentStartOutput(additional_context="be brief"),
        {"additionalContext": "be brief"},
    ),
    "Setup": (SetupOutput(additional_context="repo ready"), {"additionalContext": "repo ready"}),
    "PostModelSwitch": (
        PostModelSwitchOutput(additional_context="now on haiku"),
        {"additionalContext": "now on haiku"},
    ),
    "Stop": (
        StopOutput(additional_context="also run lint"),
        {"additionalContext": "also run lint"},
    ),
    "SubagentStop": (
        SubagentStopOutput(additional_context="cite files"),
        {"additionalContext": "cite files"},
    ),
    "UserPromptSubmit": (
        UserPromptSubmitOutput(
            additional_context="today is Monday",
            session_title="Bug hunt",
            suppress_original_prompt=True,
        ),
        {
            "additionalContext": "today is Monday",
            "sessionTitle": "Bug hunt",
            "suppressOriginalPrompt": True,
        },
    ),
    "UserPromptExpansion": (
        UserPromptExpansionOutput(additional_context="expanded", suppress_original_prompt=False),
        {"additionalContext": "expanded", "suppressOriginalPrompt": False},
    ),
    "SessionStart": (
        SessionStartOutput(
            additional_context="project notes",
            initial_user_message="hello",
            session_title="Morning",
            watch_paths=("src", "tests"),
            reload_skills=True,
        ),
        {
            "additionalContext": "project notes",
            "initialUserMessage": "hello",
            "sessionTitle": "Morning",
            "watchPaths": ["src", "tests"],
            "reloadSkills": True,
        },
    ),
    "PermissionRequest": (
        PermissionRequestOutput(decision=ALLOW),
        {
            "decision": {
                "behavior": "allow",
                "updatedInput": {"command": "npm test -- --ci"},
                "updatedPermissions": [
                    {
                        "type": "addRules",
                        "destination": "session",
                        "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                        "behavior": "allow",
                    }
                ],
            }
        },
    ),
    "PermissionDenied": (PermissionDeniedOutput(retry=True), {"retry": True}),
    "PreModelSwitch": (
        PreModelSwitchOutput(permission_decision="ask", permission_decision_reason="costly"),
        {"permissionDecision": "ask", "permissionDecisionReason": "costly"},
    ),
    "Elicitation": (
        ElicitationOutput(action="accept", content={"repo": "ccwire"}),
        {"action": "accept", "content": {"repo": "ccwire"}},
    ),
    "ElicitationResult": (
        ElicitationResultOutput(action="decline", content={"reason": "busy"}),
        {"action": "decline", "content": {"reason": "busy"}},
    ),
    "CwdChanged": (CwdChangedOutput(watch_paths=["/w/a"]), {"watchPaths": ["/w/a"]}),
    "FileChanged": (FileChangedOutput(watch_paths=("/w/b",)), {"watchPaths": ["/w/b"]}),
    "WorktreeCreate": (WorktreeCreateOutput(worktree_path="/w/wt/x"), {"worktreePath": "/w/wt/x"}),
    "MessageDisplay": (MessageDisplayOutput(display_content="Hi!"), {"displayContent": "Hi!"}),
    "PreSkillShellCommand": (
        PreSkillShellCommandOutput(
            permission_decision="deny",
            permission_decision_reason="no git in skills",
            updated_input={"command": "true"},
        ),
        {
            "permissionDecision": "deny",
            "permissionDecisionReason": "no git in skills",
            "updatedInput": {"command": "true"},
        },
    ),
}


def _all_output_classes() -> set[type[HookSpecificOutput]]:
    found: set[type[HookSpecificOutput]] = set()
    todo = [HookSpecificOutput]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.EVENT:
                found.add(sub)
    return found


def test_every_event_specific_output_of_the_reference_is_covered() -> None:
    classes = _all_output_classes()
    assert {c.EVENT for c in classes} == set(OUTPUTS) and len(classes) == len(OUTPUTS) == 23
    for event, (output, _) in OUTPUTS.items():
        assert event == type(output).EVENT
        assert type(output).__name__ in ccwire.__all__
        # every field of the class is set in the sample, so each wire name is checked
        assert all(getattr(output, f.name) is not None for f in dataclasses.fields(output))


@pytest.mark.parametrize("event", list(OUTPUTS))
def test_event_specific_output_encodes_to_the_exact_wire_form(event: str) -> None:
    output, specific = OUTPUTS[event]
    expected = {"hookSpecificOutput": {"hookEventName": event, **specific}}
    assert encode_hook_result(output, event) == expected  # shorthand for HookOutput(...)
    assert encode_hook_result(HookOutput(hook_specific_output=output), event) == expected


def test_unset_fields_are_omitted_and_false_is_kept() -> None:
    assert encode_hook_result(PreToolUseOutput(permission_decision="allow"), "PreToolUse") == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
    }
    assert encode_hook_result(StopOutput(), "Stop") == {
        "hookSpecificOutput": {"hookEventName": "Stop"}
    }
    assert encode_hook_result(PermissionDeniedOutput(retry=False), "PermissionDenied") == {
        "hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": False}
    }
    assert encode_hook_result(HookOutput(continue_=False, suppress_output=False), "Stop") == {
        "continue": False,
        "suppressOutput": False,
    }


def test_the_common_fields_use_the_wire_names() -> None:
    output = HookOutput(
        continue_=False,
        suppress_output=True,
        stop_reason="enough for today",
        decision="block",
        system_message="a warning for the user",
        reason="feedback for Claude",
        terminal_sequence="\x1b]9;done\x07",
        hook_specific_output=StopOutput(additional_context="also run lint"),
    )
    assert encode_hook_result(output, "Stop") == {
        "continue": False,
        "suppressOutput": True,
        "stopReason": "enough for today",
        "decision": "block",
        "systemMessage": "a warning for the user",
        "reason": "feedback for Claude",
        "terminalSequence": "\x1b]9;done\x07",
        "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "also run lint"},
    }
    assert encode_hook_result(HookOutput(decision="approve"), "PreToolUse") == {
        "decision": "approve"
    }
    assert encode_hook_result(HookOutput(), "Stop") == {}
    assert encode_hook_result(None, "Stop") == {}


def test_async_output() -> None:
    assert encode_hook_result(AsyncHookOutput(), "PostToolUse") == {"async": True}
    assert encode_hook_result(AsyncHookOutput(async_timeout=30_000), "Stop") == {
        "async": True,
        "asyncTimeout": 30_000,
    }


def test_permission_request_deny_decision() -> None:
    deny = PermissionRequestOutput(
        decision=PermissionResultDeny(message="not here", interrupt=True)
    )
    assert encode_hook_result(deny, "PermissionRequest") == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "not here", "interrupt": True},
        }
    }
    quiet = PermissionRequestOutput(decision=PermissionResultDeny(message="no"))
    assert encode_hook_result(quiet, "PermissionRequest")["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "no",
    }
    bare_allow = PermissionRequestOutput(decision=PermissionResultAllow())
    assert encode_hook_result(bare_allow, "PermissionRequest")["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow"},
    }


def test_the_dict_form_renames_only_the_top_level_python_keywords() -> None:
    given = {
        "continue_": False,
        "async_": True,
        "stopReason": "x",
        "hookSpecificOutput": {"hookEventName": "Stop", "continue_": 1, "async_": 2},
    }
    assert encode_hook_result(given, "Stop") == {
        "continue": False,
        "async": True,
        "stopReason": "x",
        "hookSpecificOutput": {"hookEventName": "Stop", "continue_": 1, "async_": 2},
    }
    # the wire spelling and anything unknown pass through unchanged
    assert encode_hook_result({"continue": True, "futureKey": [1]}, "Stop") == {
        "continue": True,
        "futureKey": [1],
    }


@pytest.mark.parametrize(
    ("output", "event"),
    [
        (PreToolUseOutput(permission_decision="allow"), "PostToolUse"),
        (StopOutput(additional_context="x"), "SubagentStop"),
        (HookOutput(hook_specific_output=SessionStartOutput(session_title="t")), "Setup"),
        (PostToolUseFailureOutput(), "PostToolUse"),
        (ElicitationOutput(action="accept"), "ElicitationResult"),
    ],
)
def test_an_output_for_another_event_is_refused(output: object, event: str) -> None:
    specific = output.hook_specific_output if isinstance(output, HookOutput) else output
    assert isinstance(specific, HookSpecificOutput)
    with pytest.raises(ValueError, match=f"output of {specific.EVENT} hooks") as err:
        encode_hook_result(output, event)
    assert str(err.value) == (
        f"{type(specific).__name__} is the output of {specific.EVENT} hooks, "
        f"but this hook is registered for {event}"
    )


@pytest.mark.parametrize("value", [["not", "a", "dict"], "allow", 1, PermissionResultAllow()])
def test_anything_else_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="expected a dict, None or a typed hook output"):
        encode_hook_result(value, "PreToolUse")


# ------------------------------------------------ end to end through the fake CLI


@asynccontextmanager
async def connected(
    options: ClaudeAgentOptions, init: Mapping[str, Any] | None = None
) -> AsyncIterator[FakeCLI]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, init)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport=transport):
                yield fake


async def _hook(inp: Any, tid: str | None, ctx: Any) -> None:
    return None


INIT_2_1_197: dict[str, Any] = {"commands": [], "models": [], "account": {}, "pid": 4242}
"""CLI 2.1.197's initialize answer: no capabilities and no version."""


async def refused_connect(
    hooks: Any, init: Mapping[str, Any]
) -> tuple[UnsupportedFeatureError, FakeCLI]:
    """Connect with ``hooks`` to a fake CLI answering ``init``; the connect must fail."""
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, init)
        with anyio.fail_after(15), pytest.raises(UnsupportedFeatureError) as refused:
            async with ClaudeSDKClient(ClaudeAgentOptions(hooks=hooks), transport=transport):
                pytest.fail("connected although the CLI would drop hooks")
    return refused.value, fake


@pytest.mark.anyio
async def test_hooks_for_events_a_cli_without_capabilities_lacks_fail_the_connect() -> None:
    hooks: Any = {
        "PreToolUse": [HookMatcher(hooks=[_hook])],
        "PreModelSwitch": [HookMatcher(hooks=[_hook])],
        "DirectoryAdded": [HookMatcher(hooks=[_hook])],
    }
    error, fake = await refused_connect(hooks, INIT_2_1_197)
    message = str(error)
    assert message.startswith("hooks for PreModelSwitch, DirectoryAdded: the connected ")
    assert "(a version before 2.1.205: it reports no capabilities)" in message
    assert "PreToolUse" not in message and error.subtype == "initialize"
    sent = [f["request"]["subtype"] for f in fake.received if f.get("type") == "control_request"]
    assert sent == ["initialize"]  # refused at once: no prompt, nothing else


@pytest.mark.anyio
async def test_the_refusal_names_the_cli_version_when_it_gives_one() -> None:
    hooks: Any = {"PostModelSwitch": [HookMatcher(hooks=[_hook])]}
    error, _ = await refused_connect(hooks, {**INIT_2_1_197, "claude_code_version": "2.1.197"})
    assert str(error).startswith(
        "hooks for PostModelSwitch: the connected Claude Code CLI (2.1.197) does not know"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("events", "init"),
    [
        (["PreToolUse", "Stop", "MessageDisplay"], INIT_2_1_197),  # all known to 2.1.197
        (["PreModelSwitch", "PostModelSwitch", "DirectoryAdded"], None),  # 2.1.330 has them
    ],
)
async def test_hooks_the_cli_knows_connect(events: list[str], init: dict[str, Any] | None) -> None:
    hooks: Any = {e: [HookMatcher(hooks=[_hook])] for e in events}
    async with connected(ClaudeAgentOptions(hooks=hooks), init) as fake:
        sent = fake.received[0]["request"]["hooks"]
    assert list(sent) == events


@pytest.mark.anyio
async def test_every_event_reaches_its_callback_typed_and_its_output_goes_out_exactly() -> None:
    seen: dict[str, tuple[type, Any]] = {}

    def answer(event: str) -> Any:
        async def hook(inp: Mapping[str, Any], tool_use_id: str | None, ctx: Any) -> Any:
            seen[event] = (type(inp), tool_use_id)
            return OUTPUTS[event][0] if event in OUTPUTS else HookOutput(system_message=event)

        return hook

    hooks: dict[Any, list[HookMatcher]] = {e: [HookMatcher(hooks=[answer(e)])] for e in ALL_EVENTS}
    options = ClaudeAgentOptions(hooks=hooks)
    async with connected(options) as fake:
        init = fake.received[0]["request"]
        ids = {e: entries[0]["hookCallbackIds"][0] for e, entries in init["hooks"].items()}
        assert set(ids) == set(ALL_EVENTS) and len(set(ids.values())) == 35
        answers = {
            e: await fake.request(
                "hook_callback", callback_id=ids[e], input=wire(e), tool_use_id=f"tu-{e}"
            )
            for e in ALL_EVENTS
        }
    for event in ALL_EVENTS:
        assert seen[event] == (HOOK_INPUT_TYPES[event], f"tu-{event}")
        body = answers[event]
        assert body["subtype"] == "success", body
        if event in OUTPUTS:
            assert body["response"] == {
                "hookSpecificOutput": {"hookEventName": event, **OUTPUTS[event][1]}
            }
        else:
            assert body["response"] == {"systemMessage": event}


@pytest.mark.anyio
async def test_an_output_for_another_event_becomes_an_error_answer_and_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reported: list[CallbackError] = []

    async def confused(inp: Mapping[str, Any], tid: str | None, ctx: Any) -> PreToolUseOutput:
        return PreToolUseOutput(permission_decision="deny")

    options = ClaudeAgentOptions(
        hooks={"PostToolUse": [HookMatcher(hooks=[confused])]},
        on_callback_error=reported.append,
    )
    caplog.set_level(logging.ERROR, logger="ccwire")
    async with connected(options) as fake:
        body = await fake.request(
            "hook_callback", callback_id="hook_0", input=wire("PostToolUse"), tool_use_id="t"
        )
    assert body["subtype"] == "error"
    assert "PreToolUseOutput is the output of PreToolUse hooks" in body["error"]
    assert "registered for PostToolUse" in body["error"]
    (error,) = reported
    assert isinstance(error, CallbackError) and isinstance(error.__cause__, ValueError)
    assert (error.kind, error.event, error.timed_out) == ("hook", "PostToolUse", False)
    assert "returned an unusable output" in str(error)


def test_hook_inputs_declare_typed_dict_key_sets() -> None:
    # as claude-agent-sdk's TypedDict hook inputs do: keys the CLI may leave out are optional
    from ccwire import BaseHookInput, PostToolUseFailureHookInput, SubagentStopHookInput

    assert {"prompt_id", "effort", "agent_id"} <= BaseHookInput.__optional_keys__  # type: ignore[attr-defined]
    assert {"session_id", "cwd", "hook_event_name"} <= BaseHookInput.__required_keys__  # type: ignore[attr-defined]
    assert "duration_ms" in PostToolUseFailureHookInput.__optional_keys__  # type: ignore[attr-defined]
    assert "last_assistant_message" in SubagentStopHookInput.__optional_keys__  # type: ignore[attr-defined]
    assert "raw" not in SubagentStopHookInput.__required_keys__  # type: ignore[attr-defined]
