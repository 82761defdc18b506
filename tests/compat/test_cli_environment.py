"""The CLI's environment is built as ``claude-agent-sdk`` builds it: this process's
variables reach the CLI unless ``inherit_env`` narrows them. On the real CLI:
``IS_SANDBOX=1`` is what lets ``bypassPermissions`` run as root (containers, CI), and the
CLI refuses to start without it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from ccwire import CLI_ENV_ALLOWLIST, ClaudeAgentOptions, ProcessError, ResultMessage, query
from ccwire.testing import ScriptedModel, text
from tests.compat.test_new_frames import CLI

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),  # the CLI's side: once is enough
    pytest.mark.skipif(CLI is None, reason="Claude Code CLI not installed (run `make cli`)"),
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0,
        reason="the CLI asks for IS_SANDBOX only when it runs as root",
    ),
]


async def _bypass(
    tmp_path: Path, inherit_env: object = True, extra: dict[str, str] | None = None
) -> list[object]:
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    with ScriptedModel(text("ran")) as model:
        opts = ClaudeAgentOptions(
            cli_path=CLI, cwd=str(cwd), env=model.env(str(home), extra=extra),
            permission_mode="bypassPermissions", inherit_env=inherit_env,  # type: ignore[arg-type]
        )  # fmt: skip
        with anyio.fail_after(90):
            return [m async for m in query(prompt="hi", options=opts)]


async def test_is_sandbox_from_this_process_lets_bypass_permissions_run_as_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IS_SANDBOX", "1")
    messages = await _bypass(tmp_path)  # the default: the whole environment
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "ran"


async def test_the_allowlist_keeps_it_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IS_SANDBOX", "1")
    with pytest.raises(ProcessError, match="root"):
        await _bypass(tmp_path, inherit_env=CLI_ENV_ALLOWLIST)
    # given in ``env``, it reaches the CLI through the allowlist too
    messages = await _bypass(tmp_path, CLI_ENV_ALLOWLIST, extra={"IS_SANDBOX": "1"})
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "ran"
