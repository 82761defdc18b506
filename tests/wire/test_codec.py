"""Codec round trips and leniency: the one module that knows wire names."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    MessageDecodeError,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    RawMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
    UserMessage,
)
from ccwire._wire import codec
from ccwire._wire.framing import encode_line

ASSISTANT = {
    "type": "assistant",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "text", "text": "hi", "citations": None},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "mcp__s__t", "input": {"a": 1}},
            {"type": "redacted_thinking", "data": "xx"},
        ],
        "usage": {"input_tokens": 3},
    },
    "parent_tool_use_id": "toolu_0",
    "session_id": "s1",
    "uuid": "u1",
    "tool_use_meta": [{"id": "toolu_1"}],
}
USER = {
    "type": "user",
    "message": {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False}
        ],
    },
    "parent_tool_use_id": None,
    "session_id": "s1",
    "uuid": "u2",
    "tool_use_result": {"x": 1},
}
RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 10,
    "duration_api_ms": 8,
    "num_turns": 2,
    "result": "done",
    "stop_reason": "end_turn",
    "total_cost_usd": 0.5,
    "usage": {"input_tokens": 1},
    "modelUsage": {"m": {"costUSD": 0.5}},
    "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t", "tool_input": {}}],
    "terminal_reason": "completed",
    "session_id": "s1",
    "uuid": "u3",
    "structured_output": {"answer": 42},
    "user_message_uuids": ["p1", "p2"],
}
SYSTEM = {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Bash"]}
STREAM = {"type": "stream_event", "event": {"type": "message_stop"}, "session_id": "s", "uuid": "u"}
UNKNOWN = {"type": "tool_progress", "tool_use_id": "t1", "uuid": "u9"}


@pytest.mark.parametrize("frame", [ASSISTANT, USER, RESULT, SYSTEM, STREAM, UNKNOWN])
def test_decode_encode_round_trip(frame: dict[str, Any]) -> None:
    wire = json.loads(encode_line(frame))
    message = codec.decode_message(wire)
    assert codec.encode_message(message) == frame


def test_decoded_types_and_fields() -> None:
    a = codec.decode_message(ASSISTANT)
    assert isinstance(a, AssistantMessage)
    assert a.model == "claude-x" and a.parent_tool_use_id == "toolu_0" and a.message_id == "msg_1"
    kinds = [type(b) for b in a.content]
    assert kinds == [TextBlock, ThinkingBlock, ToolUseBlock, UnknownBlock]
    assert a.content[3].raw == {"type": "redacted_thinking", "data": "xx"}
    u = codec.decode_message(USER)
    assert isinstance(u, UserMessage) and isinstance(u.content, list)
    block = u.content[0]
    assert isinstance(block, ToolResultBlock) and block.content == "ok" and block.is_error is False
    r = codec.decode_message(RESULT)
    assert isinstance(r, ResultMessage)
    assert r.structured_output == {"answer": 42} and r.user_message_uuids == ["p1", "p2"]
    assert (
        r.total_cost_usd == 0.5
        and r.num_turns == 2
        and (r.permission_denials or [])[0]["tool_name"] == "Bash"
    )
    assert isinstance(codec.decode_message(SYSTEM), SystemMessage)
    assert isinstance(codec.decode_message(STREAM), StreamEvent)
    raw = codec.decode_message(UNKNOWN)
    assert isinstance(raw, RawMessage) and raw.type == "tool_progress" and raw.data is UNKNOWN


def test_user_text_content_and_messages_are_lenient() -> None:
    u = codec.decode_message({"type": "user", "message": {"role": "user", "content": "plain"}})
    assert isinstance(u, UserMessage) and u.content == "plain"
    weird = codec.decode_message({"type": "result"})
    assert isinstance(weird, ResultMessage) and weird.subtype == "" and weird.num_turns == 0


def test_assistant_without_message_is_a_typed_error() -> None:
    with pytest.raises(MessageDecodeError):
        codec.decode_message({"type": "assistant"})


def test_control_frames() -> None:
    req = codec.encode_control_request("req_1", "interrupt", {})
    assert req == {
        "type": "control_request",
        "request_id": "req_1",
        "request": {"subtype": "interrupt"},
    }
    ok = codec.decode_control_response(
        {"type": "control_response", "response": {"subtype": "success", "request_id": "r"}}
    )
    assert ok.ok and ok.response == {} and ok.request_id == "r"
    err = codec.decode_control_response(
        {
            "type": "control_response",
            "response": {
                "subtype": "error",
                "request_id": "r",
                "error": "no",
                "error_code": "invalid_mode",
            },
        }
    )
    assert not err.ok and err.error == "no" and err.error_code == "invalid_mode"
    with pytest.raises(MessageDecodeError):
        codec.decode_control_request({"type": "control_request", "request_id": "x"})
    with pytest.raises(MessageDecodeError):
        codec.decode_control_response({"type": "control_response", "response": {}})
    assert codec.encode_success("r", None) == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "r"},
    }


def test_permission_results_on_the_wire() -> None:
    assert codec.encode_permission_result(PermissionResultAllow(), {"a": 1}) == {
        "behavior": "allow",
        "updatedInput": {"a": 1},
    }
    update = PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue("Bash", "npm test:*"), PermissionRuleValue("Read")],
        behavior="allow",
    )
    wire = codec.encode_permission_result(
        PermissionResultAllow(updated_input={"a": 2}, updated_permissions=[update]), {"a": 1}
    )
    assert wire == {
        "behavior": "allow",
        "updatedInput": {"a": 2},
        "updatedPermissions": [
            {
                "type": "addRules",
                "destination": "session",
                "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}, {"toolName": "Read"}],
                "behavior": "allow",
            }
        ],
    }
    assert codec.encode_permission_result(PermissionResultDeny("no"), {}) == {
        "behavior": "deny",
        "message": "no",
    }
    suggestion = codec.decode_permission_update(wire["updatedPermissions"][0])
    assert codec.encode_permission_update(suggestion) == wire["updatedPermissions"][0]


def test_can_use_tool_request_decoding() -> None:
    req = codec.decode_can_use_tool(
        {
            "subtype": "can_use_tool",
            "tool_name": "mcp__d__greet",
            "input": {"name": "A"},
            "tool_use_id": "toolu_1",
            "permission_suggestions": [
                {
                    "type": "addRules",
                    "rules": [{"toolName": "mcp__d__greet"}],
                    "behavior": "allow",
                    "destination": "localSettings",
                }
            ],
            "display_name": "Greet",
        }
    )
    assert req.tool_name == "mcp__d__greet" and req.tool_use_id == "toolu_1"
    assert req.suggestions[0].rules == [PermissionRuleValue("mcp__d__greet")]
    assert req.suggestions[0].destination == "localSettings" and req.display_name == "Greet"


def test_hook_output_renames_only_top_level_keywords() -> None:
    out = codec.encode_hook_output(
        {"continue_": False, "async_": True, "hookSpecificOutput": {"continue_": 1}}
    )
    assert out == {"continue": False, "async": True, "hookSpecificOutput": {"continue_": 1}}


def test_user_message_frame() -> None:
    frame = codec.encode_user_message("hi", session_id="default", uuid="u")
    assert frame == {
        "type": "user",
        "message": {"role": "user", "content": "hi"},
        "parent_tool_use_id": None,
        "session_id": "default",
        "uuid": "u",
    }


def test_a_rewind_answer_keeps_the_files_left_for_links() -> None:
    from ccwire._wire.control_requests import decode_rewind

    answer = {"canRewind": True, "filesChanged": ["a.txt"], "skippedLinks": 2}
    result = decode_rewind(answer)
    assert (result.can_rewind, result.files_changed, result.skipped_links) == (
        True,
        ("a.txt",),
        2,
    )
    assert decode_rewind({"canRewind": True}).skipped_links is None


def test_a_result_carries_the_fields_the_typescript_sdk_declares() -> None:
    bad_file = {"path": "/h/.claude.json", "is_global": True, "backup_searched": True}
    result = codec.decode_message({
        "type": "result", "subtype": "error_during_execution", "is_error": True,
        "session_id": "s", "errors": ["bad config"], "queued_turn_count": 1,
        "result_index": 3, "startup_failure_reason": "config_file_invalid",
        "invalid_config_file": bad_file, "resume_reason": "worker_restart",
        "local_command": "/cost", "ttft_ms": 120.5, "warm_spare_claimed": True,
        "credential_expires_at": "2027-01-01T00:00:00Z", "fast_mode_state": "off",
        "fast_mode_disabled_reason": "free",
    })  # fmt: skip
    assert isinstance(result, ResultMessage)
    assert (result.queued_turn_count, result.result_index) == (1, 3)
    assert result.startup_failure_reason == "config_file_invalid"
    assert result.invalid_config_file == bad_file
    assert (result.resume_reason, result.local_command) == ("worker_restart", "/cost")
    assert (result.ttft_ms, result.warm_spare_claimed) == (120.5, True)
    assert result.credential_expires_at == "2027-01-01T00:00:00Z"
    assert (result.fast_mode_state, result.fast_mode_disabled_reason) == ("off", "free")


def test_user_and_assistant_frames_carry_the_fields_the_typescript_sdk_declares() -> None:
    sub = {"agent_id": "t1", "subagent_type": "Explore", "task_description": "look",
           "timestamp": "2026-12-07T08:00:00Z"}  # fmt: skip
    assistant = codec.decode_message({
        "type": "assistant", "message": {"role": "assistant", "content": [], "model": "m"},
        "request_id": "req_1", "aborted": True, "supersedes": ["u0"], "resume_reason": "r",
        "resumed_from_incomplete_thinking": True, "context_usage": {"totalTokens": 5},
        "usage_report": {"session": {}}, **sub,
    })  # fmt: skip
    assert isinstance(assistant, AssistantMessage)
    assert (assistant.request_id, assistant.aborted, assistant.supersedes) == (
        "req_1", True, ["u0"])  # fmt: skip
    assert (assistant.resume_reason, assistant.resumed_from_incomplete_thinking) == ("r", True)
    assert assistant.context_usage == {"totalTokens": 5}
    assert assistant.usage_report == {"session": {}}
    assert (assistant.agent_id, assistant.subagent_type) == ("t1", "Explore")
    assert (assistant.task_description, assistant.timestamp) == ("look", sub["timestamp"])
    user = codec.decode_message({
        "type": "user", "message": {"role": "user", "content": "hi"}, "isSynthetic": True,
        "isReplay": True, "priority": "next", "shouldQuery": False, "client_composed": True,
        "pasted_content": ["p"], "inline_pastes": ["q"], "file_attachments": [{"a": 1}], **sub,
    })  # fmt: skip
    assert isinstance(user, UserMessage)
    assert (user.is_synthetic, user.is_replay, user.priority) == (True, True, "next")
    assert (user.should_query, user.client_composed) == (False, True)
    assert (user.pasted_content, user.inline_pastes) == (["p"], ["q"])
    assert user.file_attachments == [{"a": 1}]
    assert (user.agent_id, user.timestamp) == ("t1", sub["timestamp"])
