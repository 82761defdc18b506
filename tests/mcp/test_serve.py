"""``ccwire serve``: a ccwire server served over stdio to the official ``mcp`` client."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ccwire import ClaudeAgentOptions, create_sdk_mcp_server, prompt, resource, tool
from ccwire._app.loaders import UsageError, load_server
from ccwire._mcp.serve import serve_lines
from tests.fixtures import mcp_serve_server
from tests.fixtures.fake_session import connected
from tests.fixtures.jsonrpc import initialize, line, tools_call
from tests.fixtures.mcp_schema import (
    schema_checked_module,  # noqa: F401 (autouse: every test here)
)

pytestmark = pytest.mark.anyio


ROOT = Path(__file__).resolve().parents[2]
ENTRY = "import sys; from ccwire._app.main import main; raise SystemExit(main(sys.argv[1:]))"
TARGET = "tests.fixtures.mcp_serve_server:server"


def server_params(*args: str) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return StdioServerParameters(
        command=sys.executable, args=["-c", ENTRY, "serve", *args], cwd=str(ROOT), env=env
    )


async def test_official_client_over_stdio() -> None:
    seen_progress: list[tuple[float, float | None, str | None]] = []
    logs: list[Any] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen_progress.append((progress, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    with anyio.fail_after(60):
        async with (
            stdio_client(server_params(TARGET)) as (read, write),
            ClientSession(read, write, logging_callback=on_log) as client,
        ):
            init = await client.initialize()
            assert init.server_info.name == "fixture"
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["add", "count", "sleepy"]
            assert listed.tools[0].output_schema == mcp_serve_server.SUM_SCHEMA
            added = await client.call_tool("add", {"a": 2, "b": 3.5})
            assert not added.is_error
            assert added.structured_content == {"sum": 5.5}
            refused = await client.call_tool("add", {"a": "two", "b": 1})
            assert refused.is_error
            assert isinstance(refused.content[0], types.TextContent)
            assert "'a' must be number, got string" in refused.content[0].text
            counted = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
            assert isinstance(counted.content[0], types.TextContent)
            assert counted.content[0].text == "counted to 3"
            assert seen_progress == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3")]
            assert logs == ["counted"]
            read_result = await client.read_resource("memo://greeting")
            (content,) = read_result.contents
            assert isinstance(content, types.TextResourceContents)
            assert content.text == "hello from ccwire"
            got = await client.get_prompt("haiku", {"topic": "wires"})
            assert isinstance(got.messages[0].content, types.TextContent)
            assert got.messages[0].content.text == "Write a haiku about wires."


def _run_main(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "serve", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_stdin_closed_at_once_exits_cleanly() -> None:
    done = _run_main(TARGET)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


STUCK_MODULE = """
import sys, threading
from ccwire import create_sdk_mcp_server, tool

@tool("stuck", "A plain def that never returns", {})
def stuck(args):
    sys.stderr.write("stuck: started\\n")
    sys.stderr.flush()
    threading.Event().wait()

server = create_sdk_mcp_server("stuck", tools=[stuck])
"""


def _ctrl_c_as_from_a_terminal() -> None:
    """In the child: a run started in the background ignores SIGINT (no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_a_plain_def_tool_never_returns_still_exits(tmp_path: Path) -> None:
    """Python waits at exit for the thread of a plain ``def`` handler: one that never
    returns used to keep ``ccwire serve`` alive forever after Ctrl-C (or the end of
    stdin).  Cut off once the drain timeout passed, it exits with 1, saying which call
    it left behind."""
    (tmp_path / "stuck_server.py").write_text(STUCK_MODULE)
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve", "--drain-timeout", "0.1", "stuck_server:server"],
        cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_ctrl_c_as_from_a_terminal,
    )  # fmt: skip
    try:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(line(initialize()) + line(tools_call(1, "stuck", {})))
        proc.stdin.flush()
        assert proc.stderr.readline() == b"stuck: started\n"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait(10)
    assert "running in a thread (stuck)" in stderr.decode(), stderr
    assert proc.returncode == 1, stderr


def test_serve_needs_no_mcp_package_for_stdio() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from ccwire._app.main import main\n"
        f"raise SystemExit(main(['serve', {TARGET!r}]))\n"
    )
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, input=line, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_load_server_forms() -> None:
    server = mcp_serve_server.server["instance"]
    assert load_server(TARGET)["instance"] is server
    assert load_server("tests.fixtures.mcp_serve_server:server.instance")["instance"] is server
    made = load_server("tests.fixtures.mcp_serve_server:make_server")
    assert made["name"] == "made"
    with pytest.raises(UsageError, match=r"package\.module:attribute"):
        load_server(":server", option="serve")


async def test_cancelled_notification_cancels_the_call_in_process() -> None:
    """serve_lines over in-memory streams: a cancelled call writes no response."""
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[dict[str, Any]](10)
    server = mcp_serve_server.server["instance"]
    mcp_serve_server.SLEEPY_ENDED.clear()
    init, sleepy = initialize(), tools_call(1, "sleepy", {})
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_lines, server, server_in, server_out.send)
            await to_server.send(init)
            assert (await from_server.receive())["id"] == 0
            await to_server.send(sleepy)
            await anyio.wait_all_tasks_blocked()
            await to_server.send(cancel)
            await to_server.send(ping)
            assert await from_server.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
            await to_server.send(b"not json")
            parse_error = await from_server.receive()
            assert parse_error["error"]["code"] == -32700 and parse_error["id"] is None
            to_server.close()
        server_out.close()
        remaining = [m async for m in from_server]
    assert remaining == []  # the cancelled call was never answered
    assert mcp_serve_server.SLEEPY_ENDED  # and its handler was cancelled


async def test_official_client_speaks_2026_07_28_over_stdio() -> None:
    """mode="auto": the client probes server/discover and adopts the newest version."""
    from mcp.client.client import Client
    from mcp_types.version import LATEST_MODERN_VERSION

    with anyio.fail_after(60):
        async with Client(server_params(TARGET), mode="auto") as client:
            assert client.session.protocol_version == LATEST_MODERN_VERSION
            assert [t.name for t in (await client.list_tools()).tools] == ["add", "count", "sleepy"]
            added = await client.call_tool("add", {"a": 1, "b": 2})
            assert added.structured_content == {"sum": 3}
            read = await client.read_resource("memo://greeting")
            assert isinstance(read.contents[0], types.TextResourceContents)
            got = await client.get_prompt("haiku", {"topic": "x"})
            assert got.messages


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("level", [None, "info", "error"])
async def test_at_2026_07_28_log_messages_need_the_requests_opt_in(
    level: Literal["info", "error"] | None,
) -> None:
    from mcp.client.client import Client

    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    with anyio.fail_after(60):
        async with Client(
            server_params(TARGET), mode="auto", log_level=level, logging_callback=on_log
        ) as client:
            await client.call_tool("count", {"n": 1})
    assert logs == (["counted"] if level == "info" else [])


@pytest.mark.parametrize(
    ("target", "tool", "arguments", "answer"),
    [
        ("official_serve_server:fast", "shout", {"word": "hey"}, "HEY!"),
        ("official_serve_server:lowlevel", "double", {"n": 21}, "42"),
    ],
)
async def test_serve_hosts_official_servers_found_in_the_current_directory(
    target: str, tool: str, arguments: dict[str, Any], answer: str
) -> None:
    """An MCPServer and a low-level Server, imported from the current directory."""
    params = server_params(target)
    params.cwd = str(ROOT / "tests" / "fixtures")
    with anyio.fail_after(60):
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            assert [t.name for t in (await client.list_tools()).tools] == [tool]
            called = await client.call_tool(tool, arguments)
            assert isinstance(called.content[0], types.TextContent)
            assert called.content[0].text == answer


def test_run_tools_loads_official_servers() -> None:
    from ccwire import McpBridge

    fixtures = str(ROOT / "tests" / "fixtures")
    for target, name in [("official_serve_server:fast", "fast"),
                         ("official_serve_server:lowlevel", "low")]:  # fmt: skip
        config = load_server(target, search_path=fixtures)
        assert config["name"] == name
        assert isinstance(config["instance"], McpBridge)


INVALID_RESULTS: dict[str, Any] = {
    "text_not_str": ({"content": [{"type": "text", "text": 5}]}, "'text' must be a string"),
    "no_mime": (
        {"content": [{"type": "image", "data": "AA=="}], "isError": False},
        "'mimeType' must be a string",
    ),
    "bare_block": ({"type": "text", "text": None}, "'text' must be a string"),
    "in_a_list": (["fine", {"type": "audio", "data": 1, "mimeType": "x"}], "block 1: the audio"),
    "unknown": ({"content": [{"type": "video", "url": "u"}]}, "type must be one of"),
    "empty_resource": (
        {"content": [{"type": "resource", "resource": {"uri": "memo://x"}}]},
        "needs a string 'text' or 'blob'",
    ),
}


def _returning(name: str, value: Any) -> Any:
    @tool(name, "Returns a malformed result", {})
    async def handler(args: dict[str, Any]) -> Any:
        return value

    return handler


async def test_an_invalid_content_block_is_an_error_result_served_or_to_the_cli(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A result whose blocks break the MCP schema (any shape: the common
    ``{"content": [...]}`` too) becomes an ``isError`` result naming what is wrong,
    the same one over ``ccwire serve`` and to the CLI; the developer, whom the model's
    error result never reaches, gets the same words as a WARNING on ``ccwire.tools``."""
    tools = [_returning(name, value) for name, (value, _) in INVALID_RESULTS.items()]
    config = create_sdk_mcp_server("s", tools=tools)
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[dict[str, Any]](10)
    served: dict[str, Any] = {}
    with to_server, server_in, server_out, from_server, anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_lines, config["instance"], server_in, server_out.send)
            await to_server.send(initialize())
            assert (await from_server.receive())["id"] == 0
            for name in INVALID_RESULTS:
                await to_server.send(tools_call(name, name, {}))
                answer = await from_server.receive()
                served[answer["id"]] = answer["result"]
            to_server.close()
        async with connected(ClaudeAgentOptions(mcp_servers={"s": config})) as (_, fake):
            for name in INVALID_RESULTS:
                message = tools_call(name, name, {})
                said = await fake.request("mcp_message", server_name="s", message=message)
                assert said["response"]["mcp_response"]["result"] == served[name], name
    for name, (_, why) in INVALID_RESULTS.items():
        assert served[name]["isError"] is True, served[name]
        (block,) = served[name]["content"]
        assert f"Tool {name!r} returned invalid content" in block["text"], block
        assert why in block["text"], block
        told = [r for r in caplog.records if r.getMessage().startswith(block["text"])]
        assert told and {r.name for r in told} == {"ccwire.tools"}, name
        assert told[0].getMessage().endswith("; the caller (the model) got it as an error result")


HUNG: list[str] = []
"""The hanging resource and prompt handlers that ended."""


@resource("memo://hangs")
async def hanging_resource() -> str:
    """Waits for a backend that never answers."""
    try:
        await anyio.sleep_forever()
    finally:
        HUNG.append("resource")
    return "never"  # pragma: no cover


@prompt("hangs", "Waits for a backend that never answers")
async def hanging_prompt() -> str:
    try:
        await anyio.sleep_forever()
    finally:
        HUNG.append("prompt")
    return "never"  # pragma: no cover


async def test_a_hanging_resource_read_or_prompt_get_is_cancelled_as_a_call_is() -> None:
    """``notifications/cancelled`` cancels a ``resources/read`` or ``prompts/get``
    exactly as a ``tools/call``: its handler ends and no answer is written (nothing
    is left to cut off once the input ends)."""
    server = create_sdk_mcp_server("s", resources=[hanging_resource], prompts=[hanging_prompt])[
        "instance"
    ]
    HUNG.clear()
    to_server, server_in = anyio.create_memory_object_stream[Any](10)
    server_out, from_server = anyio.create_memory_object_stream[dict[str, Any]](10)
    cut_off: list[int] = []

    async def serve() -> None:
        cut_off.append(await serve_lines(server, server_in, server_out.send, drain_seconds=0.1))

    read = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": "memo://hangs"},
    }
    get = {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "hangs"}}
    with to_server, server_in, server_out, from_server, anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            await to_server.send(initialize())
            assert (await from_server.receive())["id"] == 0
            for request in (read, get):
                await to_server.send(request)
            await anyio.wait_all_tasks_blocked()
            for req_id in (1, 2):
                params = {"requestId": req_id}
                await to_server.send(
                    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
                )
            await to_server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert await from_server.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
            to_server.close()
        server_out.close()
        assert [m async for m in from_server] == []  # neither was answered
    assert cut_off == [0] and sorted(HUNG) == ["prompt", "resource"]
