"""The CLI's newer frames, captured from the real CLI 2.1.330 (`frame_scenarios`),
decoded by ccwire into the reference's typed messages, with the reference's values.

The fixtures are decoded twice: by ccwire's codec, and by ``claude-agent-sdk``'s own
parser in its own interpreter. For every frame, the class and every field the
reference fills must be the same in ccwire's message. The live tests make the CLI send
the same frames again, through ``ClaudeSDKClient``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ccwire import (
    TERMINAL_TASK_STATUSES,
    AssistantMessage,
    ConversationResetMessage,
    HookEventMessage,
    Message,
    RateLimitEvent,
    RateLimitInfo,
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    UserMessage,
)
from ccwire._wire import codec
from tests.compat.frame_scenarios import FRAMES_DIR, SCENARIOS, load_fixture
from tests.compat.parse_dump import normalize

FIXTURES = sorted(SCENARIOS)


def _decode(name: str) -> list[Message]:
    return [codec.decode_message(frame) for frame in load_fixture(name)]


def test_every_fixture_has_frames() -> None:
    for name in FIXTURES:
        assert len(load_fixture(name)) >= 3, name


def test_foreground_subagent_frames_decode_to_task_messages() -> None:
    messages = _decode("subagent_foreground")
    started = [m for m in messages if isinstance(m, TaskStartedMessage)]
    progress = [m for m in messages if isinstance(m, TaskProgressMessage)]
    updated = [m for m in messages if isinstance(m, TaskUpdatedMessage)]
    done = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert len(started) == 1 and len(progress) == 2 and len(updated) == 1 and len(done) == 1
    task_id = started[0].task_id
    assert started[0].tool_use_id == "toolu_agent_fg" and started[0].task_type == "local_agent"
    assert [p.usage["tool_uses"] for p in progress] == [1, 2]
    assert all(p.last_tool_name == "Read" and p.task_id == task_id for p in progress)
    assert updated[0].status == "completed" and updated[0].patch["status"] == "completed"
    assert done[0].status == "completed" and done[0].summary == "It says 42."
    assert done[0].usage is not None and done[0].usage["tool_uses"] == 2
    assert done[0].status in TERMINAL_TASK_STATUSES
    # still system messages, with the whole frame in data
    assert all(isinstance(m, SystemMessage) and m.data is m.raw for m in started + done)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.errors is None
    assert result.permission_denials == [] and result.api_error_status is None
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert assistants and all(m.stop_reason == m.raw["message"]["stop_reason"] for m in assistants)


def test_a_background_task_turn_carries_its_origin() -> None:
    results = [m for m in _decode("subagent_background") if isinstance(m, ResultMessage)]
    assert len(results) == 2
    assert results[0].origin is None
    assert results[1].origin is not None and results[1].origin["kind"] == "task-notification"


def test_clear_decodes_to_conversation_reset() -> None:
    messages = _decode("conversation_reset")
    resets = [m for m in messages if isinstance(m, ConversationResetMessage)]
    assert len(resets) == 1
    reset = resets[0]
    assert reset.new_conversation_id and reset.session_id and reset.raw["trigger"] == "clear"
    assert codec.encode_message(reset) == reset.raw  # nothing lost
    before = [m for m in messages[: messages.index(reset)] if isinstance(m, ResultMessage)]
    after = [m for m in messages[messages.index(reset) :] if isinstance(m, ResultMessage)]
    assert before and after and before[0].session_id != after[-1].session_id


def test_rate_limit_headers_decode_to_a_rate_limit_event() -> None:
    messages = _decode("rate_limit")
    events = [m for m in messages if isinstance(m, RateLimitEvent)]
    assert len(events) == 1
    info = events[0].rate_limit_info
    assert isinstance(info, RateLimitInfo) and info.status in ("allowed", "allowed_warning")
    assert info.rate_limit_type == "five_hour" and info.resets_at == 1900000000
    assert info.raw is events[0].raw["rate_limit_info"]  # with the keys not modelled
    assert events[0].session_id and events[0].uuid
    assert isinstance(messages[-1], ResultMessage)


def test_hook_events_decode_to_hook_event_messages() -> None:
    events = [m for m in _decode("hook_events") if isinstance(m, HookEventMessage)]
    assert [m.subtype for m in events] == ["hook_started", "hook_response"]
    assert all(m.hook_event_name == "PreToolUse" and m.session_id and m.uuid for m in events)
    assert events[1].data["hook_name"] == "PreToolUse:Read"


def _common(ref: Any, ours: Any, where: str) -> list[str]:
    """Where ``ours`` differs from ``ref`` on the fields ``ref`` has."""
    if isinstance(ref, dict) and isinstance(ours, dict):
        problems = []
        for key, value in ref.items():
            if key not in ours:
                problems.append(f"{where}: no {key!r}")
            else:
                problems += _common(value, ours[key], f"{where}.{key}")
        return problems
    if isinstance(ref, list) and isinstance(ours, list) and len(ref) == len(ours):
        return [
            p
            for i, (a, b) in enumerate(zip(ref, ours, strict=True))
            for p in _common(a, b, f"{where}[{i}]")
        ]
    return [] if ref == ours else [f"{where}: {ours!r} != the reference's {ref!r}"]


def test_decodes_match_the_reference_parser(reference_python: Path) -> None:
    paths = [str(FRAMES_DIR / f"{name}.jsonl") for name in FIXTURES]
    out = subprocess.run(
        [str(reference_python), str(Path(__file__).parent / "parse_dump.py"), "x", *paths],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    reference = json.loads(out)
    problems = []
    for name, ref_messages in zip(FIXTURES, reference, strict=True):
        ours = [json.loads(json.dumps(normalize(m))) for m in _decode(name)]
        assert len(ours) == len(ref_messages), name
        for i, (ref, mine) in enumerate(zip(ref_messages, ours, strict=True)):
            problems += _common(ref, mine, f"{name}[{i}]")
    assert problems == [], "\n".join(problems)


# ---------------------------------------------------------------- live, real CLI


def _cli() -> str | None:
    path = os.environ.get("CCWIRE_CLI_PATH")
    if path:
        return path
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "node_modules" / ".bin" / "claude"
        if candidate.exists():
            return str(candidate)
    return None


CLI = _cli()

live = pytest.mark.skipif(CLI is None, reason="Claude Code CLI not installed (run `make cli`)")


@live
@pytest.mark.e2e
@pytest.mark.anyio
async def test_live_subagent_sends_task_messages() -> None:
    assert CLI is not None
    with tempfile.TemporaryDirectory() as tmp:
        frames = await SCENARIOS["subagent_foreground"](CLI, Path(tmp))
    kinds = {type(codec.decode_message(f)).__name__ for f in frames}
    assert {"TaskStartedMessage", "TaskProgressMessage", "TaskNotificationMessage"} <= kinds


@live
@pytest.mark.e2e
@pytest.mark.anyio
async def test_live_clear_sends_conversation_reset() -> None:
    assert CLI is not None
    with tempfile.TemporaryDirectory() as tmp:
        frames = await SCENARIOS["conversation_reset"](CLI, Path(tmp))
    messages = [codec.decode_message(f) for f in frames]
    assert sum(isinstance(m, ConversationResetMessage) for m in messages) == 1
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "second answer"
    assert not any(isinstance(m, UserMessage) and m.origin for m in messages)


@live
@pytest.mark.e2e
@pytest.mark.anyio
async def test_live_rate_limit_headers_send_a_rate_limit_event() -> None:
    assert CLI is not None
    with tempfile.TemporaryDirectory() as tmp:
        frames = await SCENARIOS["rate_limit"](CLI, Path(tmp))
    events = [m for m in map(codec.decode_message, frames) if isinstance(m, RateLimitEvent)]
    assert len(events) == 1 and events[0].rate_limit_info.rate_limit_type == "five_hour"
