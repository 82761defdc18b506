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
    frame = {"type": "assistant"}  # no "message" object
    with pytest.raises(MessageParseError, match="without a 'message' object") as caught:
        parse_message(frame)
    assert caught.value.data is frame
    assert isinstance(caught.value.__cause__, MessageDecodeError)
    # one exception tree: a caller catching ccwire's errors catches this one too
    assert isinstance(caught.value, MessageDecodeError)
    assert isinstance(caught.value, CcwireError)
