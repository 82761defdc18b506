"""Odd assistant lines: each bad one is raised where it was, and reading goes on."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    MessageDecodeError,
    ResultMessage,
)
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


def alive(kind: type) -> int:
    return sum(type(o) is kind for o in gc.get_objects())


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


async def test_odd_assistant_lines_read_as_any_json_reader_reads_them() -> None:
    async with connected() as (client, fake):
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
    assert [kind.split(":")[0] for kind in seen] == [
        "MessageDecodeError",  # not UTF-8
        "UserMessage",  # the last "type" wins, as in any JSON reader
        "MessageDecodeError",  # no message object
        "MessageDecodeError",  # not one JSON value
        "AssistantMessage",  # trailing blanks are fine
        "ResultMessage",
    ]
    assert "UTF-8" in seen[0] and "'message' object" in seen[2] and "JSON" in seen[3]
