"""A read-only SQL query tool over an SQLite database.

    python examples/sqlite_query.py          # offline: a scripted model answers
    python examples/sqlite_query.py --live   # the real model (ANTHROPIC_API_KEY)

Only ``SELECT`` statements run (and the database is opened read-only as well);
anything else, and every SQL error, comes back to the model as a tool error, so the
model can correct itself instead of the session failing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ccwire import (
    ClaudeAgentOptions,
    ClaudeCodeAgent,
    ToolCallFinished,
    ToolCallStarted,
    create_sdk_mcp_server,
    tool,
)

PROMPT = "Which products cost less than 10, and how many are in stock?"

QUERY_SCHEMA = {
    "type": "object",
    "properties": {
        "sql": {"type": "string", "description": "One SELECT statement"},
        "params": {"type": "array", "description": "Values for the ? placeholders"},
    },
    "required": ["sql"],
}


def make_database(path: Path) -> None:
    """A small shop database to query."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE products (name TEXT, price REAL, stock INTEGER)")
        db.executemany(
            "INSERT INTO products VALUES (?, ?, ?)",
            [("pencil", 1.5, 120), ("notebook", 4.0, 35), ("stapler", 12.5, 8), ("pen", 2.2, 0)],
        )


def query_server(path: Path) -> Any:
    """An in-process MCP server ``database`` with one tool, ``query``."""

    @tool("query", "Execute a read-only SQL query (SELECT only)", QUERY_SCHEMA)
    async def query(args: dict[str, Any]) -> dict[str, Any]:
        sql = str(args.get("sql", ""))
        if not sql.strip().lower().startswith("select"):
            return {
                "content": [{"type": "text", "text": "Only SELECT queries are allowed"}],
                "isError": True,
            }

        def run() -> list[dict[str, Any]]:
            uri = f"{path.as_uri()}?mode=ro"  # read-only at the database level too
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                db.row_factory = sqlite3.Row
                rows = db.execute(sql, list(args.get("params") or [])).fetchall()
                return [dict(row) for row in rows]

        try:
            rows = await anyio.to_thread.run_sync(run)
        except sqlite3.Error as exc:
            return {"content": [{"type": "text", "text": f"Query error: {exc}"}], "isError": True}
        return {"content": [{"type": "text", "text": json.dumps(rows, indent=2)}]}

    return create_sdk_mcp_server("database", tools=[query])


def script() -> list[Any]:
    """The scripted model: a good query, a forbidden one, a broken one, then the answer."""
    from ccwire.testing import ModelRequest, StepResult, text, tool_use

    cheap = "SELECT name, price, stock FROM products WHERE price < ? ORDER BY price"
    seen: list[str] = []

    def after_first(request: ModelRequest) -> StepResult:
        seen.append(request.tool_results()[0].content)
        return tool_use("mcp__db__query", {"sql": "DELETE FROM products"})

    def answer(request: ModelRequest) -> StepResult:
        rows = json.loads(seen[0])
        listing = ", ".join(f"{r['name']} ({r['price']:g}, {r['stock']} in stock)" for r in rows)
        return text(f"Under 10: {listing}.")

    return [
        tool_use("mcp__db__query", {"sql": cheap, "params": [10]}),
        after_first,
        tool_use("mcp__db__query", {"sql": "SELECT nme FROM products"}),
        answer,
    ]


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


async def main(live: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="ccwire-db-") as tmp, model_env(live) as env:
        db_path = Path(tmp) / "app.db"
        make_database(db_path)
        options = ClaudeAgentOptions(
            mcp_servers={"db": query_server(db_path)},
            allowed_tools=["mcp__db__query"],  # pre-approved: no permission prompts
            env=env,
            max_turns=8,
        )
        agent = ClaudeCodeAgent(options, store=False)
        async with agent.session(PROMPT) as session:  # needs no `async with agent`
            session.on("tool_call", print_call)
            session.on("tool_result", print_result)
            info = await session.wait_for_completion(120)
        print(f"answer: {info.result}")
        errors = sum(s.error_count for s in info.stats.tools.values())
        print(f"{info.state.value}: {info.stats.tool_call_count} queries, {errors} refused")
        with contextlib.closing(sqlite3.connect(db_path)) as db:
            count = db.execute("SELECT COUNT(*) FROM products").fetchone()[0]
        print(f"products still in the database: {count}")


def print_call(event: ToolCallStarted) -> None:
    print(f"  query        {event.arguments.get('sql')}")


def print_result(event: ToolCallFinished) -> None:
    content = event.result.get("content", []) if isinstance(event.result, dict) else []
    first = content[0].get("text", "") if content else ""
    label = "tool error" if event.is_error else "rows"
    print(f"  {label:<12} {' '.join(str(first).split())[:100]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real model")
    anyio.run(main, parser.parse_args().live)
