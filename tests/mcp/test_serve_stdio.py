"""`serve_stdio` in process, on pipes: the framing of stdin (a last line without its
newline, a line split across reads), answers too large for a pipe's buffer, and a
client that closed stdout before the answers came."""

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

CALLED: list[int] = []


@tool("big", "Returns n KB of text", {"n": int})
async def big(args: dict[str, Any]) -> str:
    kb = int(args["n"])
    CALLED.append(kb)
    return "x" * (1024 * kb)


SERVER = create_sdk_mcp_server("stdio", tools=[big])["instance"]
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip


def call_big(req_id: int, kb: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "method": "tools/call",
            "params": {"name": "big", "arguments": {"n": kb}}}  # fmt: skip


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    """(stdin's read end, its write end, stdout's read end, its write end)."""
    fds = [*os.pipe(), *os.pipe()]
    yield fds[0], fds[1], fds[2], fds[3]
    for fd in fds:
        with contextlib.suppress(OSError):  # closed by the test
            os.close(fd)


async def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := await read_fd(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


async def test_requests_on_stdin_are_answered_on_stdout(pipes: tuple[int, int, int, int]) -> None:
    stdin, to_server, from_server, stdout = pipes
    ping = json.dumps({"jsonrpc": "2.0", "id": "p", "method": "ping"}).encode()
    sent = [
        json.dumps(INIT).encode() + b"\n",
        json.dumps(call_big(1, 200)).encode()[:20],  # one line in two writes
        json.dumps(call_big(1, 200)).encode()[20:] + b"\n\n",  # a blank line is skipped
        ping,  # the last line, without its newline
    ]
    got = b""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def read() -> None:
                nonlocal got
                got = await _read_all(from_server)

            tg.start_soon(read)
            for data in sent:
                os.write(to_server, data)
            os.close(to_server)
            await serve_stdio(SERVER, stdin=stdin, stdout=stdout)
            os.close(stdout)
    assert got.endswith(b"\n") and got.count(b"\n") == 3
    answers = {a["id"]: a for a in map(json.loads, got.splitlines())}
    assert answers[0]["result"]["serverInfo"]["name"] == "stdio"
    text = answers[1]["result"]["content"][0]["text"]
    assert text == "x" * (200 * 1024)  # 200 KB: more than a pipe holds, written whole
    assert answers["p"] == {"jsonrpc": "2.0", "id": "p", "result": {}}


async def test_a_client_that_closed_stdout_loses_only_the_answers(
    pipes: tuple[int, int, int, int],
) -> None:
    """Answers, small or large, to a client gone from stdout are dropped; the calls
    ran and the server ends once stdin does, without an error."""
    stdin, to_server, from_server, stdout = pipes
    os.close(from_server)
    CALLED.clear()
    lines = [INIT, call_big(1, 1), call_big(2, 100)]
    os.write(to_server, b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    os.close(to_server)
    with anyio.fail_after(10):
        await serve_stdio(SERVER, stdin=stdin, stdout=stdout)
    assert sorted(CALLED) == [1, 100]
