"""Depth and shape limits on what the CLI writes: every case is a typed error, the
connection goes on, and a control request is always answered.

* A frame nested deeper than JSON decoding allows (100,000 levels), not UTF-8 or not
  JSON is a `MessageDecodeError`; if it is a control request, the CLI still gets an
  error answer for its id (it used to wait forever).
* A known content block with the wrong shape (a ``text`` that is not a string, a
  ``tool_use`` without a string ``id`` or with a non-object ``input``, a
  ``tool_result`` whose ``content`` is a number) is a `MessageDecodeError` naming the
  block and the field, instead of being coerced into something the model never said.
"""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import (
    AssistantMessage,
    ClaudeSDKClient,
    MessageDecodeError,
    ResultMessage,
)
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio
DEPTH = 100_000


async def _all(client: ClaudeSDKClient) -> tuple[list[Any], list[MessageDecodeError]]:
    errors: list[MessageDecodeError] = []
    while True:
        try:
            return [m async for m in client.receive_response()], errors
        except MessageDecodeError as exc:
            errors.append(exc)


@pytest.mark.parametrize(
    ("inner", "words"),
    [
        (b"[" * DEPTH + b"]" * DEPTH, "nested deeper than"),
        (b'"\xff\xfe"', "not valid UTF-8"),
        (b"1}} torn here", "not valid JSON"),
    ],
)
async def test_a_control_request_that_cannot_be_decoded_is_answered(
    inner: bytes, words: str
) -> None:
    line = (
        b'{"type":"control_request","request_id":"bad-1","request":'
        b'{"subtype":"can_use_tool","tool_name":"Bash","input":{"x":' + inner + b"}}}\n"
    )
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.peer.send_raw(line)
        answer = await fake.response_to("bad-1")
        await fake.result("still here")
        messages, errors = await _all(client)
    assert answer["subtype"] == "error" and words in answer["error"]
    assert len(errors) == 1 and words in str(errors[0])
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "still here"


@pytest.mark.parametrize(
    ("block", "named"),
    [
        ({"type": "text", "text": 5}, "'text' must be a string, got int"),
        ({"type": "text"}, "'text' must be a string, got nothing"),
        ({"type": "tool_use", "id": 1, "name": "x", "input": {}}, "'id' must be a string"),
        ({"type": "tool_use", "id": "t", "name": "x", "input": "x"}, "'input' must be an object"),
        ({"type": "thinking", "thinking": ["a"]}, "'thinking' must be a string"),
        ({"type": "tool_result", "tool_use_id": "t", "content": 7}, "'content' must be a str"),
        ({"type": "tool_result", "tool_use_id": "t", "is_error": "no"}, "'is_error' must be"),
    ],
)
async def test_a_malformed_block_is_a_typed_error_and_the_stream_goes_on(
    block: dict[str, Any], named: str
) -> None:
    async with connected() as (client, fake):
        await client.query("hi")
        await fake.assistant(block)
        await fake.assistant({"type": "text", "text": "well formed"})
        await fake.result("done")
        messages, errors = await _all(client)
    assert len(errors) == 1
    assert f"malformed {block['type']} block" in str(errors[0]) and named in str(errors[0])
    assert [type(m).__name__ for m in messages] == ["AssistantMessage", "ResultMessage"]
    first = messages[0]
    assert isinstance(first, AssistantMessage) and first.content[0].raw["text"] == "well formed"
