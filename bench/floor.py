"""The floor: a hand-written asyncio responder doing the minimum any Python SDK must do.

Spawn the CLI, write ``initialize``, read lines, ``json.loads`` each, answer
``mcp_message`` requests with fixed results (``tools/call`` echoes its ``text``
argument, like the benchmark tool), count messages until ``result``. No validation, no
typed messages, no error handling beyond what the benchmark needs. Stdlib only.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LIMIT = 1 << 31  # one line may be this long

_INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": True}},
    "serverInfo": {"name": "bench", "version": "1.0.0"},
}
_TOOLS = {
    "tools": [
        {
            "name": "echo",
            "description": "Echo the text",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        }
    ]
}


class FloorSession:
    """One CLI process driven by the minimal responder."""

    def __init__(self, argv: Sequence[str], env: dict[str, str]) -> None:
        self.argv = list(argv)
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.messages = 0
        self.text_bytes = 0
        self.after_spawn: Callable[[], Awaitable[None]] | None = None
        """Run right after the spawn, while the CLI boots (``driver.py`` uses it for a
        floor that also pays anyio's first use: see `touch_anyio`)."""

    async def run(
        self, prompt: str = "go", on_prompt: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """Connect, send one prompt, read until the result; returns the result frame.

        ``on_prompt`` is called just before the prompt is written.
        """
        await self.start()
        if on_prompt is not None:
            on_prompt()
        return await self.converse(prompt)

    async def start(self) -> None:
        """Spawn the CLI, write ``initialize`` and read until its answer."""
        proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            limit=_LIMIT,
        )
        self.proc = proc
        if self.after_spawn is not None:
            await self.after_spawn()
        self._write(
            {
                "type": "control_request",
                "request_id": "req_1",
                "request": {"subtype": "initialize", "hooks": None},
            }
        )
        assert proc.stdin is not None
        await proc.stdin.drain()
        await self._read_until("control_response")

    async def converse(self, prompt: str = "go") -> dict[str, Any]:
        """Write one prompt and read until the result; returns the result frame."""
        assert self.proc is not None and self.proc.stdin is not None
        self._write(
            {
                "type": "user",
                "message": {"role": "user", "content": prompt},
                "parent_tool_use_id": None,
                "session_id": "default",
            }
        )
        await self.proc.stdin.drain()
        return await self._read_until("result")

    def _write(self, obj: Any) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(_dumps(obj).encode() + b"\n")

    async def _read_until(self, wanted: str) -> dict[str, Any]:
        """Answer control requests and count messages until a ``wanted`` frame."""
        assert self.proc is not None
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        write = self._write
        while True:
            line = await stdout.readline()
            if not line:
                return {}
            obj = json.loads(line)
            t = obj.get("type")
            if t == "control_request":
                req = obj["request"]
                if req.get("subtype") == "mcp_message":
                    write(_answer(obj["request_id"], req["message"]))
                else:
                    write(_success(obj["request_id"], {}))
                if stdin.transport.get_write_buffer_size() > 65536:
                    await stdin.drain()
            elif t == "assistant":
                self.messages += 1
                for block in obj["message"]["content"]:
                    if block.get("type") == "text":
                        self.text_bytes += len(block["text"])
            if t == wanted:
                if t == "control_response" and obj["response"].get("request_id") != "req_1":
                    continue
                await stdin.drain()
                return dict(obj)

    async def close(self) -> None:
        """Close stdin and reap the process."""
        proc = self.proc
        if proc is None:
            return
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


def _success(rid: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": rid, "response": body},
    }


def _answer(rid: str, message: dict[str, Any]) -> dict[str, Any]:
    method = message.get("method")
    mid = message.get("id")
    if method == "tools/call":
        text = message["params"]["arguments"]["text"]
        reply: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": mid,
            "result": {"content": [{"type": "text", "text": text}]},
        }
    elif method == "initialize":
        reply = {"jsonrpc": "2.0", "id": mid, "result": _INIT_RESULT}
    elif method == "tools/list":
        reply = {"jsonrpc": "2.0", "id": mid, "result": _TOOLS}
    else:
        reply = {"jsonrpc": "2.0", "result": {}} if mid is None else {"jsonrpc": "2.0", "id": mid}
    return _success(rid, {"mcp_response": reply})


def floor_argv(cli: str, allowed_tools: Sequence[str] = ()) -> list[str]:
    """The command line the floor starts the CLI with (the flags both SDKs pass)."""
    config = {"mcpServers": {"bench": {"type": "sdk", "name": "bench"}}}
    extra = ["--allowedTools", ",".join(allowed_tools)] if allowed_tools else []
    return [
        cli,
        *extra,
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        json.dumps(config),
        "--input-format",
        "stream-json",
    ]


def floor_env(extra: dict[str, str]) -> dict[str, str]:
    """``os.environ`` plus ``extra`` (as both SDKs build it)."""
    return {**os.environ, **extra}


async def touch_anyio() -> None:
    """What any anyio program pays on its first use of anyio on asyncio: a task group,
    an event, a cancel scope and a memory stream (anyio then loads its asyncio backend
    and the modules it imports lazily). Nothing more: no SDK code."""
    import importlib

    import anyio

    async with anyio.create_task_group():
        anyio.Event()
        anyio.CancelScope()
        anyio.create_memory_object_stream[bytes]()
        importlib.import_module("anyio.abc")
