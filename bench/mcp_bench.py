"""``ccwire serve`` vs the official MCP SDK's own server (``MCPServer``), same tools, over stdio.

``python bench/mcp_bench.py [--starts 15] [--calls 400]`` measures, side by side and
interleaved (so both see the same machine load):

* **start to initialized**: from spawning the server process to the ``initialize``
  answer (the request is written at once; the time includes the interpreter start and
  the imports);
* **tools/call round trip**: one ``tools/call`` of ``add`` written, its answer read,
  sequentially, on an initialized server.

Both servers are driven the same way: raw NDJSON over pipes, no client library.  The
results go to ``bench/MCP_RESULTS.md`` and are spliced into ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from report import splice

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HEADING = "## MCP server: `ccwire serve` vs the official SDK's server"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

SERVERS = {
    "ccwire serve": [sys.executable, "-m", "ccwire", "serve", "mcp_bench_servers:ccwire_server"],
    "official MCPServer": [sys.executable, str(HERE / "mcp_bench_servers.py"), "official"],
}


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "src"), str(HERE), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _line(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


class Server:
    def __init__(self, argv: list[str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, cwd=HERE, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def ask(self, message: dict[str, object]) -> dict[str, object]:
        self.stdin.write(_line(message))
        self.stdin.flush()
        while True:
            reply = json.loads(self.stdout.readline())
            if reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_to_initialized(argv: list[str]) -> float:
    server = Server(argv)
    try:
        reply = server.ask(INIT)
        elapsed = time.perf_counter() - server.started
        assert "result" in reply, reply
        return elapsed
    finally:
        server.close()


def call_round_trips(argv: list[str], calls: int) -> list[float]:
    server = Server(argv)
    try:
        server.ask(INIT)
        server.stdin.write(_line(INITIALIZED))
        times: list[float] = []
        for i in range(calls + 20):
            call = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": i, "b": 1}}}  # fmt: skip
            t0 = time.perf_counter()
            reply = server.ask(call)
            if i >= 20:  # warm-up excluded
                times.append(time.perf_counter() - t0)
            result = reply.get("result")
            assert isinstance(result, dict) and not result.get("isError"), reply
        return times
    finally:
        server.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--starts", type=int, default=15)
    p.add_argument("--calls", type=int, default=400)
    args = p.parse_args()
    starts: dict[str, list[float]] = {name: [] for name in SERVERS}
    for _ in range(args.starts):  # interleaved
        for name, argv in SERVERS.items():
            starts[name].append(start_to_initialized(argv))
    calls = {name: call_round_trips(argv, args.calls) for name, argv in SERVERS.items()}
    ccwire, official = "ccwire serve", "official MCPServer"

    def ms(values: list[float], q: float = 0.5) -> float:
        if q == 0.5:
            return statistics.median(values) * 1000
        return statistics.quantiles(values, n=100)[round(q * 100) - 1] * 1000

    rows = [
        ("start to initialized (median)", ms(starts[ccwire]), ms(starts[official])),
        ("tools/call round trip (median)", ms(calls[ccwire]), ms(calls[official])),
        ("tools/call round trip (p90)", ms(calls[ccwire], 0.9), ms(calls[official], 0.9)),
    ]
    lines = [
        HEADING, "",
        f"`python bench/mcp_bench.py --starts {args.starts} --calls {args.calls}` "
        f"(mcp {version('mcp')}, Python {sys.version.split()[0]}): the same two tools served "
        "over stdio by `ccwire serve` and by the official SDK's `MCPServer`, driven by raw "
        "NDJSON over pipes, runs interleaved. Lower is better.", "",
        "| measure | ccwire serve | official MCPServer | ccwire / official |",
        "|---|---|---|---|",
    ]  # fmt: skip
    for label, mine, theirs in rows:
        lines.append(f"| {label} | {mine:.2f} ms | {theirs:.2f} ms | {mine / theirs:.2f}x |")
    section = "\n".join(lines) + "\n"
    (HERE / "MCP_RESULTS.md").write_text(section)
    results = HERE / "RESULTS.md"
    results.write_text(splice(results.read_text()))
    print(section)


if __name__ == "__main__":
    main()
