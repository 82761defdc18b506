"""Testing your own agent offline: pytest, the real CLI, and a scripted model.

Run it:  pytest examples/test_my_agent.py      (or: python examples/test_my_agent.py)

ccwire installs a pytest plugin with two fixtures:

* ``scripted_model``: a started `ccwire.testing.ScriptedModel` (a local stand-in
  for the Anthropic API) whose replies the test scripts with ``add(...)``;
* ``offline_env``: the environment that points the Claude Code CLI at it (fresh HOME,
  dummy key, no other network traffic). Pass it as ``ClaudeAgentOptions(env=...)``.

The agent under test is the ordinary code below; only its ``env`` changes in tests.
"""

from __future__ import annotations

from typing import Any

try:
    import pytest
except ImportError:  # `python examples/test_my_agent.py` without pytest: say how
    raise SystemExit("this example runs its tests with pytest: pip install pytest") from None

from ccwire import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, query, tool
from ccwire.testing import ModelRequest, ScriptedModel, StepResult, text, tool_use

# --------------------------------------------------------------------------- the agent

ORDERS = {"A-1": "shipped on Monday", "B-2": "waiting for payment"}


@tool("lookup_order", "Look up the status of an order", {"order_id": str})
async def lookup_order(args: dict[str, Any]) -> dict[str, Any]:
    status = ORDERS.get(args["order_id"])
    if status is None:
        return {"content": [{"type": "text", "text": "unknown order"}], "is_error": True}
    return {"content": [{"type": "text", "text": status}]}


async def order_assistant(question: str, *, env: dict[str, str] | None = None) -> str:
    """Answer a customer's question about an order; returns the final answer."""
    options = ClaudeAgentOptions(
        mcp_servers={"orders": create_sdk_mcp_server("orders", tools=[lookup_order])},
        allowed_tools=["mcp__orders__lookup_order"],
        system_prompt="You answer questions about orders. Always look the order up.",
        max_turns=4,
        env=env or {},
    )
    answer = ""
    async for message in query(prompt=question, options=options):
        if isinstance(message, ResultMessage):
            answer = message.result or ""
    return answer


# --------------------------------------------------------------------------- its tests


def echo_status(request: ModelRequest) -> StepResult:
    """A scripted reply computed from what the model was sent: the tool's result."""
    result = request.tool_results()[0]
    return text(f"Your order is {result.content}." if not result.is_error else "I can't find it.")


@pytest.mark.anyio
async def test_agent_looks_the_order_up(
    scripted_model: ScriptedModel, offline_env: dict[str, str]
) -> None:
    scripted_model.add(tool_use("mcp__orders__lookup_order", {"order_id": "A-1"}), echo_status)

    answer = await order_assistant("Where is my order A-1?", env=offline_env)

    assert answer == "Your order is shipped on Monday."
    first, second = scripted_model.turn_requests
    assert first.last_user_text() == "Where is my order A-1?"
    assert "mcp__orders__lookup_order" in first.tool_names
    assert "Always look the order up." in first.system
    assert second.tool_results()[0].content == "shipped on Monday"
    scripted_model.assert_script_consumed()


@pytest.mark.anyio
async def test_agent_handles_unknown_orders(
    scripted_model: ScriptedModel, offline_env: dict[str, str]
) -> None:
    scripted_model.add(tool_use("mcp__orders__lookup_order", {"order_id": "Z-9"}), echo_status)

    answer = await order_assistant("Where is Z-9?", env=offline_env)

    assert answer == "I can't find it."
    result = scripted_model.turn_requests[1].tool_results()[0]
    assert result.is_error and result.content == "unknown order"


if __name__ == "__main__":
    # this module imported ccwire and anyio before pytest could load their plugins
    quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    raise SystemExit(pytest.main([__file__, "-q", "-p", "no:cacheprovider", *quiet]))
