"""Reference-shaped code on ccwire: a custom transport written for ``claude-agent-sdk``
(connect/write/read_messages/close/is_ready/end_input) plugged into
``ClaudeSDKClient(options, transport)``, and the reference's client methods and
options (`get_mcp_status`, `reconnect_mcp_server`, `toggle_mcp_server`,
``verbatim_prompts``, ``AgentDefinition``'s camelCase fields) over the fake CLI.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest

from ccwire import (
    AgentDefinition,
    AssistantMessage,
    CanUseToolShadowedWarning,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    Message,
    ResultMessage,
    TextBlock,
    Transport,
    query,
)
from ccwire._conversation.argv import agents_to_wire
from ccwire._transport.memory import CLIPeer
from ccwire.testing import FakeCLI, memory_transport_pair

pytestmark = pytest.mark.anyio

TIMEOUT = 15


class _QueueEnds:
    """A custom transport exactly as one is written for ``claude-agent-sdk``: it
    implements only the reference's six methods. The far end is a queue the test
    plays the CLI on."""

    def __init__(self) -> None:
        self.to_sdk, self._from_cli = anyio.create_memory_object_stream[dict[str, Any]](100)
        self._to_cli, self.from_sdk = anyio.create_memory_object_stream[dict[str, Any]](100)
        self.ready = False
        self.closed = False
        self.written: list[str] = []

    async def connect(self) -> None:
        self.ready = True

    async def write(self, data: str) -> None:
        self.written.append(data)
        for line in data.splitlines():
            await self._to_cli.send(json.loads(line))

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        async with self._from_cli:
            async for message in self._from_cli:
                yield message

    async def close(self) -> None:
        self.ready = False
        self.closed = True
        await self._to_cli.aclose()
        await self.to_sdk.aclose()

    def is_ready(self) -> bool:
        return self.ready

    async def end_input(self) -> None:
        await self._to_cli.aclose()


class ReferenceShapedTransport(_QueueEnds, Transport):
    """The six methods, on a subclass of `Transport` (the reference's interface)."""


class DuckTypedTransport(_QueueEnds):
    """The six methods on a class that derives from nothing of ccwire's (the reference
    accepts such an object too)."""


class QueuePeer:
    """The CLI's side of `ReferenceShapedTransport`, for `FakeCLI`."""

    def __init__(self, transport: _QueueEnds) -> None:
        self.t = transport

    async def receive(self) -> dict[str, Any] | None:
        try:
            return await self.t.from_sdk.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None

    async def send(self, frame: Mapping[str, Any]) -> None:
        await self.t.to_sdk.send(dict(frame))

    async def exit(self, code: int, stderr: str) -> None:
        await self.t.to_sdk.aclose()


@pytest.mark.parametrize("shape", [ReferenceShapedTransport, DuckTypedTransport])
async def test_a_reference_shaped_transport_plugs_into_the_client(
    shape: type[_QueueEnds],
) -> None:
    transport = shape()
    fake = FakeCLI(cast(CLIPeer, QueuePeer(transport)))
    got: list[Message] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(TIMEOUT):
            # positional, as in the reference: ClaudeSDKClient(options, transport)
            async with ClaudeSDKClient(ClaudeAgentOptions(), cast(Transport, transport)) as client:
                assert transport.is_ready()
                await client.query("hello")
                prompt = await fake.receive("user")
                assert prompt["message"]["content"] == "hello"
                await fake.assistant({"type": "text", "text": "hi there"})
                await fake.result("hi there")
                got = [m async for m in client.receive_response()]
    assert transport.closed and not transport.is_ready()
    assert isinstance(got[0], AssistantMessage) and got[0].content == [TextBlock("hi there")]
    assert isinstance(got[-1], ResultMessage) and got[-1].result == "hi there"
    # every write was whole JSON lines
    assert all(chunk.endswith("\n") for chunk in transport.written)


async def test_read_messages_failing_is_a_typed_error_at_the_consumer() -> None:
    class Broken(ReferenceShapedTransport):
        async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
            raise OSError("socket gone")
            yield {}  # pragma: no cover

    with anyio.fail_after(TIMEOUT), pytest.raises(CLIConnectionError, match="socket gone"):
        async with ClaudeSDKClient(ClaudeAgentOptions(), Broken()) as client:
            await client.query("hello")  # pragma: no cover


async def test_connect_failing_is_the_typed_error_itself_not_a_group() -> None:
    # the reference raises the transport's error as it is; ccwire raises it typed, and
    # not wrapped in an ExceptionGroup by the task group the transport starts in
    class Refused(ReferenceShapedTransport):
        async def connect(self) -> None:
            raise OSError("connection refused")

    with anyio.fail_after(TIMEOUT):
        with pytest.raises(CLIConnectionError, match="connection refused") as caught:
            async with ClaudeSDKClient(ClaudeAgentOptions(), Refused()):
                pass  # pragma: no cover
        assert isinstance(caught.value.__cause__, OSError)
        with pytest.raises(CLIConnectionError, match="connection refused"):
            async for _ in query(prompt="hello", transport=Refused()):
                pass  # pragma: no cover


async def test_reconnecting_over_a_used_transport_is_a_typed_error() -> None:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    client = ClaudeSDKClient(transport=transport)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(fake.handshake)
            await client.connect()
            await client.disconnect()
        with pytest.raises(CLIConnectionError, match="already started"):
            await client.connect()


class ReplayTransport(Transport):
    """A transport that replays recorded frames, as test suites written for the
    reference do: the recorded answer to ``initialize`` gets the id of the request
    written, read at the moment the answer is taken (so it must be taken after the
    request was written, and nothing may be read ahead)."""

    def __init__(self, frames: list[dict[str, Any]]) -> None:
        self.frames = frames
        self.request_ids: list[str] = []

    async def connect(self) -> None:
        pass

    async def write(self, data: str) -> None:
        frame = json.loads(data)
        if frame.get("type") == "control_request":
            self.request_ids.append(frame["request_id"])

    def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        return self._replay()

    async def _replay(self) -> AsyncIterator[dict[str, Any]]:
        answered = 0
        for frame in self.frames:
            if frame["type"] == "control_response" and answered < len(self.request_ids):
                response = {**frame["response"], "request_id": self.request_ids[answered]}
                frame = {**frame, "response": response}
                answered += 1
            yield frame

    async def close(self) -> None:
        pass

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        pass


async def test_a_replaying_transport_is_read_as_the_reference_reads_it() -> None:
    recorded: list[dict[str, Any]] = [
        {"type": "control_response",
         "response": {"subtype": "success", "request_id": "recorded", "response": {}}},
        {"type": "assistant",
         "message": {"model": "m", "content": [{"type": "text", "text": "hi"}]}},
        {"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
         "is_error": False, "num_turns": 1, "session_id": "s", "result": "hi"},
    ]  # fmt: skip
    transport = ReplayTransport(recorded)
    with anyio.fail_after(TIMEOUT):
        got = [m async for m in query(prompt="hello", transport=transport)]
    assert len(transport.request_ids) == 1  # initialize, answered with its own id
    assert isinstance(got[-1], ResultMessage) and got[-1].result == "hi"


def test_a_transport_must_implement_all_six_methods() -> None:
    class Half(Transport):
        async def connect(self) -> None:
            pass

        async def write(self, data: str) -> None:
            pass

    with pytest.raises(TypeError, match="read_messages"):
        Half()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="connect"):
        Transport()  # type: ignore[abstract]
    ReferenceShapedTransport()  # complete: fine


async def test_an_object_without_the_methods_is_refused_by_name() -> None:
    class NotATransport:
        async def connect(self) -> None:
            pass

        def is_ready(self) -> bool:
            return True

    with pytest.raises(TypeError, match=r"NotATransport lacks write\(\), read_messages\(\)"):
        async with ClaudeSDKClient(ClaudeAgentOptions(), cast(Transport, NotATransport())):
            pass  # pragma: no cover
    with pytest.raises(TypeError, match="lacks"):
        async for _ in query(prompt="hi", transport=cast(Transport, object())):
            pass  # pragma: no cover


async def test_ccwire_transports_offer_the_reference_methods_too() -> None:
    transport, peer = memory_transport_pair()
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        assert transport.is_ready()
        await transport.write('{"type": "user", "n": 1}\n{"type": "user", "n": 2}\n')
        sent = [await peer.receive(), await peer.receive()]
        assert [m["n"] for m in sent if m is not None] == [1, 2]
        await peer.send({"type": "assistant", "n": 3})
        await peer.exit(0)
        assert [m async for m in transport.read_messages()] == [{"type": "assistant", "n": 3}]
        await transport.close()
    with pytest.raises(CLIConnectionError, match="start"):
        await memory_transport_pair()[0].connect()


# ---------------------------------------------------------- client methods, options


@asynccontextmanager
async def connected(
    options: ClaudeAgentOptions | None = None,
) -> AsyncIterator[tuple[ClaudeSDKClient, FakeCLI]]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(TIMEOUT):
            async with ClaudeSDKClient(options or ClaudeAgentOptions(), transport) as client:
                yield client, fake


async def _answer(fake: FakeCLI, subtype: str, body: Mapping[str, Any] | None) -> dict[str, Any]:
    request = await fake.receive("control_request", subtype)
    await fake.respond(request["request_id"], body)
    return dict(request["request"])


async def test_get_mcp_status_returns_the_clis_dict() -> None:
    servers = [
        {
            "name": "calc",
            "status": "connected",
            "serverInfo": {"name": "calc", "version": "1.0"},
            "tools": [{"name": "add", "annotations": {"readOnly": True}}],
            "scope": "dynamic",
        },
        {"name": "gone", "status": "failed", "error": "boom"},
    ]
    async with connected() as (client, fake), anyio.create_task_group() as tg:
        tg.start_soon(_answer, fake, "mcp_status", {"mcpServers": servers})
        status = await client.get_mcp_status()
    assert status["mcpServers"] == servers
    assert status["mcpServers"][0]["serverInfo"]["version"] == "1.0"


async def test_reconnect_and_toggle_send_the_reference_requests() -> None:
    seen: list[dict[str, Any]] = []

    async def cli_side(fake: FakeCLI) -> None:
        seen.append(await _answer(fake, "mcp_reconnect", None))
        seen.append(await _answer(fake, "mcp_toggle", None))

    async with connected() as (client, fake), anyio.create_task_group() as tg:
        tg.start_soon(cli_side, fake)
        await client.reconnect_mcp_server("calc")
        await client.toggle_mcp_server("calc", enabled=False)
    assert seen == [
        {"subtype": "mcp_reconnect", "serverName": "calc"},
        {"subtype": "mcp_toggle", "serverName": "calc", "enabled": False},
    ]


async def test_verbatim_prompts_marks_every_user_message() -> None:
    async with connected(ClaudeAgentOptions(verbatim_prompts=True)) as (client, fake):
        await client.query("/not-a-command, as written")
        frame = await fake.receive("user")
    assert frame["client_composed"] is True
    async with connected() as (client, fake):
        await client.query("plain")
        frame = await fake.receive("user")
    assert "client_composed" not in frame


def test_options_take_the_reference_fields() -> None:
    import sys

    options = ClaudeAgentOptions(
        debug_stderr=sys.stdout, verbatim_prompts=True, load_timeout_ms=5_000
    )
    assert options.debug_stderr is sys.stdout and options.load_timeout_ms == 5_000
    # as in the reference, the default is the process's stderr when the options were
    # defined (pytest may have swapped sys.stderr since): a writable text stream
    default = ClaudeAgentOptions().debug_stderr
    assert callable(getattr(default, "write", None)) and default is not sys.stdout


def test_agent_definition_takes_both_spellings() -> None:
    ref_style = AgentDefinition(
        description="d",
        prompt="p",
        disallowedTools=["Bash"],
        mcpServers=["calc"],
        initialPrompt="start",
        maxTurns=3,
        permissionMode="plan",
    )
    ours = AgentDefinition(
        description="d",
        prompt="p",
        disallowed_tools=["Bash"],
        mcp_servers=["calc"],
        initial_prompt="start",
        max_turns=3,
        permission_mode="plan",
    )
    assert ref_style == ours and ref_style.max_turns == 3 and ours.maxTurns == 3
    wire = agents_to_wire({"a": ref_style})["a"]
    assert wire == {
        "description": "d",
        "prompt": "p",
        "disallowedTools": ["Bash"],
        "mcpServers": ["calc"],
        "initialPrompt": "start",
        "maxTurns": 3,
        "permissionMode": "plan",
    }
    changed = dataclasses.replace(ref_style, maxTurns=5)
    assert changed.maxTurns == 5 == changed.max_turns
    # as in the reference, asdict() has the camelCase fields only
    assert {k: v for k, v in dataclasses.asdict(ref_style).items() if v is not None} == {
        "description": "d", "prompt": "p", "disallowedTools": ["Bash"],
        "mcpServers": ["calc"], "initialPrompt": "start", "maxTurns": 3,
        "permissionMode": "plan",
    }  # fmt: skip
    with pytest.raises(ValueError, match="disagree"):
        AgentDefinition(description="d", prompt="p", max_turns=1, maxTurns=2)


async def test_a_shadowed_can_use_tool_warns_on_connect() -> None:
    async def allow(*args: Any) -> Any:  # pragma: no cover - never called here
        raise AssertionError

    options = ClaudeAgentOptions(can_use_tool=allow, allowed_tools=["Read", "Bash(ls:*)"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with connected(options):
            pass
    shadow = [w for w in caught if issubclass(w.category, CanUseToolShadowedWarning)]
    assert len(shadow) == 1 and "Read" in str(shadow[0].message)
    assert "Bash" not in str(shadow[0].message)


# ---------------------------------------------------------------- live, real CLI


@pytest.mark.e2e
async def test_live_get_mcp_status_and_toggle(tmp_path: Any) -> None:
    from ccwire import create_sdk_mcp_server, tool
    from ccwire.testing import ScriptedModel, text
    from tests.compat.test_new_frames import CLI

    if CLI is None:
        pytest.skip("Claude Code CLI not installed (run `make cli`)")

    @tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    cwd.mkdir()
    with ScriptedModel(text("ready")) as model:
        options = ClaudeAgentOptions(
            cli_path=CLI,
            cwd=str(cwd),
            env=model.env(str(home)),
            mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        )
        with anyio.fail_after(90):
            async with ClaudeSDKClient(options) as client:
                await client.query("hi")
                [m async for m in client.receive_response()]  # the server is connected now
                status = await client.get_mcp_status()
                await client.toggle_mcp_server("calc", enabled=False)
                disabled = await client.get_mcp_status()
                await client.toggle_mcp_server("calc", enabled=True)
                enabled = await client.get_mcp_status()
    calc = next(s for s in status["mcpServers"] if s["name"] == "calc")
    assert calc["status"] == "connected" and calc["serverInfo"]["name"] == "calc"
    assert [t["name"] for t in calc.get("tools", [])] == ["add"]
    assert next(s for s in disabled["mcpServers"] if s["name"] == "calc")["status"] == "disabled"
    assert next(s for s in enabled["mcpServers"] if s["name"] == "calc")["status"] == "connected"
