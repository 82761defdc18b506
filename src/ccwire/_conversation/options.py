"""``ClaudeAgentOptions``: everything that configures one CLI session, plus its small types.

The options are a plain, mutable dataclass (as in the reference SDK). Turning them into
the CLI's argv, environment and ``initialize`` fields is done by the pure functions in
`argv`; this module only holds data and a few cheap sanity checks.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal, TypeVar, get_args

# the annotations name the lazy ``_core.Path``, ``_conversation.audit``...: get_type_hints()
# resolves them, and ``import ccwire`` still loads none of them (pathlib alone costs 2.5 ms)
from .. import _conversation, _core, _transport
from .._core.errors import CallbackError, OptionsError
from .._core.origin import ReferenceOrigin
from .._core.redact import is_secret_key, redact_text
from .._mcp.config import McpServerConfig
from .._wire.dialog_types import OnElicitation, OnUserDialog
from .._wire.hook_types import HookEvent, HookMatcher
from .._wire.permission_types import CanUseTool, PermissionMode
from .option_types import (
    AskUserQuestionConfig as AskUserQuestionConfig,
    EffortLevel as EffortLevel,
    OutputFormat as OutputFormat,
    SandboxIgnoreViolations as SandboxIgnoreViolations,
    SandboxNetworkConfig as SandboxNetworkConfig,
    SandboxSettings as SandboxSettings,
    SdkBeta as SdkBeta,
    SdkPluginConfig as SdkPluginConfig,
    SettingSource as SettingSource,
    SystemPromptCustom as SystemPromptCustom,
    SystemPromptFile as SystemPromptFile,
    SystemPromptPreset as SystemPromptPreset,
    TaskBudget as TaskBudget,
    ThinkingConfig as ThinkingConfig,
    ThinkingConfigAdaptive as ThinkingConfigAdaptive,
    ThinkingConfigDisabled as ThinkingConfigDisabled,
    ThinkingConfigEnabled as ThinkingConfigEnabled,
    ThinkingDisplay as ThinkingDisplay,
    ToolConfig as ToolConfig,
    ToolsPreset as ToolsPreset,
)

__all__ = [
    "CLI_ENV_ALLOWLIST",
    "AgentDefinition",
    "AskUserQuestionConfig",
    "ClaudeAgentOptions",
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
    "ToolConfig",
    "ToolsPreset",
]

logger = logging.getLogger("ccwire")


@dataclass
class AgentDefinition:
    """A programmatic subagent, sent in ``initialize`` ``agents`` with camelCase keys.

    ``None`` fields are left out on the wire (``tools=None`` means: inherit all tools).
    ``mcpServers`` lists server names or ``{name: config}`` mappings.

    The fields are claude-agent-sdk's, with its camelCase names (``disallowedTools``,
    ``mcpServers``, ``initialPrompt``, ``maxTurns``, ``permissionMode``), so
    ``dataclasses.asdict()`` gives the same dict. Each also takes and reads under its
    snake_case name (``max_turns=3``, ``agent.max_turns``). The TypeScript SDK's further
    fields are here too: ``autoCompactWindow`` (tokens at which the agent compacts its
    own conversation as a subagent; at least 100 000, or the CLI leaves the agent out),
    ``omitClaudeMd`` (run as a subagent without the
    user, project and local CLAUDE.md files), ``observer`` (an agent type, or up to four
    comma-separated, started as a background observer of this one),
    ``observerMessage`` (appended to each activity digest the observer gets) and
    ``criticalSystemReminder_EXPERIMENTAL`` (a reminder added to its system prompt).

    Raises:
        ValueError: When a field and its snake_case alias are both passed, with
            different values.
    """

    description: str
    prompt: str
    tools: Sequence[str] | None = None
    disallowedTools: Sequence[str] | None = None
    model: str | None = None
    skills: Sequence[str] | None = None
    memory: Literal["user", "project", "local"] | None = None
    mcpServers: Sequence[str | Mapping[str, McpServerConfig]] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: EffortLevel | int | None = None
    permissionMode: PermissionMode | None = None
    autoCompactWindow: int | None = None
    omitClaudeMd: bool | None = None
    observer: str | None = None
    observerMessage: str | None = None
    criticalSystemReminder_EXPERIMENTAL: str | None = None

    def __init__(
        self,
        description: str,
        prompt: str,
        tools: Sequence[str] | None = None,
        disallowedTools: Sequence[str] | None = None,
        model: str | None = None,
        skills: Sequence[str] | None = None,
        memory: Literal["user", "project", "local"] | None = None,
        mcpServers: Sequence[str | Mapping[str, McpServerConfig]] | None = None,
        initialPrompt: str | None = None,
        maxTurns: int | None = None,
        background: bool | None = None,
        effort: EffortLevel | int | None = None,
        permissionMode: PermissionMode | None = None,
        autoCompactWindow: int | None = None,
        omitClaudeMd: bool | None = None,
        observer: str | None = None,
        observerMessage: str | None = None,
        criticalSystemReminder_EXPERIMENTAL: str | None = None,
        *,
        disallowed_tools: Sequence[str] | None = None,
        mcp_servers: Sequence[str | Mapping[str, McpServerConfig]] | None = None,
        initial_prompt: str | None = None,
        max_turns: int | None = None,
        permission_mode: PermissionMode | None = None,
        auto_compact_window: int | None = None,
        omit_claude_md: bool | None = None,
        observer_message: str | None = None,
        critical_system_reminder_experimental: str | None = None,
    ) -> None:
        given = dict(locals())
        for name in _AGENT_PLAIN_FIELDS:
            object.__setattr__(self, name, given[name])
        for snake, camel in AGENT_FIELD_ALIASES.items():
            a, b = given[snake], given[camel]
            if a is not None and b is not None and a != b:
                raise OptionsError(
                    f"AgentDefinition: {snake}={a!r} and {camel}={b!r} disagree; pass one"
                )
            object.__setattr__(self, camel, a if a is not None else b)

    # the snake_case names of the camelCase fields
    @property
    def disallowed_tools(self) -> Sequence[str] | None:
        """Same as ``disallowedTools``: tools the agent may not use."""
        return self.disallowedTools

    @property
    def mcp_servers(self) -> Sequence[str | Mapping[str, McpServerConfig]] | None:
        """Same as ``mcpServers``: server names or ``{name: config}`` mappings."""
        return self.mcpServers

    @property
    def initial_prompt(self) -> str | None:
        """Same as ``initialPrompt``: the agent's first user turn."""
        return self.initialPrompt

    @property
    def max_turns(self) -> int | None:
        """Same as ``maxTurns``: the agent's turn limit."""
        return self.maxTurns

    @property
    def permission_mode(self) -> PermissionMode | None:
        """Same as ``permissionMode``: the agent's permission mode."""
        return self.permissionMode

    @property
    def auto_compact_window(self) -> int | None:
        """Same as ``autoCompactWindow``: tokens at which it compacts as a subagent."""
        return self.autoCompactWindow

    @property
    def omit_claude_md(self) -> bool | None:
        """Same as ``omitClaudeMd``: run as a subagent without the CLAUDE.md files."""
        return self.omitClaudeMd

    @property
    def observer_message(self) -> str | None:
        """Same as ``observerMessage``: appended to each digest its observer gets."""
        return self.observerMessage

    @property
    def critical_system_reminder_experimental(self) -> str | None:
        """Same as ``criticalSystemReminder_EXPERIMENTAL``."""
        return self.criticalSystemReminder_EXPERIMENTAL


AGENT_FIELD_ALIASES: dict[str, str] = {
    "disallowed_tools": "disallowedTools",
    "mcp_servers": "mcpServers",
    "initial_prompt": "initialPrompt",
    "max_turns": "maxTurns",
    "permission_mode": "permissionMode",
    "auto_compact_window": "autoCompactWindow",
    "omit_claude_md": "omitClaudeMd",
    "observer_message": "observerMessage",
    "critical_system_reminder_experimental": "criticalSystemReminder_EXPERIMENTAL",
}
"""`AgentDefinition`'s snake_case names and its camelCase fields (claude-agent-sdk's)."""

_AGENT_PLAIN_FIELDS = (
    "description",
    "prompt",
    "tools",
    "model",
    "skills",
    "memory",
    "background",
    "effort",
    "observer",
)


CLI_ENV_ALLOWLIST: tuple[str, ...] = (
    # the process basics
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "XDG_*",
    # Claude Code and the Anthropic API (CLAUDE_CODE_USE_BEDROCK/VERTEX/FOUNDRY included)
    "ANTHROPIC_*",
    "CLAUDE_*",
    "DISABLE_*",
    "MCP_*",
    "ENABLE_TOOL_SEARCH",
    # Amazon Bedrock, Google Vertex AI, Microsoft Foundry credentials and regions
    "AWS_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "CLOUDSDK_CONFIG",
    "CLOUD_ML_REGION",
    "VERTEX_REGION_*",
    "AZURE_*",
    # network: proxies and certificates
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    # Windows
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "HOMEDRIVE",
    "HOMEPATH",
)
"""What the CLI needs from this process's environment: the hardened choice for
``inherit_env``.

By default the CLI inherits every variable (but ``CLAUDECODE``), as with
``claude-agent-sdk``. ``inherit_env=CLI_ENV_ALLOWLIST`` lets through only these names
and shell-style patterns (``LC_*``): the basics, the CLI's and the cloud providers'
variables, proxies and certificates, so that other secrets of this process stay out of
the CLI's reach. Extend it with ``inherit_env=[*CLI_ENV_ALLOWLIST, "SSH_AUTH_SOCK"]``."""


def normalize_inherit_env(value: object) -> bool | tuple[str, ...]:
    """``inherit_env`` as a bool or a tuple of names/patterns; ``TypeError`` otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise OptionsError(
            "inherit_env must be True, False or an iterable of variable names/patterns, "
            f"got {value!r}"
        )
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            raise OptionsError(f"inherit_env entries must be non-empty strings, got {name!r}")
    return names


_SKILL_FORBIDDEN = frozenset("(),*")


def check_skill_name(name: object) -> None:
    """Raise ``ValueError`` unless ``name`` is a usable skill name."""
    if not isinstance(name, str) or not name.strip():
        raise OptionsError(f"skill names must be non-empty strings, got {name!r}")
    bad = sorted(c for c in set(name) if c in _SKILL_FORBIDDEN)
    if bad:
        raise OptionsError(f"skill name {name!r} must not contain {''.join(bad)!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise OptionsError(f"skill name {name!r} must not contain control characters")
    if name.startswith("/"):
        raise OptionsError(f"skill name {name!r} must not start with '/'")


def named_mcp_servers(value: object) -> Mapping[str, McpServerConfig] | None:
    """``mcp_servers`` as server configs by name, or None for a config file path or JSON
    text (and for None).

    Raises:
        TypeError: Anything else, such as a list of servers (each needs its name).
    """
    if value is None or isinstance(value, (str, os.PathLike)):
        return None
    if not isinstance(value, Mapping):
        raise OptionsError(
            "mcp_servers must be a dict of server configs by name ({'calc': server}), "
            f"a config file path or JSON text, got {type(value).__name__}"
        )
    if isinstance(value.get("type"), str) or isinstance(value.get("command"), str):
        name = value.get("name")
        name = name if isinstance(name, str) and name else "name"
        raise OptionsError(
            "mcp_servers must be a dict of server configs by name, got one server's config: "
            f"write mcp_servers={{{name!r}: server}} (the key names the server's tools: "
            f"'mcp__{name}__<tool>')"
        )
    for name, config in value.items():
        if not isinstance(config, Mapping):
            _check_server_value(name, config)
    return value


def checked_mcp_servers(value: object) -> Mapping[str, McpServerConfig]:
    """The ``servers`` given to ``mcp_set_servers()``: server configs by name, each
    checked as ``options.mcp_servers`` are.

    Raises:
        OptionsError: Anything else (a file path or JSON text too), or a config the CLI
            cannot read.
    """
    if not isinstance(value, Mapping):
        raise OptionsError(
            "MCP servers must be given as a dict of server configs by name "
            f"({{'calc': server}}), got {type(value).__name__}"
        )
    servers = named_mcp_servers(value)
    assert servers is not None  # a mapping: checked, or it raised
    _check_mcp_configs(servers)
    return servers


def _check_mcp_configs(
    servers: Mapping[str, object], options: ClaudeAgentOptions | None = None
) -> None:
    for server, config in servers.items():
        if isinstance(config, Mapping):
            _check_mcp_config(server, config, options)


def _check_server_value(name: object, config: object) -> None:
    """Refuse a tool, or a list of them, given where a server goes (``{"calc": add}``)."""
    from .._mcp.tools import SdkMcpTool  # loaded already by whoever made a tool

    items = config if isinstance(config, (list, tuple)) else [config]
    tools = [item for item in items if isinstance(item, SdkMcpTool)]
    if tools or isinstance(config, (list, tuple)):
        listed = ", ".join(getattr(t.handler, "__name__", t.name) for t in tools) or "..."
        raise OptionsError(
            f"mcp_servers[{name!r}] must be a server, got "
            f"{'a tool' if isinstance(config, SdkMcpTool) else type(config).__name__}: "
            f"put tools in a server, mcp_servers={{{name!r}: "
            f"create_sdk_mcp_server({name!r}, tools=[{listed}])}}"
        )


def validate_options(options: ClaudeAgentOptions) -> None:
    """The cheap consistency checks, run at construction and again when argv is built."""
    validate_shapes(options)
    if options.can_use_tool is not None and options.permission_prompt_tool_name is not None:
        raise OptionsError(
            "can_use_tool and permission_prompt_tool_name are mutually exclusive: "
            "can_use_tool answers permission prompts itself (--permission-prompt-tool stdio)"
        )
    if options.model is not None and options.fallback_model == options.model:
        raise OptionsError(f"fallback_model must differ from model (both are {options.model!r})")
    for name in (
        "control_timeout",
        "initialize_timeout",
        "silence_timeout",
        "can_use_tool_timeout",
    ):
        value = getattr(options, name)
        if value is None and name in ("silence_timeout", "can_use_tool_timeout"):
            continue
        if not (isinstance(value, (int, float)) and value > 0):
            raise OptionsError(f"{name} must be a positive number of seconds, got {value!r}")
    if options.max_buffered_bytes is not None and options.max_buffered_bytes <= 0:
        raise OptionsError(
            f"max_buffered_bytes must be positive or None, got {options.max_buffered_bytes}"
        )
    if options.max_buffer_size is not None and options.max_buffer_size <= 0:
        raise OptionsError(
            f"max_buffer_size must be positive or None, got {options.max_buffer_size}"
        )
    validate_session_store_options(options)
    validate_ts_options(options)
    if options.spawn_claude_code_process is not None and not callable(
        options.spawn_claude_code_process
    ):
        raise OptionsError("spawn_claude_code_process must be callable (SpawnOptions -> process)")
    skills = options.skills
    if isinstance(skills, str):
        if skills != "all":
            raise OptionsError(f"skills must be 'all' or a list of names, got {skills!r}")
    elif skills is not None:
        for name in skills:
            check_skill_name(name)


_LISTS: Final = (
    "allowed_tools", "disallowed_tools", "betas", "setting_sources", "add_dirs", "plugins",
    "supported_dialog_kinds",
)  # fmt: skip
"""The options that take a list (``tools`` too, unless a preset)."""

_MAPPINGS: Final = (
    "env", "extra_args", "hooks", "agents", "tool_aliases", "managed_settings", "thinking",
    "sandbox", "output_format", "tool_config",
)  # fmt: skip
"""The options that take a dict (or None)."""

_PATHS: Final = ("cli_path", "cwd", "project_config_root", "debug_file")
"""The options that take a path (a str or an ``os.PathLike``, or None)."""

_STRS: Final = (
    "model",
    "fallback_model",
    "resume",
    "session_id",
    "resume_session_at",
    "client_app",
)
"""The options that take a str (or None; a session id may be a `uuid.UUID`) and would
otherwise fail late, with no option named."""

_CALLBACKS: Final = {
    "can_use_tool": "can_use_tool(tool_name, input, context)",
    "stderr": "stderr(line)",
    "on_callback_error": "on_callback_error(error)",
    "on_elicitation": "on_elicitation(request, context)",
    "on_user_dialog": "on_user_dialog(request, context)",
}
"""The options that take a function (or None), and how it is called."""


def validate_shapes(options: ClaudeAgentOptions) -> None:
    """The checks of the options' types that would otherwise fail late or silently:
    a str where a list is wanted (joined letter by letter into the CLI's flags), a list
    where a dict is wanted (``mcp_servers`` too: `named_mcp_servers`), a callback that
    cannot be called, a size or ``max_turns`` that is
    not an int, a negative ``max_turns`` (``0``, as in the reference SDK, means no limit).

    Raises:
        TypeError: An option of the wrong type.
        ValueError: A negative ``max_turns``; a ``max_budget_usd`` that is not a positive
            number, a ``task_budget`` whose ``total`` is not a positive int (the CLI
            refuses them).
    """
    for name in _LISTS if isinstance(options.tools, Mapping) else ("tools", *_LISTS):
        value = getattr(options, name)
        if isinstance(value, (str, bytes)):
            raise OptionsError(f"{name} must be a list, not a str: write [{value!r}]")
        if value is not None and not isinstance(value, Iterable):
            raise OptionsError(f"{name} must be a list, not {type(value).__name__}")
    for name in _MAPPINGS:
        value = getattr(options, name)
        if value is not None and not isinstance(value, Mapping):
            raise OptionsError(f"{name} must be a dict, not {type(value).__name__}")
    _check_list_items(options)
    _check_cli_values(options)
    _check_values(options)
    if options.hooks:
        _check_hook_events(options.hooks, options)
    _check_mcp_configs(named_mcp_servers(options.mcp_servers) or {}, options)
    for name, agent in (options.agents or {}).items():
        if isinstance(agent, AgentDefinition):  # anything else: refused where it is sent
            _check_agent(name, agent)
    _check_callbacks(options)
    for name in ("max_buffer_size", "max_buffered_bytes"):
        check_int(name, getattr(options, name))
    for name in ("max_turns", "max_thinking_tokens"):
        check_int(name, getattr(options, name), non_negative=True)
    budget = options.max_budget_usd
    if budget is not None and not (_is_number(budget) and math.isfinite(budget) and budget > 0):
        raise OptionsError(f"max_budget_usd must be a positive number of dollars, got {budget!r}")
    task = options.task_budget
    total = task.get("total") if isinstance(task, Mapping) else None
    if task is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 1):
        raise OptionsError(
            f"task_budget must be {{'total': <a positive int of tokens>}}, got {task!r}"
        )


_STR_ITEMS: Final = (
    "tools", "allowed_tools", "disallowed_tools", "betas", "setting_sources", "add_dirs",
    "supported_dialog_kinds",
)  # fmt: skip
"""The list options whose items are names (or paths: ``add_dirs``)."""

_MCP_TYPES: Final = ("stdio", "sse", "http", "sdk", "ws", "sse-ide", "ws-ide", "claudeai-proxy")
"""The ``type`` values of an MCP server config the CLI knows (it drops any other)."""


def check_int(name: str, value: object, *, non_negative: bool = False) -> None:
    """Refuse a ``value`` that is neither None nor an int (a bool is none), or, with
    ``non_negative``, one below 0: an `OptionsError` naming ``name``."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionsError(f"{name} must be an int, not {type(value).__name__}")
    if non_negative and value < 0:
        raise OptionsError(f"{name} cannot be negative, got {value}")


def _check_callbacks(options: ClaudeAgentOptions) -> None:
    """Each callback option can be called, with the arguments it is given; those called
    without ``await`` are no ``async def``."""
    for name in _CALLBACKS:
        value = getattr(options, name)
        if value is not None and not callable(value):
            raise OptionsError(f"{name} must be callable, not {type(value).__name__}")
    for name in ("stderr", "on_callback_error"):  # called, never awaited: all is lost
        value = getattr(options, name)
        if value is not None:
            import inspect  # loaded by anyio already

            if inspect.iscoroutinefunction(value):
                raise OptionsError(
                    f"{name} must be a plain function (it is called, not awaited), not an async one"
                )
    for name, called_as in _CALLBACKS.items():
        value = getattr(options, name)
        if value is not None:
            from .._callbacks.reporting import check_arity

            check_arity(value, called_as)


def _is_uuid(value: object) -> bool:
    """Whether ``value`` is a `uuid.UUID` (a session id's text is its str())."""
    uuid = sys.modules.get("uuid")  # a caller holding one has imported it
    return uuid is not None and isinstance(value, uuid.UUID)


def _check_values(options: ClaudeAgentOptions) -> None:
    """Each str, path, plugin and audit log option is of its type: anything else failed
    late, in a regex, a spawn or an attribute lookup, with no option named."""
    for name in _STRS:
        value = getattr(options, name)
        if value is not None and not isinstance(value, str) and not _is_uuid(value):
            raise OptionsError(f"{name} must be a str, not {type(value).__name__}")
    for name in _PATHS:
        value = getattr(options, name)
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise OptionsError(f"{name} must be a str or a Path, not {type(value).__name__}")
    for plugin in options.plugins or ():
        if not isinstance(plugin, Mapping):
            raise OptionsError(
                f"plugins items must be dicts ({{'type': 'local', ...}}), got {plugin!r}"
            )
    audit = options.audit_log
    if audit is not None and not callable(getattr(audit, "observe", None)):
        raise OptionsError(f"audit_log must be an AuditLog, not {type(audit).__name__}")


_AGENT_TEXTS: Final = (
    "model", "initialPrompt", "memory", "permissionMode", "observer", "observerMessage",
    "criticalSystemReminder_EXPERIMENTAL",
)  # fmt: skip
_AGENT_NAMES: Final = ("tools", "disallowedTools", "skills")


def _check_agent(name: str, agent: AgentDefinition) -> None:
    """The fields of an `AgentDefinition` are of their types: the CLI leaves out, without
    a word, an agent with one that is not (``tools="Bash"``, ``prompt=None``...)."""
    where = f"agents[{name!r}]"
    for key in ("description", "prompt", *_AGENT_TEXTS):
        value = getattr(agent, key)
        if not isinstance(value, str) and (value is not None or key in ("description", "prompt")):
            raise OptionsError(f"{where}.{key} must be a str, got {value!r}")
    for key in _AGENT_NAMES:
        value = getattr(agent, key)
        if value is None:
            continue
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise OptionsError(f"{where}.{key} must be a list of str, got {value!r}")
        if any(not isinstance(item, str) for item in value):
            raise OptionsError(f"{where}.{key} items must be strings, got {list(value)!r}")
    for key in ("maxTurns", "autoCompactWindow"):
        value = getattr(agent, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise OptionsError(f"{where}.{key} must be an int, got {value!r}")
    for key in ("background", "omitClaudeMd"):
        value = getattr(agent, key)
        if value is not None and not isinstance(value, bool):
            raise OptionsError(f"{where}.{key} must be a bool, got {value!r}")
    servers = agent.mcpServers
    if servers is not None and (
        isinstance(servers, (str, bytes, Mapping)) or not isinstance(servers, Iterable)
    ):
        raise OptionsError(
            f"{where}.mcpServers must be a list of server names or {{name: config}} dicts, "
            f"got {servers!r}"
        )


def _check_list_items(options: ClaudeAgentOptions) -> None:
    """Each item of a list of names is a str (a path, for ``add_dirs``): the CLI's flags
    are joined from them, and anything else fails there with no option named."""
    for name in _STR_ITEMS:
        value = getattr(options, name)
        if value is None or isinstance(value, (Mapping, str, bytes)):
            continue
        for item in value:
            if not (
                isinstance(item, str) or (name == "add_dirs" and isinstance(item, os.PathLike))
            ):
                raise OptionsError(
                    f"{name} items must be strings, got {item!r} ({type(item).__name__})"
                )


_CLI_PERMISSION_MODES: Final = (*get_args(PermissionMode), "manual")
"""The ``--permission-mode`` values the CLI takes (``"manual"``: its name for
``"default"``); it refuses any other, letter case included, once started."""

_DRAFT_07: Final = "http://json-schema.org/draft-07/schema#"
"""The draft the CLI reads an ``output_format`` schema as when it names none (Ajv's)."""


def _check_cli_values(options: ClaudeAgentOptions) -> None:
    """The values the CLI refuses only once started (a `ProcessError` quoting its own
    message, no option named): an unknown ``permission_mode``, an ``output_format``
    schema that is no JSON Schema, ``settings`` text that is no JSON, ``extra_args`` that
    are no flags."""
    mode = options.permission_mode
    if mode is not None and mode not in _CLI_PERMISSION_MODES:
        if not isinstance(mode, str):
            raise OptionsError(f"permission_mode must be a str, not {type(mode).__name__}")
        known = get_args(PermissionMode)
        listing = "it knows " + ", ".join(repr(k) for k in known)
        _did_you_mean(mode, known, what="permission_mode", listing=listing, options=options)
    _check_output_schema(options.output_format)
    settings = options.settings
    if settings is not None and not isinstance(settings, (str, os.PathLike, Mapping)):
        raise OptionsError(
            "settings must be a str (a settings file path or JSON text) or a dict, "
            f"not {type(settings).__name__}"
        )
    if isinstance(settings, str) and _is_settings_text(settings):
        try:
            json.loads(settings)
        except ValueError as exc:
            raise OptionsError(
                f"settings is JSON text (it is between braces) but not valid JSON: {exc}"
            ) from None
    for flag, value in (options.extra_args or {}).items():
        if not isinstance(flag, str) or not flag.strip("-"):
            raise OptionsError(f"extra_args keys must be flag names (str), got {flag!r}")
        # a number or a bool is passed as its text, as the reference SDK passes it
        if value is not None and not isinstance(value, (str, int, float, os.PathLike)):
            raise OptionsError(
                f"extra_args[{flag!r}] must be a str (the flag's value) or None (a bare "
                f"flag), got {value!r}"
            )


def _is_settings_text(settings: str) -> bool:
    """Whether the CLI reads ``settings`` as JSON text (else as a file path), as it does."""
    text = settings.strip()
    return text.startswith("{") and text.endswith("}")


def check_settings_file(options: ClaudeAgentOptions) -> None:
    """At connect, with a local CLI: a ``settings`` path names an existing file (relative
    to ``cwd``, as the CLI reads it), which the CLI would otherwise refuse once started.

    Raises:
        ValueError: There is no such file.
    """
    settings = options.settings
    if settings is None or isinstance(settings, Mapping):
        return
    if isinstance(settings, str) and _is_settings_text(settings):
        return
    path = os.path.join(options.cwd or "", os.fspath(settings))
    if not os.path.exists(path) or os.path.isdir(path):
        raise OptionsError(
            f"settings {os.fspath(settings)!r} is neither a file path nor JSON text: "
            f"there is no file {path!r}"
        )


def _check_output_schema(output_format: object) -> None:
    """An ``output_format`` schema the CLI would take: JSON Schema draft 7 (unless its
    ``$schema`` names another draft), checked against the meta-schema by jsonschema-rs."""
    if not isinstance(output_format, Mapping) or output_format.get("type") != "json_schema":
        return  # (its shape is checked where argv is built)
    schema = output_format.get("schema")
    if schema is None or isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        raise OptionsError(
            f"output_format['schema'] must be a JSON Schema (a dict), got {schema!r}"
        )
    import jsonschema_rs  # only with output_format: 1 ms

    try:
        jsonschema_rs.meta.validate({"$schema": _DRAFT_07, **schema})
    except jsonschema_rs.ValidationError as exc:
        where = "/".join(str(part) for part in exc.instance_path)
        raise OptionsError(
            f"output_format['schema'] is not a valid JSON Schema: {exc.message}"
            + (f" (at {where})" if where else "")
        ) from None
    except (jsonschema_rs.ReferencingError, ValueError, TypeError):
        return  # a draft jsonschema-rs does not know, or no JSON: left to the CLI


def _did_you_mean(
    value: object,
    known: Sequence[str],
    *,
    what: str,
    listing: str,
    options: ClaudeAgentOptions,
) -> None:
    """The one rule for a value that is none of the ``known`` ones (a ``permission_mode``,
    a ``hooks`` event): a near miss of one (the same in other letter case, the start of
    one, or a close one) is a typo the CLI would refuse, or never act on: an
    `OptionsError` naming the one meant. A value near none passes with a warning: a newer
    CLI may know it (it is passed on as is).

    Args:
        value: The value given.
        known: The values this ccwire knows.
        what: What the value is, as the messages name it (``"permission_mode"``).
        listing: Where the known values are listed, for the warning.
        options: The options the value is one of (see `_warn_once`).
    """
    import difflib  # only on this path

    text = str(value)
    folded = text.lower()
    meant = next((k for k in known if k.lower() == folded), None)
    if meant is None and len(folded) >= 3:
        meant = next((k for k in known if k.lower().startswith(folded)), None)
    meant = meant or next(iter(difflib.get_close_matches(text, known, n=1, cutoff=0.6)), None)
    if meant is not None:
        raise OptionsError(f"{what} {value!r} is not known to the CLI: did you mean {meant!r}?")
    _warn_once(
        options,
        f"ccwire: {what} {value!r} is not known to this ccwire ({listing}); passed on, "
        "as a newer CLI may know it",
    )


def _warn_once(options: ClaudeAgentOptions | None, message: str) -> None:
    """Log ``message`` as a warning about ``options``, unless it was logged for them
    already: they are checked when built and again at each connect, so a value is
    warned about once, and a value set on them later once too. Those logged are kept
    on the options (only theirs: a copy made with ``dataclasses.replace`` starts with
    none)."""
    if options is not None:
        logged: set[str] = options.__dict__.setdefault("_warned", set())
        if message in logged:
            return
        logged.add(message)
    logger.warning("%s", message)


def _check_hook_events(hooks: Mapping[Any, Any], options: ClaudeAgentOptions) -> None:
    """Every key of ``hooks`` is an event the CLI fires (a misspelt one would never fire:
    its hooks silently do nothing), and each value a list of matchers."""
    from .._wire.constants import HOOK_EVENTS

    for event, matchers in hooks.items():
        if event not in HOOK_EVENTS:
            _unknown_hook_event(event, HOOK_EVENTS, options)
        if isinstance(matchers, (HookMatcher, Mapping, str, bytes)) or not isinstance(
            matchers, Iterable
        ):
            raise OptionsError(
                f"hooks[{event!r}] must be a list of HookMatcher, not {type(matchers).__name__}"
            )
    from .._callbacks.hooks import (
        HookRegistry,
    )  # its matchers and callbacks, as a session reads them

    HookRegistry(hooks)


def _unknown_hook_event(event: object, known: tuple[str, ...], options: ClaudeAgentOptions) -> None:
    """A hooks key that is no event this ccwire knows (see `_did_you_mean`: a misspelt
    event's hooks would never fire)."""
    where = "ccwire.HOOK_EVENTS lists them; its hooks run only if the CLI fires it"
    _did_you_mean(event, known, what="hooks event", listing=where, options=options)


def _check_mcp_config(
    server: str, config: Mapping[str, Any], options: ClaudeAgentOptions | None
) -> None:
    """The fields of one MCP server config that the CLI needs; a config it cannot read is
    left out of the session without a word (its tools silently missing)."""
    where = f"mcp_servers[{server!r}]"
    kind = config.get("type", "stdio")
    if not isinstance(kind, str):
        raise OptionsError(f"{where}['type'] must be a str, got {kind!r}")
    if kind not in _MCP_TYPES:  # a newer CLI may know it: passed on, with a word
        known = ", ".join(repr(k) for k in _MCP_TYPES)
        _warn_once(
            options,
            f"ccwire: {where} has type {kind!r}, which this ccwire does not know (it knows "
            f"{known}); the CLI leaves out a server whose type it does not know.",
        )
        return
    if kind == "stdio":
        command = config.get("command")
        if not isinstance(command, str) or not command:
            raise OptionsError(f"{where} needs a 'command' (a non-empty str), got {command!r}")
        args = config.get("args", [])
        if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
            raise OptionsError(f"{where}['args'] must be a list of strings, got {args!r}")
        if any(not isinstance(arg, str) for arg in args):
            raise OptionsError(f"{where}['args'] items must be strings, got {list(args)!r}")
    elif kind in ("sse", "http", "ws"):
        url = config.get("url")
        if not isinstance(url, str) or not url:
            raise OptionsError(f"{where} needs a 'url' (a non-empty str), got {url!r}")
    for field_name in ("env", "headers"):
        value = config.get(field_name)
        if value is not None and not (
            isinstance(value, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            raise OptionsError(f"{where}[{field_name!r}] must be a dict of str to str")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def meant_option(name: str) -> str | None:
    """The option ``name`` (which is none) most likely means (``allowedTools`` and
    ``allowed_tool`` mean ``allowed_tools``), if any."""
    import difflib  # only on this error path: 1 ms of the usual import otherwise

    squashed = {known.replace("_", ""): known for known in _OPTION_NAMES}
    return squashed.get(name.replace("_", "").lower()) or next(
        iter(difflib.get_close_matches(name, sorted(_OPTION_NAMES), n=1, cutoff=0.75)), None
    )


def unknown_option_message(name: str) -> str:
    """What to say about ``name``, which is not an option: the option it most likely
    means, if any."""
    meant = meant_option(name)
    hint = f": did you mean {meant!r}?" if meant else " (help(ClaudeAgentOptions) lists them)"
    return f"ClaudeAgentOptions has no option {name!r}{hint}"


def options_or_default(options: object) -> ClaudeAgentOptions:
    """``options``, or the defaults for None; anything else is refused by name (an
    options object of another SDK, a dict) instead of failing later on a missing field.

    Raises:
        TypeError: ``options`` is not a `ClaudeAgentOptions`.
    """
    if options is None:
        return ClaudeAgentOptions()
    if not isinstance(options, ClaudeAgentOptions):
        kind = type(options)
        raise OptionsError(
            "options must be a ccwire.ClaudeAgentOptions (import it from ccwire), "
            f"not {kind.__module__}.{kind.__qualname__}"
        )
    return options


_DELIVERIES = ("argv", "initialize")


def validate_ts_options(options: ClaudeAgentOptions) -> None:
    """The checks of the options the TypeScript SDK added, as it makes them.

    Raises:
        ValueError: `supported_dialog_kinds` without `on_user_dialog`; a delivery that
            is neither ``"argv"`` nor ``"initialize"``; `permission_prompts` that is
            neither ``"host"`` nor ``"none"``; `persist_session=False` with a
            `session_store` (the store mirrors what the CLI writes to disk).
    """
    if options.supported_dialog_kinds and options.on_user_dialog is None:
        raise OptionsError(
            "supported_dialog_kinds needs on_user_dialog: the CLI sends those dialogs to it"
        )
    for name in ("plugin_delivery", "mcp_servers_delivery"):
        if getattr(options, name) not in _DELIVERIES:
            raise OptionsError(
                f"{name} must be 'argv' or 'initialize', got {getattr(options, name)!r}"
            )
    if options.permission_prompts not in (None, "host", "none"):
        raise OptionsError(
            f"permission_prompts must be 'host' or 'none', got {options.permission_prompts!r}"
        )
    if not options.persist_session and options.session_store is not None:
        raise OptionsError(
            "session_store cannot be combined with persist_session=False: the store mirrors "
            "what the CLI writes to its session file (point env CLAUDE_CONFIG_DIR at a "
            "temporary directory to keep no local copy)"
        )


def validate_session_store_options(options: ClaudeAgentOptions) -> None:
    """The `session_store` combinations the reference SDK refuses, and a store's shape.

    Raises:
        TypeError: `session_store` has no `append` and `load` methods.
        ValueError: `session_store_flush` is not `"batched"` or `"eager"`;
            `continue_conversation` (without `resume`) with a store lacking
            `list_sessions`; or a store with `enable_file_checkpointing`.
    """
    if options.session_store_flush not in ("batched", "eager"):
        raise OptionsError(
            f"session_store_flush must be 'batched' or 'eager', got {options.session_store_flush!r}"
        )
    store = options.session_store
    if store is None:
        return
    if not callable(getattr(store, "append", None)) or not callable(getattr(store, "load", None)):
        raise OptionsError(
            "session_store must be a SessionStore (with async append() and load()), "
            f"got {type(store).__name__}"
        )
    # here, not at the top: stores are opt-in, and their protocol loads typing_extensions
    from .transcript_store.protocol import store_implements

    if (
        options.continue_conversation
        and options.resume is None
        and not store_implements(store, "list_sessions")
    ):
        # with resume set, resume wins and list_sessions() is never called
        raise OptionsError(
            "continue_conversation with session_store requires the store to implement "
            "list_sessions()"
        )
    if options.enable_file_checkpointing:
        raise OptionsError(
            "session_store cannot be combined with enable_file_checkpointing "
            "(checkpoints are local-disk only and would diverge from the mirrored transcript)"
        )


_MASK = "***"
_HARMLESS_ARG = r"[0-9.]{1,12}|[a-z][a-z-]{0,15}|true|false"  # compiled by the first repr()
_MCP_SECRET_KEYS = ("env", "headers")


def _mask_mapping(value: Mapping[str, Any]) -> dict[str, str]:
    return {key: _MASK for key in value}


def _masked_mcp_servers(value: object) -> object:
    if not isinstance(value, Mapping):
        return value
    masked: dict[str, object] = {}
    for name, config in value.items():
        if isinstance(config, Mapping):
            config = {
                k: _mask_mapping(v) if k in _MCP_SECRET_KEYS and isinstance(v, Mapping) else v
                for k, v in config.items()
            }
        masked[name] = config
    return masked


def _masked_agents(value: object) -> object:
    if not isinstance(value, Mapping):
        return value
    masked: dict[str, object] = {}
    for name, agent in value.items():
        if isinstance(agent, AgentDefinition) and agent.mcp_servers:
            servers = [
                _masked_mcp_servers(item) if isinstance(item, Mapping) else item
                for item in agent.mcp_servers
            ]
            agent = replace(agent, mcpServers=servers)  # type: ignore[arg-type]
        masked[name] = agent
    return masked


def _masked_settings(value: object) -> object:
    """Settings JSON text with its ``env`` values masked (a path is shown as is)."""
    if not isinstance(value, str) or not value.strip().startswith("{"):
        return value
    try:
        loaded = json.loads(value)
    except ValueError:
        return "<settings JSON text>"
    if isinstance(loaded, dict) and isinstance(loaded.get("env"), Mapping):
        loaded["env"] = _mask_mapping(loaded["env"])
        return json.dumps(loaded)
    return value


def _masked_settings_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A settings mapping with its ``env`` values masked."""
    masked = dict(value)
    if isinstance(masked.get("env"), Mapping):
        masked["env"] = _mask_mapping(masked["env"])
    return masked


def _masked_extra_args(value: Mapping[str, Any]) -> dict[str, Any]:
    """Flag values masked, but for harmless ones (``None``, numbers, short words) of
    flags whose name is not secret."""
    return {
        flag: arg
        if arg is None or (re.fullmatch(_HARMLESS_ARG, str(arg)) and not is_secret_key(flag))
        else _MASK
        for flag, arg in value.items()
    }


class _Named:
    """Shows as its name in a repr."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_Options = TypeVar("_Options", bound=type)


def _named_options(cls: _Options) -> _Options:
    """``cls`` with an ``__init__`` that refuses an unknown name by naming the option
    meant, instead of the generated one's bare "unexpected keyword argument", and a
    ``__setattr__`` that refuses a misspelt option too (``options.allowed_tool = [...]``
    was kept as an attribute nothing reads). Any other name is set, as on a plain
    dataclass: code that keeps its own attributes on the options (or a subclass's) runs
    as it does on claude-agent-sdk."""
    init: Callable[..., None] = cls.__dict__["__init__"]

    @functools.wraps(init)  # help() and inspect show the generated signature
    def checked_init(self: object, *args: Any, **kwargs: Any) -> None:
        if args:  # claude-agent-sdk's fields may be passed by position, in its own order
            raise OptionsError(
                f"{cls.__name__} takes its options by name, as in {cls.__name__}(tools=[...]), "
                f"not by position: {len(args)} positional argument"
                f"{'s' if len(args) > 1 else ''} given (help({cls.__name__}) lists them)"
            )
        for name in kwargs:
            if name not in _OPTION_NAMES:
                raise OptionsError(unknown_option_message(name))
        init(self, *args, **kwargs)

    def checked_setattr(self: object, name: str, value: Any) -> None:
        if (
            name not in _OPTION_NAMES
            and not name.startswith("_")
            and name not in type(self).__dataclass_fields__  # type: ignore[attr-defined]
            and meant_option(name) is not None
        ):
            raise OptionsError(unknown_option_message(name))
        object.__setattr__(self, name, value)

    setattr(cls, "__init__", checked_init)  # noqa: B010 (mypy: no assignment to a method)
    setattr(cls, "__setattr__", checked_setattr)  # noqa: B010
    return cls


@_named_options
@dataclass(kw_only=True, repr=False)
class ClaudeAgentOptions(ReferenceOrigin):
    """Everything that configures a Claude Code session. Every field is optional.

    The names follow Anthropic's ``claude-agent-sdk``. ccwire additions:
    ``control_timeout`` (seconds each SDK-to-CLI control request may take),
    ``initialize_timeout`` (seconds the ``initialize`` handshake may take, and the
    spawner to return the process),
    ``max_buffer_size=None`` meaning no limit on the length of one stdout line, and
    ``on_callback_error``: called (synchronously, in the connection's task) with a
    `CallbackError` whenever a hook or ``can_use_tool`` callback raises,
    times out or returns something unusable. Such failures are always answered to the
    CLI with an error and logged on the ``ccwire`` logger; this is how to act on them.

    ``repr()`` never shows the values of ``env`` (nor of MCP servers' ``env`` and
    ``headers``, agents' MCP servers included, nor the ``env`` of settings given as
    JSON text), so options can be logged without leaking secrets.

    The CLI's environment is built as ``claude-agent-sdk`` builds it: the variables of
    this process that ``inherit_env`` selects (by default all but ``CLAUDECODE``;
    `CLI_ENV_ALLOWLIST` for only what the CLI needs; ``False`` for none), then
    ``env``, then ccwire's own few variables. It is passed to the process, never on its
    command line.

    Example:
        ```python
        options = ClaudeAgentOptions(
            mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
            allowed_tools=["mcp__calc__add"],
            max_turns=4,
        )
        ```

    Attributes:
        tools: The built-in tools the model gets: a list of names (`[]` for none) or
            `{"type": "preset", "preset": "claude_code"}`. Default `None`: the CLI's own set.
        allowed_tools: Tools (names or patterns such as `"mcp__calc__*"`) the CLI may
            call without asking. Default `[]`.
        disallowed_tools: Tools removed from the model's list. Default `[]`.
        system_prompt: A string, a list of blocks (sent in `initialize`; a block
            `SYSTEM_PROMPT_DYNAMIC_BOUNDARY` of its own splits the prefix shared across
            sessions, cacheable, from the session's part), a preset
            (`SystemPromptPreset`), a `SystemPromptCustom` or a `SystemPromptFile`.
            Default `None`: no system prompt, as in the reference SDK.
        mcp_servers: MCP servers by name (in-process ones from `create_sdk_mcp_server`,
            or stdio/SSE/HTTP configs), or the path or JSON text of an MCP config file.
            Default `{}`.
        strict_mcp_config: Use only `mcp_servers`, ignoring every other MCP
            configuration (`--strict-mcp-config`). Default `False`.
        skills: The skills to enable: a list of names or `"all"`. Default `None`: the
            CLI's default.
        agents: Programmatic subagents by name (`AgentDefinition`). Default `None`.
        plugins: Local plugins to load (`SdkPluginConfig`). Default `[]`.
        permission_mode: The CLI's permission mode (`"default"`, `"acceptEdits"`,
            `"plan"`, `"bypassPermissions"`, ...). Default `None`: the CLI's default.
        permission_prompt_tool_name: An MCP tool that answers permission prompts
            (`--permission-prompt-tool`); set automatically to `"stdio"` with
            `can_use_tool`. Default `None`.
        can_use_tool: An async callback deciding each permission request
            (`PermissionResultAllow` or `PermissionResultDeny`; a sync function works
            too, called on the event loop, so it must not block). Default `None`.
        can_use_tool_timeout: Seconds `can_use_tool` may take to decide (ccwire
            addition). Past it the callback is cancelled (its `context.signal` set
            first), the CLI is told the tool call is denied, and a `CallbackError` with
            `timed_out` goes to `on_callback_error`: a callback that never returns no
            longer hangs its turn. A request left open with `ANSWER_LATER` is not
            bounded by it. Default `None`: no limit, as in the reference SDK (the CLI
            waits too; `interrupt()` or closing the client still cancels the callback).
        hooks: Hook callbacks by event (`HookMatcher` lists). Default `None`.
        on_callback_error: Called with a `CallbackError` whenever a hook or `can_use_tool`
            callback fails (ccwire addition). Default `None`.
        continue_conversation: Continue the most recent session of `cwd` (`--continue`).
            Default `False`.
        resume: The id of a session to resume (`--resume`). Default `None`.
        fork_session: With `resume`, continue in a new session id instead of appending
            to the old one. Default `False`.
        session_id: The id to give a new session (`--session-id`). Default `None`: the
            CLI picks one.
        resume_session_at: With `resume`, resume from this message id
            (`--resume-session-at`). Default `None`.
        resume_drops_turn: With `resume`, drop the turn of this message id
            (`--resume-drops-turn`). Default `None`.
        session_store: A `SessionStore` that gets a copy of every transcript line the
            CLI writes (`--session-mirror`, appended in batches, each batch tried 3
            times; a batch that still fails is dropped and reported as a
            `MirrorErrorMessage`, the session goes on). With `resume` (or
            `continue_conversation`), the session is loaded from the store into a
            temporary config directory the CLI resumes from, removed afterwards; a
            session the store lacks is resumed from local disk. Cannot be combined with
            `enable_file_checkpointing`. Default `None`.
        session_store_flush: When mirrored entries reach `session_store`:
            `"batched"` (before each `ResultMessage` is handed to you, and whenever 500
            entries or 1 MiB are pending) or `"eager"` (in the background after every
            frame). Ignored without a store. Default `"batched"`.
        load_timeout_ms: How long each store call may take while resuming from
            `session_store`, in milliseconds. Default `60000`.
        model: The model to use (`--model`). Default `None`: the CLI's default.
        fallback_model: The model to fall back to when the main one is overloaded.
            Default `None`.
        betas: Anthropic API beta headers to enable (`--betas`). Default `[]`.
        max_turns: Stop after this many model turns (`--max-turns`). Default `None`: no limit.
        max_budget_usd: Stop when the session has cost this many dollars.
            Default `None`: no limit.
        task_budget: An API-side token budget for the whole task (`TaskBudget`).
            Default `None`.
        thinking: Extended thinking: `ThinkingConfigAdaptive`, `ThinkingConfigEnabled`
            or `ThinkingConfigDisabled`. Default `None`: the CLI's default.
        max_thinking_tokens: The thinking budget in tokens (older form of `thinking`).
            Default `None`.
        effort: How much effort the model spends (`"low"` to `"max"`). Default `None`.
        output_format: Structured output: `{"type": "json_schema", "schema": {...}}`; the
            result's `structured_output` then holds the parsed value. Default `None`.
        settings: A settings file path, JSON text, or the settings as a dict (sent as
            JSON text, as the TypeScript SDK's `Settings` object is) (`--settings`; a
            relative path that begins with "-" is passed as "./<path>", the same file).
            Default `None`.
        setting_sources: Which filesystem settings the CLI loads (`"user"`,
            `"project"`, `"local"`). Default `None`: none, as in the reference SDK.
        sandbox: Bash sandbox settings (`SandboxSettings`), merged into `settings`.
            Default `None`.
        add_dirs: More directories the CLI may read and edit (`--add-dir`). Default `[]`.
        include_partial_messages: Also yield `StreamEvent`s (token-level deltas).
            Default `False`.
        include_hook_events: Also yield the CLI's hook lifecycle messages. Default `False`.
        forward_subagent_text: Forward subagents' text messages into the stream.
            Default `None`: the CLI's default.
        session_mirror: Mirror every transcript line as a `TranscriptMirrorMessage`
            (`--session-mirror`), for code that stores them itself (ccwire addition;
            `session_store` does it for you). Default `False`.
        agent: The agent the main conversation runs as (`--agent`): its system prompt,
            tool restrictions and model apply to the session. It must be defined in
            `agents` or in settings. Default `None`.
        persist_session: `False` keeps the session off disk (`--no-session-persistence`):
            it cannot be resumed later. Cannot be combined with `session_store`.
            Default `True`.
        title: The title of a new session, instead of one made from its first prompt
            (`initialize` `title`; a resumed session keeps its own). Default `None`.
        tool_aliases: Tool names the model may use for others, e.g.
            `{"Bash": "mcp__workspace__bash"}` routes a `Bash` call to that tool (one
            hop, `initialize` `toolAliases`). Default `None`.
        tool_config: Per-tool settings of built-in tools (`ToolConfig`), e.g.
            `{"ask_user_question": {"preview_format": "html"}}`. Default `None`.
        plan_mode_instructions: In `plan` mode, the workflow the plan-mode reminder asks
            for instead of the default one (`initialize` `planModeInstructions`).
            Default `None`.
        permission_prompts: Who answers permission prompts (`--permission-prompts`):
            `"host"` (this process, through `can_use_tool`) or `"none"` (nobody: what
            would prompt is denied, and `can_use_tool` is never called). Default `None`:
            the CLI's default (`"host"`).
        allow_dangerously_skip_permissions: Required with
            `permission_mode="bypassPermissions"` as a deliberate opt-in
            (`--allow-dangerously-skip-permissions`). Default `False`.
        prompt_suggestions: Ask for a `PromptSuggestionMessage` (a predicted next
            prompt) after each turn; it arrives after the turn's `ResultMessage`.
            Default `None`: the CLI's default (off).
        agent_progress_summaries: Have running subagents summarized every ~30 s, in the
            `summary` of `TaskProgressMessage`. Default `None`: the CLI's default (off).
        per_task_stop_affordance: Declare that you stop background tasks one by one
            (`stop_task()`), so that an interrupt spares them. Default `None`: an
            interrupt also stops them.
        on_elicitation: Answers MCP servers' requests for user input
            (`ElicitationRequest` -> `ElicitationResult`). Default `None`: they are
            declined.
        on_user_dialog: Answers the CLI's dialogs (`UserDialogRequest` ->
            `UserDialogResult`), for the kinds in `supported_dialog_kinds`. Default
            `None`: a dialog gets no answer from this process.
        supported_dialog_kinds: The dialog kinds `on_user_dialog` renders; the CLI sends
            only these (`initialize` `supportedDialogKinds`). Needs `on_user_dialog`.
            Default `None`: none.
        managed_settings: Policy-tier settings from this process, as an embedding
            application sets them (`--managed-settings`; when they may hold secrets, in
            `initialize` instead). Only restrictive keys apply, and only where the
            machine's administrator lets them. Default `None`.
        project_config_root: The trusted checkout `cwd` is a worktree of: project
            settings, `.mcp.json`, `.claude` and `CLAUDE_PROJECT_DIR` come from it
            (`--project-config-root`, an absolute path). Default `None`.
        plugin_delivery: How `plugins` reach the CLI: `"argv"` (a `--plugin-dir` flag
            each) or `"initialize"` (in the `initialize` request, with
            `--await-initialize`, so the command line does not grow). Default `"argv"`.
        mcp_servers_delivery: How the MCP servers the CLI runs or dials reach it:
            `"argv"` (`--mcp-config`; their secrets in a 0600 file) or `"initialize"`
            (in the `initialize` request, with `--await-initialize`: nothing on the
            command line or on disk). Default `"argv"`.
        debug: Debug logging of the CLI (`--debug`), on its stderr or in `debug_file`.
            Default `False`.
        debug_file: Write the CLI's debug log to this file (`--debug-file`; implies
            `debug`). Default `None`.
        cli_path: The `claude` executable. Default `None`: found by `find_cli` rules
            (`CCWIRE_CLI_PATH`, `PATH`, `node_modules/.bin`).
        cwd: The CLI's working directory. Default `None`: this process's.
        env: Variables added to the CLI's environment. Default `{}`.
        inherit_env: Which variables of this process the CLI inherits. Default
            `True`: all of them (but ``CLAUDECODE``); `CLI_ENV_ALLOWLIST` hardens it.
        user: Run the CLI as this OS user. Default `None`.
        stderr: Called with each line the CLI writes to stderr. Default `None`: the
            lines are kept for error messages only.
        extra_args: More CLI flags: `{"flag": "value"}` or `{"flag": None}` for a bare
            `--flag`. Default `{}`.
        client_app: Your application's name, reported to the CLI
            (`CLAUDE_AGENT_SDK_CLIENT_APP`). Default `None`.
        enable_file_checkpointing: Let the CLI checkpoint files so that
            `rewind_files()` can restore them. Default `False`.
        max_buffer_size: The longest stdout line accepted, in bytes. Default `None`: no limit.
        max_buffered_bytes: How much of the CLI's output (the length of the messages' JSON
            text) ccwire holds for you while you are not reading (ccwire addition).
            Past it, ccwire stops reading the CLI's output until you have read half of
            it: the CLI then waits on its own output, and memory stays flat however much
            it writes. Control requests (tool calls, permission requests) and answers
            to your own control requests queue behind unread output meanwhile. Default
            32 MiB; `None`: no limit.
        control_timeout: Seconds each SDK-to-CLI control request may take (ccwire
            addition). Default `60.0`.
        initialize_timeout: Seconds the `initialize` handshake may take, and
            ``spawn_claude_code_process`` to return the process (ccwire addition;
            ``CLAUDE_CODE_STREAM_CLOSE_TIMEOUT``, in milliseconds in the environment,
            makes the handshake's longer, as in the reference). Default `60.0`.
        silence_timeout: Seconds a turn may go without a single frame from the CLI
            while nothing is waiting on you (no tool call, permission question or hook
            being answered) (ccwire addition). Past it the CLI is stopped and the
            conversation ends with `CLISilenceError`: a hung CLI is noticed instead of
            waited for. Default `None`: no limit.
        audit_log: An `AuditLog` recording every tool call, permission and hook decision
            (ccwire addition). Default `None`.
        telemetry: OpenTelemetry traces and metrics of the session (`Telemetry`; needs
            `ccwire[otel]`; ccwire addition). Default `None`: none, at no cost.
        spawn_claude_code_process: Starts the CLI's process instead of ccwire: a
            function (sync or async) taking a `SpawnOptions` (command, args, cwd, env)
            and returning a process shaped like `anyio.abc.Process`, for running the
            CLI in a sandbox (`BubblewrapSpawner`), on another machine (`SSHSpawner`)
            or in a container (`ContainerSpawner`). Default `None`: a local child
            process.
    """

    # --- tools and prompt
    tools: list[str] | ToolsPreset | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    system_prompt: (
        str | list[str] | SystemPromptPreset | SystemPromptCustom | SystemPromptFile | None
    ) = None
    mcp_servers: dict[str, McpServerConfig] | str | _core.Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    skills: list[str] | Literal["all"] | None = None
    agents: dict[str, AgentDefinition] | None = None
    plugins: list[SdkPluginConfig] = field(default_factory=list)

    # --- permissions and hooks
    permission_mode: PermissionMode | None = None
    permission_prompt_tool_name: str | None = None
    can_use_tool: CanUseTool | None = None
    can_use_tool_timeout: float | None = None
    hooks: dict[HookEvent, list[HookMatcher]] | None = None
    on_callback_error: Callable[[CallbackError], object] | None = None

    # --- sessions
    continue_conversation: bool = False
    resume: str | None = None
    fork_session: bool = False
    session_id: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    session_store: _conversation.transcript_store.SessionStore | None = None
    """Mirror the session's transcripts to this store, and resume from it."""
    session_store_flush: _conversation.transcript_store.SessionStoreFlushMode = "batched"
    """When mirrored transcript entries reach ``session_store``: ``"batched"`` or
    ``"eager"``."""
    load_timeout_ms: int = 60_000
    """How long (milliseconds) each store call may take when resuming from
    ``session_store``."""

    # --- model and limits
    model: str | None = None
    fallback_model: str | None = None
    betas: list[str] = field(default_factory=list)
    max_turns: int | None = None
    max_budget_usd: float | None = None
    task_budget: TaskBudget | None = None
    thinking: ThinkingConfig | None = None
    max_thinking_tokens: int | None = None
    effort: EffortLevel | None = None
    output_format: OutputFormat | None = None

    # --- settings
    settings: str | Mapping[str, Any] | None = None
    setting_sources: list[SettingSource] | None = None
    sandbox: SandboxSettings | None = None
    add_dirs: list[str | _core.Path] = field(default_factory=list)

    # --- output
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool | None = None
    verbatim_prompts: bool = False
    """Mark every user message sent as composed by the client (``client_composed``), so
    the CLI delivers its text as written, without expanding it."""
    session_mirror: bool = False
    """Launch the CLI with ``--session-mirror``: every transcript line it writes to its
    session file also arrives as a `TranscriptMirrorMessage` in the
    message stream, to copy wherever you like (``session_store`` does it for you, into a
    `SessionStore`; with both, the frames go to the store and are surfaced too)."""

    # --- the TypeScript SDK's further options
    agent: str | None = None
    persist_session: bool = True
    title: str | None = None
    tool_aliases: dict[str, str] | None = None
    tool_config: ToolConfig | None = None
    plan_mode_instructions: str | None = None
    permission_prompts: Literal["host", "none"] | None = None
    allow_dangerously_skip_permissions: bool = False
    prompt_suggestions: bool | None = None
    agent_progress_summaries: bool | None = None
    per_task_stop_affordance: bool | None = None
    on_elicitation: OnElicitation | None = None
    on_user_dialog: OnUserDialog | None = None
    supported_dialog_kinds: list[str] | None = None
    managed_settings: dict[str, Any] | None = None
    project_config_root: str | _core.Path | None = None
    plugin_delivery: Literal["argv", "initialize"] = "argv"
    mcp_servers_delivery: Literal["argv", "initialize"] = "argv"
    debug: bool = False
    debug_file: str | _core.Path | None = None

    # --- process
    cli_path: str | _core.Path | None = None
    cwd: str | _core.Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    inherit_env: bool | Iterable[str] = True
    """Which variables of this process the CLI inherits: ``True`` (the default: all but
    ``CLAUDECODE``, as with ``claude-agent-sdk``), `CLI_ENV_ALLOWLIST` (only what the
    CLI needs: the hardened choice), ``False`` (none: only ``env`` and ccwire's own
    variables) or an iterable of names and shell-style patterns."""
    user: str | None = None
    stderr: Callable[[str], None] | None = None
    debug_stderr: Any = sys.stderr
    """Kept for code written for ``claude-agent-sdk``, where it is deprecated and not
    read either: use ``stderr``."""
    extra_args: dict[str, str | None] = field(default_factory=dict)
    client_app: str | None = None
    enable_file_checkpointing: bool = False
    max_buffer_size: int | None = None
    max_buffered_bytes: int | None = 32 * 1024 * 1024
    control_timeout: float = 60.0
    initialize_timeout: float = 60.0
    silence_timeout: float | None = None
    audit_log: _conversation.audit.AuditLog | None = None
    """ccwire addition: an `AuditLog` that records every tool call,
    permission decision and hook decision of the session as a JSON line."""
    telemetry: _conversation.telemetry.Telemetry | None = None
    """ccwire addition: a `Telemetry` that makes the session an OpenTelemetry span, its
    tool calls child spans, and its tokens and cost metrics."""
    spawn_claude_code_process: _transport.spawn.ProcessSpawner | None = None
    """Starts the CLI's process (see `SpawnOptions`); ``None``: a local child process."""

    def __post_init__(self) -> None:
        self.inherit_env = normalize_inherit_env(self.inherit_env)
        validate_options(self)

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value: object = getattr(self, f.name)
            if f.name == "env" and isinstance(value, Mapping):
                value = _mask_mapping(value)
            elif f.name == "mcp_servers":
                value = _masked_mcp_servers(value)
            elif f.name == "agents":
                value = _masked_agents(value)
            elif f.name == "settings" and isinstance(value, Mapping):
                value = _masked_settings_dict(value)
            elif f.name == "settings":
                value = _masked_settings(value)
            elif f.name == "managed_settings" and isinstance(value, Mapping):
                value = _masked_settings_dict(value)
            elif f.name == "extra_args" and isinstance(value, Mapping):
                value = _masked_extra_args(value)
            elif f.name == "inherit_env" and value == CLI_ENV_ALLOWLIST:
                value = _Named("CLI_ENV_ALLOWLIST")
            parts.append(f"{f.name}={value!r}")
        # and whatever else looks secret: URL passwords, ?token=, sk-ant-..., JWTs
        return redact_text(f"{type(self).__name__}({', '.join(parts)})")


_OPTION_NAMES: Final = frozenset(f.name for f in fields(ClaudeAgentOptions))
"""The names `ClaudeAgentOptions` takes."""
