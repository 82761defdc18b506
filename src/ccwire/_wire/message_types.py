"""The dictionary shapes and value sets that messages carry, as Anthropic's
``claude-agent-sdk`` names them.

These describe parts of frames that ccwire passes through as the CLI sent them (the
``origin`` of a user message, a task's ``usage``, the ``init`` frame's ``data``, ...):
`TypedDict`s for mypy and editors, `Literal`s for the known values. Newer CLIs may
send keys and values not listed here; they arrive unchanged.
"""

# No `from __future__ import annotations`: TypedDict must see NotRequired at class
# creation to tell optional keys from required ones.
from typing import Literal

# typing_extensions' TypedDict honours Required/NotRequired on Python 3.10 too
from typing_extensions import NotRequired, Required, TypedDict

__all__ = [
    "AssistantMessageError",
    "FastModeDisabledReason",
    "FastModeState",
    "MessageOrigin",
    "MessageOriginKind",
    "ModelUsage",
    "RateLimitStatus",
    "RateLimitType",
    "ServerToolName",
    "SystemInitData",
    "SystemInitMcpServer",
    "SystemInitPlugin",
    "SystemInitPluginError",
    "TaskNotificationOriginSubkind",
    "TaskNotificationStatus",
    "TaskUpdatedStatus",
    "TaskUsage",
]

AssistantMessageError = Literal[
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
    "oauth_org_not_allowed",
    "account_on_hold",
    "verification_required",
    "overloaded",
    "model_not_found",
    "max_output_tokens",
    "cloud_credential_error",
]
"""Known values of `AssistantMessage.error`."""

MessageOriginKind = Literal[
    "human",
    "channel",
    "peer",
    "task-notification",
    "coordinator",
    "unclassified",
    "observer",
    "auto-continuation",
    "observer-activity",
]
"""Known values of ``MessageOrigin["kind"]``; treat any other as "not human"."""

TaskNotificationOriginSubkind = Literal["scheduled-trigger", "peer-send-message"]
"""Values of ``MessageOrigin["subkind"]`` when ``kind`` is ``"task-notification"``."""

# Functional form: "from" is a keyword.
MessageOrigin = TypedDict(
    "MessageOrigin",
    {
        "kind": Required[MessageOriginKind],
        "server": str,
        "from": str,
        "name": str,
        "fromSession": str,
        "senderTaskId": str,
        "body": str,
        "verifiedPeerPid": int,
        "subkind": TaskNotificationOriginSubkind,
    },
    total=False,
)
"""What started a user-role message (or, on a `ResultMessage`, the turn): `kind` and more."""
MessageOrigin.__doc__ = """What started a user-role message (or, on a `ResultMessage`, the turn).

Only ``kind`` is always present: ``human``, ``channel`` (``server`` names the MCP
server), ``peer`` (``from``, ``name``, ``fromSession``, ``senderTaskId``, ``body``,
``verifiedPeerPid``), ``task-notification`` (``subkind``), ... The dict is the CLI's,
unchanged; ``None`` means the CLI did not attribute the message."""

TaskNotificationStatus = Literal["completed", "failed", "stopped"]
"""The ``status`` of a `TaskNotificationMessage`."""

TaskUpdatedStatus = Literal["pending", "running", "paused", "completed", "failed", "killed"]
"""The ``status`` inside a `TaskUpdatedMessage`'s ``patch``."""


class TaskUsage(TypedDict):
    """What a subagent task has used so far (``task_progress``, ``task_notification``).

    Attributes:
        total_tokens: Tokens used by the task.
        tool_uses: Tool calls the task made.
        duration_ms: Time the task has run, in milliseconds.
    """

    total_tokens: int
    tool_uses: int
    duration_ms: int


RateLimitStatus = Literal["allowed", "allowed_warning", "rejected"]
"""Where the account stands against a rate limit."""

RateLimitType = Literal["five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "overage"]
"""Which rate limit window a `RateLimitInfo` is about."""

ServerToolName = Literal[
    "advisor",
    "web_search",
    "web_fetch",
    "code_execution",
    "bash_code_execution",
    "text_editor_code_execution",
    "tool_search_tool_regex",
    "tool_search_tool_bm25",
]
"""Known names of tools the API runs itself (`ServerToolUseBlock.name`)."""


class ModelUsage(TypedDict):
    """Tokens and cost of one model in a `ResultMessage`'s ``model_usage`` (camelCase,
    as the CLI sends it)."""

    inputTokens: int
    outputTokens: int
    thinkingTokens: NotRequired[int]
    """Thinking tokens, already counted in ``outputTokens``."""
    cacheReadInputTokens: int
    cacheCreationInputTokens: int
    cacheCreationEphemeral5mInputTokens: NotRequired[int]
    """Cache writes living 5 minutes, already counted in ``cacheCreationInputTokens``."""
    cacheCreationEphemeral1hInputTokens: NotRequired[int]
    """Cache writes living 1 hour, already counted in ``cacheCreationInputTokens``."""
    webSearchRequests: int
    costUSD: float
    contextWindow: int
    maxOutputTokens: int
    canonicalModel: NotRequired[str]
    provider: NotRequired[str]
    costBasis: NotRequired[Literal["list", "managed", "unknown"]]
    """The price table ``costUSD`` comes from (absent: treat as ``list``)."""


class SystemInitMcpServer(TypedDict):
    """An MCP server listed in the ``init`` frame (`SystemInitData`)."""

    name: str
    status: str
    source: NotRequired[str]


class SystemInitPlugin(TypedDict):
    """A loaded plugin listed in the ``init`` frame."""

    name: str
    path: str
    version: NotRequired[str]


class SystemInitPluginError(TypedDict):
    """A plugin that failed to load, listed in the ``init`` frame."""

    plugin: str
    type: str
    message: str
    path: NotRequired[str]


FastModeState = Literal["off", "cooldown", "on"]
"""Fast mode as the ``init`` frame reports it."""

FastModeDisabledReason = Literal[
    "free",
    "preference",
    "extra_usage_disabled",
    "network_error",
    "unknown",
    "not_first_party",
    "disabled_by_env",
    "model_not_allowed",
    "sdk_opt_in_required",
    "pending",
]
"""Why fast mode cannot serve now (open set)."""


class SystemInitData(TypedDict):
    """The shape of `SystemMessage.data` for a ``system``/``init`` frame.

    Not validated: it describes what the CLI sends. Narrow with
    ``cast(SystemInitData, msg.data)`` after checking ``msg.subtype == "init"``.
    """

    type: Literal["system"]
    subtype: Literal["init"]
    uuid: str
    session_id: str
    agents: NotRequired[list[str]]
    apiKeySource: str
    betas: NotRequired[list[str]]
    claude_code_version: str
    cwd: str
    tools: list[str]
    mcp_servers: list[SystemInitMcpServer]
    model: str
    permissionMode: str
    slash_commands: list[str]
    terminal_slash_commands: NotRequired[list[str]]
    output_style: str
    skills: list[str]
    plugins: list[SystemInitPlugin]
    plugin_errors: NotRequired[list[SystemInitPluginError]]
    fast_mode_state: NotRequired[FastModeState]
    fast_mode_disabled_reason: NotRequired[FastModeDisabledReason]
    capabilities: NotRequired[list[str]]
