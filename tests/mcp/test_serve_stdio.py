"""``serve_stdio`` in-process, on real file descriptors (files and pipes), and
``serve_lines`` hosting a server of the official ``mcp`` package."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import create_sdk_mcp_server, tool
from ccwire._mcp.serve import serve_lines, serve_stdio
from tests.fixtures.jsonrpc import initialize, line, tools_call
from tests.fixtures.mcp_schema import SchemaCheck
from tests.fixtures.official_serve_server import fast

pytestmark = pytest.mark.anyio

BIG = 200_000  # far beyond a pipe's buffer (64 KiB) and the 4096 bytes written at once


@tool("big", "A long answer", {})
async def big(args: dict[str, Any]) -> str:
    return "x" * BIG


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> str:
    return str(args["a"] + args["b"])


@tool("surrogate", "An answer UTF-8 cannot carry", {})
async def surrogate(args: dict[str, Any]) -> str:
    return "half of a pair: \ud800"


@tool("infinite", "A content block JSON cannot carry", {})
async def infinite(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "far", "_meta": {"distance": math.inf}}]}


@tool("endless", "Never finishes", {})
async def endless(args: dict[str, Any]) -> str:
    await anyio.sleep_forever()
    return "never"


GATE: list[anyio.Event] = []


@tool("gated", "Returns once the test releases it", {})
async def gated(args: dict[str, Any]) -> str:
    await GATE[0].wait()
    return "released"


SERVER = create_sdk_mcp_server("stdio", tools=[big, add, surrogate, infinite, endless, gated])[
    "instance"
]

INIT = initialize()


async def serve_files(stdin_path: Path, stdout_path: Path, **options: Any) -> int:
    """Serve with ``stdin_path`` as stdin and ``stdout_path`` (created) as stdout."""
    stdin = os.open(stdin_path, os.O_RDONLY)
    stdout = os.open(stdout_path, os.O_WRONLY | os.O_CREAT)
    try:
        with anyio.fail_after(10):
            return await serve_stdio(SERVER, stdin=stdin, stdout=stdout, **options)
    finally:
        os.close(stdin)
        os.close(stdout)


async def test_files_in_and_out_every_line_answered_even_the_unterminated_last(
    tmp_path: Path,
) -> None:
    """stdin ends right after the requests: their answers are still written (the big
    one through a thread), and a last line without its newline is served too."""
    stdin_path, stdout_path = tmp_path / "in", tmp_path / "out"
    # A request longer than one read (64 KiB): the decoder joins its chunks.
    padded = tools_call(2, "add", {"a": 2, "b": 3.5})
    padded["params"]["_meta"] = {"pad": "p" * 100_000}
    last = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode()
    stdin_path.write_bytes(line(INIT) + line(tools_call(1, "big", {})) + line(padded) + last)
    await serve_files(stdin_path, stdout_path)
    written = stdout_path.read_bytes()
    assert written.endswith(b"\n")
    answers = {m["id"]: m for m in map(json.loads, written.splitlines())}
    assert sorted(answers) == [0, 1, 2, 3]
    assert answers[0]["result"]["serverInfo"]["name"] == "stdio"
    assert answers[1]["result"]["content"] == [{"type": "text", "text": "x" * BIG}]
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "5.5"}]
    assert answers[3] == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_requests_cut_off_once_stdin_ended_are_answered_and_counted(
    tmp_path: Path,
) -> None:
    """A call still running when the grace period after the end of stdin is over used
    to vanish (no answer, and ``ccwire serve`` exited 0): it gets a -32603 and is
    counted; a call that finished in time is answered as usual."""
    stdin_path, stdout_path = tmp_path / "in", tmp_path / "out"
    calls = [tools_call(1, "endless", {}), tools_call(2, "add", {"a": 1, "b": 1})]
    stdin_path.write_bytes(line(INIT) + b"".join(map(line, calls)))
    assert await serve_files(stdin_path, stdout_path, drain_seconds=0.05) == 1
    answers = {m["id"]: m for m in map(json.loads, stdout_path.read_bytes().splitlines())}
    assert sorted(answers) == [0, 1, 2]
    assert answers[1]["error"]["code"] == -32603
    assert "the server is shutting down" in answers[1]["error"]["message"]
    assert answers[2]["result"]["content"] == [{"type": "text", "text": "2"}]


async def test_empty_stdin_ends_at_once_writing_nothing(tmp_path: Path) -> None:
    stdin_path, stdout_path = tmp_path / "in", tmp_path / "out"
    stdin_path.write_bytes(b"")
    await serve_files(stdin_path, stdout_path)
    assert stdout_path.read_bytes() == b""


async def test_what_json_cannot_carry_gets_an_error_and_serving_goes_on(
    tmp_path: Path, mcp_schema_check: SchemaCheck
) -> None:
    """Answers JSON cannot carry (a tool's lone surrogate or Infinity, an error echoing
    a lone-surrogate method), ids it cannot echo (NaN, Infinity, a lone surrogate) and
    JSON nested too deeply to parse: each gets an error saying why, none ends serving,
    and the ping after them is answered."""
    stdin_path, stdout_path = tmp_path / "in", tmp_path / "out"
    raw = [
        b'{"jsonrpc":"2.0","id":3,"method":"no/\\ud800"}',
        b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":"\\udfff","method":"ping"}',
        b"[" * 100_000 + b"]" * 100_000,
    ]
    stdin_path.write_bytes(
        line(INIT) + line(tools_call(1, "surrogate", {})) + line(tools_call(2, "infinite", {}))
        + b"\n".join(raw) + b"\n" + line({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    )  # fmt: skip
    await serve_files(stdin_path, stdout_path)
    answers = [json.loads(m) for m in stdout_path.read_bytes().splitlines()]
    by_id = {m["id"]: m for m in answers if m["id"] is not None}
    assert sorted(by_id) == [0, 1, 2, 3, 9]
    for call in (1, 2):
        assert by_id[call]["result"]["isError"] is True
        assert "ccwire could not encode the answer" in by_id[call]["result"]["content"][0]["text"]
    assert "lone surrogate" in by_id[1]["result"]["content"][0]["text"]
    assert "NaN and Infinity" in by_id[2]["result"]["content"][0]["text"]
    assert by_id[3]["error"]["code"] == -32603
    assert by_id[9] == {"jsonrpc": "2.0", "id": 9, "result": {}}
    assert len(mcp_schema_check.failures) == 1  # what the Infinity tool gave, not what went out
    mcp_schema_check.failures.clear()
    codes = sorted(m["error"]["code"] for m in answers if m["id"] is None)
    assert codes == [-32700, -32603, -32600, -32600]  # nested; id \\udfff; Infinity, NaN


async def test_a_line_over_the_limit_is_refused_and_skipped_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    """A line over 64 MiB gets a -32600 (it is never held whole), the lines after it
    are served, and one more that stdin ends in is skipped likewise."""
    stdin_path, stdout_path = tmp_path / "in", tmp_path / "out"
    huge = b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"' + b"p" * (64 << 20)
    ping = line({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    stdin_path.write_bytes(line(INIT) + huge + b'"}}\n' + ping + huge)
    await serve_files(stdin_path, stdout_path)
    answers = [json.loads(m) for m in stdout_path.read_bytes().splitlines()]
    assert [(m["id"], m.get("error", {}).get("code")) for m in answers] == [
        (0, None), (None, -32600), (9, None), (None, -32600)
    ]  # fmt: skip
    assert "67108864 bytes" in answers[1]["error"]["message"]


@pytest.mark.parametrize(
    ("backend", "answers"), [("asyncio", "small"), ("trio", "small"), ("asyncio", "big")]
)
def test_a_client_that_stops_reading_does_not_stall_the_server(
    tmp_path: Path, backend: str, answers: str
) -> None:
    """Answers fill the stdout pipe of a client that reads nothing: a small answer was
    written with a blocking write on the event loop, which froze it (no deadline, no
    Ctrl-C, no end of serving) until the client read again; a big one was written by a
    thread nothing could cancel, so serving never ended (nor did ``ccwire serve`` on
    SIGTERM).  Now serving still ends once stdin has ended: the answers left unwritten
    are cut off, and a line cut part-way ends serving as a closed stdout does."""
    stdin_path = tmp_path / "in"
    if answers == "small":
        pings = (line({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in range(3000))
        stdin_path.write_bytes(line(INIT) + b"".join(pings))  # 110 KB of answers: a pipe holds 64
    else:
        stdin_path.write_bytes(line(INIT) + line(tools_call(1, "big", {})))
    read_end, write_end = os.pipe()
    stdin = os.open(stdin_path, os.O_RDONLY)
    done: list[int | str] = []

    def serve() -> None:
        serving = serve_stdio(SERVER, stdin=stdin, stdout=write_end, drain_seconds=0.05)
        try:
            done.append(anyio.run(lambda: serving, backend=backend))
        except BrokenPipeError as exc:
            done.append(str(exc))

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        thread.join(20)
        stalled = thread.is_alive()
    finally:
        os.set_blocking(read_end, False)
        while thread.is_alive():  # a stalled server: read, so that it ends
            with contextlib.suppress(BlockingIOError):
                os.read(read_end, 1 << 16)
            thread.join(0.01)
        for fd in (stdin, read_end, write_end):
            os.close(fd)
    assert not stalled
    if answers == "small":
        assert done and isinstance(done[0], int) and done[0] > 0  # those with no room: cut off
    else:
        assert done == ["[Errno 32] the client closed stdout (or stopped reading it mid-answer): "
                        "answers were lost"]  # fmt: skip


async def test_a_client_that_closed_stdout_ends_serving(caplog: pytest.LogCaptureFixture) -> None:
    """A client that closed its end of stdout, its stdin still open: nothing it sends
    can be answered.  The answer is dropped (logged at debug level), no request is read
    from then on, the calls running are cut off, and `BrokenPipeError` is raised."""
    server_in, client_out = os.pipe()
    read_end, server_out = os.pipe()
    os.close(read_end)  # the client is gone: writing raises BrokenPipeError
    os.write(client_out, line(INIT) + line(tools_call(1, "endless", {})))
    try:
        with (
            caplog.at_level(logging.DEBUG, logger="ccwire"),
            anyio.fail_after(10),
            pytest.raises(BrokenPipeError, match="the client closed stdout"),
        ):
            await serve_stdio(SERVER, stdin=server_in, stdout=server_out)
    finally:
        for fd in (server_in, client_out, server_out):
            os.close(fd)
    dropped = [r.getMessage() for r in caplog.records if "client closed stdout" in r.getMessage()]
    assert "'id': 0" in dropped[0]


async def test_pipes_both_ways_with_a_live_client() -> None:
    """stdin and stdout as pipes: the client writes one request at a time and reads the
    answer before the next, then closes stdin; serving ends."""
    server_in, client_out = os.pipe()
    client_in, server_out = os.pipe()
    got: list[dict[str, Any]] = []

    async def read_answer() -> dict[str, Any]:
        data = b""
        while not data.endswith(b"\n"):
            await anyio.wait_readable(client_in)
            data += os.read(client_in, 1 << 16)
        return dict(json.loads(data))

    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_stdio(SERVER, stdin=server_in, stdout=server_out))
                for request in (INIT, tools_call(1, "add", {"a": 1, "b": 2})):
                    os.write(client_out, line(request))
                    got.append(await read_answer())
                os.close(client_out)
                client_out = -1
    finally:
        for fd in (server_in, client_out, client_in, server_out):
            if fd >= 0:
                os.close(fd)
    assert [m["id"] for m in got] == [0, 1]
    assert got[1]["result"]["content"] == [{"type": "text", "text": "3"}]


async def test_serve_lines_hosts_an_official_server() -> None:
    """An `McpBridge` (a server of the official mcp package) keeps no per-client state
    for `serve_lines` to forget; its tools are served all the same."""
    from ccwire import McpBridge

    bridge = McpBridge(fast)
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[dict[str, Any]](10)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_lines, bridge, server_in, server_out.send)
            await to_server.send(line(INIT))
            assert (await from_server.receive())["id"] == 0
            await to_server.send(tools_call(1, "shout", {"word": "hey"}))
            answer = await from_server.receive()
            to_server.close()
    assert answer["id"] == 1
    assert answer["result"]["content"][0]["text"] == "HEY!"


async def test_stopped_no_message_is_taken_the_calls_finish_and_halt_cuts_them_off() -> None:
    """``stop`` (the first SIGTERM or Ctrl-C of ``ccwire serve``) ends the taking of
    messages: the calls running go on and their answers are written; ``halt`` (the
    second signal) cuts off the rest at once, each answered with a -32603."""
    GATE[:] = [anyio.Event()]
    stop, halt = anyio.Event(), anyio.Event()
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[dict[str, Any]](10)
    cut_off: list[int] = []

    async def serve() -> None:
        cut_off.append(
            await serve_lines(
                SERVER, server_in, server_out.send, drain_seconds=3600, stop=stop, halt=halt
            )
        )

    with to_server, server_in, server_out, from_server, anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            await to_server.send(INIT)
            assert (await from_server.receive())["id"] == 0
            await to_server.send(tools_call(1, "gated", {}))
            await to_server.send(tools_call(2, "endless", {}))
            await anyio.wait_all_tasks_blocked()
            stop.set()
            await anyio.wait_all_tasks_blocked()
            await to_server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            GATE[0].set()
            released = await from_server.receive()
            assert released["id"] == 1
            assert released["result"]["content"] == [{"type": "text", "text": "released"}]
            halt.set()
            cut = await from_server.receive()
            assert cut["id"] == 2 and cut["error"]["code"] == -32603, cut
        assert cut_off == [1]
        assert server_in.statistics().current_buffer_used == 1  # the ping was not taken
