"""A scriptable fake of the Claude Code CLI, for tests that need no subprocess.

It drives the far end of `memory_transport_pair()`: the test plays
the CLI's side of the protocol step by step (answer ``initialize``, send a tool call,
expect the SDK's answer, send a result, exit), with every wait bounded.
"""

from __future__ import annotations

import itertools
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from .._transport.memory import CLIPeer

__all__ = ["FakeCLI"]

DEFAULT_TIMEOUT = 5.0


class FakeCLI:
    """The CLI's side of an in-memory connection: a test plays the CLI step by step.

    It drives the peer end of `memory_transport_pair()`; give the other end to
    ``ClaudeSDKClient(transport=...)``. No process is started, and every wait is
    bounded by ``timeout`` seconds.

    Example:
        ```python
        transport, peer = memory_transport_pair()
        fake = FakeCLI(peer)

        async def cli() -> None:
            await fake.handshake()  # answer initialize
            await fake.receive("user")  # the prompt
            await fake.assistant({"type": "text", "text": "Hi!"})
            await fake.result("Hi!")

        async with anyio.create_task_group() as tg:
            tg.start_soon(cli)
            async with ClaudeSDKClient(transport=transport) as client:
                await client.query("Hello")
                messages = [m async for m in client.receive_response()]
        assert messages[-1].result == "Hi!"
        ```
    """

    def __init__(self, peer: CLIPeer, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.peer = peer
        self.timeout = timeout
        self.session_id = "00000000-0000-4000-8000-000000000000"
        self._backlog: deque[dict[str, Any]] = deque()
        self._ids = itertools.count(0)
        self.received: list[dict[str, Any]] = []

    # ----------------------------------------------------------------- reading

    async def _next(self) -> dict[str, Any] | None:
        with anyio.fail_after(self.timeout):
            frame = await self.peer.receive()
        if frame is not None:
            self.received.append(frame)
        return frame

    async def receive(self, type: str | None = None, subtype: str | None = None) -> dict[str, Any]:
        """The next frame the SDK wrote that matches (others are kept for later)."""
        for i, frame in enumerate(self._backlog):
            if _matches(frame, type, subtype):
                del self._backlog[i]
                return frame
        while True:
            got = await self._next()
            if got is None:
                raise AssertionError(f"the SDK closed stdin while we waited for {type}/{subtype}")
            if _matches(got, type, subtype):
                return got
            self._backlog.append(got)

    async def expect_eof(self) -> None:
        """Wait until the SDK closes stdin; fails if it writes anything but control traffic."""
        while True:
            frame = await self._next()
            if frame is None:
                return
            self._backlog.append(frame)

    # ----------------------------------------------------------------- writing

    async def send(self, frame: Mapping[str, Any]) -> None:
        """Write one frame to the SDK."""
        await self.peer.send(frame)

    async def handshake(self, response: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer the SDK's ``initialize``; returns that request's body."""
        req = await self.receive("control_request", "initialize")
        body = (
            dict(response)
            if response is not None
            else {
                "commands": [],
                "capabilities": ["interrupt_receipt_v1"],
                "claude_code_version": "2.1.330",
            }
        )
        await self.respond(req["request_id"], body)
        return dict(req["request"])

    async def respond(self, request_id: str, body: Mapping[str, Any] | None = None) -> None:
        """Answer an SDK control request with success."""
        resp: dict[str, Any] = {"subtype": "success", "request_id": request_id}
        if body is not None:
            resp["response"] = dict(body)
        await self.send({"type": "control_response", "response": resp})

    async def respond_error(self, request_id: str, error: str) -> None:
        """Answer an SDK control request with an error."""
        await self.send(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }
        )

    async def request(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """Send a control request to the SDK and wait for its answer (the whole response)."""
        rid = await self.start_request(subtype, **fields)
        return await self.response_to(rid)

    async def start_request(self, subtype: str, **fields: Any) -> str:
        """Send a control request without waiting; returns its request_id."""
        rid = str(uuid.uuid4())
        await self.send(
            {
                "type": "control_request",
                "request_id": rid,
                "request": {"subtype": subtype, **fields},
            }
        )
        return rid

    async def response_to(self, request_id: str) -> dict[str, Any]:
        """The SDK's ``control_response`` body for one of our requests."""
        for i, frame in enumerate(self._backlog):
            if _is_response_to(frame, request_id):
                del self._backlog[i]
                return dict(frame["response"])
        while True:
            got = await self._next()
            if got is None:
                raise AssertionError(f"stdin closed before the answer to {request_id}")
            if _is_response_to(got, request_id):
                return dict(got["response"])
            self._backlog.append(got)

    async def mcp(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        notify: bool = False,
    ) -> dict[str, Any]:
        """Send an MCP message to an SDK server; returns the control response body."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = dict(params)
        if not notify:
            msg["id"] = next(self._ids)
        return await self.request("mcp_message", server_name=server, message=msg)

    async def cancel(self, request_id: str) -> None:
        """Withdraw one of our requests (``control_cancel_request``)."""
        await self.send({"type": "control_cancel_request", "request_id": request_id})

    # ------------------------------------------------------- conversation frames

    async def state(self, state: str) -> None:
        """Report the session state (``running``/``requires_action``/``idle``)."""
        await self.send(
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": state,
                "sdk_host_only": True,
                "session_id": self.session_id,
            }
        )

    async def init(self, tools: Sequence[str] = ()) -> None:
        """Send ``system/init``."""
        await self.send(
            {
                "type": "system",
                "subtype": "init",
                "session_id": self.session_id,
                "tools": list(tools),
                "claude_code_version": "2.1.330",
                "capabilities": ["sdk_mcp_tools_list_changed"],
            }
        )

    async def assistant(self, *blocks: Mapping[str, Any], model: str = "claude-fake") -> None:
        """Send an assistant frame with the given content blocks."""
        await self.send(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [dict(b) for b in blocks],
                    "stop_reason": None,
                },
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "uuid": str(uuid.uuid4()),
            }
        )

    async def tool_result(self, tool_use_id: str, content: Any, *, is_error: bool = False) -> None:
        """Send the user frame carrying a tool result."""
        await self.send(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_use_id,
                            "content": content,
                            "is_error": is_error,
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": self.session_id,
                "uuid": str(uuid.uuid4()),
            }
        )

    async def result(
        self,
        text: str = "done",
        *,
        is_error: bool = False,
        subtype: str = "success",
        user_message_uuids: Sequence[str] | None = None,
        **extra: Any,
    ) -> None:
        """Send a ``result`` frame."""
        frame: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": 12,
            "duration_api_ms": 10,
            "num_turns": 1,
            "result": text,
            "stop_reason": "end_turn",
            "total_cost_usd": 0.0012,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "session_id": self.session_id,
            "uuid": str(uuid.uuid4()),
        }
        if user_message_uuids is not None:
            frame["user_message_uuids"] = list(user_message_uuids)
        frame.update(extra)
        await self.send(frame)

    async def exit(self, code: int = 0, stderr: str = "") -> None:
        """End the fake process with an exit code (and stderr text)."""
        await self.peer.exit(code, stderr)


def _matches(frame: Mapping[str, Any], type: str | None, subtype: str | None) -> bool:
    if type is not None and frame.get("type") != type:
        return False
    if subtype is not None:
        req = frame.get("request")
        return isinstance(req, Mapping) and req.get("subtype") == subtype
    return True


def _is_response_to(frame: Mapping[str, Any], request_id: str) -> bool:
    resp = frame.get("response")
    return (
        frame.get("type") == "control_response"
        and isinstance(resp, Mapping)
        and resp.get("request_id") == request_id
    )
