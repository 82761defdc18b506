"""The small dict and value types of `ClaudeAgentOptions` (prompts, tools, sandbox,
thinking, plugins, ...), as ``claude-agent-sdk`` names them.

No ``from __future__ import annotations`` here on purpose: `TypedDict` needs to see
``NotRequired`` at class creation to tell optional keys from required ones.
"""

import sys
from typing import Any, Literal, TypeAlias

if sys.version_info >= (3, 11):  # typing's own: importing typing_extensions costs 2 ms
    from typing import NotRequired, TypedDict
else:  # 3.10's TypedDict does not see NotRequired
    from typing_extensions import NotRequired, TypedDict

__all__ = [
    "AskUserQuestionConfig",
    "EffortLevel",
    "OutputFormat",
    "SandboxIgnoreViolations",
    "SandboxNetworkConfig",
    "SandboxSettings",
    "SdkBeta",
    "SdkPluginConfig",
    "SettingSource",
    "SystemPromptCustom",
    "SystemPromptFile",
    "SystemPromptPreset",
    "TaskBudget",
    "ThinkingConfig",
    "ThinkingConfigAdaptive",
    "ThinkingConfigDisabled",
    "ThinkingConfigEnabled",
    "ThinkingDisplay",
    "ToolConfig",
    "ToolsPreset",
]

EffortLevel = Literal["low", "medium", "high", "xhigh", "max"]
"""How much effort the model spends (``--effort``)."""

SettingSource = Literal["user", "project", "local"]
"""A filesystem settings source the CLI may load (``--setting-sources``)."""

ThinkingDisplay = Literal["summarized", "omitted"]

SdkBeta = Literal["context-1m-2025-08-07"]
"""A beta feature the API may enable (``betas``, ``--betas``); other strings pass too."""


class SystemPromptPreset(TypedDict):
    """Claude Code's own system prompt, optionally with text appended.

    ``exclude_dynamic_sections`` and ``snapshot`` travel in ``initialize``
    (``excludeDynamicSections``, ``systemPromptSnapshot``).
    """

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    exclude_dynamic_sections: NotRequired[bool]
    snapshot: NotRequired[bool]


class SystemPromptCustom(TypedDict):
    """A custom system prompt with an optional ``snapshot`` flag (sent in ``initialize``).

    ``prompt`` is a string or, like a list ``system_prompt``, a list of blocks.
    """

    type: Literal["custom"]
    prompt: str | list[str]
    snapshot: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """A system prompt the CLI reads from a file (``--system-prompt-file``)."""

    type: Literal["file"]
    path: str


class ToolsPreset(TypedDict):
    """Claude Code's default set of built-in tools (``--tools default``)."""

    type: Literal["preset"]
    preset: Literal["claude_code"]


SandboxIgnoreViolations: TypeAlias = dict[str, list[str]]
"""Sandbox violations to ignore: a category (``"file"``, ``"network"``) to patterns."""


class SandboxNetworkConfig(TypedDict, total=False):
    """The ``network`` part of `SandboxSettings` (the CLI's camelCase keys).

    Attributes:
        allowedDomains: Domains sandboxed commands may reach.
        deniedDomains: Domains they may not reach.
        allowManagedDomainsOnly: Only the domains managed settings allow.
        allowUnixSockets: Unix socket paths they may use.
        allowAllUnixSockets: Any Unix socket.
        allowLocalBinding: Binding local ports.
        allowMachLookup: macOS Mach services they may look up.
        httpProxyPort: The port of an HTTP proxy to use.
        socksProxyPort: The port of a SOCKS proxy to use.
    """

    allowedDomains: list[str]
    deniedDomains: list[str]
    allowManagedDomainsOnly: bool
    allowUnixSockets: list[str]
    allowAllUnixSockets: bool
    allowLocalBinding: bool
    allowMachLookup: list[str]
    httpProxyPort: int
    socksProxyPort: int


class SandboxSettings(TypedDict, total=False):
    """Sandbox settings, merged into ``--settings`` under ``"sandbox"`` and passed through.

    Keys use the CLI's camelCase names; nested objects are passed on unchanged.
    """

    enabled: bool
    failIfUnavailable: bool
    autoAllowBashIfSandboxed: bool
    allowUnsandboxedCommands: bool
    excludedCommands: list[str]
    network: SandboxNetworkConfig
    filesystem: dict[str, Any]
    credentials: dict[str, Any]
    ignoreViolations: SandboxIgnoreViolations
    enableWeakerNestedSandbox: bool


class SdkPluginConfig(TypedDict):
    """A plugin loaded from a local directory (``--plugin-dir``).

    With ``skip_mcp_discovery`` its skills, hooks, agents and commands load, but not its
    MCP servers (``--plugin-dir-no-mcp``): for a host that owns those connections.
    """

    type: Literal["local"]
    path: str
    skip_mcp_discovery: NotRequired[bool]


class ThinkingConfigAdaptive(TypedDict):
    """Let the model decide when and how much to think (``--thinking adaptive``)."""

    type: Literal["adaptive"]
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigEnabled(TypedDict):
    """Extended thinking with a token budget (``--max-thinking-tokens N``)."""

    type: Literal["enabled"]
    budget_tokens: int
    display: NotRequired[ThinkingDisplay]


class ThinkingConfigDisabled(TypedDict):
    """No extended thinking (``--thinking disabled``)."""

    type: Literal["disabled"]


ThinkingConfig: TypeAlias = ThinkingConfigAdaptive | ThinkingConfigEnabled | ThinkingConfigDisabled
"""Any of the thinking configurations."""


class OutputFormat(TypedDict):
    """Structured output: the final result must match ``schema`` (``--json-schema``)."""

    type: Literal["json_schema"]
    schema: dict[str, Any]


class TaskBudget(TypedDict):
    """An API-side token budget for the whole task (``--task-budget N``)."""

    total: int


class AskUserQuestionConfig(TypedDict, total=False):
    """How the ``AskUserQuestion`` tool works (``ToolConfig["ask_user_question"]``).

    Attributes:
        preview_format: The format of the ``preview`` of question options the model
            writes: ``"markdown"`` (the CLI's default) or ``"html"`` (self-contained
            HTML fragments, for web front ends).
    """

    preview_format: Literal["markdown", "html"]


class ToolConfig(TypedDict, total=False):
    """Per-tool settings of built-in tools (``ClaudeAgentOptions.tool_config``).

    Attributes:
        ask_user_question: Settings of the ``AskUserQuestion`` tool.
    """

    ask_user_question: AskUserQuestionConfig
