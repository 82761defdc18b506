"""The seed 004 examples run offline (real CLI, scripted model) and print what they should."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccwire import CLINotFoundError
from ccwire._discovery import find_cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _cli() -> str | None:
    try:
        return find_cli(cwd=ROOT)
    except CLINotFoundError:
        return None


CLI = _cli()

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLI is None, reason="Claude Code CLI not installed (run `make cli`)"),
]


def run_example(name: str) -> str:
    assert CLI is not None
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["CCWIRE_CLI_PATH"] = CLI
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "offline: scripted model" in done.stdout
    return done.stdout


def test_calculator_example() -> None:
    out = run_example("seed004_calculator.py")
    assert "tool call    mcp__calc__add {'a': 100, 'b': 50}" in out
    assert "tool result  100 + 50 = 150" in out
    assert "tool result  150 - 25 = 125" in out
    assert "result       '100 + 50 = 150, and 150 - 25 = 125.' (success)" in out
    assert "session completed: 2 tool calls" in out


def test_sqlite_query_example() -> None:
    out = run_example("seed004_sqlite_query.py")
    assert "tool error   Only SELECT queries are allowed" in out
    assert "tool error   Query error: no such column: nme" in out
    assert "answer: Under 10: pencil (1.5, 120 in stock), pen (2.2, 0 in stock)" in out
    assert "completed: 3 queries, 2 refused" in out
    assert "products still in the database: 4" in out  # the DELETE never ran


def test_state_tracking_example() -> None:
    out = run_example("seed004_state_tracking.py")
    states = [
        line.removeprefix("State: ") for line in out.splitlines() if line.startswith("State:")
    ]
    assert states == [
        "idle -> starting",
        "starting -> running",
        "running -> waiting_tool_call",
        "waiting_tool_call -> running",
        "running -> waiting_tool_call",
        "waiting_tool_call -> running",
        "running -> completed",
    ]
    assert out.count("tool call finished: mcp__processor__summarize") == 2
    assert "Final state: completed" in out
    assert "sales_q1.csv: 3 rows, total 295; sales_q2.csv: 2 rows, total 210" in out
    assert "tool calls: 3" in out and "mcp__processor__summarize: 2 calls" in out
    assert "Stored snapshot: completed (sessions.sqlite3)" in out
