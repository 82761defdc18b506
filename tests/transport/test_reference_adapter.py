"""A transport written for ``claude-agent-sdk`` (its six methods) driven as ccwire's
`LineTransport`: the order of its calls, its failures as typed errors (ccwire's own
passing as they are), and the reference methods every ccwire transport offers
(`write`, `read_messages`) on odd input. The client over such a transport is in
``tests/compat/test_reference_shaped.py``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from ccwire._core.errors import (
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    MessageEncodeError,
    OptionsError,
)
from ccwire._transport.base import as_line_transport
from ccwire.testing import memory_transport_pair

pytestmark = pytest.mark.anyio

LIMIT = 15


class Remote:
    """A reference-shaped transport (it derives from nothing of ccwire's): what it is
    sent is kept, it replays `script` (a message or an exception per item), and each of
    its methods can be made to fail."""

    def __init__(self, script: list[Any], **fail: BaseException) -> None:
        self.script = script
        self.fail = fail
        self.written: list[str] = []
        self.calls: list[str] = []
        self.ready = False

    def _maybe_fail(self, method: str) -> None:
        self.calls.append(method)
        if method in self.fail:
            raise self.fail[method]

    async def connect(self) -> None:
        self._maybe_fail("connect")
        self.ready = True

    async def write(self, data: str) -> None:
        self._maybe_fail("write")
        self.written.append(data)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.script:
            if isinstance(item, BaseException):
                raise item
            yield item

    async def close(self) -> None:
        self._maybe_fail("close")
        self.ready = False

    def is_ready(self) -> bool:
        return self.ready

    async def end_input(self) -> None:
        self._maybe_fail("end_input")

    def __repr__(self) -> str:
        return "<Remote>"


async def test_the_six_methods_drive_a_session_in_order() -> None:
    remote = Remote([{"type": "system", "n": 1}, {"type": "result", "n": 2}])
    adapter = as_line_transport(remote)
    assert repr(adapter) == "<ReferenceTransportAdapter of <Remote>>"
    assert await adapter.receive_line() is None  # not started: nothing to read
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            assert adapter.is_ready() and adapter.exit_info is None
            with pytest.raises(CLIConnectionError, match="already started"):
                await adapter.start(tg)
            await adapter.send_line(b'{"type": "user"}\n')
            lines = [await adapter.receive_line() for _ in range(3)]
            await adapter.end_input()
            await adapter.aclose()
            await adapter.aclose()  # idempotent: the remote is closed once
    assert [json.loads(x) for x in lines[:2] if x is not None] == remote.script
    assert lines[2] is None  # its messages ended
    assert remote.written == ['{"type": "user"}\n']
    assert remote.calls == ["connect", "write", "end_input", "close"]
    assert not adapter.is_ready()
    with pytest.raises(CLIConnectionError, match="already started"):
        await adapter.start(tg)


class Lingering(Remote):
    """A remote whose messages do not end after its script, until it is closed."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__(script)
        self.closed = anyio.Event()

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        for item in self.script:
            yield item
        await self.closed.wait()

    async def close(self) -> None:
        await super().close()
        self.closed.set()


async def test_terminate_closes_the_remote_and_its_messages_end() -> None:
    # a query whose custom transport lingers after the result is stopped with it
    remote = Lingering([{"type": "result"}])
    adapter = as_line_transport(remote)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            await adapter.send_line(b'{"type": "user"}\n')
            assert await adapter.receive_line() == b'{"type": "result"}'
            await adapter.terminate()
            with anyio.fail_after(2):
                assert await adapter.receive_line() is None
            await adapter.aclose()
    assert remote.calls == ["connect", "write", "close"]


@pytest.mark.parametrize(
    ("method", "error", "expected", "match"),
    [
        ("connect", OSError("refused"), CLIConnectionError, r"connect\(\) failed: OSError"),
        ("connect", CLINotFoundError("no CLI there"), CLINotFoundError, "no CLI there"),
        ("write", BrokenPipeError("gone"), CLIConnectionError, r"write\(\) failed"),
        ("end_input", RuntimeError("half-closed"), CLIConnectionError, r"end_input\(\) failed"),
    ],
)
async def test_a_failing_method_is_a_typed_error(
    method: str, error: Exception, expected: type[Exception], match: str
) -> None:
    remote = Remote([{"type": "x"}], **{method: error})
    adapter = as_line_transport(remote)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            with pytest.raises(expected, match=match) as caught:
                await adapter.start(tg)
                await adapter.send_line(b"{}\n")
                await adapter.end_input()
            await adapter.aclose()
    if expected is CLIConnectionError:
        assert caught.value.__cause__ is error


async def test_a_failed_write_still_lets_the_reader_go_on() -> None:
    remote = Remote([{"type": "result"}], write=OSError("full"))
    adapter = as_line_transport(remote)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            with pytest.raises(CLIConnectionError):
                await adapter.send_line(b"{}\n")
            # the reader waits for the first write, failed or not, then reads
            assert await adapter.receive_line() == b'{"type": "result"}'
            await adapter.aclose()


async def test_a_line_that_is_not_bytes_is_refused_before_the_remote_sees_it() -> None:
    remote = Remote([])
    adapter = as_line_transport(remote)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            with pytest.raises(MessageEncodeError, match="must be bytes, not str"):
                await adapter.send_line('{"type": "user"}\n')  # type: ignore[arg-type]
            await adapter.aclose()
    assert remote.written == []


async def test_reading_fails_typed_unless_closing_ended_it() -> None:
    # ccwire's own error from the remote passes as it is
    decode = CLIJSONDecodeError("{oops", ValueError("bad"))
    adapter = as_line_transport(Remote([decode]))
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            await adapter.send_line(b"{}\n")
            with pytest.raises(CLIJSONDecodeError) as caught:
                await adapter.receive_line()
            assert caught.value is decode
            await adapter.aclose()

    # a read that fails because the transport is being closed is the end, not an error
    class ClosingRemote(Remote):
        async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
            await adapter_ref.aclose()  # closed while this read is under way
            raise OSError("stream closed")
            yield {}  # pragma: no cover

    adapter_ref = as_line_transport(ClosingRemote([]))
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter_ref.start(tg)
            await adapter_ref.send_line(b"{}\n")
            assert await adapter_ref.receive_line() is None


async def test_write_and_read_messages_of_a_ccwire_transport_on_odd_input() -> None:
    remote = Remote([])
    adapter = as_line_transport(remote)  # itself a ccwire transport: it has write() too
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            await adapter.write('{"n": 1}\n\n   \n{"n": 2}')
            await adapter.aclose()
    assert remote.written == ['{"n": 1}\n', '{"n": 2}\n']  # one line each, blank ones not sent

    transport, peer = memory_transport_pair()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            await peer.send_raw(b'[1, 2]\n{"n": 3}\nnot json\n')
            messages = transport.read_messages()
            assert await messages.__anext__() == {"n": 3}  # a JSON non-object is skipped
            with pytest.raises(CLIJSONDecodeError, match="not json"):
                await messages.__anext__()
            await transport.close()


async def test_an_adapter_used_before_start() -> None:
    remote = Remote([{"type": "result"}])
    adapter = as_line_transport(remote)
    with pytest.raises(CLIConnectionError, match="not started"):  # as ccwire's transports
        await adapter.send_line(b"{}\n")
    assert remote.written == [] and remote.calls == []
    await adapter.aclose()  # closing one never started closes the remote, once
    await adapter.aclose()
    assert remote.calls == ["close"]
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            with pytest.raises(CLIConnectionError, match="already started"):
                await adapter.start(tg)


async def test_a_reader_waiting_for_the_first_write_ends_when_the_adapter_closes() -> None:
    remote = Remote([{"type": "result"}])
    adapter = as_line_transport(remote)
    got: list[bytes | None] = []
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)

            async def read() -> None:
                got.append(await adapter.receive_line())

            tg.start_soon(read)
            await anyio.wait_all_tasks_blocked()
            assert got == []  # nothing written yet: the reader waits
            await adapter.aclose()
    assert got == [None]  # closed: the end, and the remote's message was never read


async def test_a_foreign_failure_of_an_open_read_is_a_connection_error() -> None:
    reset = ConnectionResetError("peer reset")
    adapter = as_line_transport(Remote([{"type": "system"}, reset]))
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await adapter.start(tg)
            await adapter.send_line(b"{}\n")
            assert await adapter.receive_line() == b'{"type": "system"}'
            with pytest.raises(CLIConnectionError, match=r"read_messages\(\) failed") as caught:
                await adapter.receive_line()
            assert caught.value.__cause__ is reset
            await adapter.aclose()


async def test_the_reference_methods_of_a_line_transport() -> None:
    transport, peer = memory_transport_pair()
    assert as_line_transport(transport) is transport  # driven as it is, not wrapped
    with pytest.raises(CLIConnectionError, match=r"starts with start\(task_group\)"):
        await transport.connect()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            assert transport.is_ready()
            await peer.send({"type": "result", "n": 1})
            await peer.exit(0)
            assert [m async for m in transport.read_messages()] == [{"type": "result", "n": 1}]
            assert not transport.is_ready()  # the process ended
            await transport.close()


def test_an_object_without_the_six_methods_is_refused() -> None:
    class Half:
        async def connect(self) -> None: ...

        async def write(self, data: str) -> None: ...

        is_ready = True  # not callable

    with pytest.raises(
        TypeError, match=r"Half lacks read_messages\(\), close\(\), is_ready\(\), end_input\(\)$"
    ) as refused:
        as_line_transport(Half())
    assert isinstance(refused.value, OptionsError)  # a typed error, still a TypeError
