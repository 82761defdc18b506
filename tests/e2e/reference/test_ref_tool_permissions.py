"""Port of the reference SDK's ``e2e-tests/test_tool_permissions.py``.

``can_use_tool`` is asked for a command that is not read-only, and its verdict reaches
the CLI: with `ClaudeSDKClient`, and with one-shot `query()` where the callback is the
only control-protocol consumer (no hooks, no SDK MCP servers), for a string prompt and
for a finite async-iterable prompt (stdin must stay open until the verdict is sent).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    query,
)
from ccwire.testing import ScriptedModel, text, tool_use

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_permission_callback_gets_called(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    invocations: list[tuple[str, dict[str, Any]]] = []
    target = tmp_path / "sdk_permission_test.txt"  # outside the working directory

    async def allow_all(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        invocations.append((tool_name, input_data))
        return PermissionResultAllow()

    # touch is not read-only, so the CLI asks (it runs echo and the like unasked)
    model.add(tool_use("Bash", {"command": f"touch {target}"}), text("touched"))
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options=make_options(can_use_tool=allow_all)) as client:
            await client.query(f"Run the command: touch {target}")
            messages = [m async for m in client.receive_response()]

    assert "Bash" in [name for name, _ in invocations]
    assert invocations[0][1]["command"] == f"touch {target}"
    assert target.exists(), "the allowed command did not run"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


async def _only_can_use_tool(
    model: ScriptedModel,
    make_options: Any,
    prompt_factory: Callable[[str], str | AsyncIterator[dict[str, Any]]],
) -> None:
    invocations: list[str] = []

    async def allow_all(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        invocations.append(tool_name)
        return PermissionResultAllow()

    options = make_options(can_use_tool=allow_all, disallowed_tools=["Bash"], max_turns=3)
    # in the CLI's home, outside the working directory, so no allow rule
    # approves the write: it must go through the callback
    target = Path(options.env["HOME"]) / ".agent_sdk_permission_e2e.txt"
    model.add(tool_use("Write", {"file_path": str(target), "content": "hello"}), text("written"))
    prompt = (
        f"Use the Write tool to create the file {target} containing exactly the text hello. "
        "Do not use any other tool."
    )
    result: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=prompt_factory(prompt), options=options):
            if isinstance(message, ResultMessage):
                result = message

    assert result is not None, "query() yielded no ResultMessage"
    assert not result.is_error, result
    assert "Write" in invocations
    assert target.exists(), "the permitted Write did not run"
    assert target.read_text() == "hello"


async def test_query_async_iterable_prompt_with_only_can_use_tool(
    model: ScriptedModel, make_options: Any
) -> None:
    def stream(text: str) -> AsyncIterator[dict[str, Any]]:
        async def one() -> AsyncIterator[dict[str, Any]]:
            yield {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "",
            }

        return one()

    await _only_can_use_tool(model, make_options, stream)


async def test_query_string_prompt_with_can_use_tool(
    model: ScriptedModel, make_options: Any
) -> None:
    await _only_can_use_tool(model, make_options, lambda text: text)
