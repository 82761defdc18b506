"""The README's example is the documented one, and it runs: offline, against the real CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ccwire.testing import ScriptedModel, text, tool_use

ROOT = Path(__file__).resolve().parents[1]


def first_python_block(markdown: str) -> str:
    match = re.search(r"```python\n(.*?)```", markdown, re.DOTALL)
    assert match is not None, "no python code block"
    return match.group(1)


README_CODE = first_python_block((ROOT / "README.md").read_text(encoding="utf-8"))


def _cli() -> str | None:
    explicit = os.environ.get("CCWIRE_CLI_PATH")
    if explicit:
        return explicit
    local = ROOT / "node_modules" / ".bin" / "claude"
    return str(local) if local.exists() else None


def test_readme_example_is_the_one_in_the_docs() -> None:
    snippet = (ROOT / "docs" / "snippets" / "readme_greet.py").read_text(encoding="utf-8")
    assert snippet == README_CODE


@pytest.mark.e2e
@pytest.mark.skipif(_cli() is None, reason="Claude Code CLI not installed (run `make cli`)")
def test_readme_example_runs_offline(tmp_path: Path) -> None:
    script = tmp_path / "readme_example.py"
    script.write_text(README_CODE, encoding="utf-8")
    with ScriptedModel(
        tool_use("mcp__demo_tools__greet", {"name": "Alice"}), text("I greeted Alice.")
    ) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(model.env(tmp_path / "home"), CCWIRE_CLI_PATH=str(_cli()))
        (tmp_path / "home").mkdir()
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        model.assert_script_consumed()
        assert model.turn_requests[1].tool_results()[0].content == "Hello, Alice! Welcome."
    assert "ToolUseBlock(id=" in done.stdout and "name='mcp__demo_tools__greet'" in done.stdout
    assert "Hello, Alice! Welcome." in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("ResultMessage(subtype='success'")
