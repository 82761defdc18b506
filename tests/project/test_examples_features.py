"""Every feature example runs offline, against the real CLI, and says what it should."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.fixtures.examples import MARKS, ROOT, run_example as _run

pytestmark = MARKS


def run_example(*args: str) -> str:
    """Run ``python examples/<args>`` offline from the project root; return its stdout."""
    return _run(*args, banner="[offline: a scripted model plays Claude")


def test_greet() -> None:
    out = run_example("examples/greet.py")
    assert "init         tools from our server: ['mcp__demo_tools__greet']" in out
    assert "tool call    mcp__demo_tools__greet {'name': 'Alice'}" in out
    assert "permission   allow mcp__demo_tools__greet {'name': 'Alice'}" in out
    assert "tool result  [{'type': 'text', 'text': 'Hello, Alice! Welcome.'}]" in out
    assert "result       success, 2 turns" in out


def test_permissions() -> None:
    out = run_example("examples/permissions.py")
    assert (
        "policy       allow  mcp__files__write_file, path rewritten to 'sandbox/notes.txt'" in out
    )
    assert "tool refused Deleting files outside sandbox/ is not allowed." in out
    assert "files now    {'notes.txt': 'buy milk', 'sandbox/notes.txt': 'buy oat milk'}" in out


def test_hooks() -> None:
    out = run_example("examples/hooks.py")
    assert "hook         UserPromptSubmit: 'List the files, then clean everything up.'" in out
    assert "hook         PreToolUse: blocked 'rm -rf /'" in out
    assert "hook         PostToolUse: mcp__shell__run -> [{'type': 'text'" in out
    assert "denied       ['mcp__shell__run']" in out
    assert out.rstrip().endswith("commands run ['ls']")


def test_structured_output() -> None:
    out = run_example("examples/structured_output.py")
    assert "structured   {'city': 'Tokyo', 'country': 'Japan', 'population_millions': 37.4}" in out
    assert "answer       Tokyo, Japan: 37.4 million people" in out


def test_progress() -> None:
    out = run_example("examples/progress.py")
    lines = [line for line in out.splitlines() if line.startswith("progress")]
    assert len(lines) == 4 and lines[-1].startswith("progress     4/4 indexed faq.md (token ")
    assert all(line.endswith(", acknowledged by the CLI)") for line in lines)
    assert "assistant    All 4 documents are indexed." in out


def test_live_tool_sets() -> None:
    out = run_example("examples/live_tool_sets.py")
    assert "tools before ['unlock']" in out
    assert "model sees   ['mcp__shop__report', 'mcp__shop__unlock']" in out
    assert "tool result  Q3 sales: 1,204 units" in out
    assert "tools after  ['report', 'unlock']" in out


def test_my_agent_tests_pass_outside_the_repository(tmp_path: Path) -> None:
    """As a user runs them: in a project of their own, so the fixtures come from the
    plugin's entry point (not this repository's conftest), both documented ways."""
    shutil.copy(ROOT / "examples" / "test_my_agent.py", tmp_path)
    for argv in (["-m", "pytest", "-q", "-p", "no:cacheprovider"], []):
        out = _run(*argv, "test_my_agent.py", banner=" passed", cwd=tmp_path)
        assert "warning" not in out and "failed" not in out, out


def test_sessions_with_events() -> None:
    out = run_example("examples/sessions_with_events.py")
    assert "state        idle -> starting" in out
    assert "state        running -> waiting_tool_call" in out
    assert "tool call    mcp__calc__add {'a': 15, 'b': 27}" in out
    assert "tool result  mcp__calc__multiply took " in out
    assert "complete     completed: 15 + 27 = 42." in out
    assert "complete     completed: 42 * 2 = 84." in out
    assert "final        completed, 2 turns, 2 tool calls" in out
