"""Assistant messages waiting to be read are kept as their line and decoded when read:
a backlog holds nothing the garbage collector tracks, and reads exactly as before."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    MessageDecodeError,
    ResultMessage,
    TextBlock,
)
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


def alive(kind: type) -> int:
    return sum(type(o) is kind for o in gc.get_objects())


async def test_a_backlog_of_assistant_messages_holds_no_decoded_objects() -> None:
    count = 300
    async with connected() as (client, fake):
        await client.query("go")
        await fake.receive("user")
        before = alive(AssistantMessage)
        for n in range(count):
            await fake.assistant({"type": "text", "text": f"part {n}"})
        await fake.result("done")
        await fake.request("no_such_subtype")  # a round trip: every line above was read
        assert alive(AssistantMessage) == before  # queued as lines, not as objects
        messages = [m async for m in client.receive_response()]
    texts = [
        b.text for m in messages if isinstance(m, AssistantMessage) for b in m.content
        if isinstance(b, TextBlock)
    ]  # fmt: skip
    assert texts == [f"part {n}" for n in range(count)]
    assert isinstance(messages[-1], ResultMessage)


async def test_a_bad_assistant_line_is_raised_where_it_was_and_reading_goes_on() -> None:
    nested = '{"type":"assistant","message":' + "[" * 100_000 + "]" * 100_000 + "}\n"
    async with connected() as (client, fake):
        peer = fake.peer
        await client.query("go")
        await fake.receive("user")
        await fake.assistant({"type": "text", "text": "one"})
        await peer.send_raw(b'{"type":"assistant", this is not JSON}\n')
        await fake.assistant({"type": "text", "text": "two"})
        await peer.send_raw(nested.encode())
        await fake.assistant({"type": "text", "content": "no text field"})
        await fake.assistant({"type": "text", "text": "three"})
        await fake.result("done")
        seen: list[Any] = []
        while not (seen and isinstance(seen[-1], ResultMessage)):
            try:
                async for m in client.receive_response():
                    seen.append(m)
            except MessageDecodeError as exc:
                seen.append(exc)
    kinds = [
        m.content[0].text if isinstance(m, AssistantMessage) else type(m).__name__  # type: ignore[union-attr]
        for m in seen
    ]
    assert kinds == [
        "one",
        "MessageDecodeError",
        "two",
        "MessageDecodeError",
        "MessageDecodeError",
        "three",
        "ResultMessage",
    ]
    assert "not valid JSON" in str(seen[1])
    assert "nested deeper" in str(seen[3])
    assert "text" in str(seen[4])


ODD_ASSISTANT_LINES = [
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\xff"}]}}\n',  # not UTF-8
    b'{"type":"assistant","type":"user","message":{"role":"user","content":"dup"}}\n',
    b'{"type":"assistant","message":"not an object"}\n',
    b'{"type":"assistant","message":{"content":[]}} trailing\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}}  \n',
]


async def _read_odd_lines(watched: bool) -> list[str]:
    """What the odd lines above read as: queued undecoded (nobody watches messages as
    they arrive) or decoded at once (an observer watches)."""
    async with connected() as (client, fake):
        if watched:
            client._connection().add_observer(lambda message: None)
        await client.query("go")
        await fake.receive("user")
        for line in ODD_ASSISTANT_LINES:
            await fake.peer.send_raw(line)
        await fake.result("done")
        seen: list[str] = []
        while not (seen and seen[-1] == "ResultMessage"):
            try:
                async for m in client.receive_response():
                    seen.append(type(m).__name__)
            except MessageDecodeError as exc:
                seen.append(f"MessageDecodeError: {str(exc).splitlines()[0]}")
    return seen


async def test_odd_assistant_lines_read_the_same_queued_or_decoded_at_once() -> None:
    queued, at_once = await _read_odd_lines(False), await _read_odd_lines(True)
    assert queued == at_once
    assert [kind.split(":")[0] for kind in queued] == [
        "MessageDecodeError",  # not UTF-8
        "UserMessage",  # the last "type" wins, as in any JSON reader
        "MessageDecodeError",  # no message object
        "MessageDecodeError",  # not one JSON value
        "AssistantMessage",  # trailing blanks are fine
        "ResultMessage",
    ]
    assert "UTF-8" in queued[0] and "'message' object" in queued[2] and "JSON" in queued[3]
