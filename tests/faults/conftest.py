"""Fixtures of the fault suite: the fault CLI as ``cli_path``, and the leak checks.

Every fault test ends with :func:`assert_clean`: no child process of this test process
is left running or unreaped (checked with psutil), and no task outlives the session
(``anyio.get_running_tasks()``: every asyncio task / every task of the trio run).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ccwire import ClaudeAgentOptions
from tests.fixtures.wrappers import python_wrapper

FAULT_CLI = Path(__file__).with_name("fault_cli.py")
FaultOptions = Callable[..., ClaudeAgentOptions]


@pytest.fixture
def fault_options(tmp_path: Path) -> FaultOptions:
    """``fault_options(scenario, arg="", **options)``: options running the fault CLI."""
    wrapper = python_wrapper(tmp_path / "claude", FAULT_CLI)

    def make(scenario: str, arg: object = "", **kw: Any) -> ClaudeAgentOptions:
        env = {"FAULT_SCENARIO": scenario, "FAULT_ARG": str(arg), **kw.pop("env", {})}
        kw.setdefault("initialize_timeout", 10)
        kw.setdefault("control_timeout", 10)
        return ClaudeAgentOptions(cli_path=str(wrapper), cwd=str(tmp_path), env=env, **kw)

    return make


def _leftover_children() -> list[str]:
    bad = []
    for child in psutil.Process().children(recursive=True):
        try:
            status = child.status()
            cmdline = " ".join(child.cmdline()) if status != psutil.STATUS_ZOMBIE else ""
        except psutil.NoSuchProcess:
            continue
        if status == psutil.STATUS_ZOMBIE or str(FAULT_CLI) in cmdline:
            bad.append(f"pid {child.pid} ({status}) {cmdline[:80]}")
    return bad


def _tasks() -> dict[int, str]:
    return {t.id: f"{t.name} ({t.coro!r})" for t in anyio.get_running_tasks()}


@asynccontextmanager
async def no_leaks() -> AsyncIterator[None]:
    """Assert that the block leaves no child process and no task behind."""
    before = _tasks()
    earlier = set(_leftover_children())  # another test's failure is not this block's
    yield
    leaked = [name for tid, name in _tasks().items() if tid not in before]
    assert not leaked, f"tasks outlived the session: {leaked}"
    left = [child for child in _leftover_children() if child not in earlier]
    assert not left, f"child processes left behind: {left}"
