"""A ``can_use_tool`` callback's result of the right class but with fields of the wrong
type: the CLI gets an error answer naming the field, and the user a `CallbackError`."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import (
    CallbackError,
    ClaudeAgentOptions,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("result", "named"),
    [
        (PermissionResultAllow(updated_input="rm -rf /"), "updated_input that is no dict (str)"),  # type: ignore[arg-type]
        (PermissionResultAllow(updated_input=[("a", 1)]), "updated_input that is no dict (list)"),  # type: ignore[arg-type]
        (PermissionResultDeny(message=5), "message that is no str (int)"),  # type: ignore[arg-type]
    ],
)
async def test_a_result_with_a_field_of_the_wrong_type_is_a_callback_error(
    result: Any, named: str
) -> None:
    """``updated_input="x"`` used to reach the CLI as Python's "dictionary update
    sequence element #0 has length 1" with nothing reported, a list of pairs was sent
    as the dict it spells, and a number as the deny message went out as is."""
    reported: list[CallbackError] = []

    async def decide(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return result

    options = ClaudeAgentOptions(can_use_tool=decide, on_callback_error=reported.append)
    async with connected(options) as (client, fake):
        await client.query("go")
        await fake.receive("user")
        answer = await fake.request("can_use_tool", tool_name="Bash", input={"command": "ls"})
        await fake.result("done")
        with anyio.fail_after(5):
            assert [type(m).__name__ async for m in client.receive_response()] == ["ResultMessage"]
    assert answer["subtype"] == "error" and named in answer["error"], answer
    assert len(reported) == 1 and named in str(reported[0])
    assert reported[0].kind == "can_use_tool"
