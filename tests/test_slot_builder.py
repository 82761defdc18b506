"""The fast constructors of the decoding hot path build exactly what the dataclass
constructors build."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ccwire import AssistantMessage, TextBlock
from ccwire._core.slots import slot_builder
from ccwire._wire.codec import decode_message


def test_builder_equals_the_constructor() -> None:
    raw = {"type": "text", "text": "hi"}
    build = slot_builder(TextBlock)
    made = build("hi", raw)
    assert made == TextBlock(text="hi", raw=raw) and type(made) is TextBlock
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.text = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        build("too few")


def test_decoded_assistant_frame_equals_the_keyword_form() -> None:
    block = {"type": "text", "text": "x"}
    frame: dict[str, Any] = {
        "type": "assistant",
        "message": {"id": "msg_1", "model": "m", "content": [block], "usage": {"a": 1}},
        "parent_tool_use_id": "toolu_1",
        "error": "rate_limit",
        "session_id": "s",
        "uuid": "u",
    }
    expected = AssistantMessage(
        content=[TextBlock(text="x", raw=block)],
        model="m",
        parent_tool_use_id="toolu_1",
        error="rate_limit",
        usage={"a": 1},
        message_id="msg_1",
        uuid="u",
        session_id="s",
        raw=frame,
    )
    got = decode_message(frame)
    assert got == expected
    assert [getattr(got, f.name) for f in dataclasses.fields(AssistantMessage)] == [
        getattr(expected, f.name) for f in dataclasses.fields(AssistantMessage)
    ]


def test_only_frozen_slotted_dataclasses() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class NotFrozen:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (NoSlots, NotFrozen, PostInit, int):
        with pytest.raises(TypeError):
            slot_builder(cls)
