"""The watched-session examples run offline (real CLI, scripted model), as they should."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
import venv
from pathlib import Path

import pytest

from tests.fixtures.examples import CLI, EXAMPLES, MARKS, ROOT, run_example as _run

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


def test_official_mcp_server_example_without_mcp_says_what_to_install() -> None:
    """Run without the `[mcp]` extra it said so in two chained tracebacks."""
    blocked = "import runpy, sys; sys.modules['mcp'] = None; runpy.run_path(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", blocked, str(EXAMPLES / "official_mcp_server.py")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "this example needs the official mcp package: pip install 'ccwire[mcp]'\n"


def test_my_agent_example_without_pytest_says_what_to_install() -> None:
    """`python examples/test_my_agent.py` in the venv `make demo` makes (no pytest) ended
    in a ModuleNotFoundError traceback."""
    blocked = "import runpy, sys; sys.modules['pytest'] = None; runpy.run_path(sys.argv[1])"
    done = subprocess.run(
        [sys.executable, "-c", blocked, str(EXAMPLES / "test_my_agent.py")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "this example runs its tests with pytest: pip install pytest\n"


def test_official_mcp_server_example_on_mcp_1(tmp_path: Path) -> None:
    """The `[mcp]` extra allows mcp 1.x (`mcp>=1.20`), whose server class is `FastMCP`:
    the example runs there too, in a venv of its own with the newest mcp 1.x."""
    try:
        urllib.request.urlopen("https://pypi.org/simple/mcp/", timeout=15).close()
    except OSError as exc:
        pytest.skip(f"PyPI is unreachable ({exc}): mcp 1.x cannot be installed")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", str(ROOT), "mcp>=1.20,<2"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    version = subprocess.run(
        [python, "-c", "from importlib.metadata import version; print(version('mcp'))"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert version.startswith("1."), version
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["CCWIRE_CLI_PATH"] = str(CLI)
    done = subprocess.run(
        [python, str(EXAMPLES / "official_mcp_server.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "Oslo: sunny for 2 day(s)" in done.stdout
    assert "result       success, 2 turns" in done.stdout
