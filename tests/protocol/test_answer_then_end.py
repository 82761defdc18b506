"""An answer that arrives right before the CLI's output ends is the answer: the end
fails only the requests still unanswered (the requester may not have run between)."""

from __future__ import annotations

import json

import anyio
import anyio.abc
import pytest

from ccwire import ClaudeSDKClient
from ccwire._transport.base import LineTransport, ProcessExit

pytestmark = pytest.mark.anyio


class _AnswerThenEnd(LineTransport):
    """Answers ``initialize``, then its output ends at once: the end is read in the same
    step as the answer (no checkpoint between them), before the requester can run."""

    def __init__(self) -> None:
        self._lines: list[bytes] = []
        self._answered = anyio.Event()

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        pass

    async def send_line(self, line: bytes) -> None:
        frame = json.loads(line)
        if frame.get("type") == "control_request":
            answer = {"subtype": "success", "request_id": frame["request_id"], "response": {}}
            self._lines.append(
                json.dumps({"type": "control_response", "response": answer}).encode()
            )
            self._answered.set()

    async def receive_line(self) -> bytes | None:
        if not self._answered.is_set():
            await self._answered.wait()
        return self._lines.pop(0) if self._lines else None  # then the end, without waiting

    async def end_input(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    @property
    def exit_info(self) -> ProcessExit | None:
        return None


async def test_an_answer_read_just_before_the_end_is_not_replaced_by_the_end() -> None:
    with anyio.fail_after(10):
        client = ClaudeSDKClient(transport=_AnswerThenEnd())
        await client.connect()  # the initialize answer came: connected
        try:
            assert await client.get_server_info() == {}
        finally:
            await client.disconnect()
