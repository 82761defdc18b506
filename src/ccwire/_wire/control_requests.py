"""The wire side of the runtime control requests.

Subtype names, request fields and the decoding of each answer into the typed results
of `control_types` live here (what the connected CLI supports is
`features`). Decoders are lenient: a missing or mistyped field gets its
default, and the whole answer stays in ``raw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .control_types import (
    AccountInfo,
    AgentInfo,
    ClaimResult,
    CliVersion,
    ContextCategory,
    ContextUsage,
    FileContents,
    FileSuggestions,
    HookEventInfo,
    HookListingEntry,
    HooksListing,
    InterruptResult,
    McpServerState,
    McpServerTool,
    McpSetServersResult,
    ModelChange,
    ModelInfo,
    PermissionModeChange,
    PermissionRuleInfo,
    PermissionRules,
    PluginReload,
    RepoRootRegistration,
    RewindFilesResult,
    SessionUsage,
    SettingsSnapshot,
    SlashCommand,
    TaskOutput,
    UsageReport,
)

__all__ = ["claim_session_fields", "decode_claim", "mcp_server_fields", "optional_fields"]

SET_MAX_THINKING_TOKENS = "set_max_thinking_tokens"
REWIND_FILES = "rewind_files"
MCP_STATUS = "mcp_status"
MCP_RECONNECT = "mcp_reconnect"
MCP_TOGGLE = "mcp_toggle"
MCP_SET_SERVERS = "mcp_set_servers"
MCP_CALL = "mcp_call"
MCP_READ_RESOURCE = "mcp_read_resource"
GET_CONTEXT_USAGE = "get_context_usage"
STOP_TASK = "stop_task"
BACKGROUND_TASKS = "background_tasks"
GET_TASK_OUTPUT = "get_task_output"
CANCEL_ASYNC_MESSAGE = "cancel_async_message"
APPLY_FLAG_SETTINGS = "apply_flag_settings"
GET_SETTINGS = "get_settings"
UPDATE_SETTINGS = "update_settings"
RENAME_SESSION = "rename_session"
RELOAD_PLUGINS = "reload_plugins"
RELOAD_SKILLS = "reload_skills"
LIST_MODELS = "list_models"
GET_BINARY_VERSION = "get_binary_version"
LIST_PERMISSION_RULES = "list_permission_rules"
GET_USAGE = "get_usage"
GET_SESSION_COST = "get_session_cost"
SET_COLOR = "set_color"
SEED_READ_STATE = "seed_read_state"
READ_FILE = "read_file"
REGISTER_REPO_ROOT = "register_repo_root"
RELOAD_OUTPUT_STYLES = "reload_output_styles"
GET_HOOKS_LISTING = "get_hooks_listing"
FILE_SUGGESTIONS = "file_suggestions"
SET_HAS_SUBSCRIBERS = "set_has_subscribers"
SET_MCP_PERMISSION_MODE_OVERRIDE = "set_mcp_permission_mode_override"
CLAIM_SESSION = "claim_session"

CLAIMABLE_ENV = frozenset(
    {"CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_SESSION_ACCESS_TOKEN", "CLAUDE_CODE_HOST_SESSION_ID"}
)
"""The only variables a claim may add (the rest are read at start-up: the spare's own)."""

HOOK_SETTING_KEYS = (
    "hooks",
    "disableAllHooks",
    "allowManagedHooksOnly",
    "allowedHttpHookUrls",
    "httpHookAllowedEnvVars",
)
"""Settings a claim's overlay may not carry: they govern hooks, fixed at start-up."""

SETTINGS_BEHIND_CLAIM = frozenset(
    {"model", "agent", "fastMode", "permissions", "availableModels", "disableAutoMode"}
)
"""Overlay keys applied right behind the claim; the others go ahead of it (they decide
which of the folder's MCP servers and plugins the claim starts)."""

# ------------------------------------------------------------------------- decoding


def claim_session_fields(
    *,
    cwd: str,
    env: Mapping[str, str] | None,
    additional_directories: list[str] | None,
    permission_mode: str | None,
    append_system_prompt: str | None,
    title: str | None,
    agents: Mapping[str, Any] | None,
    sdk_mcp_servers: list[str],
    include_initialize: bool,
) -> dict[str, Any]:
    """The fields of a ``claim_session`` request (``agents`` already in wire form);
    ``include_initialize`` asks for the claimed session's initialize payload."""
    fields: dict[str, Any] = {"cwd": cwd}
    fields.update(
        optional_fields(
            env=dict(env) if env else None,
            additional_directories=additional_directories or None,
            permission_mode=permission_mode,
            append_system_prompt=append_system_prompt,
            title=title,
            agents=dict(agents) if agents else None,
        )
    )
    fields["sdk_mcp_servers"] = sdk_mcp_servers
    fields["include_initialize"] = include_initialize
    return fields


def decode_claim(r: Mapping[str, Any]) -> ClaimResult:
    """``claim_session`` answer."""
    parked = r.get("parked_ms")
    return ClaimResult(
        cwd=_opt_str(r.get("cwd")),
        session_id=_str(r.get("session_id")),
        parked_ms=float(parked) if isinstance(parked, (int, float)) else None,
        sdk_mcp_settled=r.get("sdk_mcp_settled") is True,
        raw=r,
    )


def claim_initialize(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The initialize-shaped payload a ``claim_session`` answer carries, if any."""
    payload = r.get("initialize")
    return payload if isinstance(payload, Mapping) else None


def _str(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _opt_bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _opt_map(v: Any) -> Mapping[str, Any] | None:
    return v if isinstance(v, Mapping) else None


def _strs(v: Any) -> tuple[str, ...]:
    return tuple(x for x in v if isinstance(x, str)) if isinstance(v, list) else ()


def _maps(v: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(x for x in v if isinstance(x, Mapping)) if isinstance(v, list) else ()


def decode_interrupt(r: Mapping[str, Any]) -> InterruptResult:
    """``interrupt`` answer."""
    return InterruptResult(_strs(r.get("still_queued")), _strs(r.get("cancelled")), raw=r)


def decode_permission_mode(r: Mapping[str, Any]) -> PermissionModeChange:
    """``set_permission_mode`` answer."""
    return PermissionModeChange(_opt_str(r.get("mode")), raw=r)


def decode_model(r: Mapping[str, Any]) -> ModelChange:
    """``set_model`` answer."""
    return ModelChange(_opt_str(r.get("model")), raw=r)


def _tool(t: Mapping[str, Any]) -> McpServerTool:
    return McpServerTool(
        name=_str(t.get("name")),
        description=_opt_str(t.get("description")),
        annotations=_opt_map(t.get("annotations")),
        meta=_opt_map(t.get("_meta")),
        raw=t,
    )


def decode_mcp_status(r: Mapping[str, Any]) -> list[McpServerState]:
    """``mcp_status`` answer: one status per server."""
    return [
        McpServerState(
            name=_str(s.get("name")),
            status=_str(s.get("status")),
            server_info=_opt_map(s.get("serverInfo")),
            error=_opt_str(s.get("error")),
            config=_opt_map(s.get("config")),
            scope=_opt_str(s.get("scope")),
            source=_opt_str(s.get("source")),
            transport=_opt_str(s.get("transport")),
            tools=tuple(_tool(t) for t in _maps(s.get("tools"))),
            raw=s,
        )
        for s in _maps(r.get("mcpServers"))
    ]


def mcp_status_response(r: Mapping[str, Any]) -> dict[str, Any]:
    """``mcp_status`` answer as ``claude-agent-sdk`` returns it: the answer's own dict,
    with ``mcpServers`` a list (empty when the CLI sent none)."""
    answer = dict(r)
    answer["mcpServers"] = [dict(s) for s in _maps(r.get("mcpServers"))]
    return answer


def decode_set_servers(r: Mapping[str, Any]) -> McpSetServersResult:
    """``mcp_set_servers`` answer."""
    errors = r.get("errors")
    return McpSetServersResult(
        added=_strs(r.get("added")),
        removed=_strs(r.get("removed")),
        errors={str(k): str(v) for k, v in errors.items()} if isinstance(errors, Mapping) else {},
        raw=r,
    )


def decode_context_usage(r: Mapping[str, Any]) -> ContextUsage:
    """``get_context_usage`` answer."""
    pct = r.get("percentage")
    return ContextUsage(
        categories=tuple(
            ContextCategory(
                name=_str(c.get("name")),
                tokens=_opt_int(c.get("tokens")) or 0,
                color=_opt_str(c.get("color")),
                id=_opt_str(c.get("id")),
                kind=_opt_str(c.get("kind")),
                is_deferred=_opt_bool(c.get("isDeferred")),
                raw=c,
            )
            for c in _maps(r.get("categories"))
        ),
        total_tokens=_opt_int(r.get("totalTokens")) or 0,
        max_tokens=_opt_int(r.get("maxTokens")) or 0,
        raw_max_tokens=_opt_int(r.get("rawMaxTokens")),
        percentage=float(pct) if isinstance(pct, (int, float)) else None,
        model=_opt_str(r.get("model")),
        is_auto_compact_enabled=_opt_bool(r.get("isAutoCompactEnabled")),
        auto_compact_threshold=_opt_int(r.get("autoCompactThreshold")),
        raw=r,
    )


def decode_rewind(r: Mapping[str, Any]) -> RewindFilesResult:
    """``rewind_files`` answer."""
    return RewindFilesResult(
        can_rewind=r.get("canRewind") is True,
        error=_opt_str(r.get("error")),
        files_changed=_strs(r.get("filesChanged")),
        insertions=_opt_int(r.get("insertions")),
        deletions=_opt_int(r.get("deletions")),
        raw=r,
        skipped_links=_opt_int(r.get("skippedLinks")),
    )


def decode_settings(r: Mapping[str, Any]) -> SettingsSnapshot:
    """``get_settings`` answer."""
    return SettingsSnapshot(
        effective=_opt_map(r.get("effective")) or {},
        sources=_maps(r.get("sources")),
        applied=_opt_map(r.get("applied")) or {},
        raw=r,
    )


def decode_task_output(r: Mapping[str, Any]) -> TaskOutput:
    """``get_task_output`` answer."""
    return TaskOutput(
        output=_str(r.get("output")),
        total_bytes=_opt_int(r.get("total_bytes")) or 0,
        truncated=r.get("truncated") is True,
        raw=r,
    )


def decode_command(c: Mapping[str, Any]) -> SlashCommand:
    """One slash command or skill."""
    return SlashCommand(
        name=_str(c.get("name")),
        description=_str(c.get("description")),
        argument_hint=_str(c.get("argumentHint")),
        raw=c,
        aliases=_strs(c.get("aliases")),
        builtin=_opt_bool(c.get("builtin")),
    )


def decode_commands(commands: Any) -> list[SlashCommand]:
    """A list of slash commands (``initialize``'s ``commands``, ``commands_changed``)."""
    return [decode_command(c) for c in _maps(commands)]


def decode_agents(r: Mapping[str, Any]) -> list[AgentInfo]:
    """``initialize``'s ``agents``: the subagents the session can use."""
    return [
        AgentInfo(
            name=_str(a.get("name")),
            description=_str(a.get("description")),
            model=_opt_str(a.get("model")),
            raw=a,
        )
        for a in _maps(r.get("agents"))
    ]


def decode_account(r: Mapping[str, Any]) -> AccountInfo:
    """``initialize``'s ``account``."""
    a = _opt_map(r.get("account")) or {}
    return AccountInfo(
        email=_opt_str(a.get("email")),
        organization=_opt_str(a.get("organization")),
        subscription_type=_opt_str(a.get("subscriptionType")),
        token_source=_opt_str(a.get("tokenSource")),
        api_key_source=_opt_str(a.get("apiKeySource")),
        api_provider=_opt_str(a.get("apiProvider")),
        raw=a,
    )


def mcp_permission_mode_override_fields(name: str, mode: str | None) -> dict[str, Any]:
    """Fields of ``set_mcp_permission_mode_override`` (``mode`` None clears it)."""
    return {"serverName": name, "mode": mode}


def reload_plugins_fields(
    refuse_if_busy: bool | None,
    hold_on_cache_impact: bool | None,
    add_plugins: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """Fields of ``reload_plugins``: the TypeScript SDK sends ``hold_on_cache_impact``
    only when true and ``add_plugins`` only when not empty."""
    fields = optional_fields(refuse_if_busy=refuse_if_busy)
    if hold_on_cache_impact:
        fields["hold_on_cache_impact"] = True
    if add_plugins:
        fields["add_plugins"] = add_plugins
    return fields


def decode_skills(r: Mapping[str, Any]) -> list[SlashCommand]:
    """``reload_skills`` answer."""
    return [decode_command(c) for c in _maps(r.get("skills"))]


def decode_plugin_reload(r: Mapping[str, Any]) -> PluginReload:
    """``reload_plugins`` answer."""
    return PluginReload(
        commands=tuple(decode_command(c) for c in _maps(r.get("commands"))),
        agents=_maps(r.get("agents")),
        plugins=_maps(r.get("plugins")),
        mcp_servers=_maps(r.get("mcpServers")),
        error_count=_opt_int(r.get("error_count")) or 0,
        raw=r,
        held=_opt_bool(r.get("held")),
        cache_impact=_opt_map(r.get("cache_impact")),
    )


def decode_models(r: Mapping[str, Any]) -> list[ModelInfo]:
    """``list_models`` answer (and ``initialize``'s ``models``)."""
    return [
        ModelInfo(
            value=_str(m.get("value")),
            display_name=_str(m.get("displayName")),
            description=_str(m.get("description")),
            resolved_model=_opt_str(m.get("resolvedModel")),
            raw=m,
            supports_effort=_opt_bool(m.get("supportsEffort")),
            supported_effort_levels=_strs(m.get("supportedEffortLevels"))
            if isinstance(m.get("supportedEffortLevels"), list)
            else None,
            supports_adaptive_thinking=_opt_bool(m.get("supportsAdaptiveThinking")),
            supports_fast_mode=_opt_bool(m.get("supportsFastMode")),
            supports_auto_mode=_opt_bool(m.get("supportsAutoMode")),
        )
        for m in _maps(r.get("models"))
    ]


def decode_version(r: Mapping[str, Any]) -> CliVersion:
    """``get_binary_version`` answer."""
    return CliVersion(_str(r.get("version")), _opt_str(r.get("buildTime")), raw=r)


def decode_file_contents(r: Mapping[str, Any]) -> FileContents:
    """``read_file`` answer."""
    return FileContents(
        contents=_str(r.get("contents")),
        abs_path=_opt_str(r.get("absPath")),
        truncated=r.get("truncated") is True,
        encoding=_opt_str(r.get("encoding")),
        lossy=_opt_bool(r.get("lossy")),
        raw=r,
    )


def decode_repo_root(r: Mapping[str, Any]) -> RepoRootRegistration:
    """``register_repo_root`` answer."""
    return RepoRootRegistration(_opt_str(r.get("directory")), raw=r)


def decode_output_styles(r: Mapping[str, Any]) -> list[str]:
    """``reload_output_styles`` answer: the names of the output styles available."""
    return list(_strs(r.get("available_output_styles")))


def _hook_event(e: Mapping[str, Any]) -> HookEventInfo:
    return HookEventInfo(
        name=_str(e.get("name")),
        summary=_str(e.get("summary")),
        supports_matcher=_opt_bool(e.get("supportsMatcher")),
        hook_count=_opt_int(e.get("hookCount")),
        raw=e,
    )


def decode_hooks_listing(r: Mapping[str, Any]) -> HooksListing:
    """``get_hooks_listing`` answer."""
    return HooksListing(
        events=tuple(_hook_event(e) for e in _maps(r.get("events"))),
        hooks=tuple(
            HookListingEntry(
                event=_str(h.get("event")),
                matcher=_opt_str(h.get("matcher")),
                source=_opt_str(h.get("source")),
                source_label=_opt_str(h.get("sourceLabel")),
                type=_opt_str(h.get("type")),
                display_text=_opt_str(h.get("displayText")),
                raw=h,
            )
            for h in _maps(r.get("hooks"))
        ),
        event_catalog=tuple(_hook_event(e) for e in _maps(r.get("eventCatalog"))),
        policy=_opt_map(r.get("policy")),
        raw=r,
    )


def decode_file_suggestions(r: Mapping[str, Any]) -> FileSuggestions:
    """``file_suggestions`` answer."""
    paths = tuple(
        p for p in (_opt_str(s.get("path")) for s in _maps(r.get("suggestions"))) if p is not None
    )
    return FileSuggestions(paths=paths, cwd=_opt_str(r.get("cwd")), raw=r)


def decode_usage(r: Mapping[str, Any]) -> UsageReport:
    """``get_usage`` answer."""
    s = _opt_map(r.get("session")) or {}
    model_usage = _opt_map(s.get("model_usage")) or {}
    return UsageReport(
        session=SessionUsage(
            total_cost_usd=_num(s.get("total_cost_usd")),
            total_api_duration_ms=_opt_int(s.get("total_api_duration_ms")) or 0,
            total_duration_ms=_opt_int(s.get("total_duration_ms")) or 0,
            total_lines_added=_opt_int(s.get("total_lines_added")) or 0,
            total_lines_removed=_opt_int(s.get("total_lines_removed")) or 0,
            model_usage={str(k): v for k, v in model_usage.items() if isinstance(v, Mapping)},
            raw=s,
        ),
        subscription_type=_opt_str(r.get("subscription_type")),
        rate_limits_available=r.get("rate_limits_available") is True,
        rate_limits=_opt_map(r.get("rate_limits")),
        behaviors=_opt_map(r.get("behaviors")),
        raw=r,
    )


def decode_permission_rules(r: Mapping[str, Any]) -> PermissionRules:
    """``list_permission_rules`` answer (the rules are in its ``state``)."""
    state = _opt_map(r.get("state")) or r
    return PermissionRules(
        rules=tuple(
            PermissionRuleInfo(
                rule=_str(x.get("rule")),
                behavior=_str(x.get("behavior")),
                source=_opt_str(x.get("source")),
                editability=_opt_str(x.get("editability")),
                description=_opt_map(x.get("description")),
                raw=x,
            )
            for x in _maps(state.get("rules"))
        ),
        workspace_directories=_maps(state.get("workspaceDirectories")),
        original_cwd=_opt_str(state.get("originalCwd")),
        managed_only=_opt_bool(state.get("managedOnly")),
        raw=r,
    )


# ----------------------------------------------------------------- request fields


def mcp_server_fields(name: str) -> dict[str, Any]:
    """Fields naming one MCP server (``mcp_reconnect``)."""
    return {"serverName": name}


def mcp_toggle_fields(name: str, enabled: bool) -> dict[str, Any]:
    """Fields of ``mcp_toggle``."""
    return {"serverName": name, "enabled": enabled}


def mcp_read_resource_fields(server: str, uri: str) -> dict[str, Any]:
    """Fields of ``mcp_read_resource``."""
    return {"serverName": server, "uri": uri}


def optional_fields(**values: Any) -> dict[str, Any]:
    """The given fields without the ``None`` ones (their names are the wire names)."""
    return {k: v for k, v in values.items() if v is not None}
