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
from collections.abc import Callable, Sequence
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

    async def run(
        self, prompt: str = "go", on_prompt: Callable[[], None] | None = None
    ) -> dict[str, Any]:
        """Connect, send one prompt, read until the result; returns the result frame.

        ``on_prompt`` is called just before the prompt is written.
        """
        proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            limit=_LIMIT,
        )
        self.proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def write(obj: Any) -> None:
            stdin.write(_dumps(obj).encode() + b"\n")

        write(
            {
                "type": "control_request",
                "request_id": "req_1",
                "request": {"subtype": "initialize", "hooks": None},
            }
        )
        await stdin.drain()
        initialized = False
        result: dict[str, Any] = {}
        while True:
            line = await stdout.readline()
            if not line:
                break
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
            elif t == "control_response":
                if not initialized and obj["response"].get("request_id") == "req_1":
                    initialized = True
                    if on_prompt is not None:
                        on_prompt()
                    write(
                        {
                            "type": "user",
                            "message": {"role": "user", "content": prompt},
                            "parent_tool_use_id": None,
                            "session_id": "default",
                        }
                    )
                    await stdin.drain()
            elif t == "assistant":
                self.messages += 1
                for block in obj["message"]["content"]:
                    if block.get("type") == "text":
                        self.text_bytes += len(block["text"])
            elif t == "result":
                result = obj
                break
        return result

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


def floor_argv(cli: str) -> list[str]:
    """The command line the floor starts the CLI with (the flags both SDKs pass)."""
    config = {"mcpServers": {"bench": {"type": "sdk", "name": "bench"}}}
    return [
        cli,
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
