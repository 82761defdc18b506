"""`serve_stdio()` in this process, on pipes as its stdin and stdout: framed requests
answered in order of completion, a large answer written whole, a last line without its
newline still served, and an answer to a client that closed its end dropped, not raised."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from ccwire import create_sdk_mcp_server, tool
from ccwire._core.fdread import read_fd
from ccwire._mcp.serve import serve_stdio

pytestmark = pytest.mark.anyio

BOUND = 20.0


@tool("repeat", "Repeat a word n times", {"word": str, "n": int})
async def repeat(args: dict[str, Any]) -> str:
    return str(args["word"]) * int(args["n"])


SERVER = create_sdk_mcp_server("pipes", tools=[repeat])["instance"]


def request(req_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}).encode()


INIT = request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "pipes", "version": "1"}})  # fmt: skip


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    """(the server's stdin, what the client writes to it, the server's stdout, what the
    client reads from it); every end still open is closed after the test."""
    stdin, to_server = os.pipe()
    from_server, stdout = os.pipe()
    ends = [stdin, to_server, from_server, stdout]
    yield stdin, to_server, from_server, stdout
    for fd in ends:
        with contextlib.suppress(OSError):  # closed by the test already
            os.close(fd)


async def read_answers(fd: int, count: int) -> list[dict[str, Any]]:
    buffer = b""
    with anyio.fail_after(BOUND):
        while buffer.count(b"\n") < count:
            chunk = await read_fd(fd, 1 << 16)
            assert chunk, buffer
            buffer += chunk
    return [json.loads(line) for line in buffer.splitlines()]


async def test_requests_on_a_pipe_are_answered_and_the_end_of_stdin_ends_serving(
    pipes: tuple[int, int, int, int],
) -> None:
    stdin, to_server, from_server, stdout = pipes
    big = {"name": "repeat", "arguments": {"word": "ab", "n": 50_000}}  # 100 kB: over a pipe's
    small = {"name": "repeat", "arguments": {"word": "hi", "n": 2}}
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve_stdio(SERVER, stdin=stdin, stdout=stdout))
        os.write(to_server, INIT + b"\n")
        (init,) = await read_answers(from_server, 1)
        assert init["result"]["serverInfo"]["name"] == "pipes"
        os.write(to_server, request(1, "tools/call", big) + b"\n")
        (answer,) = await read_answers(from_server, 1)  # read while it is written
        assert answer["result"]["content"][0]["text"] == "ab" * 50_000
        os.write(to_server, request(2, "tools/call", small))  # no newline: the last line
        os.close(to_server)  # stdin ends
        with anyio.fail_after(BOUND):
            (last,) = await read_answers(from_server, 1)
    assert (last["id"], last["result"]["content"][0]["text"]) == (2, "hihi")


async def test_answers_to_a_client_that_closed_its_end_are_dropped(
    pipes: tuple[int, int, int, int], caplog: pytest.LogCaptureFixture
) -> None:
    stdin, to_server, from_server, stdout = pipes
    os.close(from_server)  # the client stopped reading
    caplog.set_level("DEBUG", logger="ccwire")
    os.write(to_server, INIT + b"\n")
    os.close(to_server)
    with anyio.fail_after(BOUND):
        await serve_stdio(SERVER, stdin=stdin, stdout=stdout)  # returns, raises nothing
    assert "the client closed stdout" in caplog.text
