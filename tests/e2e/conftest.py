"""End-to-end fixtures: the real Claude Code CLI against the scripted model."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ccwire import ClaudeAgentOptions
from ccwire.testing import ScriptedModel


def _find_cli() -> str | None:
    explicit = os.environ.get("CCWIRE_CLI_PATH")
    if explicit:
        return explicit
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "node_modules" / ".bin" / "claude"
        if candidate.exists():
            return str(candidate)
    return None


CLI_PATH = _find_cli()

NEW_CLI = (2, 1, 330)
"""The CLI version ccwire is built against; the matrix also runs CLI 2.1.197."""


@cache
def cli_version() -> tuple[int, ...]:
    """The version of the CLI under test, from ``claude --version`` (() if none)."""
    if CLI_PATH is None:
        return ()
    out = subprocess.run(
        [CLI_PATH, "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    found = re.match(r"\s*(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in found.groups()) if found else ()


def old_cli() -> bool:
    """True when the CLI under test is older than :data:`NEW_CLI` (the matrix's 2.1.197)."""
    return bool(cli_version()) and cli_version() < NEW_CLI


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.e2e)
            if CLI_PATH is None:
                item.add_marker(
                    pytest.mark.skip(reason="Claude Code CLI not installed (run `make cli`)")
                )


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    """A running scripted model; the test adds its replies."""
    with ScriptedModel() as m:
        yield m


@pytest.fixture
def make_options(model: ScriptedModel, tmp_path: Path) -> Any:
    """Build options that run the real CLI offline against ``model``."""
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "work"
    cwd.mkdir()

    def make(**kwargs: Any) -> ClaudeAgentOptions:
        kwargs.setdefault("cli_path", CLI_PATH)
        kwargs.setdefault("cwd", str(cwd))
        env = dict(model.env(str(home)))
        env.update(kwargs.pop("env", {}))
        return ClaudeAgentOptions(env=env, **kwargs)

    return make
