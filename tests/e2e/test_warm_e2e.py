"""Warm starts with the real CLI and the scripted model: `startup()`, a spare parked with
``--await-claim`` and claimed with ``claim_session`` (the protocol of the TypeScript SDK
for this CLI), a claim the CLI refuses, and a pool of spares."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaimOptions,
    ClaudeAgentOptions,
    Message,
    ResultMessage,
    SparePool,
    SystemMessage,
    prewarm,
    startup,
)
from ccwire.testing import ScriptedModel, text, tool_use

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def collect(messages: Any) -> list[Message]:
    with anyio.fail_after(TIMEOUT):
        return [m async for m in messages]


def init_cwd(messages: list[Message]) -> str:
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    return str(init.data["cwd"])


def spare_options(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    """The host-level half of ``options``: no folder (the spare parks under HOME)."""
    return replace(options, cwd=None)


async def test_startup_then_query(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("warm hello"))
    options = make_options()
    with anyio.fail_after(TIMEOUT):
        warm = await startup(options=options)
    async with warm:
        messages = await collect(warm.query("hi"))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "warm hello"
    assert init_cwd(messages) == str(options.cwd)


async def test_a_claimed_spare_works_in_the_claimed_folder(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    model.add(tool_use("Bash", {"command": "pwd; echo made > made.txt"}), text("done"))
    options = make_options(allowed_tools=["Bash"])
    with anyio.fail_after(TIMEOUT):
        spare = await prewarm(options=spare_options(options))
    parking = list((tmp_path / "home" / ".claude" / "spares").iterdir())
    assert len(parking) == 1
    async with spare:
        messages = await collect(spare.claim("go", ClaimOptions(cwd=str(options.cwd))))
    assert spare.fallback_reason is None
    assert spare.claimed is not None and spare.claimed.cwd == str(options.cwd)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert spare.claimed.session_id == messages[-1].session_id
    assert init_cwd(messages) == str(options.cwd)
    assert (Path(str(options.cwd)) / "made.txt").read_text() == "made\n"
    assert str(options.cwd) in model.turn_requests[1].tool_results()[0].content
    assert not parking[0].exists()


async def test_a_claim_the_cli_refuses_starts_cold(
    model: ScriptedModel, make_options: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model.add(text("cold hello"))
    options = make_options()
    spare = await prewarm(options=spare_options(options))
    claim = ClaimOptions(cwd=str(options.cwd), env={"SOME_STARTUP_VARIABLE": "1"})
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        messages = await collect(spare.claim("hi", claim))
    assert spare.fallback_reason is not None
    assert spare.fallback_reason.startswith("env_key_not_claimable")
    assert "SOME_STARTUP_VARIABLE" in caplog.text
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "cold hello"
    assert init_cwd(messages) == str(options.cwd)


async def test_a_pool_of_spares(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("one"), text("two"))
    options = make_options()
    async with SparePool(spare_options(options), size=1) as pool:
        for expected in ("one", "two"):
            with anyio.fail_after(TIMEOUT):
                async with pool.client(options) as client:
                    await client.query("hi")
                    messages = [m async for m in client.receive_response()]
            assert isinstance(messages[-1], ResultMessage) and messages[-1].result == expected
            assert init_cwd(messages) == str(options.cwd)
        assert (pool.claimed, pool.cold) == (2, 0)
