"""The spawn hook (``ClaudeAgentOptions.spawn_claude_code_process``) against a small fake
CLI run as a real subprocess (``tests/fixtures/mini_cli.py``): what a spawner is given,
every shape of spawner and process it may be, and the typed errors for the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from ccwire import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    CLINotFoundError,
    Message,
    ResultMessage,
    SpawnError,
    SpawnOptions,
    TextBlock,
    query,
    spawn_local,
)
from tests.fixtures.wrappers import python_wrapper

pytestmark = pytest.mark.anyio

LIMIT = 30
MINI_CLI = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"


@pytest.fixture
def mini(tmp_path: Path) -> Any:
    """``mini(**options)``: options that run the mini CLI in ``tmp_path/work``."""
    wrapper = python_wrapper(tmp_path / "claude", MINI_CLI)
    work = tmp_path / "work"
    work.mkdir()

    def make(**kw: Any) -> ClaudeAgentOptions:
        kw.setdefault("cli_path", str(wrapper))
        kw.setdefault("cwd", str(work))
        kw.setdefault("initialize_timeout", 20)
        return ClaudeAgentOptions(**kw)

    return make


async def run(options: ClaudeAgentOptions, prompt: str = "hi") -> list[Message]:
    with anyio.fail_after(LIMIT):
        return [m async for m in query(prompt=prompt, options=options)]


def report(messages: list[Message]) -> dict[str, Any]:
    """The mini CLI's JSON report (its assistant text)."""
    for m in messages:
        if isinstance(m, AssistantMessage):
            block = m.content[0]
            assert isinstance(block, TextBlock)
            loaded: dict[str, Any] = json.loads(block.text)
            return loaded
    raise AssertionError(f"no assistant message in {messages}")


class MinimalProcess:
    """Only what the spawn hook requires: no ``pid``, no ``aclose()``, no stderr."""

    def __init__(self, inner: anyio.abc.Process) -> None:
        self._inner = inner
        self.stdin = inner.stdin
        self.stdout = inner.stdout
        self.stderr = None
        self.waited = False

    @property
    def returncode(self) -> int | None:
        return self._inner.returncode

    async def wait(self) -> int:
        code = await self._inner.wait()
        self.waited = True
        return code

    def terminate(self) -> None:
        self._inner.terminate()

    def kill(self) -> None:
        self._inner.kill()


# ------------------------------------------------------------------ what it gets


async def test_a_sync_spawner_gets_the_command_line_folder_and_environment(mini: Any) -> None:
    seen: list[SpawnOptions] = []

    def spawner(options: SpawnOptions) -> Any:
        seen.append(options)
        # a sync function may return an awaitable: here, the local spawn of a wrapped command
        return spawn_local(replace(options, command="env", args=(options.command, *options.args)))

    opts = mini(
        spawn_claude_code_process=spawner,
        env={"MINI_REPORT_ENV": "SECRET_TOKEN", "SECRET_TOKEN": "s3cr3t-value"},
    )
    messages = await run(opts)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "done"
    [spawned] = seen
    assert spawned.command == opts.cli_path
    assert spawned.args[:3] == ("--output-format", "stream-json", "--verbose")
    assert spawned.args[-2:] == ("--input-format", "stream-json")
    assert spawned.cwd == opts.cwd
    assert spawned.env["SECRET_TOKEN"] == "s3cr3t-value"
    assert spawned.env["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py"
    assert spawned.private_files == ()
    assert "s3cr3t-value" not in repr(spawned) and "SECRET_TOKEN" in repr(spawned)
    got = report(messages)
    assert got["cwd"] == str(opts.cwd)
    assert got["env"] == {"SECRET_TOKEN": "s3cr3t-value"}


async def test_private_files_are_named_and_exist_while_the_cli_runs(mini: Any) -> None:
    seen: list[tuple[SpawnOptions, str, int]] = []

    async def spawner(options: SpawnOptions) -> anyio.abc.Process:
        [path] = options.private_files
        mode = (await anyio.Path(path).parent.stat()).st_mode & 0o777
        seen.append((options, await anyio.Path(path).read_text(encoding="utf-8"), mode))
        return await spawn_local(options)

    prompt = "be brief. " * 20_000  # over the argv limit: written to a private file
    messages = await run(mini(system_prompt=prompt, spawn_claude_code_process=spawner))
    [(spawned, content, mode)] = seen
    [path] = spawned.private_files
    assert content == prompt
    assert mode == 0o700
    assert spawned.args[spawned.args.index("--system-prompt-file") + 1] == path
    assert report(messages)["argv"].count(path) == 1
    assert not await anyio.Path(path).exists()  # removed with the session


async def test_a_process_with_only_the_required_parts_runs_a_client(mini: Any) -> None:
    made: list[MinimalProcess] = []

    async def spawner(options: SpawnOptions) -> MinimalProcess:
        made.append(MinimalProcess(await spawn_local(options)))
        return made[0]

    with anyio.fail_after(LIMIT):
        async with ClaudeSDKClient(mini(spawn_claude_code_process=spawner)) as client:
            transport = client._connection()._transport
            assert transport is not None and getattr(transport, "pid", 0) is None
            for _ in range(2):
                await client.query("hi")
                result = [m async for m in client.receive_response()][-1]
                assert isinstance(result, ResultMessage) and result.result == "done"
    assert made[0].waited and made[0].returncode == 0


# ------------------------------------------------------------------ typed errors


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ValueError("no sandbox here"), SpawnError),
        (OSError(13, "denied"), SpawnError),
        (CLINotFoundError("bwrap is not installed"), CLINotFoundError),
    ],
)
async def test_a_spawner_that_raises(mini: Any, raised: Exception, expected: type) -> None:
    def spawner(options: SpawnOptions) -> Any:
        raise raised

    with pytest.raises(expected) as caught:
        await run(mini(spawn_claude_code_process=spawner))
    assert isinstance(caught.value, CLIConnectionError)
    if expected is SpawnError:
        assert caught.value.__cause__ is raised
        assert "spawner" in str(caught.value) and str(raised) in str(caught.value)


async def test_a_spawner_that_returns_no_process(mini: Any) -> None:
    for returned, why in [(None, "nothing was returned"), (object(), "it has no terminate")]:

        async def spawner(options: SpawnOptions, returned: Any = returned) -> Any:
            return returned

        with pytest.raises(SpawnError, match=why):
            await run(mini(spawn_claude_code_process=spawner))


async def test_a_spawner_that_never_returns_is_bounded_by_the_initialize_timeout(
    mini: Any,
) -> None:
    async def spawner(options: SpawnOptions) -> Any:
        await anyio.sleep_forever()  # a machine that never comes up

    options = mini(spawn_claude_code_process=spawner, initialize_timeout=0.5)
    with anyio.fail_after(LIMIT), pytest.raises(SpawnError, match=r"within 0\.5 s"):
        await ClaudeSDKClient(options).connect()


async def test_a_blocking_popen_is_refused_and_killed(mini: Any) -> None:
    popens: list[subprocess.Popen[bytes]] = []

    def spawner(options: SpawnOptions) -> subprocess.Popen[bytes]:
        popens.append(
            subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(60)"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        )
        return popens[0]

    with pytest.raises(SpawnError, match=r"wait\(\) must be an async method"):
        await run(mini(spawn_claude_code_process=spawner))
    [popen] = popens
    assert popen.wait(timeout=10) != 0  # killed, not left running
    assert popen.stdin is not None and popen.stdout is not None
    popen.stdin.close()
    popen.stdout.close()


async def test_a_process_whose_wait_fails_ends_the_session_with_a_typed_error(
    mini: Any,
) -> None:
    class BrokenWait(MinimalProcess):
        async def wait(self) -> int:
            await self._inner.wait()
            raise RuntimeError("lost track of the process")

    procs: list[BrokenWait] = []

    async def spawner(options: SpawnOptions) -> BrokenWait:
        procs.append(BrokenWait(await spawn_local(options)))
        return procs[0]

    with pytest.raises(SpawnError, match="lost track of the process"):
        await run(mini(spawn_claude_code_process=spawner))
    assert procs[0].returncode == 0


def test_the_option_must_be_callable() -> None:
    with pytest.raises(TypeError, match="spawn_claude_code_process must be callable"):
        ClaudeAgentOptions(spawn_claude_code_process="bwrap")  # type: ignore[arg-type]
