"""Odd lines of the CLI: each bad one is raised where it was, reading goes on, and
every control request among them is answered."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    MessageDecodeError,
    PermissionResultAllow,
    ResultMessage,
    ToolPermissionContext,
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


async def _allow(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
    return PermissionResultAllow(updated_input={"ok": True})


BOM = b"\xef\xbb\xbf"


async def test_a_frame_after_a_utf8_bom_is_read_as_json_reads_it() -> None:
    """``json.loads(bytes)`` reads a UTF-8 byte order mark as nothing; such a control
    request used to be skipped as noise and the CLI waited for its answer for ever."""
    request = (
        b'{"type":"control_request","request_id":"bom-1","request":'
        b'{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}\n'
    )
    async with connected(ClaudeAgentOptions(can_use_tool=_allow)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.peer.send_raw(BOM + request)
        answer = await fake.response_to("bom-1")
        await fake.peer.send_raw(BOM + b'{"type":"system","subtype":"bom"}\n')
        await fake.result("done")
        seen = [m async for m in client.receive_response()]
    assert answer["response"] == {"behavior": "allow", "updatedInput": {"ok": True}}
    assert [type(m).__name__ for m in seen] == ["SystemMessage", "ResultMessage"]


@pytest.mark.parametrize(
    ("request_id", "subtype", "answered"),
    [
        ("r-1", "\\ud800", True),  # an unknown subtype holding a lone surrogate
        ("r-\\udfff", "frobnicate", False),  # an id no answer can carry
        ("r-\\ud83d", "can_use_tool", False),
    ],
)
async def test_a_request_holding_a_lone_surrogate_does_not_end_the_connection(
    request_id: str, subtype: str, answered: bool
) -> None:
    """JSON's escapes can spell a lone surrogate, which an answer cannot echo as UTF-8.
    The answer naming it used to raise `MessageEncodeError` in the reader: the
    connection ended, and the CLI got no answer."""
    request = f'{{"subtype":"{subtype}","tool_name":"Bash","input":{{}}}}'
    line = (
        f'{{"type":"control_request","request_id":"{request_id}","request":{request}}}\n'.encode()
    )
    async with connected(ClaudeAgentOptions(can_use_tool=_allow)) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        await fake.peer.send_raw(line)
        if answered:
            answer = await fake.response_to(request_id)
            assert answer["subtype"] == "error"
            assert answer["error"] == "Unsupported control request subtype: \\ud800"
        await fake.result("still here")
        seen = [m async for m in client.receive_response()]
    assert isinstance(seen[-1], ResultMessage) and seen[-1].result == "still here"
