"""HTTP-level tests of ScriptedModel: wire format, script semantics, side requests."""

from __future__ import annotations

import http.client
import json
import re
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

import ccwire
from ccwire import OptionsError
from ccwire.testing import (
    DEFAULT_MODEL,
    OFFLINE_API_KEY,
    ModelRequest,
    ScriptedModel,
    error,
    offline_env,
    reply,
    text,
    thinking,
    tool_use,
)

MESSAGES = "/v1/messages?beta=true"
TOOLU = re.compile(r"^toolu_[A-Za-z0-9]{24}$")
STREAM_EVENTS = [
    "message_start", "ping", "content_block_start", "content_block_delta",
    "content_block_delta", "content_block_stop", "message_delta", "message_stop",
]  # fmt: skip


def turn_body(*, stream: bool = True, content: Any = "hello", **extra: Any) -> dict[str, Any]:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": stream,
        "system": [{"type": "text", "text": "You are scripted."}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": content}],
    }
    return {**body, **extra}


def call(
    model: ScriptedModel,
    body: Any = None,
    *,
    method: str = "POST",
    path: str = MESSAGES,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, data, {"content-type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def parse_sse(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    frames = raw.decode().split("\n\n")
    assert frames[-1] == "", "the stream must end with a blank line"
    events = []
    for frame in frames[:-1]:
        match = re.fullmatch(r"event: (\w+)\ndata: (\{.*\})", frame)
        assert match, f"bad SSE frame {frame!r}"
        events.append((match[1], json.loads(match[2])))
        assert events[-1][1]["type"] == match[1]
    return events


def assemble(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Accumulate a streamed message the way an Anthropic client does."""
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        if name == "message_start":
            message = data["message"]
        elif name == "content_block_start":
            message["content"].append(dict(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = message["content"][data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "input_json_delta":
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
        elif name == "content_block_stop" and data["index"] in partial:
            message["content"][data["index"]]["input"] = json.loads(partial[data["index"]])
        elif name == "message_delta":
            message.update(data["delta"])
            message["usage"].update(data["usage"])
    return message


def streamed(server: ScriptedModel, /, **body: Any) -> dict[str, Any]:
    """POST a streamed turn and return the assembled message."""
    return assemble(parse_sse(call(server, turn_body(**body))[2]))


def plain(server: ScriptedModel, /, **body: Any) -> dict[str, Any]:
    """POST a non-streamed turn and return the message JSON."""
    message: dict[str, Any] = json.loads(call(server, turn_body(stream=False, **body))[2])
    return message


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


# --------------------------------------------------------------------------- wire format


def test_streamed_text_reply_is_exact_sse(model: ScriptedModel) -> None:
    model.add(text("Hi there"))
    status, headers, raw = call(model, turn_body())
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["request-id"].startswith("req_")
    assert headers["connection"] == "close"
    events = parse_sse(raw)
    assert [name for name, _ in events] == STREAM_EVENTS
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_")
    assert {k: start[k] for k in ("type", "role", "content", "stop_reason")} == {
        "type": "message", "role": "assistant", "content": [], "stop_reason": None
    }  # fmt: skip
    assert start["model"] == "claude-sonnet-4-5"
    assert set(start["usage"]) >= {"input_tokens", "output_tokens", "cache_read_input_tokens"}
    message = assemble(events)
    assert message["content"] == [{"type": "text", "text": "Hi there"}]
    assert message["stop_reason"] == "end_turn"
    assert message["stop_sequence"] is None
    assert message["usage"]["output_tokens"] == 20
    assert message["usage"]["input_tokens"] == 100


def test_tool_use_input_arrives_in_several_json_pieces(model: ScriptedModel) -> None:
    block = tool_use("mcp__calc__add", {"a": 1, "b": 2})
    model.add(block)
    events = parse_sse(call(model, turn_body())[2])
    pieces = [
        d["delta"]["partial_json"]
        for n, d in events
        if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
    ]
    assert len(pieces) >= 2
    assert json.loads("".join(pieces)) == {"a": 1, "b": 2}
    start = next(d for n, d in events if n == "content_block_start")["content_block"]
    assert start == {"type": "tool_use", "id": block.id, "name": "mcp__calc__add", "input": {}}
    assert TOOLU.match(block.id)
    assert assemble(events)["stop_reason"] == "tool_use"


def test_several_tool_uses_in_one_message_streamed_or_not(model: ScriptedModel) -> None:
    first, second = tool_use("mcp__calc__add", {"a": 1, "b": 2}), tool_use("Bash", {"x": []})
    model.add(reply(first, second), reply(first, second))
    status, headers, raw = call(model, turn_body(stream=False))
    assert (status, headers["content-type"]) == (200, "application/json")
    assert int(headers["content-length"]) == len(raw)
    assert json.loads(raw)["type"] == "message"
    for message in (json.loads(raw), streamed(model)):
        assert [b["id"] for b in message["content"]] == [first.id, second.id]
        assert [b["input"] for b in message["content"]] == [{"a": 1, "b": 2}, {"x": []}]
        assert message["stop_reason"] == "tool_use"
    assert first.id != second.id


def test_thinking_streams_thinking_and_signature_deltas(model: ScriptedModel) -> None:
    model.add(reply(thinking("let me think"), text("answer")))
    events = parse_sse(call(model, turn_body())[2])
    kinds = [d["delta"]["type"] for n, d in events if n == "content_block_delta"]
    assert kinds[:3] == ["thinking_delta", "thinking_delta", "signature_delta"]
    message = assemble(events)
    assert message["content"][0]["thinking"] == "let me think"
    assert message["content"][0]["signature"]
    assert message["content"][1] == {"type": "text", "text": "answer"}


def test_reply_builder_defaults_and_overrides() -> None:
    assert reply(text("x")).stop_reason == "end_turn"
    assert reply(text("x"), tool_use("T", {})).stop_reason == "tool_use"
    assert reply(text("x"), stop_reason="max_tokens").stop_reason == "max_tokens"
    custom = reply(text("x"), usage={"output_tokens": 7})
    assert custom.usage["output_tokens"] == 7
    assert custom.usage["input_tokens"] == 100
    assert tool_use("T", {}, id="toolu_fixed").id == "toolu_fixed"
    with pytest.raises(TypeError):
        reply("not a block")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        tool_use("T", {"bad": object()})
    with pytest.raises(ValueError, match="4xx or 5xx"):
        error(200, "fine")


def test_reply_echoes_requested_model_else_default(model: ScriptedModel) -> None:
    model.add(text("a"), text("b"))
    echoed = plain(model, model="claude-haiku-4-5")
    fallback = plain(model, model=None)
    assert echoed["model"] == "claude-haiku-4-5"
    assert fallback["model"] == DEFAULT_MODEL == "claude-sonnet-4-5"


# --------------------------------------------------------------------------- script semantics


def test_error_step_sends_anthropic_error(model: ScriptedModel) -> None:
    model.add(error(529, "Overloaded", "overloaded_error"), error(400, "bad", retry=False))
    status, headers, raw = call(model, turn_body())
    assert status == 529
    overloaded = {"type": "overloaded_error", "message": "Overloaded"}
    assert json.loads(raw) == {"type": "error", "error": overloaded}
    assert "x-should-retry" not in headers
    status, headers, raw = call(model, turn_body())
    assert (status, headers["x-should-retry"]) == (400, "false")
    assert json.loads(raw)["error"]["type"] == "api_error"
    assert model.errors == []


def test_exhausted_script_answers_500_and_records_it(model: ScriptedModel) -> None:
    model.add(text("only one"))
    call(model, turn_body())
    status, headers, raw = call(model, turn_body(content="are you there?"))
    assert status == 500
    assert headers["x-should-retry"] == "false"
    err = json.loads(raw)
    assert (err["type"], err["error"]["type"]) == ("error", "api_error")
    expected = "ScriptedModel: script exhausted after 1 replies; last request: POST /v1/messages"
    assert err["error"]["message"].startswith(expected)
    assert "are you there?" in err["error"]["message"]
    assert model.errors == [err["error"]["message"]]
    with pytest.raises(AssertionError, match="script exhausted"):
        model.assert_script_consumed()


def test_default_answers_once_the_script_is_exhausted() -> None:
    with ScriptedModel(text("first"), default=text("again")) as model:
        texts = [streamed(model) for _ in range(3)]
        assert [m["content"][0]["text"] for m in texts] == ["first", "again", "again"]
        model.assert_script_consumed()


def test_assert_script_consumed_lists_leftover_steps(model: ScriptedModel) -> None:
    model.add(text("used"), tool_use("Never", {}), lambda req: text("late"))
    call(model, turn_body())
    assert model.remaining == 2
    with pytest.raises(AssertionError) as info:
        model.assert_script_consumed()
    assert "unconsumed step: ToolUseBlock(name='Never'" in str(info.value)
    assert "unconsumed step: <callable" in str(info.value)


def test_callable_step_sees_the_request(model: ScriptedModel) -> None:
    seen: list[ModelRequest] = []

    def decide(request: ModelRequest) -> Any:
        seen.append(request)
        results = request.tool_results()
        return text(f"got {results[0].content}" if results else request.last_user_text())

    model.add(decide, decide)
    user = [
        {"type": "text", "text": "<system-reminder>\nignore me\n</system-reminder>\n"},
        {"type": "text", "text": "Please add."},
    ]
    first = streamed(model, content=user)
    boom = [{"type": "text", "text": "boom"}]
    reminder = "\n<system-reminder>x</system-reminder>"
    results: list[dict[str, Any]] = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3" + reminder},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True, "content": boom},
    ]
    second = streamed(model, content=results)
    assert first["content"][0]["text"] == "Please add."
    assert second["content"][0]["text"] == "got 3"
    request = seen[1]
    assert [(r.tool_use_id, r.content, r.is_error) for r in request.tool_results()] == [
        ("toolu_1", "3", False),
        ("toolu_2", "boom", True),
    ]
    assert request.tool_names == ["Bash"]
    assert request.system == "You are scripted."
    assert request.stream
    assert request.model == "claude-sonnet-4-5"
    assert request.kind == "turn"
    assert request.route == "/v1/messages"
    assert request.path == MESSAGES
    assert [r.index for r in model.requests] == [0, 1]


def test_failing_callable_is_reported_as_500(model: ScriptedModel) -> None:
    def broken(request: ModelRequest) -> Any:
        raise RuntimeError("oops")

    model.add(broken, lambda request: "not a reply")  # type: ignore[arg-type,return-value]
    assert call(model, turn_body())[0] == 500
    assert call(model, turn_body())[0] == 500
    assert "RuntimeError('oops')" in model.errors[0]
    assert "'not a reply'" in model.errors[1]


def test_a_list_of_steps_is_refused_at_once_not_as_a_500_later(model: ScriptedModel) -> None:
    """``ScriptedModel([a, b])`` was one step that failed only when the CLI asked for it,
    as an API error whose text called the list a callable."""
    for bad in ([text("a"), text("b")], (text("a"),)):
        with pytest.raises(
            OptionsError, match=r"pass the steps one by one.*ScriptedModel\(\*steps\)"
        ):
            ScriptedModel(bad)  # type: ignore[arg-type]
        with pytest.raises(OptionsError, match="cannot be a"):
            model.add(text("ok"), bad)  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match="not 'hello'"):
        ScriptedModel("hello")  # type: ignore[arg-type]
    assert model.remaining == 0  # nothing of a refused add() was added


def test_credentials_are_redacted(model: ScriptedModel) -> None:
    model.add(text("x"))
    secret = {"x-api-key": "sk-ant-secret", "authorization": "Bearer t", "x-app": "cli"}
    call(model, turn_body(), headers=secret)
    headers = model.requests[0].headers
    assert headers["x-api-key"] == "REDACTED"
    assert headers["authorization"] == "REDACTED"
    assert headers["x-app"] == "cli"
    assert "sk-ant-secret" not in repr(model.requests)


def test_concurrent_requests_each_consume_one_step(model: ScriptedModel) -> None:
    model.add(*(text(f"reply {i}") for i in range(20)))
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda _: plain(model)["content"][0]["text"], range(20)))
    assert sorted(answers) == sorted(f"reply {i}" for i in range(20))
    assert model.remaining == 0
    assert len(model.turn_requests) == 20


def test_wait_for_turns(model: ScriptedModel) -> None:
    model.add(text("x"))
    worker = threading.Thread(target=call, args=(model, turn_body()))
    worker.start()
    turns = model.wait_for_turns(1, timeout=10)
    worker.join()
    assert turns[0].last_user_text() == "hello"
    with pytest.raises(TimeoutError, match="saw 1 of 2"):
        model.wait_for_turns(2, timeout=0.01)


# --------------------------------------------------------------------------- side requests


def test_side_requests_do_not_consume_steps(model: ScriptedModel) -> None:
    model.add(text("the turn"))
    foo = {"model": "m", "messages": [{"role": "user", "content": "foo"}]}
    count = call(model, foo, path="/v1/messages/count_tokens?beta=true")
    assert count[0] == 200
    assert json.loads(count[2])["input_tokens"] > 0
    probe_reply = plain(model, max_tokens=1, tools=[], content=[{"type": "text", "text": "Hi"}])
    assert probe_reply["content"] == [{"type": "text", "text": "Hi"}]
    assert probe_reply["stop_reason"] == "max_tokens"
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    title = turn_body(tools=[], output_config={"format": {"type": "json_schema", "schema": schema}})
    title_text = assemble(parse_sse(call(model, title)[2]))["content"][0]["text"]
    assert json.loads(title_text) == {"title": "scripted"}
    assert call(model, method="HEAD", path="/api/hello")[0] == 200
    models = json.loads(call(model, method="GET", path="/v1/models")[2])
    assert models["data"][0]["id"] == DEFAULT_MODEL
    missing = call(model, method="GET", path="/v1/unknown")
    assert missing[0] == 404
    assert json.loads(missing[2])["error"]["type"] == "not_found_error"

    turn = streamed(model)
    assert turn["content"][0]["text"] == "the turn"
    kinds = [r.kind for r in model.requests]
    assert kinds == ["count_tokens", "probe", "structured", "other", "other", "other", "turn"]
    assert [r.kind for r in model.turn_requests] == ["turn"]
    assert all(r.is_side_request for r in model.requests[:-1])
    model.assert_script_consumed()


def test_side_request_hook_replaces_the_rule() -> None:
    def is_side(request: ModelRequest) -> bool:
        return request.last_user_text() == "background"

    with ScriptedModel(text("main"), side_request=is_side) as model:
        side = plain(model, content="background")
        probe_as_turn = plain(model, max_tokens=1)
        assert side["content"][0]["text"] == "Hi"
        assert probe_as_turn["content"][0]["text"] == "main"
        assert [r.kind for r in model.requests] == ["side", "turn"]


# --------------------------------------------------------------------------- HTTP / lifecycle


def test_chunked_request_body_and_connection_close(model: ScriptedModel) -> None:
    model.add(text("chunked ok"))
    body = json.dumps(turn_body(stream=False)).encode()
    half = len(body) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (body[:half], body[half:]))
    head = f"POST {MESSAGES} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    with socket.create_connection(("127.0.0.1", model.port), timeout=10) as sock:
        sock.sendall(head.encode() + chunks + b"0\r\n\r\n")
        received = b""
        while data := sock.recv(65536):  # the server closes the connection when done
            received += data
    head_part, _, payload = received.partition(b"\r\n\r\n")
    assert head_part.startswith(b"HTTP/1.1 200 OK")
    assert b"connection: close" in head_part.lower()
    assert json.loads(payload)["content"][0]["text"] == "chunked ok"


def test_lifecycle_and_loopback_only() -> None:
    model = ScriptedModel()
    # used without `with`: a typed error saying how to start it (a bare RuntimeError)
    with pytest.raises(ccwire.SessionStateError) as caught:
        model.env("home")
    assert str(caught.value) == (
        "ScriptedModel is not started: use `with ScriptedModel(...) as model:` "
        "(or call model.start() first)"
    )
    with model:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", model.url)
        port = model.port
        with pytest.raises(ccwire.SessionStateError, match="only be called once"):
            model.start()
    model.stop()  # idempotent
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with pytest.raises(ValueError, match="loopback"):
        ScriptedModel(host="0.0.0.0")


@pytest.mark.anyio
async def test_serves_while_an_event_loop_runs(model: ScriptedModel) -> None:
    model.add(text("async ok"))
    body = json.dumps(turn_body()).encode()
    head = f"POST {MESSAGES} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    received = b""
    with anyio.fail_after(10):
        async with await anyio.connect_tcp("127.0.0.1", model.port) as stream:
            await stream.send(head.encode() + body)
            try:
                while True:
                    received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    head_part, _, payload = received.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head_part
    body_bytes = b""
    while True:  # undo the chunked transfer encoding
        size_line, _, payload = payload.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        body_bytes, payload = body_bytes + payload[:size], payload[size + 2 :]
    assert assemble(parse_sse(body_bytes))["content"] == [{"type": "text", "text": "async ok"}]


# --------------------------------------------------------------------------- environment


def test_offline_env_holds_only_what_is_needed(
    model: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "real-token")
    monkeypatch.setenv("PATH", "/bin")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = offline_env(model, home=tmp_path, extra={"DISABLE_TELEMETRY": "0", "X": "y"})
    assert env == {
        "HOME": str(tmp_path),
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": OFFLINE_API_KEY,
        "ANTHROPIC_MODEL": DEFAULT_MODEL,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "0",
        "DISABLE_AUTOUPDATER": "1",
        "ENABLE_TOOL_SEARCH": "false",
        "CLAUDE_CODE_TMPDIR": str(tmp_path / ".tmp"),
        "NO_PROXY": "127.0.0.1,localhost,::1",
        "no_proxy": "127.0.0.1,localhost,::1",
        "PATH": "/bin",
        "LANG": "C.UTF-8",
        "X": "y",
    }
    by_url = offline_env("http://127.0.0.1:9/", home=str(tmp_path))
    assert by_url["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "ANTHROPIC_MODEL" not in by_url
    assert model.env(tmp_path) == offline_env(model, home=tmp_path)


def test_pytest_fixtures(scripted_model: ScriptedModel, offline_env: dict[str, str]) -> None:
    assert scripted_model.remaining == 0
    assert scripted_model.requests == []
    assert offline_env["ANTHROPIC_BASE_URL"] == scripted_model.url
    assert Path(offline_env["HOME"]).is_dir()
    scripted_model.add(text("from fixture"))
    message = plain(scripted_model)
    assert message["content"][0]["text"] == "from fixture"


def test_a_step_built_from_a_value_of_the_wrong_type_is_refused_when_built() -> None:
    # text(5) made a reply the CLI could not read: it retried, and the run failed with
    # the next request's "script exhausted", far from the cause
    with pytest.raises(OptionsError) as caught:
        text(5)  # type: ignore[arg-type]
    assert str(caught.value) == "text() takes a str, not int: write text('5')"
    with pytest.raises(OptionsError, match=r"^thinking\(\) takes a str, not NoneType"):
        thinking(None)  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match=r"^reply\(\) takes content blocks"):
        reply("hi")  # type: ignore[arg-type]
    with pytest.raises(OptionsError, match=r"^error status must be 4xx or 5xx"):
        error(200, "fine")
