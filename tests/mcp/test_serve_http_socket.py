"""`serve_http()` in this process, on a real socket: the banner, a request answered, and
the head deadline of each connection (a client that says nothing, or sends part of a
head, is cut off). The same server as a process, with its flags, is in
``test_serve_http_server.py``."""

from __future__ import annotations

import http.client
import io
import json
import re
from functools import partial

import anyio
import pytest

from ccwire._mcp.http import HttpLimits, serve_http
from tests.fixtures.mcp_serve_server import server as config

pytestmark = pytest.mark.anyio

BOUND = 20.0
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn runs on asyncio


class Banner(io.StringIO):
    """The text stream the banner goes to; `flushed` is set once it is written."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed = anyio.Event()

    def flush(self) -> None:
        super().flush()
        self.flushed.set()


def two_initializes(port: int) -> list[str]:
    """Two ``initialize`` requests over one kept-alive connection; their session ids."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
    sessions = []
    try:
        for _ in range(2):
            conn.request("POST", "/mcp", json.dumps(INIT), HEADERS)
            reply = conn.getresponse()
            body = reply.read()
            assert reply.status == 200, body
            assert b'"serverInfo"' in body
            sessions.append(reply.headers["mcp-session-id"])
    finally:
        conn.close()
    return sessions


async def closed_without_a_word(stream: anyio.abc.SocketStream) -> bool:
    """Whether the server closes ``stream`` having sent nothing."""
    with anyio.fail_after(BOUND):
        try:
            await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return True
    return False


async def test_serve_http_answers_and_cuts_off_clients_without_a_request_head() -> None:
    banner = Banner()
    limits = HttpLimits(request_timeout=0.3)
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            partial(serve_http, config["instance"], "127.0.0.1", 0, announce=banner, limits=limits)
        )
        with anyio.fail_after(BOUND):
            await banner.flushed.wait()
        found = re.fullmatch(
            r"ccwire: serving MCP on http://127\.0\.0\.1:(\d+)/mcp\n", banner.getvalue()
        )
        assert found is not None, banner.getvalue()
        port = int(found[1])

        # a request, then the next one on the same connection: each head has its deadline
        sessions = await anyio.to_thread.run_sync(two_initializes, port)
        assert len(set(sessions)) == 2

        async with await anyio.connect_tcp("127.0.0.1", port) as silent:
            assert await closed_without_a_word(silent)

        async with await anyio.connect_tcp("127.0.0.1", port) as partial_head:
            await partial_head.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert await closed_without_a_word(partial_head)  # no request yet: no answer

        tg.cancel_scope.cancel()
