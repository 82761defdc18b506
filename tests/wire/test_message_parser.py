"""``parse_message()``: the compatibility parser ``ccwire compat install`` serves as
``claude_agent_sdk._internal.message_parser`` (the drop-in test runs it in another
interpreter; these run it in-process, the same module)."""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import AssistantMessage, CcwireError, MessageDecodeError, ResultMessage, TextBlock
from ccwire._wire.message_parser import MessageParseError, parse_message


def test_a_frame_becomes_its_typed_message() -> None:
    parsed = parse_message(
        {
            "type": "assistant",
            "message": {"model": "m", "content": [{"type": "text", "text": "hi"}]},
            "session_id": "s1",
        }
    )
    assert isinstance(parsed, AssistantMessage)
    assert parsed.model == "m" and parsed.content == [TextBlock(text="hi")]
    assert parsed.session_id == "s1"
    result = parse_message({"type": "result", "subtype": "success", "num_turns": 2})
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.num_turns) == ("success", 2)


@pytest.mark.parametrize("frame", [{"type": "tool_progress"}, {"type": "keep_alive", "x": 1}])
def test_a_type_ccwire_does_not_model_is_skipped(frame: dict[str, Any]) -> None:
    assert parse_message(frame) is None


@pytest.mark.parametrize(("data", "name"), [([1, 2], "list"), (None, "NoneType"), ("{}", "str")])
def test_not_a_dict_is_refused_with_the_data(data: Any, name: str) -> None:
    with pytest.raises(MessageParseError, match=f"expected dict, got {name}") as caught:
        parse_message(data)
    assert caught.value.data is data
    # the reference's name, inside ccwire's own tree
    assert isinstance(caught.value, MessageDecodeError) and isinstance(caught.value, CcwireError)


def test_a_frame_without_a_type_is_refused() -> None:
    frame: dict[str, Any] = {"message": {"content": []}}
    with pytest.raises(MessageParseError, match="missing 'type'") as caught:
        parse_message(frame)
    assert caught.value.data is frame
    assert caught.value.line == str(frame)


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        ({"type": "assistant"}, "without a 'message' object"),
        ({"type": "assistant", "message": {"content": [{"type": "text"}]}}, "malformed text"),
    ],
)
def test_a_malformed_frame_is_a_parse_error_caused_by_the_codec(
    frame: dict[str, Any], why: str
) -> None:
    with pytest.raises(MessageParseError, match=why) as caught:
        parse_message(frame)
    assert caught.value.data is frame
    assert isinstance(caught.value.__cause__, MessageDecodeError)
    assert not isinstance(caught.value.__cause__, MessageParseError)
