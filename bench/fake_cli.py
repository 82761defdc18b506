"""A fake Claude Code CLI for the benchmark: stdlib only, one blocking loop.

It speaks the CLI's side of the stream-json control protocol in the frame order of the
real CLI (see ``shared/traces/basic_sdkMcpServers.jsonl``):

1. read ``initialize``; send ``mcp_message`` ``initialize`` to every SDK server (found
   in ``--mcp-config`` or the ``sdkMcpServers`` field) and wait for the answers; answer
   ``initialize``;
2. read the user's prompt; send ``notifications/initialized``, ``session_state_changed``
   ``running``, ``tools/list`` and ``system/init``;
3. run the workload of ``BENCH_SPEC`` (JSON in the environment);
4. send ``result`` and ``session_state_changed`` ``idle``; answer whatever else arrives
   until stdin closes; exit 0.

Workloads (``BENCH_SPEC["scenario"]``):

* ``handshake``: one short assistant message;
* ``tools_seq``: ``n`` ``tools/call`` requests one after another; the round trip of each
  (write to read of its answer) is measured here, identically for every SDK;
* ``tools_conc``: ``n`` calls with ``concurrency`` in flight; throughput measured here;
* ``messages``: ``n`` assistant messages of ``size`` text bytes each;
* ``big``: one assistant message of ``size`` text bytes;
* ``session``: ``n`` sequential tool calls then ``messages`` assistant messages.

Frames that depend only on the spec are encoded before ``initialize`` is answered, so
the measured part is the SDK reading them, not this script building them. Statistics
go to ``BENCH_SPEC["out"]`` (a JSON file) when given.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

SESSION_ID = "f8af3ab2-2dac-44a9-81f1-c808dd29bc7f"
MODEL = "claude-opus-5-5"
TOOL = "echo"
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Peer:
    """Blocking line I/O on stdin/stdout, plus the bookkeeping of our own requests."""

    def __init__(self) -> None:
        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.stash: list[dict] = []  # frames read while waiting for something else
        self.ids = 0

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()

    def send(self, obj: dict) -> None:
        self.write(_dumps(obj).encode() + b"\n")

    def read(self) -> dict | None:
        while True:
            line = self.inp.readline()
            if not line:
                return None
            if line.strip():
                return json.loads(line)

    def handle_other(self, frame: dict) -> None:
        """Answer an SDK control request (interrupt, set_model, ...) with success."""
        if frame.get("type") == "control_request":
            self.send(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": frame["request_id"],
                        "response": {},
                    },
                }
            )
        else:
            self.stash.append(frame)

    def wait_for(self, pred) -> dict:  # type: ignore[no-untyped-def]
        for i, frame in enumerate(self.stash):
            if pred(frame):
                return self.stash.pop(i)
        while True:
            frame = self.read()
            if frame is None:
                sys.stderr.write("fake_cli: stdin closed early\n")
                raise SystemExit(3)
            if pred(frame):
                return frame
            if frame.get("type") == "control_response":
                continue  # an answer nobody waits for
            self.handle_other(frame)

    def new_id(self) -> str:
        self.ids += 1
        return f"{uuid.uuid4()}"

    def mcp(self, server: str, message: dict) -> dict:
        """Send one ``mcp_message`` request and return the SDK's ``mcp_response``."""
        rid = self.new_id()
        self.send(
            {
                "type": "control_request",
                "request_id": rid,
                "request": {"subtype": "mcp_message", "server_name": server, "message": message},
            }
        )
        frame = self.wait_for(lambda f: _response_id(f) == rid)
        return frame["response"].get("response", {}).get("mcp_response", {})


def _response_id(frame: dict) -> str | None:
    if frame.get("type") != "control_response":
        return None
    resp = frame.get("response")
    return resp.get("request_id") if isinstance(resp, dict) else None


def sdk_servers(argv: list[str], init: dict) -> list[str]:
    """SDK server names from ``--mcp-config`` (Python SDKs) or ``sdkMcpServers`` (TS)."""
    names = list(init.get("sdkMcpServers") or [])
    if "--mcp-config" in argv:
        value = argv[argv.index("--mcp-config") + 1]
        if not value.lstrip().startswith("{"):
            with open(value, encoding="utf-8") as f:
                value = f.read()
        for name, cfg in json.loads(value).get("mcpServers", {}).items():
            if isinstance(cfg, dict) and cfg.get("type") == "sdk" and name not in names:
                names.append(name)
    return names


def assistant_line(text: str, n: int = 0) -> bytes:
    """One assistant frame, shaped like the real CLI's."""
    frame = {
        "type": "assistant",
        "message": {
            "id": f"msg_{n:020d}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
            "context_management": None,
        },
        "parent_tool_use_id": None,
        "session_id": SESSION_ID,
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-11-22T01:57:38.293Z",
    }
    return _dumps(frame).encode() + b"\n"


def filler(size: int) -> str:
    """``size`` bytes of ASCII text."""
    unit = "The quick brown fox jumps over the lazy dog; pack my box with five dozen jugs. "
    return (unit * (size // len(unit) + 1))[:size]


def call_line(rid: str, server: str, i: int) -> bytes:
    """A ``tools/call`` request exactly as the CLI frames it."""
    frame = {
        "type": "control_request",
        "request_id": rid,
        "request": {
            "subtype": "mcp_message",
            "server_name": server,
            "message": {
                "method": "tools/call",
                "params": {
                    "name": TOOL,
                    "arguments": {"text": f"hello {i}"},
                    "_meta": {"claudecode/toolUseId": f"toolu_{i:020d}", "progressToken": i + 2},
                },
                "jsonrpc": "2.0",
                "id": i + 2,
            },
        },
    }
    return _dumps(frame).encode() + b"\n"


def _check_answer(frame: dict, i: int) -> bool:
    try:
        result = frame["response"]["response"]["mcp_response"]["result"]
        return result["content"][0]["text"] == f"hello {i}" and not result.get("isError")
    except (KeyError, IndexError, TypeError):
        return False


def tools_seq(peer: Peer, server: str, n: int, stats: dict) -> None:
    lat: list[int] = []
    bad = 0
    for i in range(n):
        rid = f"call-{i}-{uuid.uuid4()}"
        line = call_line(rid, server, i)
        t0 = time.perf_counter_ns()
        peer.write(line)
        frame = peer.wait_for(lambda f, rid=rid: _response_id(f) == rid)
        lat.append(time.perf_counter_ns() - t0)
        bad += not _check_answer(frame, i)
    stats.update(latencies_ns=lat, bad_answers=bad)


def tools_conc(peer: Peer, server: str, n: int, concurrency: int, stats: dict) -> None:
    lines = [call_line(f"call-{i}", server, i) for i in range(n)]
    sent = done = bad = 0
    t0 = time.perf_counter_ns()
    while sent < min(concurrency, n):
        peer.out.write(lines[sent])
        sent += 1
    peer.out.flush()
    while done < n:
        frame = peer.read()
        if frame is None:
            raise SystemExit(3)
        rid = _response_id(frame)
        if rid is None or not rid.startswith("call-"):
            if frame.get("type") != "control_response":
                peer.handle_other(frame)
            continue
        bad += not _check_answer(frame, int(rid[5:]))
        done += 1
        if sent < n:
            peer.write(lines[sent])
            sent += 1
    stats.update(elapsed_ns=time.perf_counter_ns() - t0, calls=n, bad_answers=bad)


def result_frame(text: str) -> dict:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 139,
        "duration_api_ms": 35,
        "num_turns": 2,
        "result": text,
        "stop_reason": "end_turn",
        "session_id": SESSION_ID,
        "total_cost_usd": 0.00028,
        "usage": {"input_tokens": 20, "output_tokens": 10},
        "modelUsage": {},
        "permission_denials": [],
        "terminal_reason": "completed",
        "uuid": str(uuid.uuid4()),
    }


def state(name: str) -> dict:
    return {
        "type": "system",
        "subtype": "session_state_changed",
        "state": name,
        "sdk_host_only": True,
        "uuid": str(uuid.uuid4()),
        "session_id": SESSION_ID,
    }


def main() -> int:
    spec = json.loads(os.environ.get("BENCH_SPEC") or "{}")
    scenario = spec.get("scenario", "handshake")
    n = int(spec.get("n", 1))
    size = int(spec.get("size", 200))
    peer = Peer()
    stats: dict = {"scenario": scenario}

    init = peer.wait_for(
        lambda f: (
            f.get("type") == "control_request"
            and f.get("request", {}).get("subtype") == "initialize"
        )
    )
    servers = sdk_servers(sys.argv[1:], init["request"])
    server = servers[0] if servers else "bench"

    # Frames known in advance are built now, before the measured part.
    blob = b""
    if scenario == "messages":
        text = filler(size)
        blob = b"".join(assistant_line(text, i) for i in range(n))
    elif scenario == "big":
        blob = assistant_line(filler(size))
    elif scenario == "session":
        text = filler(size)
        blob = b"".join(assistant_line(text, i) for i in range(int(spec.get("messages", 0))))
    stats["blob_bytes"] = len(blob)

    for name in servers:
        peer.mcp(
            name,
            {
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "claude-code", "version": "2.1.330"},
                },
                "jsonrpc": "2.0",
                "id": 0,
            },
        )
    peer.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": init["request_id"],
                "response": {
                    "commands": [],
                    "agents": [],
                    "output_style": "default",
                    "models": [],
                    "pid": os.getpid(),
                    "claude_code_version": "2.1.330",
                    "current_permission_mode": "default",
                    "session_state": "idle",
                    "capabilities": ["interrupt_receipt_v1", "msg_lifecycle_v1"],
                },
            },
        }
    )

    peer.wait_for(lambda f: f.get("type") == "user")
    for name in servers:
        peer.mcp(name, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    peer.send(state("running"))
    for name in servers:
        peer.mcp(name, {"method": "tools/list", "jsonrpc": "2.0", "id": 1})
    peer.send(
        {
            "type": "system",
            "subtype": "init",
            "cwd": os.getcwd(),
            "session_id": SESSION_ID,
            "tools": [f"mcp__{s}__{TOOL}" for s in servers],
            "mcp_servers": [{"name": s, "status": "connected", "source": "sdk"} for s in servers],
            "model": MODEL,
            "permissionMode": "default",
            "claude_code_version": "2.1.330",
            "uuid": str(uuid.uuid4()),
        }
    )

    if scenario == "handshake":
        peer.write(assistant_line("Hello!"))
    elif scenario == "tools_seq":
        tools_seq(peer, server, n, stats)
    elif scenario == "tools_conc":
        tools_conc(peer, server, n, int(spec.get("concurrency", 16)), stats)
    elif scenario in ("messages", "big"):
        t0 = time.perf_counter_ns()
        peer.write(blob)
        stats["write_ns"] = time.perf_counter_ns() - t0
    elif scenario == "session":
        tools_seq(peer, server, n, stats)
        peer.write(blob)
    else:
        sys.stderr.write(f"fake_cli: unknown scenario {scenario!r}\n")
        return 2

    out = spec.get("out")
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(stats, f)
    peer.send(result_frame("done"))
    peer.send(state("idle"))
    while (frame := peer.read()) is not None:  # until the SDK closes stdin
        if frame.get("type") != "control_response":
            peer.handle_other(frame)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
