"""Two guards a fleet needs: one owner per session id, and a CLI that goes silent
mid-turn is noticed.

The silence tests run on trio's mock clock as well (``autojump``): time jumps while
every task waits, so a limit is checked without waiting for it, and a tool call
longer than the limit is shown not to trip it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import anyio
import pytest
import trio.testing

from ccwire import (
    ANSWER_LATER,
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    ClaudeSDKClient,
    CLISilenceError,
    PermissionResultAllow,
    ResultMessage,
    SessionInUseError,
    create_sdk_mcp_server,
    query,
    tool,
)
from ccwire._conversation.ownership import claims_folder
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio
SID = "5e551011-0000-4000-8000-000000000001"


# ------------------------------------------------------------ one owner per id


async def _open(options: ClaudeAgentOptions) -> tuple[ClaudeSDKClient, FakeCLI, Any]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    client = ClaudeSDKClient(options, transport=transport)
    return client, fake, transport


async def test_a_second_client_resuming_the_same_session_is_refused() -> None:
    async with connected(ClaudeAgentOptions(resume=SID)) as (client, fake):
        other, _, unused = await _open(ClaudeAgentOptions(resume=SID))
        with pytest.raises(SessionInUseError) as refused:
            await other.connect()
        await unused.aclose()
        assert refused.value.session_id == SID and "already open" in str(refused.value)
        # a query() and a new session under that id are refused the same way
        with pytest.raises(SessionInUseError):
            async for _ in query(prompt="hi", options=ClaudeAgentOptions(resume=SID)):
                pass
        with pytest.raises(SessionInUseError):
            await ClaudeSDKClient(ClaudeAgentOptions(session_id=SID)).connect()
        # forking it into a new id is allowed (it writes another transcript)
        fork = ClaudeAgentOptions(resume=SID, fork_session=True)
        forked, fork_fake, _ = await _open(fork)
        async with anyio.create_task_group() as tg:
            tg.start_soon(fork_fake.handshake, None)
            await forked.connect()
        await forked.disconnect()
    # once the first one closed, the id is free again
    async with connected(ClaudeAgentOptions(resume=SID)) as (client, fake):
        await client.query("again")
        await fake.receive("user")


async def test_an_agent_cannot_resume_a_session_a_client_holds() -> None:
    async with connected(ClaudeAgentOptions(resume=SID)):
        transport, _ = memory_transport_pair()
        agent = ClaudeCodeAgent(
            ClaudeAgentOptions(), store=False, transport_factory=lambda _: transport
        )
        async with agent:
            with pytest.raises(SessionInUseError, match="already open in this process"):
                await agent.resume_session(SID, "hi")
        await transport.aclose()


def test_another_process_holding_the_session_is_named() -> None:
    """Across processes: a child holds the claim; ours is refused with its pid, and is
    free as soon as the child is gone (however it ends)."""
    holder = textwrap.dedent(
        f"""
        import sys, time
        from ccwire._conversation.ownership import claim_session
        claim = claim_session({SID!r})
        print("held", flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        from ccwire._conversation.ownership import claim_session

        with pytest.raises(SessionInUseError, match=f"another process \\(pid {child.pid}\\)"):
            claim_session(SID)
    finally:
        child.kill()
        child.wait(timeout=10)
    claim = claim_session(SID)  # the lock went with the process
    claim.release()
    assert (claims_folder() / f"{SID}.lock").exists()
    assert os.stat(claims_folder()).st_mode & 0o077 == 0  # private to this user


# ---------------------------------------------------------------- a silent CLI


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(
            ("trio", {"clock": trio.testing.MockClock(autojump_threshold=0)}), id="trio-mock-clock"
        ),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> Any:
    return request.param


def _limit(anyio_backend: Any) -> float:
    return 2.0 if anyio_backend[0] == "trio" else 0.3  # virtual seconds on the mock clock


async def test_a_cli_silent_mid_turn_ends_the_turn_with_a_typed_error(anyio_backend: Any) -> None:
    limit = _limit(anyio_backend)
    async with connected(ClaudeAgentOptions(silence_timeout=limit)) as (client, fake):
        with anyio.fail_after(limit * 20):
            await client.query("hi")
            await fake.receive("user")
            await fake.assistant({"type": "text", "text": "thinking..."})  # then nothing
            seen: list[Any] = []
            with pytest.raises(CLISilenceError) as error:
                async for message in client.receive_response():
                    seen.append(message)
            await fake.expect_eof()  # the CLI was stopped: its input is closed
    assert error.value.seconds == limit
    assert [type(m).__name__ for m in seen] == ["AssistantMessage"]  # nothing lost


async def test_no_limit_while_we_serve_a_tool_or_between_turns(anyio_backend: Any) -> None:
    limit = _limit(anyio_backend)
    if anyio_backend[0] != "trio":
        pytest.skip("needs the mock clock: a tool call of 2x the limit in virtual time")

    @tool("slow", "Takes longer than the silence limit", {})
    async def slow(args: dict[str, Any]) -> str:
        await anyio.sleep(limit * 2)
        return "done"

    server = create_sdk_mcp_server("s", tools=[slow])
    options = ClaudeAgentOptions(silence_timeout=limit, mcp_servers={"s": server})
    async with connected(options) as (client, fake):
        await anyio.sleep(limit * 3)  # idle between turns: nothing owed, nothing armed
        await client.query("hi")
        await fake.receive("user")
        params = {"name": "slow", "arguments": {}}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        answer = await fake.request("mcp_message", server_name="s", message=message)
        assert answer["subtype"] == "success"
        await fake.result("ok")
        final = [m async for m in client.receive_response()][-1]
    assert isinstance(final, ResultMessage) and final.result == "ok"


async def test_no_limit_while_a_permission_is_left_to_answer_later(anyio_backend: Any) -> None:
    limit = _limit(anyio_backend)
    if anyio_backend[0] != "trio":
        pytest.skip("needs the mock clock: a wait of 3x the limit in virtual time")

    async def can_use_tool(name: str, data: dict[str, Any], context: Any) -> Any:
        return ANSWER_LATER  # a person answers, out of band

    options = ClaudeAgentOptions(silence_timeout=limit, can_use_tool=can_use_tool)
    async with connected(options) as (client, fake):
        await client.query("hi")
        await fake.receive("user")
        rid = await fake.start_request("can_use_tool", tool_name="Bash", input={})
        # the request is read (and left open) before a later one is answered
        assert (await fake.request("no_such_subtype"))["subtype"] == "error"
        await anyio.sleep(limit * 3)  # the CLI waits on us: not silence
        assert await client.answer_control_request(rid, PermissionResultAllow()) is True
        assert (await fake.response_to(rid))["subtype"] == "success"
        await fake.result("ok")
        final = [m async for m in client.receive_response()][-1]
    assert isinstance(final, ResultMessage) and final.result == "ok"


def test_the_limit_must_be_positive() -> None:
    for bad in (0, -1.0, "5"):
        with pytest.raises(ValueError, match="silence_timeout"):
            ClaudeAgentOptions(silence_timeout=bad)  # type: ignore[arg-type]
