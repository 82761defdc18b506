"""`parse_message()`, the function code written for claude-agent-sdk imports from
``claude_agent_sdk._internal.message_parser`` (served by the drop-in): one decoded frame
to its typed message, with the reference's failures."""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import AssistantMessage, CcwireError, MessageDecodeError, TextBlock
from ccwire._wire.message_parser import MessageParseError, parse_message


def test_a_frame_becomes_its_typed_message() -> None:
    content = [{"type": "text", "text": "hi"}]
    frame = {"type": "assistant", "message": {"model": "m", "content": content}}
    message = parse_message(frame)
    assert isinstance(message, AssistantMessage)
    assert message.model == "m"
    assert message.content == [TextBlock(text="hi")]


def test_a_type_ccwire_does_not_model_is_none() -> None:
    assert parse_message({"type": "not_a_type_anyone_sends", "x": 1}) is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1], "Invalid message data type (expected dict, got list)"),
        ("text", "Invalid message data type (expected dict, got str)"),
        (None, "Invalid message data type (expected dict, got NoneType)"),
        ({"no": "type"}, "Message missing 'type' field"),
    ],
)
def test_what_is_not_a_message_frame_is_refused_with_its_data(data: Any, message: str) -> None:
    with pytest.raises(MessageParseError) as caught:
        parse_message(data)
    assert str(caught.value) == message
    assert caught.value.data is data  # the reference's attribute: what was refused
    assert caught.value.line == ("" if data is None else str(data))


def test_a_malformed_frame_is_a_parse_error_caused_by_the_codecs() -> None:
    frame = {"type": "assistant", "message": "nope"}  # no "message" object
    with pytest.raises(MessageParseError, match="without a 'message' object") as caught:
        parse_message(frame)
    assert caught.value.data is frame
    assert isinstance(caught.value.__cause__, MessageDecodeError)
    # one exception tree: a caller catching ccwire's errors catches this one too
    assert isinstance(caught.value, MessageDecodeError)
    assert isinstance(caught.value, CcwireError)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "user"}, "Missing required field in user message: 'message'"),
        ({"type": "user", "message": {}}, "Missing required field in user message: 'content'"),
        (
            {"type": "user", "message": {"content": [{"type": "tool_use", "id": "t"}]}},
            "Missing required field in user message: 'name'",
        ),
        ({"type": "assistant"}, "Missing required field in assistant message: 'message'"),
        (
            {"type": "assistant", "message": {"content": []}},
            "Missing required field in assistant message: 'model'",
        ),
        (
            {"type": "assistant", "message": {"model": "m", "content": [{"type": "thinking"}]}},
            "Missing required field in assistant message: 'thinking'",
        ),
        (
            {"type": "assistant", "message": {"model": "m", "content": "hi"}},
            "Invalid assistant content (expected list, got str)",
        ),
        (
            {"type": "assistant", "message": {"model": "m", "content": ["oops"]}},
            "Invalid content block (expected dict, got str)",
        ),
        (
            {"type": "user", "message": {"content": [3]}},
            "Invalid content block (expected dict, got int)",
        ),
        ({"type": "system"}, "Missing required field in system message: 'subtype'"),
        (
            {"type": "system", "subtype": "task_started", "task_id": "t"},
            "Missing required field in system message: 'description'",
        ),
        (
            {"type": "result", "subtype": "success"},
            "Missing required field in result message: 'duration_ms'",
        ),
        ({"type": "stream_event"}, "Missing required field in stream_event message: 'uuid'"),
        (
            {"type": "rate_limit_event", "rate_limit_info": {}},
            "Missing required field in rate_limit_event message: 'status'",
        ),
        (
            {"type": "conversation_reset", "uuid": "u", "session_id": "s"},
            "Missing required field in conversation_reset message: 'new_conversation_id'",
        ),
    ],
)
def test_a_known_frame_without_a_required_field_is_refused_as_the_reference_does(
    data: dict[str, Any], message: str
) -> None:
    with pytest.raises(MessageParseError) as caught:
        parse_message(data)
    assert str(caught.value) == message
    assert caught.value.data is data


def test_the_live_stream_stays_lenient_where_parse_message_is_strict() -> None:
    from ccwire._wire import codec

    frame = {"type": "result", "subtype": "success", "result": "ok"}  # no durations
    with pytest.raises(MessageParseError):
        parse_message(frame)
    decoded = codec.decode_message(frame)  # what a query() or a client yields
    assert decoded.raw == frame
    hook = {"type": "system", "subtype": "hook_started", "hook_event": "Stop"}
    assert parse_message(hook) is not None  # the reference does not require more of it
