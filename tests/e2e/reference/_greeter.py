"""The greeter subagent run shared by the ports of the reference SDK's subagent tests."""

from __future__ import annotations

from typing import Any

from ccwire import AgentDefinition
from ccwire.testing import ModelRequest, ScriptedModel, StepResult, text, tool_use

AGENT_TOOLS = {"Agent", "Task"}
PROMPT = (
    "Use the Agent tool exactly once with subagent_type 'greeter', prompt 'say hi', and "
    "run_in_background set to false. Then reply with the single word DONE."
)
GREETING = "Hi there, have a wonderful day!"


def script_greeter_run(model: ScriptedModel) -> None:
    """The main agent calls the greeter in the foreground, the greeter (on haiku)
    greets, the main agent says DONE; requests are told apart by model."""
    main: list[StepResult] = [text("DONE")]
    sub: list[StepResult] = [text(GREETING)]

    def call_greeter(request: ModelRequest) -> StepResult:
        spec = next(t for t in request.tools if t["name"] in AGENT_TOOLS)
        call: dict[str, Any] = {
            "subagent_type": "greeter",
            "description": "Greet",
            "prompt": "say hi",
        }
        if "run_in_background" in spec["input_schema"].get("properties", {}):
            call["run_in_background"] = False
        return tool_use(spec["name"], call)

    def route(request: ModelRequest) -> StepResult:
        return (sub if "haiku" in (request.model or "") else main).pop(0)

    model.add(call_greeter, route, route)


def greeter_options(
    make_options: Any, *, forward_subagent_text: bool | None = None, **kwargs: Any
) -> Any:
    """Options with the ``greeter`` agent, the Agent tool allowed, at most 4 turns."""
    return make_options(
        forward_subagent_text=forward_subagent_text,
        agents={
            "greeter": AgentDefinition(
                description="Replies with a short greeting. Use for greeting tasks.",
                prompt="Reply with one short friendly sentence. Do not use any tools.",
                model="haiku",
                background=False,  # the synchronous path, where forwarding is opt-in
            )
        },
        allowed_tools=sorted(AGENT_TOOLS),
        max_turns=4,
        **kwargs,
    )
