"""File processing with state tracking.

    python examples/state_tracking.py          # offline: a scripted model answers
    python examples/state_tracking.py --live   # the real model (ANTHROPIC_API_KEY)

A ``processor`` server summarizes CSV files. The session is watched through callbacks
(state changes, tool calls and their timings) and its snapshots go to an SQLite store,
which is read back at the end. The two ``summarize`` calls are read-only, so the CLI
runs them at the same time: the session tracks both while they are in flight.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

from ccwire import (
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    SQLiteSnapshotStore,
    StateChanged,
    ToolAnnotations,
    ToolCallFinished,
    ToolCallStarted,
    create_sdk_mcp_server,
    tool,
)

READ_ONLY = ToolAnnotations(read_only_hint=True)


def make_data(directory: Path) -> None:
    """Two small CSV files to process."""
    rows = {
        "sales_q1.csv": [("north", 120), ("south", 80), ("west", 95)],
        "sales_q2.csv": [("north", 140), ("south", 70)],
    }
    for name, data in rows.items():
        with open(directory / name, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["region", "amount"])
            writer.writerows(data)


def processor(directory: Path) -> Any:
    """The in-process server ``processor``: ``list_csv`` and ``summarize``."""

    @tool("list_csv", "List the CSV files to process", {}, READ_ONLY)
    async def list_csv(args: dict[str, Any]) -> dict[str, Any]:
        names = sorted([p.name async for p in anyio.Path(directory).glob("*.csv")])
        return {"content": [{"type": "text", "text": json.dumps(names)}]}

    @tool("summarize", "Row count and total amount of one CSV file", {"name": str}, READ_ONLY)
    async def summarize(args: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep(0.3)  # pretend this is heavy work
        content = await anyio.Path(directory / Path(args["name"]).name).read_text()
        rows = list(csv.DictReader(io.StringIO(content, newline="")))
        total = sum(float(r["amount"]) for r in rows)
        summary = {"file": args["name"], "rows": len(rows), "total": total}
        return {"content": [{"type": "text", "text": json.dumps(summary)}]}

    return create_sdk_mcp_server("processor", tools=[list_csv, summarize])


def script() -> list[Any]:
    """The scripted model: list, summarize both files at once, then report."""
    from ccwire.testing import ModelRequest, StepResult, reply, text, tool_use

    def summarize_all(request: ModelRequest) -> StepResult:
        names = json.loads(request.tool_results()[0].content)
        return reply(*(tool_use("mcp__processor__summarize", {"name": n}) for n in names))

    def report(request: ModelRequest) -> StepResult:
        parts = [json.loads(r.content) for r in request.tool_results()]
        lines = [f"{p['file']}: {p['rows']} rows, total {p['total']:g}" for p in parts]
        return text("Summary report: " + "; ".join(sorted(lines)))

    return [tool_use("mcp__processor__list_csv", {}), summarize_all, report]


@contextlib.contextmanager
def model_env(live: bool) -> Iterator[dict[str, str]]:
    """The CLI's environment: the scripted model offline, nothing special when live."""
    if live:
        yield {}
        return
    from ccwire.testing import ScriptedModel

    with (
        tempfile.TemporaryDirectory(prefix="ccwire-example-") as home,
        ScriptedModel(*script()) as model,
    ):
        print(f"[offline: scripted model at {model.url}; --live for the real model]")
        yield model.env(home)


def on_state(event: StateChanged) -> None:
    print(f"State: {event.from_state.value} -> {event.to_state.value}")
    call = event.info.pending_tool_call
    if event.to_state.value == "waiting_tool_call" and call:
        print(f"  executing tool: {call.tool_name}")


def on_tool_call(event: ToolCallStarted) -> None:
    print(f"  tool call started:  {event.tool_name} {json.dumps(dict(event.arguments))}")


def on_tool_result(event: ToolCallFinished) -> None:
    status = "error" if event.is_error else "ok"
    print(
        f"  tool call finished: {event.tool_name} took {event.duration_s * 1000:.0f} ms ({status})"
    )


async def main(live: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="ccwire-data-") as tmp, model_env(live) as env:
        data = Path(tmp)
        make_data(data)
        store = SQLiteSnapshotStore(data / "sessions.sqlite3")
        options = ClaudeAgentOptions(
            mcp_servers={"processor": processor(data)},
            allowed_tools=["mcp__processor__list_csv", "mcp__processor__summarize"],
            env=env,
            max_turns=8,
        )
        async with ClaudeCodeAgent(options, store=store) as agent:
            session = agent.create_session(
                "Process all CSV files in the data directory and generate a summary report"
            )
            session.on("state_change", on_state)
            session.on("tool_call", on_tool_call)
            session.on("tool_result", on_tool_result)
            await session.start()
            final = await session.wait_for_completion(120)
            await session.close()
        print(f"Final state: {final.state.value}")
        print(f"  result: {final.result}")
        stats = final.stats
        print(f"  tool calls: {stats.tool_call_count}, messages: {stats.message_count}")
        for name, tool_stats in sorted(stats.tools.items()):
            print(
                f"  {name}: {tool_stats.call_count} calls, "
                f"{tool_stats.total_duration_s * 1000:.0f} ms in total"
            )
        saved = await store.load(final.session_id)
        print(f"Stored snapshot: {saved.state.value if saved else 'missing'} ({store.path.name})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real model")
    anyio.run(main, parser.parse_args().live)
