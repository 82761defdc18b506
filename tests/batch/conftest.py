"""Batch test fixtures: the real CLI (skipped like the e2e suite when it is missing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import CLI_PATH

BATCH_DIR = Path(__file__).parent
REAL_CLI_MODULES = ("test_batch_cli_e2e", "test_batch_e2e", "test_batch_ray", "test_batch_budget")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath).replace(os.sep, "/")
        if "tests/batch/" in path and Path(path).stem in REAL_CLI_MODULES:
            item.add_marker(pytest.mark.e2e)
            if CLI_PATH is None:
                item.add_marker(
                    pytest.mark.skip(reason="Claude Code CLI not installed (run `make cli`)")
                )


@pytest.fixture
def cli_path() -> str:
    """The real Claude Code CLI."""
    assert CLI_PATH is not None
    return CLI_PATH
