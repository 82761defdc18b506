"""Port of the reference SDK's ``e2e-tests/test_include_partial_messages.py``.

With ``include_partial_messages`` the stream carries `StreamEvent` messages (the raw
API events, thinking deltas included) interleaved with the complete messages; without
it, none.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
)
from ccwire.testing import ScriptedModel, reply, text, thinking

from ..helpers import run_turn

pytestmark = pytest.mark.anyio

TIMEOUT = 60
MODEL = "claude-sonnet-4-5"


def _options(make_options: Any, *, partial: bool) -> Any:
    if partial:
        return make_options(
            include_partial_messages=True,
            model=MODEL,
            max_turns=2,
            env={"MAX_THINKING_TOKENS": "8000"},
        )
    return make_options(model=MODEL, max_turns=2)


async def test_include_partial_messages_stream_events(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(
        reply(
            thinking("Joke one, joke two, joke three: the second is the best."),
            text("Why did the scarecrow win an award? He was outstanding in his field."),
        )
    )
    messages = await run_turn(
        _options(make_options, partial=True), "Think of three jokes, then tell one"
    )

    assert isinstance(messages[0], SystemMessage) and messages[0].subtype == "init"
    events = [m for m in messages if isinstance(m, StreamEvent)]
    assert events, "no StreamEvent"
    kinds = [e.event.get("type") for e in events]
    for kind in (
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_stop",
    ):
        assert kind in kinds, f"no {kind} StreamEvent"
    assistant = [m for m in messages if isinstance(m, AssistantMessage)]
    assert assistant
    assert any(isinstance(b, ThinkingBlock) for m in assistant for b in m.content)
    assert any(isinstance(b, TextBlock) for m in assistant for b in m.content)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"
    # the request asked for thinking, as MAX_THINKING_TOKENS says
    assert model.turn_requests[0].body.get("thinking", {}).get("type") in ("enabled", "adaptive")


async def test_include_partial_messages_thinking_deltas(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(reply(thinking("2 + 2: two plus two makes 4."), text("2 + 2 = 4")))
    options = _options(make_options, partial=True)
    deltas: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options) as client:
            await client.query("Think step by step about what 2 + 2 equals")
            async for message in client.receive_response():
                if isinstance(message, StreamEvent) and message.event.get("type") == (
                    "content_block_delta"
                ):
                    delta = message.event.get("delta", {})
                    if delta.get("type") == "thinking_delta":
                        deltas.append(delta.get("thinking", ""))

    assert len(deltas) > 1, "thinking did not arrive in pieces"
    combined = "".join(deltas)
    assert len(combined) > 10
    assert "2" in combined
    assert combined == "2 + 2: two plus two makes 4."


async def test_partial_messages_disabled_by_default(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("Hello!"))
    messages = await run_turn(_options(make_options, partial=False), "Say hello")

    assert not [m for m in messages if isinstance(m, StreamEvent)]
    assert any(isinstance(m, SystemMessage) for m in messages)
    assert any(isinstance(m, AssistantMessage) for m in messages)
    assert any(isinstance(m, ResultMessage) for m in messages)
