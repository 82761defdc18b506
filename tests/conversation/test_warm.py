"""Warm starts (`startup`, `prewarm`, `SparePool`) against a small fake CLI run as a real
subprocess (``tests/fixtures/mini_cli.py``, which parks and takes claims like the real
one): the claim and its answer, every fallback to a cold start, the pool's bookkeeping.
The real CLI runs them in ``tests/e2e/test_warm_e2e.py``."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
    AgentDefinition,
    AssistantMessage,
    ClaimOptions,
    ClaimResult,
    ClaudeAgentOptions,
    CLIConnectionError,
    Message,
    OptionsError,
    ResultMessage,
    SessionStateError,
    SparePool,
    TextBlock,
    prewarm,
    startup,
)
from ccwire._conversation.warm import SPARE_ANSWER_SECONDS, claim_for, claimed_options
from tests.fixtures.wrappers import python_wrapper

pytestmark = pytest.mark.anyio

LIMIT = 30
MINI_CLI = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"


@pytest.fixture
def mini(tmp_path: Path) -> Any:
    """``mini(**options)``: options that run the mini CLI (HOME in ``tmp_path/home``)."""
    wrapper = python_wrapper(tmp_path / "claude", MINI_CLI)
    (tmp_path / "home").mkdir()

    def make(**kw: Any) -> ClaudeAgentOptions:
        kw.setdefault("cli_path", str(wrapper))
        env = {"HOME": str(tmp_path / "home"), **kw.pop("env", {})}
        kw.setdefault("initialize_timeout", 20)
        return ClaudeAgentOptions(env=env, **kw)

    return make


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


async def collect(messages: Any) -> list[Message]:
    with anyio.fail_after(LIMIT):
        return [m async for m in messages]


def report(messages: list[Message]) -> dict[str, Any]:
    for m in messages:
        if isinstance(m, AssistantMessage) and isinstance(m.content[0], TextBlock):
            loaded: dict[str, Any] = json.loads(m.content[0].text)
            return loaded
    raise AssertionError(f"no report in {messages}")


def spares_dir(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".claude" / "spares"


# ------------------------------------------------------------------- startup


async def test_startup_then_query(mini: Any, work: Path) -> None:
    with anyio.fail_after(LIMIT):
        warm = await startup(options=mini(cwd=str(work)))
    async with warm:
        assert warm.server_info is not None and "pid" in warm.server_info
        messages = await collect(warm.query("hi"))
        with pytest.raises(SessionStateError, match="only be called once"):
            warm.query("again")
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    assert report(messages)["cwd"] == str(work) and not report(messages)["claimed"]
    assert "--await-claim" not in report(messages)["argv"]


async def test_a_closed_warm_query_is_not_queried(mini: Any) -> None:
    warm = await startup(options=mini(), initialize_timeout=10)
    await warm.close()
    await warm.close()
    with pytest.raises(SessionStateError, match="was closed"):  # not "only be called once"
        warm.query("hi")


# ------------------------------------------------------------------- prewarm


async def test_a_claimed_spare_runs_the_session_in_its_folder(
    mini: Any, work: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(LIMIT):
        spare = await prewarm(options=mini())
    [parking] = list(spares_dir(tmp_path).iterdir())
    assert oct(spares_dir(tmp_path).stat().st_mode & 0o777) == "0o700"
    assert spare.parked and spare.claimed is None
    claim = ClaimOptions(cwd=str(work), model="claude-opus-4-1")
    async with spare:
        messages = await collect(spare.claim("hi", claim))
        with pytest.raises(SessionStateError, match="claimed once"):
            spare.claim("again", claim)
    got = report(messages)
    assert got["cwd"] == str(work) and got["claimed"] and "--await-claim" in got["argv"]
    assert got["model"] == "claude-opus-4-1"  # set right behind the claim
    assert spare.claimed == ClaimResult(
        cwd=str(work),
        session_id="00000000-0000-4000-8000-0000000000c1",
        parked_ms=7,
        sdk_mcp_settled=True,
    )
    assert spare.fallback_reason is None and spare.not_applied == ()
    assert not parking.exists()  # the parking folder goes once the spare has moved
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"


async def test_a_refused_claim_falls_back_to_a_cold_start_and_says_why(
    mini: Any, work: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spare = await prewarm(options=mini(env={"MINI_CLAIM": "refuse"}))
    claim = ClaimOptions(
        cwd=str(work),
        model="claude-opus-4-1",
        env={"CLAUDE_CODE_HOST_SESSION_ID": "host-1", "MINI_REPORT_ENV": "x"},
    )
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        messages = await collect(spare.claim("hi", claim))
    assert spare.fallback_reason == "project_settings_not_claimable: the folder sets env"
    assert spare.claimed is None and not spare.parked
    assert any("starting the session cold" in r.getMessage() for r in caplog.records)
    got = report(messages)  # a cold CLI with the claim's options
    assert got["cwd"] == str(work) and not got["claimed"] and "--await-claim" not in got["argv"]
    assert "--model=claude-opus-4-1" in got["argv"]
    assert list(spares_dir(tmp_path).iterdir()) == []


async def test_a_spare_that_cannot_be_parked_is_a_typed_error(mini: Any, tmp_path: Path) -> None:
    """Its folder under HOME could not be made: prewarm() raised NotADirectoryError."""
    (tmp_path / "file").write_text("")
    with pytest.raises(CLIConnectionError, match="cannot make the spare's folder"):
        await prewarm(options=mini(env={"HOME": str(tmp_path / "file")}))


async def test_claim_falls_back_for_a_missing_folder_and_a_dead_spare(
    mini: Any, work: Path
) -> None:
    spare = await prewarm(options=mini())
    missing = work / "nope"
    with pytest.raises(Exception, match="nope"):  # the cold start cannot run there either
        await collect(spare.claim("hi", ClaimOptions(cwd=str(missing))))
    assert spare.fallback_reason is not None and spare.fallback_reason.startswith("cwd_not_found")

    spare = await prewarm(options=mini())
    assert spare._conn.server_info is not None
    os.kill(spare._conn.server_info["pid"], signal.SIGKILL)
    with anyio.fail_after(LIMIT):
        await spare.wait_exited()
    assert not spare.parked
    messages = await collect(spare.claim("hi", ClaimOptions(cwd=str(work))))
    assert spare.fallback_reason is not None
    assert spare.fallback_reason.startswith("spare_exited")
    assert report(messages)["cwd"] == str(work)


async def test_a_hung_spare_s_claim_is_abandoned_within_a_bound_and_starts_cold(
    mini: Any, work: Path
) -> None:
    spare = await prewarm(options=mini())  # its claim would wait control_timeout (60 s)
    assert spare._conn.server_info is not None
    pid = spare._conn.server_info["pid"]
    os.kill(pid, signal.SIGSTOP)  # hung: it runs, but answers nothing
    try:
        began = anyio.current_time()
        messages = await collect(spare.claim("hi", ClaimOptions(cwd=str(work))))
        took = anyio.current_time() - began
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # killed (SIGTERM waits for a stopped process) and reaped
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert spare.fallback_reason is not None
    assert spare.fallback_reason.startswith("spare_unresponsive")
    assert not report(messages)["claimed"] and report(messages)["cwd"] == str(work)
    assert took < SPARE_ANSWER_SECONDS + 10  # the bound, then a cold start


async def test_a_cold_start_cancelled_while_its_title_is_set_stops_its_cli(
    mini: Any, work: Path
) -> None:
    silent: list[int] = []  # the pid of the cold CLI that leaves rename_session unanswered
    asked = anyio.Event()

    def on_stderr(line: str) -> None:
        if line.startswith("silent: rename_session"):
            silent.append(int(line.split()[-1]))
            asked.set()

    env = {"MINI_CLAIM": "refuse", "MINI_SILENT": "rename_session"}
    spare = await prewarm(options=mini(env=env, stderr=on_stderr))
    async with anyio.create_task_group() as tg:
        tg.start_soon(collect, spare.claim("hi", ClaimOptions(cwd=str(work), title="T")))
        with anyio.fail_after(LIMIT):
            await asked.wait()
        tg.cancel_scope.cancel()
    assert spare.fallback_reason is not None
    with pytest.raises(ProcessLookupError):
        os.kill(silent[0], 0)  # stopped and reaped, not left running


async def test_options_refused_after_the_claim_are_recorded(mini: Any, work: Path) -> None:
    spare = await prewarm(options=mini())
    claim = ClaimOptions(cwd=str(work), model="refuse-me")
    messages = await collect(spare.claim("hi", claim))
    assert spare.claimed is not None and spare.fallback_reason is None
    assert spare.not_applied == ("model: invalid model: refuse-me",)
    assert report(messages)["claimed"]  # the session runs without that option


async def test_a_refused_settings_overlay_stops_the_claim(mini: Any, work: Path) -> None:
    spare = await prewarm(options=mini())
    claim = ClaimOptions(cwd=str(work), settings={"refuse": True, "model": "m"})
    messages = await collect(spare.claim("hi", claim))
    assert spare.fallback_reason == "settings_not_applied: invalid settings: refuse"
    got = report(messages)
    assert not got["claimed"]
    settings = json.loads(got["argv"][got["argv"].index("--settings") + 1])
    assert settings == {"refuse": True, "model": "m"}  # the cold start gets the overlay


async def test_hook_settings_are_refused_before_anything_is_sent(mini: Any) -> None:
    with pytest.raises(ValueError, match="hook settings"):
        ClaimOptions(cwd="/", settings={"disableAllHooks": True})


async def test_claim_client_hands_over_a_connected_client(mini: Any, work: Path) -> None:
    spare = await prewarm(options=mini(), initialize_timeout=10)
    with anyio.fail_after(LIMIT):
        async with spare.claim_client(ClaimOptions(cwd=str(work))) as client:
            assert client.options.cwd == str(work)
            info = await client.get_server_info()  # the claimed session's, over the spare's
            assert info is not None and info["claimed"] and "pid" in info
            assert client.session_id == spare.claimed.session_id  # type: ignore[union-attr]
            for _ in range(2):
                await client.query("hi")
                messages = [m async for m in client.receive_response()]
                assert report(messages)["claimed"]
    with pytest.raises(SessionStateError):
        async with spare.claim_client(ClaimOptions(cwd=str(work))):
            pass


async def test_prewarm_refuses_options_that_describe_a_session(mini: Any) -> None:
    for kw in ({"resume": "abc"}, {"continue_conversation": True}):
        with pytest.raises(ValueError, match="describe a session"):
            await prewarm(options=mini(**kw))


async def test_prewarm_parks_in_a_given_folder_and_leaves_it(mini: Any, tmp_path: Path) -> None:
    park = tmp_path / "park"
    park.mkdir()
    spare = await prewarm(options=mini(cwd=str(park)))
    await spare.close()
    await spare.close()
    assert park.is_dir()
    with pytest.raises(SessionStateError, match="closed"):
        spare.claim("hi", ClaimOptions(cwd=str(park)))


# ---------------------------------------------------------------- the options


def test_claimed_options_is_the_cold_equivalent() -> None:
    base = ClaudeAgentOptions(
        env={"A": "1"},
        add_dirs=["/a"],
        system_prompt={"type": "preset", "preset": "claude_code", "append": "Be brief."},
        agents={"x": AgentDefinition(description="x", prompt="x")},
    )
    claim = ClaimOptions(
        cwd="/w",
        env={"CLAUDE_CODE_HOST_SESSION_ID": "h"},
        additional_directories=["/b"],
        model="m",
        permission_mode="plan",
        max_thinking_tokens=100,
        append_system_prompt="Be kind.",
        agents={"y": AgentDefinition(description="y", prompt="y")},
        settings={"effortLevel": "high"},
    )
    cold = claimed_options(base, claim)
    assert cold.cwd == "/w" and cold.model == "m" and cold.permission_mode == "plan"
    assert cold.env == {"A": "1", "CLAUDE_CODE_HOST_SESSION_ID": "h"}
    assert cold.add_dirs == ["/a", "/b"] and cold.max_thinking_tokens == 100
    assert cold.system_prompt == {
        "type": "preset",
        "preset": "claude_code",
        "append": "Be brief.\n\nBe kind.",
    }
    assert sorted(cold.agents or {}) == ["x", "y"]
    assert isinstance(cold.settings, str)
    assert json.loads(cold.settings) == {"effortLevel": "high"}
    assert claimed_options(ClaudeAgentOptions(), claim).system_prompt == "Be kind."
    blocks = ClaudeAgentOptions(system_prompt=["Static.", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Now."])
    assert claimed_options(blocks, claim).system_prompt == [
        "Static.",
        SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
        "Now.",
        "Be kind.",
    ]


def test_claim_for_says_what_a_claim_can_give() -> None:
    base = ClaudeAgentOptions(model="a", allowed_tools=["Read"])
    assert claim_for(base, replace(base, cwd="/w")) == ClaimOptions(cwd="/w")
    assert claim_for(base, replace(base, cwd="/w", model="b", permission_mode="plan")) == (
        ClaimOptions(cwd="/w", model="b", permission_mode="plan")
    )
    assert claim_for(base, replace(base, allowed_tools=["Bash"])) is None
    assert claim_for(base, replace(base, model=None)) is None  # a claim cannot unset
    assert claim_for(base, replace(base, env={"X": "1"})) is None


# ------------------------------------------------------------------ the pool


async def test_a_pool_starts_sessions_on_spares_and_keeps_them_booted(
    mini: Any, work: Path, tmp_path: Path
) -> None:
    base = mini()
    with anyio.fail_after(LIMIT):
        async with SparePool(base, size=2) as pool:
            for _ in range(3):
                async with pool.client(replace(base, cwd=str(work))) as client:
                    await client.query("hi")
                    assert report([m async for m in client.receive_response()])["claimed"]
            messages = await collect(pool.query("hi", replace(base, cwd=str(work))))
            assert report(messages)["claimed"]
            other = replace(base, cwd=str(work), allowed_tools=["Bash"])  # not claimable
            messages = await collect(pool.query("hi", other))
            assert not report(messages)["claimed"]
            assert (pool.claimed, pool.cold) == (4, 1)
            spare = await pool.take()
            assert spare is not None and spare.parked
            await spare.close()
        assert pool.parked == 0
    assert list(spares_dir(tmp_path).iterdir()) == []  # every parked spare was discarded


async def test_a_pool_replaces_a_dead_spare_and_survives_boot_failures(
    mini: Any, work: Path, tmp_path: Path
) -> None:
    base = mini()
    async with SparePool(base, size=1) as pool:
        spare = await pool.take()
        assert spare is not None
        await spare.close()
        spare = await pool.take()  # the replacement booted meanwhile
        assert spare is not None and spare.parked
        await spare.close()
    broken = replace(base, cli_path=str(tmp_path / "missing-claude"))
    async with SparePool(broken, size=2) as pool:
        with anyio.fail_after(LIMIT):
            assert await pool.take() is None
        assert pool.boot_failures >= 1 and pool.last_error is not None
        with pytest.raises(Exception, match="missing-claude"):
            await collect(pool.query("hi", replace(broken, cwd=str(work))))
        assert pool.cold == 1
    with pytest.raises(ValueError, match="size"):
        SparePool(base, size=0)
    with pytest.raises(ValueError, match="max_start_failures"):
        SparePool(base, max_start_failures=0)
    with pytest.raises(ValueError, match="restart_backoff"):
        SparePool(base, restart_backoff=(2.0, 1.0))
    with pytest.raises(ValueError, match="restart_backoff"):
        SparePool(base, restart_backoff=(1.0,))  # type: ignore[arg-type]
    for interval in (0, -1.0, float("nan"), True):
        with pytest.raises(ValueError, match="check_interval"):
            SparePool(base, check_interval=interval)


def test_a_pool_larger_than_its_cap_or_with_a_bad_timeout_is_refused() -> None:
    """``size=10**9`` was taken: the pool's start then scheduled a billion boots in one
    synchronous loop, which never returned (no timeout can interrupt it)."""
    from ccwire._conversation.spare_pool import MAX_SIZE

    assert SparePool(size=MAX_SIZE).size == MAX_SIZE
    for size in (MAX_SIZE + 1, 10**9):
        with pytest.raises(OptionsError, match=f"at most {MAX_SIZE}, got {size}"):
            SparePool(size=size)
    for timeout in (-1, 0, float("nan")):  # each start failed on it; sessions went cold
        with pytest.raises(OptionsError, match="initialize_timeout"):
            SparePool(initialize_timeout=timeout)


async def test_a_pool_closed_while_it_starts_stops_its_background_task(mini: Any) -> None:
    pool = SparePool(mini(), size=1)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pool.aclose)  # runs while start() waits for the pool's background task
        await pool.start()
    assert "ccwire spare pool" not in [t.name for t in anyio.get_running_tasks()]
    assert await pool.take() is None


async def test_a_session_does_not_wait_for_a_spare_another_session_awaits(mini: Any) -> None:
    got: list[Any] = []
    async with SparePool(mini(), size=1) as pool:

        async def take() -> None:
            got.append(await pool.take())

        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(take)
                tg.start_soon(take)
        spares = [s for s in got if s is not None]
        assert len(spares) == 1 and got.count(None) == 1  # one waits, one starts cold
        await spares[0].close()
