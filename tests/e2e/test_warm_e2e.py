"""Warm starts with the real CLI and the scripted model: `startup()`, a spare parked with
``--await-claim`` and claimed with ``claim_session`` (the protocol of the TypeScript SDK
for this CLI), a claim the CLI refuses, and a pool of spares: what it does when spares
die parked, fail to start, or no longer fit (options, environment, executable changed),
and how it closes."""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from ccwire import (
    ClaimOptions,
    ClaudeAgentOptions,
    Message,
    ProcessError,
    ResultMessage,
    SessionStateError,
    SparePool,
    SpareStartError,
    SystemMessage,
    prewarm,
    startup,
)
from ccwire._conversation.warm import SPARE_ANSWER_SECONDS
from ccwire.testing import ScriptedModel, text, tool_use
from tests.e2e.conftest import CLI_PATH

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


async def until(pool: SparePool, condition: Callable[[], bool]) -> None:
    """Wait (bounded) until ``condition()`` holds, woken by each change of the pool."""
    with anyio.fail_after(TIMEOUT):
        while not condition():
            await pool.changed()


def parked_clis() -> list[psutil.Process]:
    """This process's descendants that are spare CLIs (started with --await-claim)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "--await-claim" in child.cmdline():
                found.append(child)
        except psutil.NoSuchProcess:
            pass
    return found


_OLDER: set[int] = set()  # the descendants there were when the running test began


@pytest.fixture(autouse=True)
def _older_descendants() -> None:
    """Note the processes already running for other tests (a session-wide fixture's
    Redis server...): `descendants` leaves them out."""
    _OLDER.clear()
    _OLDER.update(p.pid for p in psutil.Process().children(recursive=True))


def descendants() -> list[psutil.Process]:
    """This process's descendants started since the running test began, zombies
    included (an unreaped CLI is one)."""
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in _OLDER]


def wrapper(path: Path, before: str = "") -> str:
    """A CLI executable at ``path``: runs the shell text ``before``, then the real CLI."""
    path.write_text(f'#!/bin/sh\n{before}\nexec {shlex.quote(str(CLI_PATH))} "$@"\n')
    path.chmod(0o755)
    return str(path)


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


async def test_a_spare_that_dies_parked_is_reaped_and_replaced_at_once(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("on the replacement"), text("raced"))
    options = make_options()
    async with SparePool(spare_options(options), size=1, restart_backoff=(0.0, 0.0)) as pool:
        await until(pool, lambda: pool.parked == 1)
        [cli] = parked_clis()
        cli.kill()  # killed, out of memory, crashed: no session is waiting for it
        await until(pool, lambda: pool.restarts == 1 and pool.parked == 1)
        assert not psutil.pid_exists(cli.pid)  # reaped, not left a zombie
        assert pool.failed == 1  # it died soon after it parked: a failed start
        [replacement] = parked_clis()
        assert replacement.pid != cli.pid
        with anyio.fail_after(TIMEOUT):
            async with pool.client(options) as client:
                await client.query("hi")
                messages = [m async for m in client.receive_response()]
        assert isinstance(messages[-1], ResultMessage)
        assert messages[-1].result == "on the replacement"
        assert (pool.claimed, pool.cold, pool.failed) == (1, 0, 0)
        await until(pool, lambda: pool.parked == 1)
        [cli] = parked_clis()
        cli.kill()  # and a session comes at once, before the pool can see it
        messages = await collect(pool.query("hi", options))
        assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "raced"
        assert (pool.claimed, pool.cold, pool.restarts) == (2, 0, 2)  # on a live spare


@contextmanager
def stopped(cli: psutil.Process) -> Iterator[None]:
    """``cli`` stopped (SIGSTOP: it is hung, not gone) for the block; killed after it
    if it was left running (SIGKILL ends a stopped process too)."""
    cli.suspend()
    try:
        yield
    finally:
        with suppress(psutil.NoSuchProcess):
            cli.kill()


async def test_a_spare_that_hangs_parked_costs_a_session_seconds_and_is_replaced(
    model: ScriptedModel, make_options: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model.add(text("not kept waiting"))
    options = make_options()  # claims wait for their answer for control_timeout (60 s)
    async with SparePool(spare_options(options), size=1, restart_backoff=(0.0, 0.0)) as pool:
        await until(pool, lambda: pool.parked == 1)
        [cli] = parked_clis()
        with stopped(cli), caplog.at_level(logging.WARNING, logger="ccwire"):
            began = anyio.current_time()
            messages = await collect(pool.query("hi", options))  # before the pool can see it
            took = anyio.current_time() - began
            assert not psutil.pid_exists(cli.pid)  # killed and reaped as the session started
        assert isinstance(messages[-1], ResultMessage)
        assert messages[-1].result == "not kept waiting"
        assert took < SPARE_ANSWER_SECONDS + 20  # the bound, then a start: not 60 s
        assert (pool.claimed, pool.unresponsive, pool.restarts) == (1, 1, 1)  # on a new spare
        assert "did not answer" in caplog.text
        await until(pool, lambda: pool.parked == 1)  # and the pool refills


async def test_parked_spares_are_checked_and_one_that_hangs_is_replaced(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("on the replacement"))
    options = make_options()
    async with SparePool(
        spare_options(options), size=2, check_interval=0.2, restart_backoff=(0.0, 0.0)
    ) as pool:
        await until(pool, lambda: pool.parked == 2)
        hung, healthy = parked_clis()
        with stopped(hung):  # no session comes: the pool finds it by itself
            await until(pool, lambda: pool.unresponsive == 1 and pool.parked == 2)
            assert not psutil.pid_exists(hung.pid)  # killed and reaped
        assert pool.restarts == 1 and healthy.is_running()  # the other one answered
        assert hung.pid not in [p.pid for p in parked_clis()]
        messages = await collect(pool.query("hi", options))
        assert isinstance(messages[-1], ResultMessage)
        assert messages[-1].result == "on the replacement"
        assert (pool.claimed, pool.cold, pool.unresponsive) == (1, 0, 1)


async def test_a_cli_that_fails_every_start_stops_the_pool_until_one_starts(
    model: ScriptedModel, make_options: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model.add(text("well again"))
    broken, starts = tmp_path / "broken", tmp_path / "starts"
    broken.touch()
    cli = wrapper(
        tmp_path / "claude",
        f"echo start >> {starts}\n"
        f"if [ -e {broken} ]; then echo 'boom: out of cheese' >&2; exit 3; fi",
    )
    options = make_options(cli_path=cli)
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        async with SparePool(
            spare_options(options), size=2, max_start_failures=3, restart_backoff=(0.0, 0.0)
        ) as pool:
            await until(pool, lambda: pool.stopped and pool.starting == 0)
            error = pool.last_error
            assert isinstance(error, SpareStartError) and error.failures >= 3
            assert error.stderr is not None and "out of cheese" in error.stderr
            assert "out of cheese" in str(error)
            tried = starts.read_text().count("start")
            assert 3 <= tried <= 4  # two at once, then one more each: no loop
            assert pool.parked == 0 and pool.boot_failures == tried
            with pytest.raises(ProcessError, match="out of cheese"):
                await collect(pool.query("hi", options))  # cold: the CLI's own error
            assert "spare CLIs in a row failed to start" in caplog.text
            await until(pool, lambda: pool.starting == 0)  # the start that session tried
            assert pool.stopped
            broken.unlink()  # the CLI works again
            messages = await collect(pool.query("hi", options))  # on the spare it tries
            assert isinstance(messages[-1], ResultMessage)
            assert messages[-1].result == "well again"
            await until(pool, lambda: not pool.stopped and pool.parked == 2)
            assert (pool.claimed, pool.cold, pool.failed) == (1, 1, 0)


async def test_a_spare_started_with_other_options_env_or_cli_is_not_handed_out(
    model: ScriptedModel, make_options: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    echo = "echo probe=$CCWIRE_PROBE os=$CCWIRE_PROBE_OS cli=$CCWIRE_PROBE_CLI"
    for _ in range(3):
        model.add(tool_use("Bash", {"command": echo}), text("done"))
    cli = tmp_path / "claude"
    options = make_options(cli_path=wrapper(cli), allowed_tools=["Bash"])
    async with SparePool(spare_options(options), size=1) as pool:
        session = replace(pool.options, cwd=options.cwd)
        await until(pool, lambda: pool.parked == 1)
        pool.options.env["CCWIRE_PROBE"] = "changed"  # in place: session's options too
        await collect(pool.query("go", session))
        await until(pool, lambda: pool.parked == 1)
        monkeypatch.setenv("CCWIRE_PROBE_OS", "changed")  # the CLI inherits it
        await collect(pool.query("go", session))
        await until(pool, lambda: pool.parked == 1)
        wrapper(cli, "export CCWIRE_PROBE_CLI=changed")  # the CLI upgraded on disk
        await collect(pool.query("go", session))
        assert pool.discarded == 3
    outputs = [r.content for req in model.turn_requests for r in req.tool_results()]
    assert outputs == [
        "probe=changed os= cli=",
        "probe=changed os=changed cli=",
        "probe=changed os=changed cli=changed",
    ]


async def test_sessions_racing_the_pool_s_close_get_a_cli_or_an_error_and_none_is_left(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(*(text("hello") for _ in range(8)))
    options = make_options()
    pool = SparePool(spare_options(options), size=2)
    outcomes: list[str] = []

    async def session() -> None:
        try:
            messages = await collect(pool.query("hi", options))
        except SessionStateError:
            outcomes.append("closed")
        else:
            assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "hello"
            outcomes.append("ran")

    with anyio.fail_after(TIMEOUT):
        await until(pool, lambda: pool.parked == 2)
        async with anyio.create_task_group() as tg:
            for _ in range(5):  # more than the pool holds: two on spares, the rest cold
                tg.start_soon(session)
            await until(pool, lambda: pool.claimed + pool.cold == 5)
            tg.start_soon(session)  # takes a spare, or waits for one as the pool closes
            await pool.aclose()
    assert len(outcomes) == 6 and outcomes.count("ran") >= 5
    assert pool.claimed >= 2  # the others waited for a spare booting, or started cold
    assert descendants() == []  # every CLI, parked, booting or in a session, is reaped
    with pytest.raises(SessionStateError, match="closed"):
        await collect(pool.query("hi", options))
