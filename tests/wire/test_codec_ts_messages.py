"""The message types the CLI sends beyond the reference SDK's, typed: each frame decodes
into its class with every field read from its wire name (names as the TypeScript SDK's
declarations spell them), stays a `SystemMessage` or `RawMessage` for code that matched
those, and keeps the whole frame."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import ccwire
from ccwire import (
    ApiRetryMessage,
    AuthStatusMessage,
    CommandsChangedMessage,
    HookEventMessage,
    PermissionDeniedMessage,
    PromptSuggestionMessage,
    RawMessage,
    SessionTitleChangedMessage,
    SlashCommand,
    SystemMessage,
    ToolProgressMessage,
)
from ccwire._wire import codec

SID, UID = "sess-1", "uuid-1"


def decode(frame: dict[str, Any]) -> Any:
    return codec.decode_message({**frame, "uuid": UID, "session_id": SID})


def test_api_retry() -> None:
    m = decode({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10,
                "retry_delay_ms": 1500.5, "error_status": 529, "error": "overloaded",
                "no_response": {"waited_ms": 30000, "retry_wait_ms": 2000}})  # fmt: skip
    assert isinstance(m, ApiRetryMessage) and isinstance(m, SystemMessage)
    assert (m.attempt, m.max_retries, m.retry_delay_ms, m.error_status, m.error) == (
        2, 10, 1500.5, 529, "overloaded"
    )  # fmt: skip
    assert m.no_response == {"waited_ms": 30000, "retry_wait_ms": 2000}
    assert (m.uuid, m.session_id, m.subtype, m.data["attempt"]) == (UID, SID, "api_retry", 2)


def test_permission_denied_and_title() -> None:
    m = decode({"type": "system", "subtype": "permission_denied", "tool_name": "Write",
                "tool_use_id": "t1", "decision_reason_type": "mode", "decision_reason": "plan",
                "message": "denied"})  # fmt: skip
    assert isinstance(m, PermissionDeniedMessage)
    assert (m.tool_name, m.tool_use_id, m.agent_id, m.decision_reason_type, m.message) == (
        "Write", "t1", None, "mode", "denied"
    )  # fmt: skip
    title = decode({"type": "system", "subtype": "session_title_changed", "title": "Plans"})
    assert isinstance(title, SessionTitleChangedMessage) and title.title == "Plans"


def test_hook_progress_and_response() -> None:
    progress = decode({"type": "system", "subtype": "hook_progress", "hook_id": "h1",
                       "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse",
                       "stdout": "so far", "stderr": "", "output": "so far"})  # fmt: skip
    assert isinstance(progress, HookEventMessage)
    assert (progress.hook_event_name, progress.hook_id, progress.stdout) == (
        "PreToolUse", "h1", "so far"
    )  # fmt: skip
    done = decode({"type": "system", "subtype": "hook_response", "hook_id": "h1",
                   "hook_name": "n", "hook_event": "Stop", "output": "", "stdout": "",
                   "stderr": "", "exit_code": 2, "outcome": "error"})  # fmt: skip
    assert isinstance(done, HookEventMessage)
    assert (done.exit_code, done.outcome) == (2, "error")


def test_commands_changed_are_slash_commands() -> None:
    m = decode(
        {
            "type": "system",
            "subtype": "commands_changed",
            "commands": [{"name": "deploy", "description": "Ship", "argumentHint": "<env>"}],
        }
    )
    assert isinstance(m, CommandsChangedMessage)
    assert m.commands == (SlashCommand("deploy", "Ship", "<env>"),)


def test_top_level_frames_stay_raw_messages() -> None:
    progress = decode({"type": "tool_progress", "tool_use_id": "t", "tool_name": "Bash",
                       "parent_tool_use_id": None, "elapsed_time_seconds": 3.5,
                       "heartbeat": True})  # fmt: skip
    assert isinstance(progress, ToolProgressMessage) and isinstance(progress, RawMessage)
    assert (progress.type, progress.tool_name, progress.elapsed_time_seconds) == (
        "tool_progress", "Bash", 3.5
    )  # fmt: skip
    assert progress.heartbeat is True and progress.raw is progress.data
    auth = decode({"type": "auth_status", "isAuthenticating": True, "output": ["Opening"]})
    assert isinstance(auth, AuthStatusMessage)
    assert auth.is_authenticating is True and auth.output == ("Opening",)
    suggestion = decode({"type": "prompt_suggestion", "suggestion": "Now run the tests"})
    assert isinstance(suggestion, PromptSuggestionMessage)
    assert suggestion.suggestion == "Now run the tests"


def test_mistyped_fields_take_their_defaults_and_nothing_is_lost() -> None:
    m = decode({"type": "system", "subtype": "api_retry", "attempt": "two", "max_retries": True})
    assert isinstance(m, ApiRetryMessage)
    assert (m.attempt, m.max_retries, m.retry_delay_ms) == (0, 0, 0.0)
    assert m.data["attempt"] == "two"  # the frame as sent


def test_a_typed_system_message_prints_as_the_reference_prints_it() -> None:
    # claude-agent-sdk yields these as SystemMessage: code that prints them prints the same
    m = decode({"type": "system", "subtype": "status", "status": "requesting"})
    assert repr(m) == f"SystemMessage(subtype='status', data={m.data!r})"
    assert type(m).__name__ == "SystemMessage"  # for code that dispatches on the name
    assert type(m).__qualname__ == "StatusMessage" and m.status == "requesting"


def test_init_stays_a_plain_system_message() -> None:
    # code written for claude-agent-sdk checks type(msg).__name__ == "SystemMessage"
    m = decode({"type": "system", "subtype": "init", "cwd": "/w"})
    assert type(m) is SystemMessage and m.data["cwd"] == "/w"


TABLE = [({"type": "system", "subtype": k}, v[0]) for k, v in codec._TYPED_SYSTEM.items()]
TABLE += [({"type": k}, v[0]) for k, v in codec._TYPED_FRAMES.items()]


@pytest.mark.parametrize(("frame", "cls"), TABLE, ids=lambda x: getattr(x, "__name__", ""))
def test_every_typed_class_is_public_and_decodes_from_its_frame(
    frame: dict[str, Any], cls: type
) -> None:
    assert cls.__qualname__ in ccwire.__all__
    message = decode(frame)
    assert type(message) is cls
    assert {f.name for f in dataclasses.fields(cls)} >= {"uuid", "session_id"}


def test_the_task_reset_progress_and_stream_fields_the_typescript_sdk_declares() -> None:
    started = decode({"type": "system", "subtype": "task_started", "task_id": "t",
                      "description": "d", "run_id": "r1", "subagent_type": "Explore",
                      "is_backgrounded": True, "spawn_depth": 2, "parent_task_id": "p",
                      "workflow_name": "spec", "prompt": "look", "skip_transcript": False,
                      "ambient": True})  # fmt: skip
    assert (started.run_id, started.subagent_type, started.is_backgrounded) == (
        "r1", "Explore", True)  # fmt: skip
    assert (started.spawn_depth, started.parent_task_id, started.workflow_name) == (
        2, "p", "spec")  # fmt: skip
    assert (started.prompt, started.skip_transcript, started.ambient) == ("look", False, True)
    progress = decode({"type": "system", "subtype": "task_progress", "task_id": "t",
                       "description": "d", "run_id": "r1", "summary": "reading"})  # fmt: skip
    assert (progress.run_id, progress.summary, progress.subagent_type) == ("r1", "reading", None)
    link = {"type": "resource_link", "uri": "file:///a", "name": "a"}
    done = decode({"type": "system", "subtype": "task_notification", "task_id": "t",
                   "status": "failed", "reason": "worker_restart", "resource_links": [link],
                   "run_id": "r1"})  # fmt: skip
    assert (done.reason, done.resource_links, done.run_id) == ("worker_restart", (link,), "r1")
    updated = decode({"type": "system", "subtype": "task_updated", "task_id": "t",
                      "patch": {}, "run_id": "r2"})  # fmt: skip
    assert updated.run_id == "r2"
    reset = decode({"type": "conversation_reset", "new_conversation_id": "c",
                    "trigger": "clear", "user_message_uuid": "m",
                    "timestamp": "2026-12-07T08:00:00Z"})  # fmt: skip
    assert (reset.trigger, reset.user_message_uuid, reset.timestamp) == (
        "clear", "m", "2026-12-07T08:00:00Z")  # fmt: skip
    retry = {"agent_id": "a", "attempt": 1, "max_retries": 3}
    tool = decode({"type": "tool_progress", "tool_use_id": "x", "tool_name": "Agent",
                   "subagent_retry": retry})  # fmt: skip
    assert tool.subagent_retry == retry
    stream = decode({"type": "stream_event", "event": {}, "ttft_ms": 412.5,
                     "resume_reason": "retry"})  # fmt: skip
    assert (stream.ttft_ms, stream.resume_reason) == (412.5, "retry")
    mirror = decode({"type": "system", "subtype": "mirror_error", "error": "e"})
    assert (mirror.uuid, mirror.session_id) == (UID, SID)
