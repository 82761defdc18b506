"""``ccwire serve --http`` as a process: slow clients, huge bodies, its limit flags, a restart,
connection floods against a low file-descriptor limit (``ulimit -n``).

The real server (uvicorn, which runs on asyncio) in a subprocess, driven over raw
sockets where a well-behaved client would not do what is tried: a head sent byte by
byte, a body that never ends.  After each, the server answers a normal request.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests.fixtures.mcp_serve_server:server"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
BOUND = 20.0
"""What any of these waits may take, at most, before the test fails."""


@contextlib.contextmanager
def server(
    *args: str, port: int = 0, target: str = TARGET
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``ccwire serve --http PORT ARGS...``; yields the process and its port once bound."""
    with logged_server(*args, port=port, target=target) as (proc, port, _):
        yield proc, port


class Lines(list[str]):
    """Lines as a thread reads them; `wait_for` one."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def extend(self, lines: Iterable[str]) -> None:
        for line in lines:
            with self._changed:
                self.append(line)
                self._changed.notify_all()

    def wait_for(self, text: str) -> None:
        with self._changed:
            found = self._changed.wait_for(lambda: any(text in line for line in self), BOUND)
        assert found, self[:20]


@contextlib.contextmanager
def logged_server(
    *args: str, port: int = 0, nofile: tuple[int, int] | None = None, target: str = TARGET
) -> Iterator[tuple[subprocess.Popen[str], int, Lines]]:
    """`server`, with its file-descriptor limit (soft, hard) set to ``nofile``; yields
    also the list of the lines it writes to stderr (read as they come, so that writing
    never blocks it), the lines before its banner first."""

    def limit_descriptors() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, nofile)

    proc = subprocess.Popen(
        [sys.executable, "-m", "ccwire", "serve", "--http", str(port), *args, target],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=limit_descriptors,
    )  # fmt: skip
    assert proc.stderr is not None
    stderr = proc.stderr
    log = Lines()
    reader = threading.Thread(target=lambda: log.extend(stderr), daemon=True)
    try:
        while (line := stderr.readline()) and "/mcp" not in line:
            log.append(line)  # warnings before the banner
        found = re.search(r":(\d+)/mcp", line)
        assert found is not None, "".join(log) + line + stderr.read()
        reader.start()
        yield proc, int(found[1]), log
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=BOUND)
        if reader.ident is not None:
            reader.join(BOUND)
            assert not reader.is_alive()
        else:
            log.extend(stderr)
        stderr.close()
        text = "".join(log)
        assert "Traceback" not in text, text[:5000]


def post(port: int, body: Any, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One POST over a fresh connection; its status, headers and whole body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
    try:
        conn.request("POST", "/mcp", json.dumps(body), {**HEADERS, **headers})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def open_session(port: int) -> str:
    status, headers, _ = post(port, INIT)
    assert status == 200
    session = headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert post(port, note, **{"Mcp-Session-Id": session})[0] == 202
    return session


def answers_ping(port: int) -> None:
    """The server is up: a new session is opened and answers a ping."""
    session = open_session(port)
    ping = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}
    status, _, body = post(port, ping, **{"Mcp-Session-Id": session})
    assert status == 200 and b'"id":"ping","result":{}' in body, body


def head(port: int, extra: str = "") -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"{extra}\r\n"
    ).encode()


def trickle(sock: socket.socket, data: bytes, pace: float = 0.05) -> bytes | None:
    """Send ``data`` a byte at a time, one every ``pace`` seconds, watching the socket
    meanwhile: what the server said (``b""`` when it closed the connection) as soon
    as it says it, or ``None`` if it let the whole of ``data`` through."""
    deadline = time.monotonic() + BOUND
    for byte in data:
        assert time.monotonic() < deadline
        try:
            sock.send(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return b""
        readable, _, _ = select.select([sock], [], [], pace)  # the client's pace
        if readable:
            return _read_all(sock)
    return None


def _read_all(sock: socket.socket) -> bytes:
    sock.settimeout(BOUND)
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def peak_rss_kb(proc: subprocess.Popen[str]) -> int:
    for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")  # pragma: no cover


def test_slow_clients_are_disconnected() -> None:
    """A connection that says nothing, a head sent byte by byte (slowloris) and a
    body sent byte by byte are each cut off once ``--request-timeout`` has passed;
    well before the head or body could be complete."""
    with server("--request-timeout", "0.5") as (_, port):
        silent = socket.create_connection(("127.0.0.1", port))
        silent.settimeout(BOUND)
        assert silent.recv(1) == b""  # closed by the server
        silent.close()

        slow_head = head(port, "X-Pad: " + "p" * 2000 + "\r\n")  # 100 s at this pace
        with socket.create_connection(("127.0.0.1", port)) as sock:
            said = trickle(sock, slow_head)
        assert said == b"", said  # cut off, without an answer: there was no request yet

        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head(port, "Content-Length: 2000\r\n"))
            said = trickle(sock, b" " * 2000)
        assert said is not None and said.startswith(b"HTTP/1.1 408 "), said
        assert b'"code":-32600' in said and b"connection: close" in said.lower()

        answers_ping(port)


def test_a_huge_body_is_refused_without_being_read() -> None:
    """50 MB, declared or streamed, against ``--max-body-bytes 100000``: 413 (with a
    JSON-RPC error) at once, the rest never read into memory.  A head over 16 KiB: 431."""
    with server("--max-body-bytes", "100000") as (proc, port):
        answers_ping(port)
        peak = peak_rss_kb(proc)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head(port, "Content-Length: 50000000\r\n") + b'{"jsonrpc":"2.0"')
            said = _read_until(sock, b"}}")
        assert said.startswith(b"HTTP/1.1 413 ") and b'"code":-32600' in said, said

        sent = 0
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head(port, "Transfer-Encoding: chunked\r\n"))
            chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
            while sent < 50_000_000 and not select.select([sock], [], [], 0)[0]:
                sock.sendall(chunk)
                sent += 0x10000
            said = _read_until(sock, b"}}")
        assert said.startswith(b"HTTP/1.1 413 ") and b'"code":-32600' in said, said
        assert sent < 50_000_000  # answered before the end
        assert peak_rss_kb(proc) - peak < 32 * 1024  # no 50 MB (nor 4 MB copies of it) read

        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(head(port, "X-Pad: " + "p" * 20000 + "\r\n"))  # over 16 KiB
            said = _read_all(sock)
        assert said.startswith(b"HTTP/1.1 431 ") and b'"code":-32600' in said, said

        answers_ping(port)


def test_a_client_still_sending_a_refused_body_gets_the_413_not_a_reset() -> None:
    """A client that writes its whole body before reading the answer (as most HTTP
    clients do) goes on sending after the 413 went out. The server reads and drops
    that for a while before it closes: a connection closed with data unread is reset,
    and the client's next write failed with a reset instead of reading the 413."""
    with server("--max-body-bytes", "100000") as (_proc, port):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.settimeout(BOUND)
            sock.sendall(head(port, "Transfer-Encoding: chunked\r\n"))
            chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
            while not select.select([sock], [], [], 0)[0]:  # until the 413 is there
                sock.sendall(chunk)
            for _ in range(64):  # 4 MiB more, as a client writing its body first would
                sock.sendall(chunk)
            said = _read_until(sock, b"}}")
        assert said.startswith(b"HTTP/1.1 413 ") and b'"code":-32600' in said, said
        answers_ping(port)


def _read_until(sock: socket.socket, end: bytes) -> bytes:
    sock.settimeout(BOUND)
    said = b""
    while not said.endswith(end):
        chunk = sock.recv(65536)
        assert chunk, said
        said += chunk
    return said


def test_the_session_cap_is_a_flag() -> None:
    with server("--max-sessions", "2", "--idle-timeout", "600") as (_, port):
        sessions = [open_session(port) for _ in range(2)]
        status, _, body = post(port, INIT)
        assert status == 503, body
        assert json.loads(body)["error"]["code"] == -32603
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        for session in sessions:
            assert post(port, ping, **{"Mcp-Session-Id": session})[0] == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
        conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sessions[0]})
        assert conn.getresponse().status == 200
        conn.close()
        answers_ping(port)  # room for one again


def test_a_server_stopped_mid_call_and_started_again() -> None:
    """Stopped (SIGTERM) while a call streams: not finished within ``--drain-timeout``,
    the call is answered with a -32603 saying the server is shutting down (its stream
    is not cut short), and the exit code is 1.  Started again on the same port: the
    old session id gets 404, and a new session works."""
    with server("--drain-timeout", "0.3") as (proc, port):
        session = open_session(port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "sleepy", "arguments": {}}}  # fmt: skip
        in_session = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        conn.request("POST", "/mcp", json.dumps(call), {**HEADERS, **in_session})
        stream = conn.getresponse()
        assert stream.status == 200
        assert stream.read1(100).startswith(b"id: ")  # its priming event: the call is on
        proc.terminate()
        rest = stream.read()  # whole: the stream ends properly
        data = [ln[5:] for ln in rest.decode().splitlines() if ln.startswith("data:")]
        answer = json.loads(data[-1])
        assert answer["id"] == 2 and answer["error"]["code"] == -32603, answer
        assert "shutting down" in answer["error"]["message"]
        assert proc.wait(timeout=BOUND) == 1  # a call was cut off
        conn.close()
    with server(port=port) as (_, again):
        assert again == port
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert post(port, ping, **{"Mcp-Session-Id": session})[0] == 404
        answers_ping(port)


def test_a_second_signal_cuts_the_calls_off_at_once_each_answered_and_counted() -> None:
    """Stopped (SIGTERM) while a call runs, then stopped again before its
    ``--drain-timeout``: the call is cut off at once, answered with the -32603 on its
    stream, and the exit code is 1 (a call was cut off).  It used to end with no
    answer on the stream, and the process as a clean SIGTERM ends (-15)); stderr said
    the calls were not finished 60 s later."""
    with logged_server("--drain-timeout", "60") as (proc, port, log):
        session = open_session(port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "sleepy", "arguments": {}}}  # fmt: skip
        in_session = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        conn.request("POST", "/mcp", json.dumps(call), {**HEADERS, **in_session})
        stream = conn.getresponse()
        assert stream.read1(100).startswith(b"id: ")  # its priming event: the call is on
        proc.terminate()
        refused = post(port, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, **in_session)
        assert refused[0] == 503, refused  # the first signal is in: the server drains
        proc.terminate()
        rest = stream.read()
        data = [ln[5:] for ln in rest.decode().splitlines() if ln.startswith("data:")]
        assert data, rest
        answer = json.loads(data[-1])
        assert answer["id"] == 2 and answer["error"]["code"] == -32603, answer
        assert proc.wait(timeout=BOUND) == 1
        log.wait_for("1 request(s) ran; cut off, not finished 60 s later (or at once by a second")
        conn.close()


def test_a_call_that_ignores_its_cancellation_does_not_hold_the_server_for_ever() -> None:
    """Cut off at the end of the drain, a tool that shields itself never ends: the server
    exits without it `STUCK_SECONDS` (5 s) later, with 1 and a line saying why (it
    waited for it for ever, through every signal)."""
    target = "tests.fixtures.stubborn_server:server"
    with logged_server("--drain-timeout", "0.3", target=target) as (proc, port, log):
        session = open_session(port)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "stubborn", "arguments": {}}}  # fmt: skip
        in_session = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        conn.request("POST", "/mcp", json.dumps(call), {**HEADERS, **in_session})
        stream = conn.getresponse()
        assert stream.read1(100).startswith(b"id: ")  # its priming event: the call is on
        proc.terminate()
        assert proc.wait(timeout=BOUND) == 1
        log.wait_for("had not ended 5 s later (a tool that ignores its cancellation)")
        conn.close()


def test_a_client_that_stops_reading_its_answer_does_not_keep_the_server_from_stopping() -> None:
    """A client reads the start of a call's stream, then nothing: the 16 MiB answer
    fills the socket's buffers and its write waits.  Stopped (SIGTERM), the server used
    to wait for that write for ever (uvicorn's graceful shutdown has no bound unless
    given one); it ends within ``--drain-timeout`` and a bounded grace."""
    big = "tests.fixtures.mcp_serve_server:big_server"
    with server("--drain-timeout", "0.3", target=big) as (proc, port):
        session = open_session(port)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window
        sock.settimeout(BOUND)
        sock.connect(("127.0.0.1", port))
        call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "big", "arguments": {}}}).encode()  # fmt: skip
        extra = (f"Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
                 f"Content-Length: {len(call)}\r\n")  # fmt: skip
        sock.sendall(head(port, extra) + call)
        said = b""
        while b"\r\n\r\n" not in said:  # its head: the answer is on its way, never read
            said += sock.recv(1)
        assert said.startswith(b"HTTP/1.1 200 "), said
        proc.terminate()
        assert proc.wait(timeout=BOUND) == -15  # was: never ended
        sock.close()


def lists_tools(port: int) -> None:
    """The server is up: a new session lists its tools."""
    session = open_session(port)
    listing = {"jsonrpc": "2.0", "id": "tools", "method": "tools/list"}
    status, _, body = post(port, listing, **{"Mcp-Session-Id": session})
    assert status == 200 and b'"name":"sleepy"' in body, body


def held_open(port: int, count: int) -> list[socket.socket]:
    """``count`` connections to the server, one after the other, sending nothing."""
    held = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=BOUND)
        sock.settimeout(BOUND)
        held.append(sock)
    return held


def refused_with_503(sock: socket.socket) -> dict[str, Any]:
    """What a connection refused at the connection limit reads: a whole 503 with a
    ``Retry-After`` and a JSON-RPC error (returned), then the end of the stream."""
    said = _read_all(sock)
    head, _, body = said.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503 "), said
    assert b"\r\nretry-after: 1" in head.lower(), head
    answer: dict[str, Any] = json.loads(body)
    assert answer["error"]["code"] == -32603 and answer["id"] is None, answer
    return answer


def test_connections_past_the_descriptor_limit_get_503_and_the_server_goes_on() -> None:
    """Started with ``ulimit -n`` 128 (hard limit 512), the server raises its soft limit
    to 512 and takes half of what that leaves (less 64 for its own files and 128 for
    connections just accepted) as the most connections open at once.  600 connections
    held open, more than it has descriptors:
    those past the limit are answered at once with 503 (``Retry-After``, a JSON-RPC
    error) and closed, the others are served; a client arriving meanwhile gets the 503
    too.  Once they close, the server lists its tools.  Its stderr: one warning (at most
    one per 10 s), no traceback.  (It ran out of descriptors: a traceback for each
    accept that failed, and the clients past the limit left waiting.)"""
    with logged_server(nofile=(128, 512)) as (proc, port, log):
        limits = Path(f"/proc/{proc.pid}/limits").read_text()
        assert re.search(r"Max open files +512 +512 ", limits), limits
        held = held_open(port, 600)
        limit = int(refused_with_503(held[-1])["error"]["message"].split()[2])
        assert 100 <= limit <= (512 - 64 - 128) // 2, limit
        for sock in held[limit:-1]:
            refused_with_503(sock)
        status, headers, body = post(port, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert status == 503 and headers["retry-after"] == "1", (status, body)
        for sock in (held[0], held[limit - 1]):  # served: an open connection each
            client = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND)
            client.sock = sock
            client.request("POST", "/mcp", json.dumps(INIT), HEADERS)
            reply = client.getresponse()
            assert reply.status == 200, reply.read()
            reply.read()
            client.close()
        for sock in held:
            sock.close()
        lists_tools(port)
        assert proc.poll() is None
    lines = [line.rstrip("\n") for line in log]
    # one throttled warning of the refusals; on a loaded machine the descriptors the
    # refusals themselves hold may run out for a moment too: one throttled warning more
    refusals = [line for line in lines if "refused" in line]
    out = [line for line in lines if "out of file descriptors" in line]
    assert 1 <= len(refusals) <= 2 and len(out) <= 1 and len(lines) <= 3, lines
    assert f"{limit} open, the limit (--max-connections" in refusals[0], lines


def test_out_of_descriptors_the_server_warns_once_and_recovers() -> None:
    """``--max-connections`` above what ``ulimit -n`` 128 allows (a warning says so at
    start): 150 connections held open exhaust the descriptors, and accepting fails.
    One warning says so (at most one per 10 s), not a traceback per failed accept
    (thousands a second, and a server stuck writing them to a full pipe); once the
    connections close, the server accepts again and lists its tools."""
    args = ("--max-connections", "1000")
    with logged_server(*args, nofile=(128, 128)) as (proc, port, log):
        held = held_open(port, 150)
        log.wait_for("out of file descriptors")
        assert proc.poll() is None
        for sock in held:
            sock.close()
        lists_tools(port)
        assert proc.poll() is None
    lines = [line.rstrip("\n") for line in log]
    assert len(lines) <= 4, lines[:20]
    assert "--max-connections 1000 is more than the file-descriptor limit" in lines[0], lines
    failed = [line for line in lines if "out of file descriptors" in line]
    assert 1 <= len(failed) <= 2, lines
    assert "(EMFILE: Too many open files)" in failed[0], failed
