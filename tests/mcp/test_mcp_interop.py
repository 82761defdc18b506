"""Interop: ``ccwire serve`` with real MCP clients, over stdio and Streamable HTTP.

* the official Python client (``mcp.ClientSession``) exercises every server feature:
  tools (progress, logging, errors, content types), resources (templates,
  subscriptions), prompts, completions, ``logging/setLevel``, elicitation and
  sampling (and a client that does not answer in time);
* over HTTP also sessions (404 for unknown ids, DELETE) and the DNS-rebinding checks;
* the MCP Inspector CLI and the official conformance suite (Node 22, from the
  project's ``package.json`` devDependencies; skipped until ``make devtools`` ran).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests.fixtures.mcp_everything_server:server"
NODE_BIN = ROOT / "node_modules" / "node" / "bin"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """``ccwire serve --http 0`` in a subprocess; yields its URL once it is bound."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccwire", "serve", "--http", "0", TARGET],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        banner = proc.stderr.readline()  # written once the port is bound
        found = re.search(r"(http://\S+/mcp)", banner)
        assert found is not None, banner + proc.stderr.read()
        yield found[1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        err = proc.stderr.read()
        assert "Traceback" not in err, err


async def on_elicit(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    if params.message == "Quick!":
        await anyio.sleep(30)  # too slow: the tool gives up after 0.5 s
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})


async def on_sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    asked = params.messages[0].content
    text = asked.text if isinstance(asked, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=f"echo {text}"), model="fake"
    )


@contextlib.asynccontextmanager
async def connect(
    transport: str, updated: anyio.Event
) -> AsyncIterator[tuple[ClientSession, list[Any]]]:
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        seen.append(message)
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen.append(params)

    callbacks: dict[str, Any] = {
        "elicitation_callback": on_elicit,
        "sampling_callback": on_sample,
        "message_handler": on_message,
        "logging_callback": on_log,
    }
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "ccwire", "serve", TARGET], cwd=str(ROOT), env=ENV
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, **callbacks) as session,
        ):
            yield session, seen
    else:
        with http_server() as url:
            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write, **callbacks) as session,
            ):
                yield session, seen


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
# the official HTTP client (httpx2) leaves its response generators to the collector on trio
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <async_generator object PoolByteStream"
    ":pytest.PytestUnraisableExceptionWarning",
    "ignore:Exception ignored in. <async_generator object Response.aiter"
    ":pytest.PytestUnraisableExceptionWarning",
    "ignore:Exception ignored in. <async_generator object EventSource"
    ":pytest.PytestUnraisableExceptionWarning",
)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_official_client_uses_every_feature(transport: str) -> None:
    with anyio.fail_after(90):
        updated = anyio.Event()
        async with connect(transport, updated) as (client, seen):
            init = await client.initialize()
            caps = init.capabilities
            assert caps.completions is not None and caps.logging is not None
            assert caps.resources is not None and caps.resources.subscribe
            # tools: content types, progress, logging, errors
            names = [t.name for t in (await client.list_tools()).tools]
            assert {"test_simple_text", "test_sampling", "json_schema_2020_12_tool"} <= set(names)
            kinds = [
                b.type for b in (await client.call_tool("test_multiple_content_types")).content
            ]
            assert kinds == ["text", "image", "resource"]
            reported: list[float] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                reported.append(progress)

            await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert reported == [0, 50, 100]
            failed = await client.call_tool("test_error_handling")
            assert failed.is_error and "intentionally" in _text(failed)
            # logging/setLevel filters the log messages
            await client.set_logging_level("warning")
            await client.call_tool("test_tool_with_logging")
            assert not [m for m in seen if isinstance(m, types.LoggingMessageNotificationParams)]
            await client.set_logging_level("info")
            await client.call_tool("test_tool_with_logging")
            logged = [m.data for m in seen if isinstance(m, types.LoggingMessageNotificationParams)]
            assert logged == ["Tool execution started", "Tool processing data",
                              "Tool execution completed"]  # fmt: skip
            # elicitation and sampling: requests to this client
            asked = await client.call_tool("test_elicitation", {"message": "Who?"})
            assert _text(asked) == (
                "User response: action=accept, content={'username': 'ada', 'email': 'a@b.c'}"
            )
            sampled = await client.call_tool("test_sampling", {"prompt": "hi"})
            assert _text(sampled) == "LLM response: echo hi"
            slow = await client.call_tool("ask_briefly")
            assert slow.is_error and "did not answer elicitation/create" in _text(slow)
            # resources, templates, subscriptions
            read = await client.read_resource("test://template/123/data")
            first = read.contents[0]
            assert isinstance(first, types.TextResourceContents)
            assert json.loads(first.text)["id"] == "123"
            await client.subscribe_resource("test://watched-resource")
            assert _text(await client.call_tool("touch_watched")) == "told 1"
            with anyio.fail_after(5):
                await updated.wait()
            await client.unsubscribe_resource("test://watched-resource")
            assert _text(await client.call_tool("touch_watched")) == "told 0"
            # prompts and completions
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert got.messages
            ref = types.PromptReference(name="test_prompt_with_arguments")
            done = await client.complete(ref, {"name": "arg1", "value": "par"})
            assert done.completion.values == ["paris", "park", "party"]
            template = types.ResourceTemplateReference(uri="test://template/{id}/data")
            done = await client.complete(template, {"name": "id", "value": "12"})
            assert done.completion.values == ["123", "124"]


def _http(method: str, url: str, body: Any = None, **headers: str) -> tuple[int, Any]:
    """One HTTP request (urllib): its status and headers."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/json, text/event-stream")
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers


def test_http_sessions_and_dns_rebinding_checks() -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with http_server() as url:
        assert 400 <= _http("POST", url, init, Host="evil.example")[0] < 500
        assert 400 <= _http("POST", url, init, Origin="http://evil.example")[0] < 500
        status, headers = _http("POST", url, init, Origin="http://localhost:1234")
        assert status == 200
        session = headers["mcp-session-id"]
        assert _http("POST", url, ping, Mcp_Session_Id="nope")[0] == 404
        assert _http("DELETE", url, Mcp_Session_Id=session)[0] == 200
        assert _http("POST", url, ping, Mcp_Session_Id=session)[0] == 404


def _node() -> dict[str, str] | None:
    if not (NODE_BIN / "node").exists() or not (ROOT / "node_modules" / ".bin").exists():
        return None
    return {**ENV, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": os.environ.get("HOME", "/tmp")}  # fmt: skip


needs_node = pytest.mark.skipif(
    _node() is None, reason="run `make devtools` (Node 22, the Inspector, the conformance suite)"
)


@needs_node
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--method", "tools/list"], '"test_simple_text"'),
        (["--method", "tools/call", "--tool-name", "test_simple_text"], "simple text response"),
        (["--method", "resources/list"], '"test://static-text"'),
        (["--method", "resources/templates/list"], '"test://template/{id}/data"'),
        (["--method", "resources/read", "--uri", "test://static-binary"], '"blob"'),
        (["--method", "prompts/list"], '"test_simple_prompt"'),
        (
            [
                "--method",
                "prompts/get",
                "--prompt-name",
                "test_prompt_with_arguments",
                "--prompt-args",
                "arg1=a",
                "arg2=b",
            ],
            "arg1='a', arg2='b'",
        ),
        (["--method", "logging/setLevel", "--log-level", "debug"], "{}"),
    ],
)
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_inspector_cli(transport: str, args: list[str], expected: str) -> None:
    env = _node()
    assert env is not None
    inspector = str(ROOT / "node_modules" / ".bin" / "mcp-inspector")
    with contextlib.ExitStack() as stack:
        if transport == "http":
            target = [stack.enter_context(http_server())]
        else:
            target = [sys.executable, "-m", "ccwire", "serve", TARGET]
        done = subprocess.run(
            [inspector, "--cli", "--cwd", str(ROOT), "-e", f"PYTHONPATH={ENV['PYTHONPATH']}",
             *target, *args],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout


@needs_node
def test_the_official_conformance_suite_passes(tmp_path: Path) -> None:
    env = _node()
    assert env is not None
    conformance = str(ROOT / "node_modules" / ".bin" / "conformance")
    with http_server() as url:
        done = subprocess.run(
            [conformance, "server", "--url", url, "--suite", "all"],
            cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    summary = done.stdout[done.stdout.find("=== SUMMARY ===") :]
    total = re.search(r"Total: (\d+) passed, (\d+) failed", summary)
    assert total is not None, done.stdout[-3000:] + done.stderr[-3000:]
    passed, failed = int(total[1]), int(total[2])
    assert failed == 0, summary
    assert passed >= 44, summary


def test_a_stream_cut_mid_call_is_resumed_with_last_event_id() -> None:
    """The client drops a tools/call's SSE stream after its first event; a GET with
    Last-Event-ID then replays what it missed: the progress and the result."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    init = {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    with http_server() as url:
        port = int(re.search(r":(\d+)/", url)[1])  # type: ignore[index]

        def post(body: dict[str, Any], **extra: str) -> tuple[Any, Any]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("POST", "/mcp", json.dumps(body), {**headers, **extra})
            return conn, conn.getresponse()

        conn, opened = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        session = opened.getheader("mcp-session-id")
        opened.read()
        conn.close()
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        conn, noted = post(note, **{"Mcp-Session-Id": session})
        assert noted.status == 202
        conn.close()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "test_tool_with_progress", "arguments": {},
                           "_meta": {"progressToken": "p"}}}  # fmt: skip
        conn, streamed = post(call, **{"Mcp-Session-Id": session})
        first = b""
        while b"\r\n\r\n" not in first:
            first += streamed.read1(1)
        conn.close()  # cut after the priming event
        last = re.search(rb"id: (\S+)", first)
        assert last is not None, first
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        resume = {**headers, "Mcp-Session-Id": session, "Last-Event-ID": last[1].decode()}
        conn.request("GET", "/mcp", headers=resume)
        replay = conn.getresponse()
        assert replay.status == 200
        seen = b""
        while b'"id":2' not in seen:
            chunk = replay.read1(4096)
            assert chunk, seen
            seen += chunk
        conn.close()
    events = [
        json.loads(line[6:]) for line in seen.decode().splitlines() if line.startswith("data: {")
    ]
    assert [e["params"]["progress"] for e in events if "method" in e] == [0, 50, 100]
    assert events[-1]["result"]["content"][0]["text"] == "Progress test completed"
