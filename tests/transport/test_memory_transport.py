"""Tests of the in-memory transport and its fake CLI peer."""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from ccwire._core.errors import (
    CLIConnectionError,
    MessageDecodeError,
    MessageEncodeError,
    ProcessError,
)
from ccwire._transport.memory import CLIPeer, MemoryTransport, memory_transport_pair
from ccwire._wire.framing import encode_line

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pair(
    *,
    max_line_bytes: int | None = None,
    stderr_callback: Callable[[str], None] | None = None,
    close_grace: float = 0.0,
) -> AsyncIterator[tuple[MemoryTransport, CLIPeer]]:
    """A started pair, closed afterwards; every test is bounded by 5 s."""
    transport, peer = memory_transport_pair(
        max_line_bytes=max_line_bytes, stderr_callback=stderr_callback, close_grace=close_grace
    )
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            try:
                yield transport, peer
            finally:
                await transport.aclose()


async def test_round_trip_both_ways() -> None:
    async with pair() as (transport, peer):
        await transport.send_line(encode_line({"type": "user", "text": "hi\n€"}))
        await transport.send_line(encode_line({"type": "control_request", "request_id": "1"}))
        assert await peer.receive() == {"type": "user", "text": "hi\n€"}
        assert await peer.receive() == {"type": "control_request", "request_id": "1"}
        await peer.send({"type": "assistant", "n": 1})
        await peer.send({"type": "result", "text": "done ✓"})
        assert json.loads(await transport.receive_line() or b"") == {"type": "assistant", "n": 1}
        assert json.loads(await transport.receive_line() or b"") == {
            "type": "result",
            "text": "done ✓",
        }
        assert transport.exit_info is None


async def test_raw_chunks_are_framed() -> None:
    async with pair() as (transport, peer):
        data = b'{"a":"\xc3\xa9"}\r\n\n  \n{"b":2}\n{"c"'
        for i in range(len(data)):
            await peer.send_raw(data[i : i + 1])
        await peer.send_raw(b":3}")
        assert await transport.receive_line() == b'{"a":"\xc3\xa9"}'
        assert await transport.receive_line() == b'{"b":2}'
        await peer.exit(0)
        assert await transport.receive_line() == b'{"c":3}'  # the unfinished last line
        assert await transport.receive_line() is None


async def test_exit_zero_returns_none_after_buffered_lines() -> None:
    async with pair() as (transport, peer):
        await peer.send({"type": "result"})
        await peer.exit(0)
        assert peer.exited
        assert await transport.receive_line() == b'{"type":"result"}'
        assert await transport.receive_line() is None
        assert await transport.receive_line() is None
        assert transport.exit_info is not None
        assert transport.exit_info.returncode == 0


async def test_nonzero_exit_raises_process_error_with_stderr() -> None:
    seen: list[str] = []
    async with pair(stderr_callback=seen.append) as (transport, peer):
        await peer.write_stderr("warming up\n")
        await peer.exit(1, stderr="Error: Missing request on control_request\n")
        with pytest.raises(ProcessError) as info:
            await transport.receive_line()
        with pytest.raises(ProcessError):
            await transport.send_line(b"{}\n")
    assert info.value.exit_code == 1
    assert info.value.stderr == "warming up\nError: Missing request on control_request"
    assert seen == ["warming up", "Error: Missing request on control_request"]
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == 1


async def test_end_input_seen_by_peer() -> None:
    async with pair() as (transport, peer):
        assert not peer.stdin_closed
        await transport.send_line(b'{"last":true}\n')
        await transport.end_input()
        await transport.end_input()  # idempotent
        assert peer.stdin_closed
        assert await peer.receive() == {"last": True}
        assert await peer.receive() is None
        with pytest.raises(CLIConnectionError, match="input is closed"):
            await transport.send_line(b"{}\n")


async def test_peer_detects_non_json_from_sdk() -> None:
    async with pair() as (transport, peer):
        await transport.send_line(b"this is not json\n")
        with pytest.raises(MessageDecodeError, match="not JSON") as info:
            await peer.receive()
        assert info.value.line == "this is not json"
        await transport.send_line(b"[1,2]\n")
        with pytest.raises(MessageDecodeError, match="not an object"):
            await peer.receive()


async def test_send_line_rejects_incomplete_lines() -> None:
    async with pair() as (transport, _):
        for bad in (b"{}", b"{}\n{}\n", b""):
            with pytest.raises(MessageEncodeError):
                await transport.send_line(bad)


async def test_aclose_without_exit_counts_as_killed() -> None:
    async with pair() as (transport, peer):
        await peer.send({"type": "late"})
        await transport.aclose()
        await transport.aclose()  # idempotent
        assert peer.stdin_closed
        assert await peer.receive() is None
        await peer.send({"type": "ignored"})  # the fake process is gone
        await peer.exit(0)  # no-op
        assert await transport.receive_line() == b'{"type":"late"}'
        assert await transport.receive_line() is None
        assert transport.exit_info is not None
        assert transport.exit_info.returncode == -signal.SIGTERM


async def test_aclose_waits_for_graceful_exit() -> None:
    async with pair(close_grace=5.0) as (transport, peer):

        async def fake_cli() -> None:
            while await peer.receive() is not None:
                pass
            await peer.exit(2, stderr="bye")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fake_cli)
            await transport.aclose()
        with pytest.raises(ProcessError) as info:
            await transport.receive_line()
    assert info.value.exit_code == 2
    assert info.value.stderr == "bye"


async def test_max_line_bytes() -> None:
    async with pair(max_line_bytes=16) as (transport, peer):
        await peer.send_raw(b'{"ok":1}\n' + b"x" * 40 + b"\n")
        assert await transport.receive_line() == b'{"ok":1}'
        with pytest.raises(MessageDecodeError, match="max_line_bytes"):
            await transport.receive_line()


async def test_not_started() -> None:
    transport, peer = memory_transport_pair()
    with pytest.raises(CLIConnectionError):
        await transport.send_line(b"{}\n")
    with pytest.raises(CLIConnectionError):
        await transport.receive_line()
    await peer.exit(0)
    with pytest.raises(CLIConnectionError):
        await peer.send({"too": "late"})
    await transport.aclose()
    with pytest.raises(CLIConnectionError):
        await transport.start(None)  # type: ignore[arg-type]  # closed: cannot start


async def test_receive_waits_are_cancellable() -> None:
    async with pair() as (transport, peer):
        with anyio.move_on_after(0.01) as scope:
            await transport.receive_line()
        assert scope.cancelled_caught
        with anyio.move_on_after(0.01) as scope:
            await peer.receive()
        assert scope.cancelled_caught
