"""Output nobody reads does not grow memory: ccwire stops reading the CLI's stdout
once ``max_buffered_bytes`` of messages wait for the user, the pipe fills up and the
CLI waits on its own write. Reading again lets it go on, and nothing is lost.

The fault CLI streams 640 MiB (640 assistant messages of 1 MiB) as fast as the pipe
takes them, and records how many it has written: over twice the memory the test lets
the process grow by, so a reader that kept what it read (or a reader that did not
stop) would pass the limit.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import psutil
import pytest

from ccwire import AssistantMessage, ClaudeSDKClient, ResultMessage, TextBlock

from .conftest import FAULT_CLI, FaultOptions, no_leaks

pytestmark = pytest.mark.anyio

MESSAGES = 640  # of 1 MiB: 640 MiB in all, over twice RSS_LIMIT
BUDGET = 32 * 1024 * 1024  # the default max_buffered_bytes
RSS_LIMIT = 300 * 1024 * 1024
assert MESSAGES * (1 << 20) > 2 * RSS_LIMIT


def _rss() -> int:
    return int(psutil.Process().memory_info().rss)


def _the_cli() -> psutil.Process:
    for child in psutil.Process().children(recursive=True):
        if str(FAULT_CLI) in " ".join(child.cmdline()):
            return child
    raise AssertionError("the fault CLI is not running")


def _blocked_writing(cli: psutil.Process) -> bool:
    """Whether the CLI sleeps in a write to a full pipe (Linux reports it in wchan)."""
    try:
        return "pipe_write" in Path(f"/proc/{cli.pid}/wchan").read_text()
    except OSError:
        return False


def _written(progress: Path) -> int:
    return int(progress.read_text() or 0) if progress.exists() else 0


async def _wait_until_stuck(progress: Path) -> int:
    """Wait until the CLI stays stuck on a full pipe (blocked in a write, no progress,
    over 25 looks at the kernel's view of it); returns how much it has written."""
    cli = _the_cli()
    seen, still = -1, 0
    while still < 25:
        await anyio.sleep(0.02)  # polling the process's state, not a delay
        now = _written(progress)
        still = still + 1 if _blocked_writing(cli) and now == seen else 0
        seen = now
    return seen


async def test_output_nobody_reads_stays_bounded_and_is_read_in_full(
    fault_options: FaultOptions, tmp_path: Path
) -> None:
    progress = tmp_path / "progress"
    options = fault_options("flood", MESSAGES, env={"FAULT_PROGRESS": str(progress)})
    assert options.max_buffered_bytes == BUDGET
    start_rss = _rss()
    peak = start_rss
    numbers: list[int] = []
    async with no_leaks():
        with anyio.fail_after(120):
            async with ClaudeSDKClient(options) as client:
                await client.query("flood me")
                # nobody reads: the CLI gets as far as our budget plus a pipe's worth
                written = await _wait_until_stuck(progress)
                assert written * (1 << 20) <= BUDGET + 4 * (1 << 20), written
                peak = max(peak, _rss())
                assert peak - start_rss < RSS_LIMIT, (peak - start_rss) >> 20
                async for message in client.receive_response():
                    if isinstance(message, AssistantMessage):
                        block = message.content[0]
                        assert isinstance(block, TextBlock)
                        numbers.append(int(block.text.split(":", 1)[0]))
                        if len(numbers) % 64 == 0:
                            peak = max(peak, _rss())
                    else:
                        assert isinstance(message, ResultMessage)
                    del message
    assert numbers == list(range(MESSAGES))  # all 640 MiB arrived, in order
    assert peak - start_rss < RSS_LIMIT, (peak - start_rss) >> 20


async def test_without_a_budget_a_reader_that_keeps_up_gets_everything(
    fault_options: FaultOptions, tmp_path: Path
) -> None:
    options = fault_options("flood", 64, max_buffered_bytes=None)
    count = 0
    async with no_leaks():
        with anyio.fail_after(60):
            async with ClaudeSDKClient(options) as client:
                await client.query("flood me")
                async for message in client.receive_response():
                    count += isinstance(message, AssistantMessage)
    assert count == 64


def test_the_budget_must_be_positive() -> None:
    from ccwire import ClaudeAgentOptions

    with pytest.raises(ValueError, match="max_buffered_bytes"):
        ClaudeAgentOptions(max_buffered_bytes=0)
