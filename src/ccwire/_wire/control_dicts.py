"""The control frames as plain JSON dicts, typed.

ccwire itself reads and writes control frames through the codec and hands typed
records to the layers above. These ``TypedDict`` s describe the same frames as raw
JSON, for code that sees them raw: a custom `Transport`, a recorded trace, a test
that writes frames by hand. They are the names claude-agent-sdk users know from its
``types`` module (``ccwire.types`` re-exports them).
"""

# No `from __future__ import annotations`: TypedDict must see NotRequired at class
# creation to tell optional keys from required ones.
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

from .hook_types import HookEvent
from .permission_types import PermissionMode

__all__ = [
    "ControlErrorResponse",
    "ControlResponse",
    "SDKControlInitializeRequest",
    "SDKControlInterruptRequest",
    "SDKControlMcpMessageRequest",
    "SDKControlMcpReconnectRequest",
    "SDKControlMcpToggleRequest",
    "SDKControlPermissionRequest",
    "SDKControlRequest",
    "SDKControlResponse",
    "SDKControlRewindFilesRequest",
    "SDKControlSetPermissionModeRequest",
    "SDKControlStopTaskRequest",
    "SDKHookCallbackRequest",
]


class SDKControlInterruptRequest(TypedDict):
    """Stop the current turn."""

    subtype: Literal["interrupt"]


class SDKControlPermissionRequest(TypedDict):
    """The CLI asks whether a tool may run (answered by ``can_use_tool``)."""

    subtype: Literal["can_use_tool"]
    tool_name: str
    input: dict[str, Any]
    permission_suggestions: list[dict[str, Any]] | None
    blocked_path: str | None
    decision_reason: NotRequired[str]
    title: NotRequired[str]
    display_name: NotRequired[str]
    description: NotRequired[str]
    tool_use_id: str
    agent_id: NotRequired[str]


class SDKControlInitializeRequest(TypedDict):
    """The SDK's first request: hooks, agents and session settings."""

    subtype: Literal["initialize"]
    hooks: dict[HookEvent, Any] | None
    agents: NotRequired[dict[str, dict[str, Any]]]
    excludeDynamicSections: NotRequired[bool]
    systemPromptSnapshot: NotRequired[bool]
    skills: NotRequired[list[str]]
    forwardSubagentText: NotRequired[bool]


class SDKControlSetPermissionModeRequest(TypedDict):
    """Change the permission mode of the running session."""

    subtype: Literal["set_permission_mode"]
    mode: PermissionMode


class SDKHookCallbackRequest(TypedDict):
    """The CLI runs one of the SDK's hook callbacks."""

    subtype: Literal["hook_callback"]
    callback_id: str
    input: Any
    tool_use_id: str | None


class SDKControlMcpMessageRequest(TypedDict):
    """One JSON-RPC message for an in-process MCP server."""

    subtype: Literal["mcp_message"]
    server_name: str
    message: Any


class SDKControlRewindFilesRequest(TypedDict):
    """Restore files to their state at a user message."""

    subtype: Literal["rewind_files"]
    user_message_id: str


class SDKControlMcpReconnectRequest(TypedDict):
    """Reconnect a disconnected or failed MCP server (the key is camelCase on the wire)."""

    subtype: Literal["mcp_reconnect"]
    serverName: str


class SDKControlMcpToggleRequest(TypedDict):
    """Enable or disable an MCP server (the key is camelCase on the wire)."""

    subtype: Literal["mcp_toggle"]
    serverName: str
    enabled: bool


class SDKControlStopTaskRequest(TypedDict):
    """Stop a background task."""

    subtype: Literal["stop_task"]
    task_id: str


class SDKControlRequest(TypedDict):
    """A ``control_request`` frame."""

    type: Literal["control_request"]
    request_id: str
    request: (
        SDKControlInterruptRequest
        | SDKControlPermissionRequest
        | SDKControlInitializeRequest
        | SDKControlSetPermissionModeRequest
        | SDKHookCallbackRequest
        | SDKControlMcpMessageRequest
        | SDKControlRewindFilesRequest
        | SDKControlMcpReconnectRequest
        | SDKControlMcpToggleRequest
        | SDKControlStopTaskRequest
    )


class ControlResponse(TypedDict):
    """The success answer inside a ``control_response`` frame."""

    subtype: Literal["success"]
    request_id: str
    response: dict[str, Any] | None


class ControlErrorResponse(TypedDict):
    """The error answer inside a ``control_response`` frame."""

    subtype: Literal["error"]
    request_id: str
    error: str


class SDKControlResponse(TypedDict):
    """A ``control_response`` frame."""

    type: Literal["control_response"]
    response: ControlResponse | ControlErrorResponse
