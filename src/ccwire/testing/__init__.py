"""Testing helpers for ccwire users: run the real Claude Code CLI fully offline.

`ScriptedModel` is a local Anthropic Messages API whose replies a test scripts;
`offline_env()` builds the environment that points the ``claude`` CLI at it.  The
pytest plugin (registered automatically) provides the ``scripted_model`` and
``offline_env`` fixtures:

    def test_tool_round_trip(scripted_model, offline_env):
        call = tool_use("Bash", {"command": "echo hi"})
        scripted_model.add(call, text("done"))
        ...  # run the CLI / the SDK with env=offline_env
        assert scripted_model.turn_requests[1].tool_results()[0].content == "hi"
        scripted_model.assert_script_consumed()
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer, publish

# Imported on first use, like the root package: `import ccwire.testing` (and the pytest
# plugin, which lives in it) stays cheap until a test uses a name.
if TYPE_CHECKING or not install_lazy_importer(__name__):
    from .._transport.memory import CLIPeer, MemoryTransport, memory_transport_pair
    from ._env import OFFLINE_API_KEY, offline_env
    from ._fake_cli import FakeCLI
    from ._replies import (
        Block,
        ErrorReply,
        ModelRequest,
        Reply,
        Step,
        StepResult,
        ToolResult,
        error,
        reply,
        text,
        thinking,
        tool_use,
    )
    from ._scripted_model import DEFAULT_MODEL, ScriptedModel
    from ._store_conformance import run_session_store_conformance

    publish(__name__)

__all__ = [
    "Block",
    "CLIPeer",
    "DEFAULT_MODEL",
    "ErrorReply",
    "FakeCLI",
    "MemoryTransport",
    "ModelRequest",
    "OFFLINE_API_KEY",
    "Reply",
    "ScriptedModel",
    "Step",
    "StepResult",
    "ToolResult",
    "error",
    "memory_transport_pair",
    "offline_env",
    "reply",
    "run_session_store_conformance",
    "text",
    "thinking",
    "tool_use",
]
