"""The watched-session examples run offline (real CLI, scripted model), as they should."""

from __future__ import annotations

from tests.fixtures.examples import EXAMPLES, MARKS, run_example as _run

pytestmark = MARKS


def run_example(name: str) -> str:
    return _run(str(EXAMPLES / name), banner="offline: scripted model")


def test_calculator_example() -> None:
    out = run_example("calculator.py")
    assert "tool call    mcp__calc__add {'a': 100, 'b': 50}" in out
    assert "tool result  100 + 50 = 150" in out
    assert "tool result  150 - 25 = 125" in out
    assert "result       '100 + 50 = 150, and 150 - 25 = 125.' (success)" in out
    assert "session completed: 2 tool calls" in out


def test_sqlite_query_example() -> None:
    out = run_example("sqlite_query.py")
    assert "tool error   Only SELECT queries are allowed" in out
    assert "tool error   Query error: no such column: nme" in out
    assert "answer: Under 10: pencil (1.5, 120 in stock), pen (2.2, 0 in stock)" in out
    assert "completed: 3 queries, 2 refused" in out
    assert "products still in the database: 4" in out  # the DELETE never ran


def test_state_tracking_example() -> None:
    out = run_example("state_tracking.py")
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


def test_official_mcp_server_example() -> None:
    out = run_example("official_mcp_server.py")
    assert "tool call    mcp__weather__forecast {'city': 'Oslo', 'days': 2}" in out
    assert "Oslo: sunny for 2 day(s)" in out
    assert "result       success, 2 turns" in out
