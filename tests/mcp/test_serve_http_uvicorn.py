"""`serve_http` in process: uvicorn on a port of its own (asyncio, which uvicorn runs
on), its banner, keep-alive connections, and the deadline on a request's head.
(`tests/mcp/test_serve_http_server.py` runs ``ccwire serve --http`` as a process.)"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import h11
import pytest

from ccwire._mcp.http import MAX_HEAD_BYTES, HttpLimits, serve_http
from tests.fixtures import mcp_serve_server

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Banner:
    """The ``announce`` stream: what was written, and an event once a line was."""

    def __init__(self) -> None:
        self.text = ""
        self.written = anyio.Event()

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        self.written.set()


@contextlib.asynccontextmanager
async def running(host: str = "127.0.0.1", **limits: Any) -> AsyncIterator[tuple[int, str]]:
    """``serve_http`` on a free port; yields the port and the banner, stops it after."""
    banner = Banner()
    server = mcp_serve_server.server["instance"]
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: serve_http(server, host, 0, announce=banner, limits=HttpLimits(**limits))
        )
        with anyio.fail_after(10):
            await banner.written.wait()  # bound and listening: connections queue from now on
        found = re.search(r":(\d+)/mcp\n$", banner.text)
        assert found is not None, banner.text
        yield int(found[1]), banner.text
        tg.cancel_scope.cancel()


class Client:
    """One kept-alive HTTP/1.1 connection (h11, which uvicorn serves with)."""

    def __init__(self, sock: anyio.abc.SocketStream, host: str) -> None:
        self.sock = sock
        self.host = host
        self.conn = h11.Connection(h11.CLIENT)

    async def post(self, body: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
        """POST ``body`` (JSON) to /mcp; the status, headers and whole body."""
        if self.conn.our_state is h11.DONE:
            self.conn.start_next_cycle()
        data = json.dumps(body).encode()
        sent = {**HEADERS, **headers, "host": self.host, "content-length": str(len(data))}
        request = h11.Request(method="POST", target="/mcp", headers=list(sent.items()))
        for part in (request, h11.Data(data=data), h11.EndOfMessage()):
            await self.sock.send(self.conn.send(part) or b"")
        status, got, chunks = 0, dict[str, str](), list[bytes]()
        with anyio.fail_after(10):
            while True:
                event = self.conn.next_event()
                if event is h11.NEED_DATA:
                    self.conn.receive_data(await self.sock.receive())
                elif isinstance(event, h11.Response):
                    status = event.status_code
                    got = {k.decode(): v.decode() for k, v in event.headers}
                elif isinstance(event, h11.Data):
                    chunks.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    return status, got, b"".join(chunks)


@contextlib.asynccontextmanager
async def connected(host: str, port: int) -> AsyncIterator[Client]:
    async with await anyio.connect_tcp(host, port) as sock:
        yield Client(sock, f"[{host}]:{port}" if ":" in host else f"{host}:{port}")


async def _said_before_closing(sock: anyio.abc.SocketStream) -> bytes:
    said = b""
    with anyio.fail_after(10):
        try:
            while True:
                said += await sock.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return said


async def test_the_banner_names_the_url_and_a_kept_alive_connection_serves_each_request() -> None:
    async with running() as (port, banner):
        assert banner == f"ccwire: serving MCP on http://127.0.0.1:{port}/mcp\n"
        async with connected("127.0.0.1", port) as client:
            status, headers, _ = await client.post(INIT)
            assert status == 200
            session = headers["mcp-session-id"]
            for n in range(3):  # the same connection, request after request
                ping = {"jsonrpc": "2.0", "id": n, "method": "ping"}
                status, _, body = await client.post(ping, **{"mcp-session-id": session})
                assert status == 200
                data = [ln[5:] for ln in body.decode().splitlines() if ln.startswith("data:")]
                assert json.loads(data[-1]) == {"jsonrpc": "2.0", "id": n, "result": {}}


async def test_serving_beyond_this_machine_is_warned_of() -> None:
    """Bound to every address (no authentication): a warning line before the banner,
    which says which Host headers are accepted; a loopback client is served."""
    async with running("0.0.0.0") as (port, banner):
        warning, served = banner.splitlines()
        assert warning.startswith("ccwire: warning: serving beyond this machine (0.0.0.0)")
        assert f"whoever reaches port {port} can call every tool" in warning
        assert "must name a loopback name" in warning
        assert served == f"ccwire: serving MCP on http://0.0.0.0:{port}/mcp"
        async with connected("127.0.0.1", port) as client:
            assert (await client.post(INIT))[0] == 200


async def test_a_connection_that_sends_no_whole_head_in_time_is_closed() -> None:
    """Silent, or stuck halfway through its head (the first request's, or the next
    one's on a kept-alive connection): closed after ``request_timeout`` without an
    answer (there was no request).  A whole request is served."""
    async with running(request_timeout=0.3) as (port, _):
        async with await anyio.connect_tcp("127.0.0.1", port) as silent:
            assert await _said_before_closing(silent) == b""
        async with await anyio.connect_tcp("127.0.0.1", port) as stuck:
            await stuck.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
            assert await _said_before_closing(stuck) == b""
        async with connected("127.0.0.1", port) as client:
            assert (await client.post(INIT))[0] == 200
            await client.sock.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next one
            assert await _said_before_closing(client.sock) == b""


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback")
async def test_an_ipv6_address_is_served_and_shown_in_brackets() -> None:
    async with running("::1") as (port, banner):
        assert banner == f"ccwire: serving MCP on http://[::1]:{port}/mcp\n"
        async with connected("::1", port) as client:
            status, headers, _ = await client.post(INIT)
            assert status == 200 and "mcp-session-id" in headers


async def test_a_head_over_the_limit_gets_431_however_it_arrives() -> None:
    """The limit holds exactly: a head of `MAX_HEAD_BYTES` is served; one byte more
    gets 431 with a JSON-RPC error, whether it arrives in one read (which h11 alone
    would take, up to the size of a read) or in two.  The server goes on."""
    async with running() as (port, _):
        base = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 2\r\nConnection: close\r\nX-Pad: \r\n\r\n"
        )
        room = MAX_HEAD_BYTES - len(base)
        for pad, status in ((room, b"400"), (room + 1, b"431"), (40_000, b"431")):
            head = base.replace("X-Pad: ", "X-Pad: " + "p" * pad).encode()
            for pieces in ([head], [head[: len(head) // 2], head[len(head) // 2 :]]):
                async with await anyio.connect_tcp("127.0.0.1", port) as sock:
                    for piece in pieces:
                        await sock.send(piece)
                    if status == b"400":  # served: {} is no JSON-RPC message
                        await sock.send(b"{}")
                    said = await _said_before_closing(sock)
                assert said.startswith(b"HTTP/1.1 " + status), (pad, said[:200])
                assert b'"code":-32600' in said, said
        async with connected("127.0.0.1", port) as client:
            assert (await client.post(INIT))[0] == 200


async def test_an_accept_out_of_descriptors_is_one_warning_and_other_errors_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While the server runs, the loop's accept failures for want of descriptors (which
    asyncio reports once per accept it tries) are one warning per 10 s; any other
    error goes to the handler the loop had, which is back once the server stopped."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    emfile = OSError(errno.EMFILE, "Too many open files")
    failed = {"message": "socket.accept() out of system resource", "exception": emfile}
    try:
        with caplog.at_level(logging.WARNING, logger="ccwire"):
            async with running():
                for _ in range(500):
                    loop.call_exception_handler(failed)
                loop.call_exception_handler({"message": "another", "exception": ValueError()})
        assert [context["message"] for context in seen] == ["another"]
        warned = [r.getMessage() for r in caplog.records if "file descriptors" in r.getMessage()]
        assert len(warned) == 1 and "(EMFILE: Too many open files)" in warned[0], warned
        loop.call_exception_handler(failed)  # the server is gone: not its to say
        assert seen[-1] is failed
    finally:
        loop.set_exception_handler(None)
