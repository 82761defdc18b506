"""Connecting: a connect that fails or is cancelled at any point leaves nothing running,
and each failure comes out as one clear error."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import anyio
import pytest

from ccwire import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    MessageEncodeError,
    ProcessError,
    query,
)

from .conftest import FaultOptions, no_leaks

pytestmark = pytest.mark.anyio
LIMIT = 20


async def test_options_rejected_after_the_cli_started_leave_no_process(
    fault_options: FaultOptions,
) -> None:
    # the hooks are checked once the connection machinery is loaded, after the CLI
    # was started: that CLI is killed and reaped before the error reaches the caller
    bad_hooks = {"PreToolUse": ["not a matcher"]}
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(TypeError, match="HookMatcher"):
            await ClaudeSDKClient(fault_options("never_initialize", hooks=bad_hooks)).connect()
        with anyio.fail_after(LIMIT), pytest.raises(TypeError, match="HookMatcher"):
            async for _ in query(
                prompt="hi", options=fault_options("never_initialize", hooks=bad_hooks)
            ):
                pytest.fail("a message from a connection that never opened")


async def test_a_first_prompt_that_cannot_be_sent_leaves_no_process(
    fault_options: FaultOptions,
) -> None:
    # the CLI has answered initialize when connect() writes the prompt: a prompt JSON
    # cannot carry fails connect(), and that CLI is stopped, not left to the caller
    client = ClaudeSDKClient(fault_options("plain"))
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(MessageEncodeError):
            await client.connect("a lone surrogate: \ud800")
    with pytest.raises(CLIConnectionError, match="not connected"):
        await client.query("again")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
async def test_connect_cancelled_early_leaves_no_process(
    fault_options: FaultOptions, delay: float
) -> None:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            with anyio.move_on_after(delay) as scope:
                await ClaudeSDKClient(fault_options("never_initialize")).connect()
            assert scope.cancelled_caught


async def test_a_cli_that_cannot_start_raises_as_before(fault_options: FaultOptions) -> None:
    missing = dataclasses.replace(fault_options("never_initialize"), cwd="/no/such/dir/ccwire")
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(CLIConnectionError, match="does not exist"):
            await ClaudeSDKClient(missing).connect()


async def test_a_cwd_that_is_a_file_is_named_as_the_cause(
    fault_options: FaultOptions, tmp_path: Path
) -> None:
    # it said "cannot start the Claude Code CLI at '<the CLI>': [Errno 20] Not a
    # directory: '<cwd>'", naming the CLI as what failed
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a directory")
    given = dataclasses.replace(fault_options("never_initialize"), cwd=a_file)
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(CLIConnectionError) as caught:
            await ClaudeSDKClient(given).connect()
    assert str(caught.value) == (
        f"cannot start the Claude Code CLI: working directory {str(a_file)!r} is not a directory"
    )


async def test_the_spill_directory_is_made_only_for_a_value_too_long_for_argv(
    fault_options: FaultOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spills = tmp_path / "tmp"
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))

    async def converse(**options: object) -> list[str]:
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options("plain", **options)) as client:
                made = sorted(p.name for p in spills.iterdir())
                await client.query("hi")
                [m async for m in client.receive_response()]
        return made

    assert await converse() == []  # nothing spilled: no directory
    made = await converse(system_prompt="x" * 200_000)  # spilled to a file
    assert len(made) == 1 and made[0].startswith("ccwire-")
    assert list(spills.iterdir()) == []  # removed with the connection


def test_a_trio_program_never_loads_asyncio(fault_options: FaultOptions) -> None:
    """The usual import loads no asyncio, and neither does a conversation on trio, nor
    telling a cancellation a callback raised from one of ours (that code looks asyncio
    up, and finds none)."""
    options = fault_options("plain")
    script = textwrap.dedent(
        f"""
        import sys
        from ccwire import (ClaudeAgentOptions, ClaudeSDKClient, tool, create_sdk_mcp_server,
                            query, HookMatcher)
        assert "asyncio" not in sys.modules, "the usual import loaded asyncio"
        import trio
        async def main():
            opts = ClaudeAgentOptions(cli_path={options.cli_path!r}, cwd={options.cwd!r},
                                      env={dict(options.env)!r})
            async with ClaudeSDKClient(opts) as client:
                await client.query("hi")
                return [type(m).__name__ async for m in client.receive_response()]
        print(trio.run(main))
        from ccwire._core.cancel import raised_by_callback
        async def own_cancel():
            try:
                raise trio.Cancelled._create()
            except BaseException as exc:
                return raised_by_callback(exc)
        print(trio.run(own_cancel), "asyncio" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=LIMIT, check=True
    )
    lines = out.stdout.strip().splitlines()
    assert lines[-2].endswith("'ResultMessage']"), out.stdout + out.stderr
    assert lines[-1] == "True False", out.stdout + out.stderr


def test_out_of_file_descriptors_a_session_fails_typed_and_the_open_ones_go_on(
    fault_options: FaultOptions,
) -> None:
    """Under ``ulimit -n 64``, sessions are opened until the descriptors run out: the
    one that cannot start raises `CLIConnectionError` naming the cause, leaving no
    descriptor or process behind, and every session opened before still answers and
    closes cleanly."""
    options = fault_options("plain")
    script = textwrap.dedent(
        f"""
        import os, resource, sys
        import anyio, psutil
        from ccwire import ClaudeAgentOptions, ClaudeSDKClient, CLIConnectionError
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        opts = ClaudeAgentOptions(cli_path={options.cli_path!r}, cwd={options.cwd!r},
                                  env={dict(options.env)!r}, initialize_timeout=10)
        def fds():
            return len(os.listdir("/proc/self/fd"))
        async def main():
            start, clients = fds(), []
            with anyio.fail_after(60):
                while len(clients) < 64:
                    client, before = ClaudeSDKClient(opts), fds()
                    try:
                        await client.connect()
                    except CLIConnectionError as exc:
                        print("refused:", exc)
                        assert fds() == before, (fds(), before)
                        break
                    clients.append(client)
                for client in clients:
                    await client.query("hi")
                    assert [m async for m in client.receive_response()]
                for client in clients:
                    await client.disconnect()
            # and the pipe to this program's watchdog, held while the program runs
            assert fds() == start + 1, (fds(), start)
            assert psutil.Process().children(recursive=True) == []
            print("opened", len(clients))
        anyio.run(main)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=90)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    refused, opened = out.stdout.strip().splitlines()
    assert refused.startswith("refused: cannot start the Claude Code CLI at ")
    assert refused.endswith("Too many open files"), refused
    assert 5 < int(opened.split()[1]) < 64


@pytest.mark.parametrize("wait", ["", "sleep 0.3"])
async def test_a_program_that_exits_at_once_and_silently_is_named(
    tmp_path: Path, wait: str
) -> None:
    """A cli_path to a program that is not the CLI and exits 0 without a word (``/bin/true``)
    said "cannot write to the Claude Code CLI: it has exited (exit code: 0)", or "the CLI
    closed its output before answering this request", as the exit raced the handshake:
    one error, naming the program and how to check it."""
    program = tmp_path / "not-claude"
    program.write_text(f"#!/bin/sh\n{wait}\nexit 0\n")
    program.chmod(0o755)
    async with no_leaks():
        with anyio.fail_after(LIMIT), pytest.raises(ProcessError) as caught:
            await ClaudeSDKClient(ClaudeAgentOptions(cli_path=program)).connect()
    assert str(caught.value) == (
        f"{program} exited before answering initialize and wrote nothing to stderr: is it "
        f"the Claude Code CLI? `ccwire doctor --cli-path {program}` checks it (exit code: 0)"
    )
    assert caught.value.exit_code == 0
