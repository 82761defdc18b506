"""``ccwire serve --http`` bounded: bodies, sessions, malformed JSON-RPC, failing tools.

The app (`McpHttpApp`) is driven here as uvicorn drives it, one ASGI request at a
time, on asyncio and on trio; `tests/mcp/test_serve_http_server.py` runs the real
server (uvicorn, asyncio) for what needs sockets: slow clients, huge bodies, the
command-line flags and a restart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import json
import logging
import tracemalloc
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest
from starlette.types import ASGIApp

from ccwire import ToolContext, create_sdk_mcp_server, resource, tool
from ccwire._mcp.http import (
    BATCH_CONCURRENCY,
    EVENT_BYTES_KEPT,
    HttpLimits,
    McpHttpApp,
    _MemoryEventStore,
    security_settings,
)

pytestmark = pytest.mark.anyio

BROKEN_CALLS: list[str] = []


@tool("echo", "Say it back", {"text": str})
async def echo(args: dict[str, Any]) -> str:
    return str(args["text"])


@tool("broken", "Needs a database that is down", {})
async def broken(args: dict[str, Any]) -> str:
    BROKEN_CALLS.append("called")
    raise ConnectionError("database unreachable")


@tool("stuck", "Waits for a dependency that never answers", {}, timeout=0.3)
async def stuck(args: dict[str, Any]) -> str:
    await anyio.sleep(3600)
    return "never"


@tool("big", "Returns n KB of text, with progress", {"n": int})
async def big(args: dict[str, Any], ctx: ToolContext) -> str:
    await ctx.report_progress(1, 1)
    return "x" * (1024 * int(args["n"]))


GATE: dict[str, anyio.Event] = {}
"""``started`` (set by a ``gated`` call) and ``open`` (set by the test), per test."""
GATED: list[str] = []
"""How each ``gated`` call ended: ``"finished"`` or ``"cancelled"``."""


@tool("gated", "Waits until the test opens its gate", {})
async def gated(args: dict[str, Any]) -> str:
    GATE["started"].set()
    try:
        await GATE["open"].wait()
    except anyio.get_cancelled_exc_class():
        GATED.append("cancelled")
        raise
    GATED.append("finished")
    return "through"


HELD: list[int] = [0]
"""How many ``held`` calls are running now."""


@tool("held", "Waits, with the others, until the test opens its gate", {})
async def held(args: dict[str, Any]) -> str:
    HELD[0] += 1
    try:
        await GATE["open"].wait()
    finally:
        HELD[0] -= 1
    return "let go"


@tool("unsendable", "An answer UTF-8 cannot carry", {})
async def unsendable(args: dict[str, Any]) -> str:
    return "half of a pair: \ud800"


@pytest.fixture
def gate() -> Iterator[dict[str, anyio.Event]]:
    GATE.update(started=anyio.Event(), open=anyio.Event())
    GATED.clear()
    yield GATE
    GATE.clear()


@resource("memo://watched", mime_type="text/plain")
def watched() -> str:
    """A resource clients subscribe to."""
    return "watched"


SERVER = create_sdk_mcp_server(
    "limits", tools=[echo, broken, stuck, big, gated, unsendable, held], resources=[watched]
)["instance"]
HEADERS = {
    "host": "127.0.0.1:8000",
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
}
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}


def initialize(version: str = "2025-11-25", req_id: Any = 0) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {},
              "clientInfo": {"name": "limits", "version": "1"}}  # fmt: skip
    return {"jsonrpc": "2.0", "id": req_id, "method": "initialize", "params": params}


@dataclasses.dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the body: one JSON value, or an SSE stream's events."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:] for line in self.body.decode().splitlines() if line[:5] == "data:"]
            return [json.loads(event) for event in data if event.strip()]
        return [json.loads(self.body)] if self.body else []

    @property
    def answer(self) -> Any:
        """The last message: the answer to the request."""
        return self.messages[-1]


async def call(
    app: ASGIApp,
    body: Any = b"",
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    chunks: Iterator[bytes] | None = None,
) -> Reply:
    """One request, handed to the app the way uvicorn hands it over: the body in
    ``http.request`` messages, then, once the answer is complete, the connection's
    end.  With ``chunks`` the body is what they yield, and never ends: once they are
    exhausted, the client goes quiet; once the answer's bytes are out, the client has
    read them and leaves (the connection's end)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    pending = [{"type": "http.request", "body": data, "more_body": False}]
    answered = anyio.Event()
    started: list[Any] = []
    parts: list[bytes] = []

    async def receive() -> Any:
        if chunks is not None:
            if parts:  # answered while the body still came: the client reads it and leaves
                return {"type": "http.disconnect"}
            for chunk in chunks:
                return {"type": "http.request", "body": chunk, "more_body": True}
            await anyio.sleep_forever()
        if pending:
            return pending.pop()
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            started.append(message)
        else:
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    sent = {**HEADERS, **(headers or {})}
    if chunks is None and method == "POST":
        sent.setdefault("content-length", str(len(data)))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "",
        "query_string": b"", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 40000),
        "headers": [(k.lower().encode(), v.encode()) for k, v in sent.items()],
    }  # fmt: skip
    with anyio.fail_after(20):
        await app(scope, receive, send)
    (start,) = started
    got = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return Reply(start["status"], got, b"".join(parts))


@contextlib.asynccontextmanager
async def served(**limits: Any) -> AsyncIterator[McpHttpApp]:
    app = McpHttpApp(SERVER, security_settings("127.0.0.1", 8000), HttpLimits(**limits))
    async with app.lifespan(None):
        yield app


def in_session(session: str, version: str = "2025-11-25") -> dict[str, str]:
    return {"mcp-session-id": session, "mcp-protocol-version": version}


async def open_session(app: McpHttpApp, version: str = "2025-11-25") -> str:
    opened = await call(app, initialize(version))
    assert opened.status == 200, opened
    assert opened.answer["result"]["protocolVersion"] == version
    session = opened.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await call(app, note, headers=in_session(session, version))).status == 202
    return session


async def answers_ping(app: McpHttpApp, session: str, version: str = "2025-11-25") -> None:
    """The server is up: the session answers a normal request."""
    reply = await call(app, PING, headers=in_session(session, version))
    assert (reply.status, reply.answer) == (200, {"jsonrpc": "2.0", "id": "ping", "result": {}})


def refused(reply: Reply, status: int, code: int, req_id: Any = None) -> None:
    """``reply`` is an HTTP ``status`` whose body is a JSON-RPC error ``code``."""
    assert reply.status == status, reply
    assert reply.headers["content-type"] == "application/json", reply
    (answer,) = reply.messages
    assert answer["jsonrpc"] == "2.0" and answer["id"] == req_id, answer
    assert answer["error"]["code"] == code and answer["error"]["message"], answer


# --------------------------------------------------------------------------- bodies


async def test_an_answer_json_cannot_carry_gets_a_failed_result_and_the_session_goes_on() -> None:
    """A tool answer holding a lone surrogate (the transport would fail the session on
    it, and every later request would hang) is replaced by a failed result saying why."""
    async with served() as app:
        session = await open_session(app)
        body = {"jsonrpc": "2.0", "id": "u", "method": "tools/call",
                "params": {"name": "unsendable", "arguments": {}}}  # fmt: skip
        reply = await call(app, body, headers=in_session(session))
        assert reply.status == 200 and reply.answer["id"] == "u"
        assert reply.answer["result"]["isError"] is True
        assert "lone surrogate" in reply.answer["result"]["content"][0]["text"]
        await answers_ping(app, session)


async def test_nan_in_arguments_reaches_the_tool_check_as_sent_not_as_null() -> None:
    """``NaN`` (which Python's JSON reads, though it is no JSON) in a call's arguments
    is refused by the arguments' check as on stdio; the transport's copy of the
    message turned it into ``null``, which a tool taking an optional value took for
    one not given."""
    async with served() as app:
        session = await open_session(app)
        body = b'{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"echo",'
        body += b'"arguments":{"text":NaN}}}'
        reply = await call(app, body, headers=in_session(session))
        assert reply.answer["result"]["isError"] is True, reply.answer
        assert "NaN and Infinity are not JSON" in reply.answer["result"]["content"][0]["text"]


async def test_a_body_over_the_limit_gets_413_before_it_is_read() -> None:
    async with served(max_body_bytes=1000) as app:
        session = await open_session(app)

        def never() -> Iterator[bytes]:
            raise AssertionError("the body was read")
            yield b""  # pragma: no cover

        declared = {**in_session(session), "content-length": str(50 * 1024 * 1024)}
        reply = await call(app, headers=declared, chunks=never())
        refused(reply, 413, -32600)
        assert "1000" in reply.answer["error"]["message"]

        sent: list[int] = []

        def endless() -> Iterator[bytes]:  # chunked: no length said
            while True:
                sent.append(300)
                yield b" " * 300

        refused(await call(app, headers=in_session(session), chunks=endless()), 413, -32600)
        assert sum(sent) <= 1300  # read no further than the limit
        just_fits = json.dumps({**PING, "params": {"_meta": {"pad": " " * 900}}})[:1000]
        assert len(just_fits) <= 1000
        await answers_ping(app, session)
        refused(await call(app, initialize(), chunks=endless()), 413, -32600)
        assert len(app.sessions) == 1


async def test_a_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes() -> None:
    async with served(request_timeout=0.2) as app:
        session = await open_session(app)
        headers = {**in_session(session), "content-length": "100"}
        reply = await call(app, headers=headers, chunks=iter([b'{"jsonrpc":']))
        refused(reply, 408, -32600)
        assert reply.headers["connection"] == "close"
        await answers_ping(app, session)


async def test_a_body_still_arriving_when_the_server_stops_gets_503_at_once() -> None:
    """The server stopped while a request's body still arrives: the request gets the
    503 every request gets from then on, at once.  It waited for the body until
    ``request_timeout``, past uvicorn's grace, which cancelled it: a traceback in the
    log, and a plain-text 500."""
    async with served(request_timeout=3) as app, anyio.create_task_group() as tg:
        session = await open_session(app)
        headers = {**in_session(session), "content-length": "100"}
        replies: list[Reply] = []

        async def post() -> None:
            replies.append(await call(app, headers=headers, chunks=iter([b'{"jsonrpc":'])))

        tg.start_soon(post)
        await anyio.wait_all_tasks_blocked()
        with anyio.fail_after(1):
            await app.drain()
            await _until(lambda: replies)
    refused(replies[0], 503, -32603)
    assert "shutting down" in replies[0].answer["error"]["message"]


# --------------------------------------------------------------------------- malformed


# (body, HTTP status, JSON-RPC code, id) for a POST in a session at 2025-11-25
MALFORMED: list[tuple[bytes, int, int, Any]] = [
    (b"{not json", 400, -32700, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', 400, -32700, None),
    (b"", 400, -32700, None),
    (b"[]", 400, -32600, None),
    (b'[{"jsonrpc":"2.0","id":"b1","method":"ping"}]', 400, -32600, None),
    (b"42", 400, -32600, None),
    (b'"s"', 400, -32600, None),
    (b"null", 400, -32600, None),
    (b'{"foo":1}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"2.0","id":3.5,"method":"ping"}', 400, -32600, None),
    (b'{"jsonrpc":"1.0","id":"v1","method":"ping"}', 400, -32600, "v1"),
    (b'{"jsonrpc":"1.0","id":"\\ud800","method":"ping"}', 400, -32600, "\ud800"),
    (b'{"id":"nov","method":"ping"}', 400, -32600, "nov"),
    (b'{"jsonrpc":"2.0","id":"nm","method":42}', 400, -32600, "nm"),
    (b'{"jsonrpc":"2.0","id":"ap","method":"tools/list","params":[1]}', 400, -32600, "ap"),
    (b'{"jsonrpc":"2.0","id":7,"result":5}', 400, -32600, None),
    (
        b'{"jsonrpc":"2.0","id":"r1","result":{},"error":{"code":1,"message":"m"}}',
        400,
        -32600,
        "r1",
    ),
]


@pytest.mark.parametrize("where", ["in a session", "without one"])
async def test_every_malformed_body_gets_the_answer_the_specs_give(where: str) -> None:
    async with served() as app:
        session = await open_session(app)
        headers = in_session(session) if where == "in a session" else {}
        for body, status, code, req_id in MALFORMED:
            reply = await call(app, body, headers=headers)
            try:
                refused(reply, status, code, req_id)
            except AssertionError as exc:
                raise AssertionError(f"{body!r}: {exc}") from exc
        assert len(app.sessions) == 1  # none of them opened a session
        await answers_ping(app, session)


async def test_headers_the_transport_spec_names_get_its_status_codes() -> None:
    async with served() as app:
        session = await open_session(app)
        cases: list[tuple[dict[str, str], Any, int, int, Any]] = [
            ({**in_session(session), "content-type": "text/plain"}, PING, 415, -32600, None),
            ({"mcp-session-id": "no-such-session"}, PING, 404, -32600, None),
            ({}, PING, 400, -32600, "ping"),  # no session id: only initialize opens one
            ({}, {"jsonrpc": "2.0", "method": "notifications/initialized"}, 400, -32600, None),
            ({"mcp-session-id": session, "mcp-protocol-version": "1999-01-01"}, PING,
             400, -32022, None),
        ]  # fmt: skip
        for headers, body, status, code, req_id in cases:
            refused(await call(app, body, headers=headers), status, code, req_id)
        for method in ("GET", "DELETE"):
            refused(await call(app, method=method), 400, -32600)
            no_such = {"mcp-session-id": "no-such-session"}
            refused(await call(app, method=method, headers=no_such), 404, -32600)
        assert len(app.sessions) == 1
        await answers_ping(app, session)


async def test_a_method_the_endpoint_has_not_gets_405_with_a_json_rpc_error() -> None:
    """The router's refusal too is a JSON-RPC error, as every other refusal."""
    async with served() as app:
        for method in ("PUT", "PATCH"):
            reply = await call(app.starlette(), PING, method=method)
            refused(reply, 405, -32600)
            assert set(reply.headers["allow"].split(", ")) >= {"GET", "POST", "DELETE"}


async def test_a_batch_is_served_at_2025_03_26_and_refused_after() -> None:
    """2025-03-26 servers MUST take batches; 2025-06-18 removed them."""
    batch = [
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "t", "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "hi"}}},
        {"jsonrpc": "2.0", "id": {"bad": 1}, "method": "ping"},
        {"jsonrpc": "2.0", "id": "c", "method": "no/such"},
        {"jsonrpc": "2.0", "id": "d", "method": "initialize", "params": initialize()["params"]},
    ]  # fmt: skip
    async with served() as app:
        old = await open_session(app, "2025-03-26")
        reply = await call(app, batch, headers=in_session(old, "2025-03-26"))
        assert reply.status == 200 and reply.headers["content-type"] == "application/json"
        (answers,) = reply.messages
        assert [a["id"] for a in answers] == ["a", "b", None, "c", "d"]
        assert answers[0]["result"] == {}
        assert answers[1]["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert [a["error"]["code"] for a in answers[2:]] == [-32600, -32601, -32600]
        only_notes = [batch[1], batch[1]]
        assert (await call(app, only_notes, headers=in_session(old, "2025-03-26"))).status == 202
        await answers_ping(app, old, "2025-03-26")
        new = await open_session(app, "2025-06-18")
        refused(await call(app, batch, headers=in_session(new, "2025-06-18")), 400, -32600)
        await answers_ping(app, new, "2025-06-18")


async def test_a_batch_runs_a_bounded_number_of_its_requests_at_once(
    gate: dict[str, anyio.Event],
) -> None:
    """A batch of tens of thousands of requests (a few MB) used to start them all at
    once: a GB of memory for one POST.  At most `BATCH_CONCURRENCY` run at a time; a
    notification of the batch is not held back behind them."""
    count = BATCH_CONCURRENCY + 8
    batch: list[Any] = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "held", "arguments": {}},
        }
        for i in range(count)
    ]
    batch.append({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 0}})  # fmt: skip
    replies: list[Reply] = []
    async with served() as app:
        session = await open_session(app, "2025-03-26")

        async def post_batch() -> None:
            replies.append(await call(app, batch, headers=in_session(session, "2025-03-26")))

        async with anyio.create_task_group() as tg:
            tg.start_soon(post_batch)
            await anyio.wait_all_tasks_blocked()
            assert HELD == [BATCH_CONCURRENCY]
            gate["open"].set()
        (answers,) = replies[0].messages
        assert sorted(a["id"] for a in answers) == list(range(count))
        # the cancelled one: -32800 if it ran, else (it waited for room) not run, and
        # answered with an error result saying why
        failed = [a for a in answers if "error" in a or a["result"].get("isError")]
        assert [a["id"] for a in failed] == [0]
        assert failed[0].get("error", {}).get("code") == -32800 or (
            "notifications/cancelled" in failed[0]["result"]["content"][0]["text"]
        )
        await answers_ping(app, session, "2025-03-26")


# --------------------------------------------------------------------------- sessions


async def test_at_the_session_cap_initialize_gets_503_and_open_sessions_go_on() -> None:
    async with served(max_sessions=3) as app:
        sessions = [await open_session(app) for _ in range(3)]
        refused(await call(app, initialize(req_id=9)), 503, -32603, 9)
        assert sorted(app.sessions) == sorted(sessions)
        for session in sessions:
            await answers_ping(app, session)
        assert (await call(app, method="DELETE", headers=in_session(sessions[0]))).status == 200
        sessions[0] = await open_session(app)  # room again
        for session in sessions:
            await answers_ping(app, session)


async def _until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await anyio.sleep(0.02)  # polling the server's state, not a delay
    raise AssertionError("not so within 10 s")


async def test_an_idle_session_ends_and_its_id_gets_404() -> None:
    async with served(idle_timeout=0.3) as app:
        session = await open_session(app)
        await answers_ping(app, session)  # a request restarts the idle countdown
        await _until(lambda: session not in app.sessions)
        refused(await call(app, PING, headers=in_session(session)), 404, -32600)
        await answers_ping(app, await open_session(app))


async def test_closed_and_idle_sessions_are_freed() -> None:
    """What a session holds (its transport, its events, its link to the server) is
    let go once it is deleted or idle: nothing grows with the sessions served."""
    async with served(idle_timeout=0.5) as app:
        kept: list[weakref.ref[Any]] = []
        for n in range(40):
            session = await open_session(app)
            kept.append(weakref.ref(app.sessions[session].transport))
            subscribe = {"jsonrpc": "2.0", "id": "s", "method": "resources/subscribe",
                         "params": {"uri": "memo://watched"}}  # fmt: skip
            assert "result" in (await call(app, subscribe, headers=in_session(session))).answer
            call_big = {"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                        "params": {"name": "big", "arguments": {"n": 64}}}  # fmt: skip
            assert "result" in (await call(app, call_big, headers=in_session(session))).answer
            if n % 2:
                deleted = await call(app, method="DELETE", headers=in_session(session))
                assert deleted.status == 200
        await _until(lambda: not app.sessions)
        assert SERVER._broadcast._sinks == {}  # every session's link detached
        assert await SERVER.notify_resource_updated("memo://watched") == 0  # and unsubscribed
        await _until(lambda: gc.collect() == 0 and not [r for r in kept if r() is not None])


async def test_many_clients_against_a_failing_dependency_each_get_an_error() -> None:
    """30 sessions at once call a tool whose database is down and one whose dependency
    never answers: every call is answered with an error result, and every session
    (and the server) goes on."""
    BROKEN_CALLS.clear()
    async with served() as app:
        sessions = [await open_session(app) for _ in range(30)]
        results: dict[tuple[str, str], Any] = {}

        async def use(session: str, name: str) -> None:
            body = {"jsonrpc": "2.0", "id": name, "method": "tools/call",
                    "params": {"name": name, "arguments": {}}}  # fmt: skip
            results[session, name] = (await call(app, body, headers=in_session(session))).answer

        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(use, session, "broken")
                tg.start_soon(use, session, "stuck")
        assert len(results) == 60 and len(BROKEN_CALLS) == 30
        for (_, name), answer in results.items():
            assert answer["id"] == name and answer["result"]["isError"], answer
        texts = {name: answer["result"]["content"][0]["text"]
                 for (_, name), answer in results.items()}  # fmt: skip
        assert "database unreachable" in texts["broken"]
        assert "timed out" in texts["stuck"]
        for session in sessions:
            await answers_ping(app, session)


async def test_the_event_store_keeps_a_bounded_tail() -> None:
    from mcp_types import JSONRPCResponse

    store = _MemoryEventStore()
    big = "x" * (300 * 1024)
    ids = [
        await store.store_event("s", JSONRPCResponse(jsonrpc="2.0", id=n, result={"t": big}))
        for n in range(10)
    ]
    assert store.size <= EVENT_BYTES_KEPT + len(big) + 100
    replayed: list[Any] = []

    async def collect(event: Any) -> None:
        replayed.append(event.message.id)

    assert await store.replay_events_after(ids[0], collect) is None  # dropped
    assert await store.replay_events_after(ids[-3], collect) == "s"
    assert replayed == [8, 9]
    huge = "y" * (3 * EVENT_BYTES_KEPT)
    await store.store_event("s", JSONRPCResponse(jsonrpc="2.0", id=10, result={"t": huge}))
    assert len(huge) < store.size <= len(huge) + EVENT_BYTES_KEPT + 100  # the newest is kept


async def test_a_long_session_does_not_grow() -> None:
    """Once its event tail is full, a session serving request after request holds
    no more memory: nothing is kept per request answered."""
    async with served() as app:
        session = await open_session(app)

        async def pings(first: int, count: int) -> None:
            for n in range(first, first + count):
                reply = await call(app, {**PING, "id": n}, headers=in_session(session))
                assert reply.answer["id"] == n

        tracemalloc.start()
        try:
            await pings(0, 520)  # fills its event tail (a priming event and an answer each)
            gc.collect()
            before = tracemalloc.take_snapshot()
            await pings(520, 250)
            gc.collect()
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
        assert grown < 40 * 1024, [str(stat) for stat in after.compare_to(before, "lineno")[:5]]


def test_the_help_names_the_defaults_the_server_uses() -> None:
    from ccwire._app.serve import USAGE

    limits = HttpLimits()
    assert (
        f"--max-body-bytes N     the largest request body (default {limits.max_body_bytes},"
        in USAGE
    )
    assert f"(default {limits.max_sessions})" in USAGE
    assert f"(default {limits.idle_timeout:g})" in USAGE
    assert f"(default {limits.request_timeout:g})" in USAGE
    assert f"(default {limits.drain_timeout:g})" in USAGE
    assert "--max-connections N    the most connections open at once" in USAGE
    for bad in ({"max_sessions": 0}, {"max_connections": 0}, {"max_connections": True},
                {"max_body_bytes": 1.5}, {"idle_timeout": float("inf")},
                {"request_timeout": True}, {"drain_timeout": -1}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(bad))):
            HttpLimits(**bad)


# --------------------------------------------------------------------------- more edges

GATED_CALL = {"jsonrpc": "2.0", "id": "g", "method": "tools/call",
              "params": {"name": "gated", "arguments": {}}}  # fmt: skip


async def gated_call_while(
    app: McpHttpApp,
    session: str,
    gate: dict[str, anyio.Event],
    during: Callable[[], Awaitable[None]],
) -> Reply:
    """POST `GATED_CALL` in ``session``; once its tool has started, run ``during()``;
    then the call's reply."""
    replies: list[Reply] = []
    async with anyio.create_task_group() as tg:

        async def post_call() -> None:
            replies.append(await call(app, GATED_CALL, headers=in_session(session)))

        tg.start_soon(post_call)
        await gate["started"].wait()
        await during()
    (reply,) = replies
    return reply


async def test_a_2026_07_28_request_is_a_post_served_without_a_session() -> None:
    modern = {"mcp-protocol-version": "2026-07-28"}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}}  # fmt: skip
    async with served() as app:
        reply = await call(app, body, headers=modern)
        assert reply.status == 200 and "mcp-session-id" not in reply.headers
        assert reply.answer["result"]["content"] == [{"type": "text", "text": "hi"}]
        for method in ("GET", "DELETE"):  # no stream to open, no session to end
            reply = await call(app, method=method, headers=modern)
            refused(reply, 405, -32600)
            assert reply.headers["allow"] == "POST"
        assert app.sessions == {}


async def test_a_client_gone_mid_body_is_not_answered() -> None:
    async with served() as app:
        session = await open_session(app)
        said: list[Any] = []
        parts = [{"type": "http.request", "body": b'{"jsonrpc":', "more_body": True},
                 {"type": "http.disconnect"}]  # fmt: skip

        async def receive() -> Any:
            return parts.pop(0)

        async def send(message: Any) -> None:
            said.append(message)

        headers = [(k.encode(), v.encode()) for k, v in {**HEADERS, **in_session(session)}.items()]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
                 "query_string": b"", "server": ("127.0.0.1", 8000)}  # fmt: skip
        with anyio.fail_after(10):
            await app(scope, receive, send)
        assert said == [] and parts == []  # nothing sent, nothing more read
        await answers_ping(app, session)


async def test_an_initialize_the_transport_refuses_opens_no_session() -> None:
    """Without ``text/event-stream`` in Accept the transport answers 406: the session
    made for it is closed again and does not count against the cap."""
    async with served(max_sessions=1) as app:
        reply = await call(app, initialize(), headers={"accept": "application/json"})
        assert reply.status == 406, reply
        assert app.sessions == {}
        dead = in_session(reply.headers["mcp-session-id"])  # the transport names it anyway
        refused(await call(app, PING, headers=dead), 404, -32600)
        await answers_ping(app, await open_session(app))


async def test_an_initialize_answered_with_an_error_opens_no_session() -> None:
    """An ``initialize`` whose answer is a JSON-RPC error (params the schema refuses)
    opened a session all the same, counted against the cap until it idled out (30
    minutes by default): as many bad handshakes as the cap locked every client out."""
    bad = [None, {"protocolVersion": None}, {"protocolVersion": "2025-11-25", "capabilities": []},
           {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": 5}]  # fmt: skip
    async with served(max_sessions=1) as app:
        for params in bad:
            reply = await call(app, {**initialize(req_id=7), "params": params})
            assert reply.answer["error"]["code"] == -32602, reply
            assert app.sessions == {}, params
            refused(await call(app, PING, headers=in_session(reply.headers["mcp-session-id"])),
                    404, -32600)  # fmt: skip
        await answers_ping(app, await open_session(app))


async def test_a_cancelled_call_ends_its_stream_without_a_result(
    gate: dict[str, anyio.Event],
) -> None:
    async with served() as app:
        session = await open_session(app)

        async def cancel_it() -> None:
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": "g"}}  # fmt: skip
            assert (await call(app, cancel, headers=in_session(session))).status == 202

        reply = await gated_call_while(app, session, gate, cancel_it)
        assert reply.status == 200 and not [m for m in reply.messages if "result" in m]
        assert (
            reply.answer["id"] == "g" and reply.answer["error"]["code"] == -32800
        )  # the transport's
        assert GATED == ["cancelled"]
        await answers_ping(app, session)


async def test_a_request_reusing_the_id_of_one_in_flight_is_refused_at_once(
    gate: dict[str, anyio.Event],
) -> None:
    """The transport keeps one stream per request id: a second request with the id of
    one still running got no answer, ever (the first took both)."""
    call_gated = {"jsonrpc": "2.0", "id": "same", "method": "tools/call",
                  "params": {"name": "gated", "arguments": {}}}  # fmt: skip
    replies: list[Reply] = []
    async with served() as app:
        session = await open_session(app)

        async def post(body: Any, version: str = "2025-11-25") -> None:
            replies.append(await call(app, body, headers=in_session(session, version)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(post, call_gated)
            await gate["started"].wait()
            await post({**call_gated, "method": "ping", "params": {}})  # answered, at once
            refused(replies.pop(), 400, -32600, "same")
            gate["open"].set()
        assert replies.pop().answer["result"]["content"] == [{"type": "text", "text": "through"}]
        reused = {"jsonrpc": "2.0", "id": "same", "method": "ping"}  # answered: free again
        await post(reused)
        assert replies.pop().answer == {"jsonrpc": "2.0", "id": "same", "result": {}}
        old = await open_session(app, "2025-03-26")  # and within a batch
        session = old
        await post([call_gated, {**call_gated, "method": "ping", "params": {}}], "2025-03-26")
        answers = replies.pop().answer
        assert sorted(str(a.get("error", {}).get("code")) for a in answers) == ["-32600", "None"]


async def test_a_call_whose_session_is_deleted_is_cancelled_at_once(
    gate: dict[str, anyio.Event],
) -> None:
    """DELETE while a call runs: the call's stream ends unanswered at once, and the
    call is cancelled (it ran on, with nowhere to send its answer)."""
    async with served(drain_timeout=60) as app:
        session = await open_session(app)

        async def delete_it() -> None:
            deleted = await call(app, method="DELETE", headers=in_session(session))
            assert deleted.status == 200

        reply = await gated_call_while(app, session, gate, delete_it)
        assert [m.get("id") for m in reply.messages] == []
        with anyio.fail_after(10):  # not the 60 s a server stopping gives its calls
            await _until(lambda: GATED == ["cancelled"])
        refused(await call(app, PING, headers=in_session(session)), 404, -32600)
        await answers_ping(app, await open_session(app))


async def test_a_call_whose_client_left_without_resuming_is_cancelled(
    gate: dict[str, anyio.Event],
) -> None:
    """The client disconnects mid call and does not resume the stream: the call is
    cancelled once ``resume_timeout`` passed (it ran on until the server stopped),
    and the session goes on."""
    async with served(resume_timeout=0.2) as app:
        session = await open_session(app)
        pending = [{"type": "http.request", "body": json.dumps(GATED_CALL).encode(),
                    "more_body": False}]  # fmt: skip

        async def receive() -> Any:
            if pending:
                return pending.pop()
            await gate["started"].wait()
            return {"type": "http.disconnect"}  # the client is gone mid call

        async def send(message: Any) -> None:
            pass

        headers = [(k.encode(), v.encode()) for k, v in {**HEADERS, **in_session(session)}.items()]
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
                 "query_string": b"", "server": ("127.0.0.1", 8000)}  # fmt: skip
        with anyio.fail_after(10):
            await app(scope, receive, send)
            await _until(lambda: GATED == ["cancelled"])
        await answers_ping(app, session)


async def test_a_batch_answers_what_the_transport_said_for_each_request(
    gate: dict[str, anyio.Event],
) -> None:
    """A call's progress comes before its answer on the stream (the answer is what
    counts); a request the transport refuses gets its error; one whose session ended
    before it was answered gets an internal error."""
    old = in_session("", "2025-03-26")
    progress = {"jsonrpc": "2.0", "id": "big", "method": "tools/call",
                "params": {"name": "big", "arguments": {"n": 1},
                           "_meta": {"progressToken": 7}}}  # fmt: skip
    async with served() as app:
        session = await open_session(app, "2025-03-26")
        headers = {**old, "mcp-session-id": session}
        reply = await call(app, [progress, PING], headers=headers)
        big_answer, ping_answer = reply.answer
        assert (
            big_answer["id"] == "big" and big_answer["result"]["content"][0]["text"] == "x" * 1024
        )
        assert ping_answer == {"jsonrpc": "2.0", "id": "ping", "result": {}}

        json_only = {**headers, "accept": "application/json"}
        (not_acceptable,) = (await call(app, [PING], headers=json_only)).answer
        assert not_acceptable["id"] == "ping" and not_acceptable["error"]["code"] < 0
        assert "Not Acceptable" in not_acceptable["error"]["message"]

        replies: list[Reply] = []
        async with anyio.create_task_group() as tg:

            async def post_batch() -> None:
                replies.append(await call(app, [GATED_CALL], headers=headers))

            tg.start_soon(post_batch)
            await gate["started"].wait()
            assert (await call(app, method="DELETE", headers=headers)).status == 200
        (cut_off,) = replies[0].answer
        assert cut_off["id"] == "g" and cut_off["error"]["code"] == -32603
        assert "no answer" in cut_off["error"]["message"]


async def test_the_host_served_and_loopback_names_are_the_hosts_accepted() -> None:
    """Another Host gets 421, another Origin 403, each with a JSON-RPC error, as every
    other refusal (they were the mcp package's plain text)."""
    app = McpHttpApp(SERVER, security_settings("192.0.2.7", 8000))
    async with app.lifespan(None):
        for host in ("192.0.2.7:8000", "localhost:8000", "127.0.0.1:9"):
            assert (await call(app, initialize(), headers={"host": host})).status == 200, host
        for host in ("evil.example:8000", "192.0.2.8:8000"):
            refused(await call(app, initialize(), headers={"host": host}), 421, -32600)
        for origin in ("http://192.0.2.7:8000", "https://localhost"):
            assert (await call(app, initialize(), headers={"origin": origin})).status == 200
        evil = {"origin": "http://evil.example"}
        refused(await call(app, initialize(), headers=evil), 403, -32600)
        assert len(app.sessions) == 5  # the refused opened none
    everywhere = security_settings("0.0.0.0", 8000).allowed_hosts
    assert "0.0.0.0:8000" not in everywhere and "127.0.0.1:8000" in everywhere
    v6 = security_settings("::1", 8000).allowed_hosts
    assert v6.count("[::1]:8000") == 1


async def test_a_replay_sends_only_the_stream_asked_for() -> None:
    from mcp_types import JSONRPCResponse

    store = _MemoryEventStore()
    first = await store.store_event("a", None)  # a priming event: no message
    await store.store_event("b", JSONRPCResponse(jsonrpc="2.0", id="b1", result={}))
    await store.store_event("a", None)
    await store.store_event("a", JSONRPCResponse(jsonrpc="2.0", id="a1", result={}))
    replayed: list[Any] = []

    async def collect(event: Any) -> None:
        replayed.append((event.event_id, event.message.id))

    assert await store.replay_events_after(first, collect) == "a"
    assert replayed == [("a:4", "a1")]


async def _stopping(
    app: McpHttpApp, tg: anyio.abc.TaskGroup, drained: list[int], session: str
) -> None:
    """Stop ``app`` (as Ctrl-C does) in ``tg``; once it is stopping, every request
    gets 503 with a JSON-RPC error, in a session or not."""

    async def drain() -> None:
        drained.append(await app.drain())

    tg.start_soon(drain)
    await anyio.wait_all_tasks_blocked()
    refused(await call(app, PING, headers=in_session(session)), 503, -32603)
    refused(await call(app, initialize()), 503, -32603)
    refused(await call(app, method="GET", headers=in_session(session)), 503, -32603)


async def test_a_call_running_when_the_server_stops_is_answered_with_an_error(
    gate: dict[str, anyio.Event],
) -> None:
    """Not finished within ``drain_timeout``: the call's stream ends with a -32603
    saying the server is shutting down (not truncated), and it is counted."""
    drained: list[int] = []
    async with served(drain_timeout=0.2) as app, anyio.create_task_group() as tg:
        session = await open_session(app)
        reply = await gated_call_while(
            app, session, gate, lambda: _stopping(app, tg, drained, session)
        )
    assert reply.status == 200 and reply.answer["id"] == "g", reply
    assert reply.answer["error"]["code"] == -32603, reply.answer
    assert "shutting down" in reply.answer["error"]["message"]
    assert drained == [1] and GATED == ["cancelled"]


async def test_a_call_that_finishes_while_the_server_stops_is_answered(
    gate: dict[str, anyio.Event],
) -> None:
    drained: list[int] = []
    async with served(drain_timeout=60) as app, anyio.create_task_group() as tg:
        session = await open_session(app)

        async def stop_then_open() -> None:
            await _stopping(app, tg, drained, session)
            gate["open"].set()

        reply = await gated_call_while(app, session, gate, stop_then_open)
    through = {"content": [{"type": "text", "text": "through"}]}
    assert reply.answer == {"jsonrpc": "2.0", "id": "g", "result": through}
    assert drained == [0] and GATED == ["finished"]


async def test_the_calls_cut_off_in_every_session_are_all_counted(
    gate: dict[str, anyio.Event],
) -> None:
    """A call running in each of three sessions when the server stops: each is cut off
    and counted (the sessions ending at once each added to a total read before their
    calls ended: the count said 1)."""
    held_call = {"jsonrpc": "2.0", "id": "h", "method": "tools/call",
                 "params": {"name": "held", "arguments": {}}}  # fmt: skip
    replies: list[Reply] = []
    async with served(drain_timeout=0.2) as app, anyio.create_task_group() as tg:
        sessions = [await open_session(app) for _ in range(3)]

        async def post(session: str) -> None:
            replies.append(await call(app, held_call, headers=in_session(session)))

        for session in sessions:
            tg.start_soon(post, session)
        await _until(lambda: HELD == [3])
        assert await app.drain() == 3
    assert [reply.answer["error"]["code"] for reply in replies] == [-32603] * 3


async def test_a_request_racing_the_delete_of_its_session_logs_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client that ends its session (DELETE) while one of its requests is on its way
    in: the transport's input is closed under that request. Its stream ends unanswered
    (the client ended the session); the mcp package's "SSE response error" traceback
    for it, one per race, is not logged (a client doing this flooded the log)."""
    echoing = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "hi"}}}  # fmt: skip
    async with served() as app:
        for _ in range(20):
            session = await open_session(app)
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(call, app, echoing, headers=in_session(session)))
                tg.start_soon(
                    functools.partial(call, app, method="DELETE", headers=in_session(session))
                )
        await answers_ping(app, await open_session(app))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
