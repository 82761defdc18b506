"""The public names of ``claude-agent-sdk`` 0.2.187 (its package's ``__all__``).

`ccwire compat install` gives the ``claude_agent_sdk`` package it writes exactly these
names, each served by ccwire's object of that name (a test keeps the list equal to the
reference's).
"""

from __future__ import annotations

__all__ = ["REFERENCE_NAMES", "REFERENCE_VERSION"]

REFERENCE_VERSION = "0.2.187"
"""The version of ``claude-agent-sdk`` whose public API ccwire matches."""

# fmt: off
REFERENCE_NAMES: tuple[str, ...] = (
    "AgentDefinition", "AssistantMessage", "BackgroundTaskSummary", "BaseHookInput",
    "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError", "CanUseTool",
    "CanUseToolShadowedWarning", "ClaudeAgentOptions", "ClaudeSDKClient", "ClaudeSDKError",
    "ContentBlock", "ContextUsageCategory", "ContextUsageResponse", "ConversationResetMessage",
    "CwdChangedHookSpecificOutput", "DeferredToolUse", "EffortLevel",
    "ElicitationHookSpecificOutput", "ElicitationResultHookSpecificOutput",
    "FastModeDisabledReason", "FastModeState", "FileChangedHookSpecificOutput",
    "ForkSessionResult", "HookCallback", "HookContext", "HookEffort", "HookEventMessage",
    "HookInput", "HookJSONOutput", "HookMatcher", "InMemorySessionStore", "McpSdkServerConfig",
    "McpServerConfig", "McpServerConnectionStatus", "McpServerInfo", "McpServerStatus",
    "McpServerStatusConfig", "McpStatusResponse", "McpToolAnnotations", "McpToolInfo",
    "Message", "MessageDisplayHookSpecificOutput", "MessageOrigin", "MessageOriginKind",
    "MirrorErrorMessage", "ModelUsage", "NotificationHookInput",
    "NotificationHookSpecificOutput", "PermissionDeniedHookSpecificOutput", "PermissionMode",
    "PermissionRequestHookInput", "PermissionRequestHookSpecificOutput", "PermissionResult",
    "PermissionResultAllow", "PermissionResultDeny", "PermissionUpdate",
    "PostModelSwitchHookSpecificOutput", "PostToolBatchHookSpecificOutput",
    "PostToolUseFailureHookInput", "PostToolUseFailureHookSpecificOutput",
    "PostToolUseHookInput", "PostToolUseHookSpecificOutput", "PreCompactHookInput",
    "PreModelSwitchHookSpecificOutput", "PreToolUseHookInput", "PreToolUseHookSpecificOutput",
    "ProcessError", "RateLimitEvent", "RateLimitInfo", "RateLimitStatus", "RateLimitType",
    "ResultError", "ResultMessage", "SDKSessionInfo", "SandboxIgnoreViolations",
    "SandboxNetworkConfig", "SandboxSettings", "SdkBeta", "SdkMcpTool", "SdkPluginConfig",
    "ServerToolName", "ServerToolResultBlock", "ServerToolUseBlock", "SessionCronSummary",
    "SessionKey", "SessionListSubkeysKey", "SessionMessage", "SessionStartHookSpecificOutput",
    "SessionStore", "SessionStoreEntry", "SessionStoreFlushMode", "SessionStoreListEntry",
    "SessionSummaryEntry", "SettingSource", "StopHookInput", "StopHookSpecificOutput",
    "StreamEvent", "SubagentStartHookInput", "SubagentStartHookSpecificOutput",
    "SubagentStopHookInput", "SubagentStopHookSpecificOutput", "SystemInitData",
    "SystemInitMcpServer", "SystemInitPlugin", "SystemInitPluginError", "SystemMessage",
    "TERMINAL_TASK_STATUSES", "TaskBudget", "TaskNotificationMessage",
    "TaskNotificationOriginSubkind", "TaskNotificationStatus", "TaskProgressMessage",
    "TaskStartedMessage", "TaskUpdatedMessage", "TaskUpdatedStatus", "TaskUsage", "TextBlock",
    "ThinkingBlock", "ThinkingConfig", "ThinkingConfigAdaptive", "ThinkingConfigDisabled",
    "ThinkingConfigEnabled", "ToolAnnotations", "ToolPermissionContext", "ToolResultBlock",
    "ToolUseBlock", "Transport", "UserMessage", "UserPromptExpansionHookSpecificOutput",
    "UserPromptSubmitHookInput", "UserPromptSubmitHookSpecificOutput",
    "WorktreeCreateHookSpecificOutput", "__version__", "create_sdk_mcp_server",
    "delete_session", "delete_session_via_store", "fold_session_summary", "fork_session",
    "fork_session_via_store", "get_session_info", "get_session_info_from_store",
    "get_session_messages", "get_session_messages_from_store", "get_subagent_messages",
    "get_subagent_messages_from_store", "import_session_to_store", "list_sessions",
    "list_sessions_from_store", "list_subagents", "list_subagents_from_store",
    "project_key_for_directory", "query", "rename_session", "rename_session_via_store",
    "tag_session", "tag_session_via_store", "tool",
)
"""The names ``claude_agent_sdk`` exports (sorted)."""
# fmt: on
