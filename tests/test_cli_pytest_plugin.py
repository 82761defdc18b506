"""The pytest plugin of `ccwire.testing` without a Claude Code CLI: its fixtures skip with
one reason that names the install command (a pytest run in a subprocess, with `PATH` and
`CCWIRE_CLI_PATH` pointing nowhere)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ccwire._transport.discovery import INSTALL_COMMAND

USER_TESTS = """
def test_with_the_model(scripted_model):
    raise AssertionError("must not run without a CLI")

def test_with_the_env(offline_env):
    raise AssertionError("must not run without a CLI")
"""


def test_fixtures_skip_without_a_cli(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    env = {k: v for k, v in os.environ.items() if k != "CCWIRE_CLI_PATH"}
    env.update(PATH=str(tmp_path / "bin"), HOME=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "test_user.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout, done.stdout
    reasons = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(reasons) == 2, done.stdout
    for line in reasons:
        assert f"Claude Code CLI not found: install it with `{INSTALL_COMMAND}`" in line, line
        assert "CCWIRE_CLI_PATH" in line
