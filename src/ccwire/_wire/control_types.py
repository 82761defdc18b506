"""Typed results of the runtime control requests (``client.mcp_status()`` and friends).

Plain frozen dataclasses; each keeps the CLI's whole answer in ``raw`` (excluded from
equality and ``repr``), so fields a newer CLI adds are never lost. Decoding from the
wire lives in `control_requests`.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AccountInfo",
    "AgentInfo",
    "ClaimResult",
    "CliVersion",
    "ContextCategory",
    "ContextUsage",
    "FileContents",
    "FileSuggestions",
    "HookEventInfo",
    "HookListingEntry",
    "HooksListing",
    "InterruptResult",
    "McpServerState",
    "McpServerTool",
    "McpSetServersResult",
    "ModelChange",
    "ModelInfo",
    "PermissionModeChange",
    "PermissionRuleInfo",
    "PermissionRules",
    "PluginReload",
    "RepoRootRegistration",
    "RewindFilesResult",
    "SessionUsage",
    "SettingsSnapshot",
    "SlashCommand",
    "TaskOutput",
    "UsageReport",
]


def _raw() -> Any:
    return field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ClaimResult:
    """The answer to a claim of a spare process (`SpareProcess`): the session it now is.

    Attributes:
        cwd: The canonical working directory the session runs in (``None`` when the
            CLI does not echo it).
        session_id: The session's id.
        parked_ms: How long the spare was parked before the claim, in milliseconds.
        sdk_mcp_settled: Whether the in-process MCP servers' handshakes had completed
            when the claim arrived (False: the first turn still waits for them).
        raw: The CLI's whole answer.
    """

    cwd: str | None
    session_id: str
    parked_ms: float | None = None
    sdk_mcp_settled: bool = False
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class InterruptResult:
    """The answer to ``interrupt``: prompts still queued and those cancelled (uuids).

    Older CLIs report nothing (both empty)."""

    still_queued: tuple[str, ...] = ()
    cancelled: tuple[str, ...] = ()
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class PermissionModeChange:
    """The answer to ``set_permission_mode``: the mode now in force (None if unreported)."""

    mode: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class ModelChange:
    """The answer to ``set_model``: the resolved model id (None if unreported)."""

    model: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class McpServerTool:
    """One tool of an MCP server as `mcp_status()` lists it.

    Called ``McpToolInfo`` in earlier ccwire releases; that name is now
    ``claude-agent-sdk``'s dict shape of the same thing (`get_mcp_status()` returns
    those).
    """

    name: str
    description: str | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class McpServerState:
    """One MCP server the CLI knows, as `mcp_status()` returns it.

    Called ``McpServerStatus`` in earlier ccwire releases; that name is now
    ``claude-agent-sdk``'s dict shape of the same thing (`get_mcp_status()` returns
    those).

    ``status`` is ``connected``, ``failed``, ``needs-auth``, ``pending`` or
    ``disabled``; ``source``/``scope`` tell where it came from (``sdk`` for in-process
    servers, ``dynamic`` for ``--mcp-config`` and ``mcp_set_servers``).
    """

    name: str
    status: str
    server_info: Mapping[str, Any] | None = None
    error: str | None = None
    config: Mapping[str, Any] | None = None
    scope: str | None = None
    source: str | None = None
    transport: str | None = None
    tools: tuple[McpServerTool, ...] = ()
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class McpSetServersResult:
    """The answer to ``mcp_set_servers``: names added and removed, errors by name."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class ContextCategory:
    """One slice of the context window (system tools, messages, free space, ...)."""

    name: str
    tokens: int
    color: str | None = None
    id: str | None = None
    kind: str | None = None
    is_deferred: bool | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class ContextUsage(dict[str, Any]):
    """The answer to ``get_context_usage``: how full the context window is.

    Also a dict of the CLI's answer, so code written for ``claude-agent-sdk`` (whose
    `ContextUsageResponse` is that dict) keeps working: ``usage["totalTokens"]`` and
    ``usage.total_tokens`` read the same number, and ``json.dumps(usage)`` works.
    """

    categories: tuple[ContextCategory, ...]
    total_tokens: int
    max_tokens: int
    raw_max_tokens: int | None = None
    percentage: float | None = None
    model: str | None = None
    is_auto_compact_enabled: bool | None = None
    auto_compact_threshold: int | None = None
    raw: Mapping[str, Any] = _raw()

    def __post_init__(self) -> None:
        dict.update(self, self.raw)


@dataclass(frozen=True)
class RewindFilesResult:
    """The answer to ``rewind_files``: whether files can be (or were) rewound, and how."""

    can_rewind: bool
    error: str | None = None
    files_changed: tuple[str, ...] = ()
    insertions: int | None = None
    deletions: int | None = None
    raw: Mapping[str, Any] = _raw()
    skipped_links: int | None = None
    """Files left as they were because a link was found at or above them (a real
    rewind only)."""


@dataclass(frozen=True)
class SettingsSnapshot:
    """The answer to ``get_settings``: merged settings, their sources, applied values."""

    effective: Mapping[str, Any]
    sources: tuple[Mapping[str, Any], ...] = ()
    applied: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class TaskOutput:
    """The answer to ``get_task_output``: a background task's output so far."""

    output: str
    total_bytes: int = 0
    truncated: bool = False
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class SlashCommand:
    """A slash command or skill the CLI offers.

    ``aliases`` are other names that run it; ``builtin`` is True for Claude Code's own
    commands (unset for those a user, project, plugin or MCP server defines).
    """

    name: str
    description: str = ""
    argument_hint: str = ""
    raw: Mapping[str, Any] = _raw()
    aliases: tuple[str, ...] = ()
    builtin: bool | None = None


@dataclass(frozen=True)
class PluginReload:
    """The answer to ``reload_plugins``.

    ``held`` is True when the reload was asked to hold on a cache impact and did:
    nothing was applied, and ``cache_impact`` says what applying would change
    (``mcp_servers_added``, ``mcp_servers_removed``, ``lsp_tool_change``); False when
    the check found none and the reload was applied; None when no check was asked for.
    """

    commands: tuple[SlashCommand, ...] = ()
    agents: tuple[Mapping[str, Any], ...] = ()
    plugins: tuple[Mapping[str, Any], ...] = ()
    mcp_servers: tuple[Mapping[str, Any], ...] = ()
    error_count: int = 0
    raw: Mapping[str, Any] = _raw()
    held: bool | None = None
    cache_impact: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ModelInfo:
    """A model the CLI offers (``list_models``, ``supported_models()``)."""

    value: str
    display_name: str = ""
    description: str = ""
    resolved_model: str | None = None
    raw: Mapping[str, Any] = _raw()
    supports_effort: bool | None = None
    supported_effort_levels: tuple[str, ...] | None = None
    supports_adaptive_thinking: bool | None = None
    supports_fast_mode: bool | None = None
    supports_auto_mode: bool | None = None


@dataclass(frozen=True)
class AgentInfo:
    """A subagent the session can use (``supported_agents()``).

    Attributes:
        name: Its type (``"Explore"``, a name from ``agents``, ...).
        description: When to use it.
        model: Its model alias or id, ``"inherit"``, or None for the default.
        raw: The entry as the CLI sent it.
    """

    name: str
    description: str = ""
    model: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class AccountInfo:
    """The account the CLI signed in with (``account_info()``).

    Attributes:
        email: The account's email, for a claude.ai login.
        organization: Its organization.
        subscription_type: Its plan.
        token_source: Where its token came from.
        api_key_source: Where the API key came from (``ANTHROPIC_API_KEY``,
            ``apiKeyHelper``, ``/login managed key``, ``none``).
        api_provider: The API backend: ``firstParty``, ``bedrock``, ``vertex``,
            ``foundry``, ``gateway``, ...
        raw: The answer as the CLI sent it.
    """

    email: str | None = None
    organization: str | None = None
    subscription_type: str | None = None
    token_source: str | None = None
    api_key_source: str | None = None
    api_provider: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class CliVersion:
    """The CLI binary's version and build time (``get_binary_version``)."""

    version: str
    build_time: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class FileContents:
    """The answer to ``read_file``: a file as the CLI reads it (its permission rules apply).

    ``contents`` is text, or base64 when ``encoding == "base64"`` (`as_bytes()`
    decodes either); ``truncated`` when ``max_bytes`` cut it; ``lossy`` when text
    decoding replaced invalid bytes.
    """

    contents: str
    abs_path: str | None = None
    truncated: bool = False
    encoding: str | None = None
    lossy: bool | None = None
    raw: Mapping[str, Any] = _raw()

    def as_bytes(self) -> bytes:
        """The contents as bytes (base64-decoded, or the text encoded as UTF-8)."""
        if self.encoding == "base64":
            return base64.b64decode(self.contents)
        return self.contents.encode("utf-8")


@dataclass(frozen=True)
class RepoRootRegistration:
    """The answer to ``register_repo_root``: the directory now registered (resolved)."""

    directory: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class HookEventInfo:
    """A hook event in ``get_hooks_listing``: name, summary, whether it takes a matcher
    and (in ``events``) how many hooks are configured for it."""

    name: str
    summary: str = ""
    supports_matcher: bool | None = None
    hook_count: int | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class HookListingEntry:
    """One configured hook in ``get_hooks_listing`` (settings, plugin or policy hooks)."""

    event: str
    matcher: str | None = None
    source: str | None = None
    source_label: str | None = None
    type: str | None = None
    display_text: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class HooksListing:
    """The answer to ``get_hooks_listing``: the hooks configured in the CLI's settings.

    ``events`` has the events with hooks, ``hooks`` the hooks themselves,
    ``event_catalog`` every event the CLI knows, ``policy`` what policy allows.
    Hooks registered through ``ClaudeAgentOptions.hooks`` are not listed."""

    events: tuple[HookEventInfo, ...] = ()
    hooks: tuple[HookListingEntry, ...] = ()
    event_catalog: tuple[HookEventInfo, ...] = ()
    policy: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class FileSuggestions:
    """The answer to ``file_suggestions``: matching paths (relative to ``cwd``)."""

    paths: tuple[str, ...] = ()
    cwd: str | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class SessionUsage:
    """Totals of the CLI process so far (``get_usage`` ``session``)."""

    total_cost_usd: float = 0.0
    total_api_duration_ms: int = 0
    total_duration_ms: int = 0
    total_lines_added: int = 0
    total_lines_removed: int = 0
    model_usage: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class UsageReport:
    """The answer to ``get_usage``: this session's cost and usage, and the account's
    rate limits when the CLI knows them (``rate_limits_available``)."""

    session: SessionUsage
    subscription_type: str | None = None
    rate_limits_available: bool = False
    rate_limits: Mapping[str, Any] | None = None
    behaviors: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class PermissionRuleInfo:
    """One permission rule in force (``list_permission_rules``).

    ``rule`` is the rule text (``Bash(ls:*)``), ``behavior`` ``allow``/``deny``/``ask``,
    ``source`` where it came from (``cliArg``, ``flagSettings``, ``localSettings``, ...),
    ``editability`` whether it can be changed (``session``, ``readonly``, ...)."""

    rule: str
    behavior: str
    source: str | None = None
    editability: str | None = None
    description: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = _raw()


@dataclass(frozen=True)
class PermissionRules:
    """The answer to ``list_permission_rules``: the rules and working directories in
    force."""

    rules: tuple[PermissionRuleInfo, ...] = ()
    workspace_directories: tuple[Mapping[str, Any], ...] = ()
    original_cwd: str | None = None
    managed_only: bool | None = None
    raw: Mapping[str, Any] = _raw()
