"""A hypothesis state machine over a live client: prompts, tool calls, interrupts,
cancelled reads and disconnects, interleaved in any order, on asyncio and trio.

The client talks to a scripted fake CLI over the in-memory transport; an event loop runs
in a blocking portal for the whole run, so every rule is one bounded step
(``fail_after``) of one connection. Invariants after every step: the step had a typed
outcome (what the rule asserts), and no background task outlives a disconnect. Each step
adds to the fuzz case count printed at the end of the run
(``test_client_machine::steps``).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    ResultMessage,
    create_sdk_mcp_server,
    tool,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fuzz._support import CASES, fuzz_settings

STEP = 10.0  # seconds any one step may take
KEY = "test_client_machine::steps"


@tool("echo", "Echo the text", {"text": str})
async def echo(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": args["text"]}]}


class ClientMachine(RuleBasedStateMachine):
    backend = "asyncio"

    def __init__(self) -> None:
        super().__init__()
        self._cm = start_blocking_portal(self.backend)
        self.portal: BlockingPortal = self._cm.__enter__()
        self.client: ClaudeSDKClient | None = None
        self.fake: FakeCLI | None = None
        self.baseline = self.portal.call(self._task_count)
        self.turns = 0

    @staticmethod
    async def _task_count() -> int:
        return len(anyio.get_running_tasks())

    def _run(self, fn: Any, *args: Any) -> Any:
        async def bounded() -> Any:
            with anyio.fail_after(STEP):
                return await fn(*args)

        CASES[KEY] += 1
        return self.portal.call(bounded)

    # ------------------------------------------------------------------ rules

    @precondition(lambda self: self.client is None)
    @rule()
    def connect(self) -> None:
        async def go() -> None:
            transport, peer = memory_transport_pair()
            fake = FakeCLI(peer)
            client = ClaudeSDKClient(
                ClaudeAgentOptions(mcp_servers={"s": create_sdk_mcp_server("s", tools=[echo])}),
                transport=transport,
            )
            async with anyio.create_task_group() as tg:
                tg.start_soon(fake.handshake, None)
                await client.connect()
            self.client, self.fake = client, fake

        self._run(go)

    @precondition(lambda self: self.client is not None)
    @rule(text=st.text(max_size=20))
    def prompt(self, text: str) -> None:
        async def go() -> None:
            assert self.client is not None and self.fake is not None
            await self.client.query(text or "(empty)")
            p = await self.fake.receive("user")
            await self.fake.assistant({"type": "text", "text": f"re: {text}"})
            await self.fake.result(f"answer {self.turns}", user_message_uuids=[p["uuid"]])
            got = [m async for m in self.client.receive_response()]
            assert isinstance(got[-1], ResultMessage) and got[-1].result == f"answer {self.turns}"

        self._run(go)
        self.turns += 1

    @precondition(lambda self: self.client is not None)
    @rule(text=st.text(max_size=20), valid=st.booleans())
    def tool_call(self, text: str, valid: bool) -> None:
        async def go() -> None:
            assert self.fake is not None
            arguments = {"text": text} if valid else {"text": 5}
            body = await self.fake.mcp("s", "tools/call", {"name": "echo", "arguments": arguments})
            result = body["response"]["mcp_response"]["result"]
            if valid:
                assert result["content"] == [{"type": "text", "text": text}]
            else:
                assert result["isError"] is True  # a typed refusal, not silence

        self._run(go)

    @precondition(lambda self: self.client is not None)
    @rule()
    def interrupt(self) -> None:
        async def go() -> None:
            assert self.client is not None and self.fake is not None
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.client.interrupt)
                req = await self.fake.receive("control_request", "interrupt")
                await self.fake.respond(req["request_id"])

        self._run(go)

    @precondition(lambda self: self.client is not None)
    @rule()
    def cancel_a_waiting_read(self) -> None:
        async def go() -> None:
            assert self.client is not None
            with anyio.CancelScope() as scope:
                scope.cancel()  # cancelled at its first wait: nothing pending
                async for _ in self.client.receive_response():
                    pass
            assert scope.cancelled_caught

        self._run(go)

    @precondition(lambda self: self.client is not None)
    @rule()
    def disconnect(self) -> None:
        async def go() -> None:
            assert self.client is not None
            await self.client.disconnect()

        self._run(go)
        self.client = self.fake = None

    @precondition(lambda self: self.client is None)
    @rule()
    def use_after_disconnect(self) -> None:
        async def go() -> None:
            client = ClaudeSDKClient(ClaudeAgentOptions())
            with pytest.raises(CLIConnectionError):
                await client.query("not connected")

        self._run(go)

    # ------------------------------------------------------------- invariants

    @invariant()
    def no_task_outlives_a_disconnect(self) -> None:
        if self.client is None:
            assert self.portal.call(self._task_count) == self.baseline

    def teardown(self) -> None:
        try:
            if self.client is not None:
                self.portal.call(self.client.disconnect)
            assert self.portal.call(self._task_count) == self.baseline
        finally:
            self._cm.__exit__(None, None, None)


class AsyncioClientMachine(ClientMachine):
    backend = "asyncio"


class TrioClientMachine(ClientMachine):
    backend = "trio"


_settings = fuzz_settings(15, stateful_step_count=12)
AsyncioClientMachine.TestCase.settings = _settings
TrioClientMachine.TestCase.settings = _settings
TestAsyncioClientMachine = AsyncioClientMachine.TestCase
TestTrioClientMachine = TrioClientMachine.TestCase
