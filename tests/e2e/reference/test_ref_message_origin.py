"""Port of the reference SDK's ``e2e-tests/test_message_origin.py``.

A user message streamed in with ``origin: {"kind": "human"}`` gets that origin back on
its turn's `ResultMessage`; an unstamped prompt gets ``origin is None``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from ccwire import ClaudeSDKClient, ResultMessage
from ccwire.testing import ScriptedModel, text

from ..conftest import cli_version

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        bool(cli_version()) and cli_version() < (2, 1, 210),
        reason="the CLI echoes a host-stamped origin from 2.1.210 on",
    ),
]

TIMEOUT = 60


def _user(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        **extra,
    }


async def _single(message: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    yield message


async def test_result_origin_round_trips_host_stamp(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("one"), text("two"))
    results: list[ResultMessage] = []
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options(max_turns=1)) as client:
            await client.query(_single(_user("Reply with exactly: one", origin={"kind": "human"})))
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    results.append(message)
            await client.query(_single(_user("Reply with exactly: two")))
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    results.append(message)

    assert len(results) == 2, results
    stamped, unstamped = results
    assert stamped.result == "one" and unstamped.result == "two"
    assert stamped.origin == {"kind": "human"}, (stamped.origin, stamped.is_error)
    assert unstamped.origin is None, unstamped
