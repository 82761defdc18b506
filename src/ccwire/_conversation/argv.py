"""Pure translation of `ClaudeAgentOptions` into what the CLI is launched with.

* `build_argv()`: the command line;
* `build_initialize_fields()`: the option-derived fields of ``initialize``;
* `build_mcp_config()`, `sdk_servers()`, `agents_to_wire()`: helpers.

The subprocess environment is built in `cli_env`. Nothing here
starts processes or talks to the CLI. The only side effects are reading the
``settings`` file when it must be merged with ``sandbox`` and, when a
``spill_dir`` is given, writing over-long argument values to files in it, and the
MCP config and settings whenever they may hold secrets (external servers' ``env``,
``headers``, URLs; settings ``env``): secrets go to 0600 files, never on the command
line, where ``ps`` would show them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .._core.errors import CLIConnectionError, OptionsError
from .._core.redact import redact_value
from .._mcp.server import SdkMcpServer
from .._transport.discovery import AWAIT_CLAIM_FLAG
from .options import (
    AgentDefinition,
    ClaudeAgentOptions,
    check_skill_name,
    named_mcp_servers,
    validate_options,
)

if TYPE_CHECKING:
    from pathlib import Path

    from .._mcp.config import McpServerConfig

__all__ = [
    "AWAIT_CLAIM_FLAG",
    "SPILL_THRESHOLD",
    "agents_to_wire",
    "build_argv",
    "build_initialize_fields",
    "build_mcp_config",
    "json_schema_in_initialize",
    "managed_settings_in_initialize",
    "plugin_to_wire",
    "merged_settings",
    "sdk_server_settings",
    "sdk_servers",
    "tool_config_env",
]

SPILL_THRESHOLD = 100_000
"""Argument values longer than this many UTF-8 bytes are written to a file when possible.

Linux refuses any single argument of 128 KiB or more (``MAX_ARG_STRLEN``).
"""


def _strip_instance(config: Mapping[str, Any]) -> dict[str, Any]:
    if config.get("type") == "sdk":
        return {k: v for k, v in config.items() if k != "instance"}
    return dict(config)


def build_mcp_config(
    mcp_servers: Mapping[str, McpServerConfig] | str | Path | None,
) -> dict[str, Any] | str | None:
    """The ``--mcp-config`` value: ``{"mcpServers": {...}}``, a pass-through str, or None.

    SDK (in-process) servers keep every field except the live ``instance``. A str or
    `Path` (a config file path or JSON text) is returned as a str. An
    empty mapping or empty string gives None (no flag).
    """
    if mcp_servers is None:
        return None
    # os.PathLike, not pathlib.Path: the first connect imports no pathlib (~1 ms)
    if isinstance(mcp_servers, (str, os.PathLike)):
        text = os.fsdecode(mcp_servers)
        return text or None
    named = named_mcp_servers(mcp_servers)
    if not named:
        return None
    servers: dict[str, Any] = {}
    for name, config in named.items():
        if not isinstance(config, Mapping):
            from .._mcp.bridge import is_server_object  # a server object given directly

            if is_server_object(config):
                servers[name] = {"type": "sdk", "name": name}
                continue
            raise OptionsError(f"mcp_servers[{name!r}] must be a dict, got {type(config).__name__}")
        servers[name] = _strip_instance(cast("Mapping[str, Any]", config))
    return {"mcpServers": servers}


def sdk_servers(
    mcp_servers: Mapping[str, McpServerConfig] | str | Path | None,
) -> dict[str, SdkMcpServer]:
    """The live in-process servers among ``mcp_servers``, by their configured name (key).

    Besides SDK configs, a value may be a server object itself: an SdkMcpServer, or a
    server of the official ``mcp`` package (served through ``ccwire._mcp.bridge``).
    """
    named = named_mcp_servers(mcp_servers)
    if named is None:
        return {}
    found: dict[str, SdkMcpServer] = {}
    for name, config in named.items():
        cfg = cast("Mapping[str, Any]", config)
        if not isinstance(cfg, Mapping):
            from .._mcp.bridge import as_served_server  # a server object: rare, lazy

            served = as_served_server(cfg)
            if served is not None:
                found[name] = cast("SdkMcpServer", served)
            continue
        if cfg.get("type") != "sdk":
            continue
        instance = cfg.get("instance")
        if instance is None:
            raise OptionsError(
                f"mcp_servers[{name!r}] has type 'sdk' but no 'instance'; "
                "make SDK servers with ccwire.create_sdk_mcp_server()"
            )
        if not isinstance(instance, SdkMcpServer):  # ours is served as is (no bridge to load)
            from .._mcp.bridge import as_served_server  # another kind: rare, lazy

            instance = as_served_server(instance) or instance
        found[name] = cast("SdkMcpServer", instance)
    return found


def _agent_mcp_servers(value: Any) -> list[Any]:
    out: list[Any] = []
    for item in value:
        if isinstance(item, Mapping):
            out.append(
                {
                    name: _strip_instance(cfg) if isinstance(cfg, Mapping) else cfg
                    for name, cfg in item.items()
                }
            )
        else:
            out.append(item)
    return out


def agents_to_wire(agents: Mapping[str, AgentDefinition] | None) -> dict[str, dict[str, Any]]:
    """``initialize`` ``agents``: the fields under their own (camelCase, wire) names,
    ``None`` fields left out."""
    wire: dict[str, dict[str, Any]] = {}
    for name, agent in (agents or {}).items():
        if not isinstance(agent, AgentDefinition):
            raise OptionsError(
                f"agents[{name!r}] must be an AgentDefinition, got {agent!r}: write "
                f"agents={{{name!r}: AgentDefinition(description='...', prompt='...')}} "
                "(from ccwire import AgentDefinition)"
            )
        entry: dict[str, Any] = {}
        for f in dataclasses.fields(agent):
            key = f.name
            value = getattr(agent, key)
            if value is None:
                continue
            if key == "mcpServers":
                value = _agent_mcp_servers(value)
            elif isinstance(value, (list, tuple)):
                value = list(value)
            entry[key] = value
        wire[name] = entry
    return wire


def _output_schema(options: ClaudeAgentOptions) -> tuple[Any, str] | None:
    """``output_format``'s schema and its JSON text (None without ``output_format``)."""
    output_format = options.output_format
    if output_format is None:
        return None
    if output_format.get("type") != "json_schema" or "schema" not in output_format:
        raise OptionsError(
            "output_format must be {'type': 'json_schema', 'schema': {...}}, "
            f"got {output_format!r}"
        )
    schema = output_format["schema"]
    return schema, _dumps(schema, "output_format schema")


def _too_long(text: str) -> bool:
    # surrogatepass: a value no command line can carry is refused by _check_argv()
    return len(text.encode("utf-8", "surrogatepass")) > SPILL_THRESHOLD


def _uncarried(text: str) -> str | None:
    """What in ``text`` no command line (or file of ours) can carry, or None: a NUL
    character, or a lone surrogate that is not an undecodable byte (``os.fsencode``)."""
    if "\0" in text:
        return "a NUL character"
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        return f"{exc.object[exc.start : exc.end]!r}, a lone surrogate"
    return None


def _check_argv(argv: list[str]) -> None:
    """Refuse, naming its flag (never its value), an argument the OS would refuse at
    the spawn with a message naming nothing."""
    for n, arg in enumerate(argv[1:], 1):
        problem = _uncarried(arg)
        if problem is None:
            continue
        if arg.startswith("--"):
            flag = arg.split("=", 1)[0]
        else:
            flag = argv[n - 1] if argv[n - 1].startswith("--") else f"argument {n}"
        raise OptionsError(f"the value of {flag} holds {problem}: no command line can carry it")


def json_schema_in_initialize(options: ClaudeAgentOptions) -> bool:
    """True when the ``output_format`` schema is too long for argv and so travels in
    ``initialize`` ``jsonSchema`` instead of ``--json-schema`` (the CLI takes only JSON
    text on that flag, not a file path)."""
    found = _output_schema(options)
    return found is not None and _too_long(found[1])


def build_initialize_fields(
    options: ClaudeAgentOptions, hook_config: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The option-derived fields of the ``initialize`` request.

    ``hooks`` is ``hook_config`` (the registration built by the hooks layer; ``None``
    when there are none, as the reference sends). ``agents``,
    ``excludeDynamicSections``, ``systemPromptSnapshot``, ``skills`` (only for an
    explicit list) and ``forwardSubagentText`` appear only when set; ``jsonSchema``
    only for an ``output_format`` schema over `SPILL_THRESHOLD` bytes (a shorter
    one is passed as ``--json-schema``).
    """
    fields: dict[str, Any] = {"hooks": dict(hook_config) if hook_config else None}
    if options.agents:
        fields["agents"] = agents_to_wire(options.agents)
    prompt = options.system_prompt
    if isinstance(prompt, Mapping):
        if prompt.get("type") == "preset" and "exclude_dynamic_sections" in prompt:
            fields["excludeDynamicSections"] = bool(prompt.get("exclude_dynamic_sections"))
        if prompt.get("type") in ("preset", "custom") and "snapshot" in prompt:
            fields["systemPromptSnapshot"] = bool(prompt.get("snapshot"))
    if isinstance(options.skills, list):
        fields["skills"] = list(options.skills)
    if options.forward_subagent_text is not None:
        fields["forwardSubagentText"] = options.forward_subagent_text
    found = _output_schema(options)
    if found is not None and _too_long(found[1]):
        fields["jsonSchema"] = found[0]
    fields.update(_ts_initialize_fields(options))
    return fields


def _prompt_blocks(options: ClaudeAgentOptions) -> list[str] | None:
    """A list system prompt (given as a list, or as a custom prompt's list): its blocks."""
    prompt = options.system_prompt
    if isinstance(prompt, Mapping) and prompt.get("type") == "custom":
        prompt = prompt.get("prompt")  # type: ignore[assignment]
    if isinstance(prompt, (list, tuple)):
        for block in prompt:
            if not isinstance(block, str):
                raise OptionsError(f"system_prompt blocks must be strings, got {block!r}")
        return list(prompt)
    return None


def plugin_to_wire(plugin: Mapping[str, Any]) -> dict[str, Any]:
    """A plugin (`SdkPluginConfig`) as ``initialize`` and ``reload_plugins`` send it."""
    out: dict[str, Any] = {"type": plugin.get("type"), "path": str(plugin.get("path"))}
    if plugin.get("skip_mcp_discovery"):
        out["skipMcpDiscovery"] = True
    return out


def managed_settings_in_initialize(options: ClaudeAgentOptions) -> bool:
    """True when ``managed_settings`` travel in ``initialize`` (they may hold secrets, or
    are too long for argv), not on ``--managed-settings``."""
    managed = options.managed_settings
    if not managed:
        return False
    return _settings_may_hold_secrets(managed) or _too_long(_dumps(managed, "managed_settings"))


def _ts_initialize_fields(options: ClaudeAgentOptions) -> dict[str, Any]:
    """The ``initialize`` fields of the options the TypeScript SDK added (each only when
    set, as it sends them)."""
    fields: dict[str, Any] = {}
    blocks = _prompt_blocks(options)
    if blocks is not None:
        fields["systemPrompt"] = blocks
    kinds = options.supported_dialog_kinds
    for key, value in (
        ("planModeInstructions", options.plan_mode_instructions),
        ("toolAliases", dict(options.tool_aliases) if options.tool_aliases else None),
        ("title", options.title),
        ("promptSuggestions", options.prompt_suggestions),
        ("agentProgressSummaries", options.agent_progress_summaries),
        ("supportedDialogKinds", list(kinds) if kinds is not None else None),
        ("perTaskStopAffordance", options.per_task_stop_affordance),
    ):
        if value is not None:
            fields[key] = value
    if options.plugin_delivery == "initialize" and options.plugins:
        fields["plugins"] = [plugin_to_wire(p) for p in options.plugins]
    if managed_settings_in_initialize(options):
        fields["managedSettings"] = dict(options.managed_settings or {})
    if options.mcp_servers_delivery == "initialize":
        mcp = build_mcp_config(options.mcp_servers)
        if isinstance(mcp, dict):
            fields["mcpServers"] = mcp["mcpServers"]
    configs = sdk_server_settings(options.mcp_servers)
    if configs:
        fields["sdkMcpServers"] = list(configs)
        fields["sdkMcpServerConfigs"] = configs
    return fields


_SDK_SERVER_SETTINGS = ("timeout", "tools")


def sdk_server_settings(
    mcp_servers: Mapping[str, McpServerConfig] | str | Path | None,
) -> dict[str, dict[str, Any]]:
    """The settings of the in-process servers that have any (a call ``timeout``, per-tool
    permission ``tools``), by name: ``initialize``'s ``sdkMcpServerConfigs``, which the
    CLI reads for the servers ``sdkMcpServers`` names."""
    named = named_mcp_servers(mcp_servers)
    if named is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for name, config in named.items():
        entry = cast("Mapping[str, Any]", config)
        if not isinstance(entry, Mapping) or entry.get("type") != "sdk":
            continue
        settings = {k: entry[k] for k in _SDK_SERVER_SETTINGS if k in entry}
        if settings:
            found[name] = settings
    return found


def tool_config_env(options: ClaudeAgentOptions) -> dict[str, str]:
    """The CLI variables ``tool_config`` sets (``CLAUDE_CODE_QUESTION_PREVIEW_FORMAT``)."""
    question = (options.tool_config or {}).get("ask_user_question") or {}
    preview = question.get("preview_format")
    return {"CLAUDE_CODE_QUESTION_PREVIEW_FORMAT": str(preview)} if preview else {}


class SpillDir:
    """A connection's private directory for over-long argument values, made (0700, by
    ``tempfile.mkdtemp``) when the first one is written: most connections never need it,
    and their first connect then loads neither ``tempfile`` nor ``shutil``."""

    __slots__ = ("path",)

    def __init__(self) -> None:
        self.path: str | None = None
        """The directory, once made."""

    def make(self) -> str:
        """The directory's path, made now if it was not yet."""
        if self.path is None:
            import tempfile  # on first use (as above)

            self.path = tempfile.mkdtemp(prefix="ccwire-")
        return self.path

    def files(self) -> tuple[str, ...]:
        """The files written so far (absolute paths)."""
        if self.path is None:
            return ()
        return tuple(os.path.join(self.path, name) for name in sorted(os.listdir(self.path)))

    def remove(self) -> None:
        """Delete the directory and what is in it, if it was made (idempotent)."""
        path, self.path = self.path, None
        if path is not None:
            import shutil  # on first use (as above)

            shutil.rmtree(path, ignore_errors=True)


class _Spill:
    """Writes over-long values to files in ``directory`` (when one is given)."""

    def __init__(self, directory: str | SpillDir | None) -> None:
        self.directory = directory

    def wanted(self, value: str) -> bool:
        return self.directory is not None and _too_long(value)

    def write(self, value: str, stem: str, suffix: str) -> str:
        import tempfile  # with the first spilled value (see SpillDir)

        directory = self.directory
        assert directory is not None
        where = directory if isinstance(directory, str) else directory.make()
        problem = _uncarried(value)
        if problem is not None:
            raise OptionsError(f"the {stem} holds {problem}: the CLI cannot read it")
        fd, path = tempfile.mkstemp(prefix=f"{stem}-", suffix=suffix, dir=where)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(value)
        return path

    def json_or_path(self, value: str, stem: str) -> str:
        """For flags that take JSON text or a file path."""
        return self.write(value, stem, ".json") if self.wanted(value) else value

    def private_json(self, value: str, stem: str, secret: Callable[[Any], bool]) -> str:
        """Like `json_or_path()`, but JSON text that ``secret`` says may hold secrets
        always goes to a file (0600, in the connection's 0700 directory): never argv."""
        if self.directory is not None and value.lstrip().startswith("{"):
            try:
                loaded = json.loads(value)
            except ValueError:
                loaded = None
            if loaded is not None and secret(loaded):
                return self.write(value, stem, ".json")
        return self.json_or_path(value, stem)


def _mcp_may_hold_secrets(config: Any) -> bool:
    """True when an MCP config names any server but in-process ones: its ``env``,
    ``headers``, ``url`` or ``args`` may carry credentials, and anything secret-looking
    counts too."""
    servers = config.get("mcpServers") if isinstance(config, Mapping) else None
    if not isinstance(servers, Mapping):
        return bool(redact_value(config) != config)
    return (
        any(not (isinstance(c, Mapping) and c.get("type") == "sdk") for c in servers.values())
        or redact_value(config) != config
    )


def _settings_may_hold_secrets(settings: Any) -> bool:
    """True when settings carry ``env`` values, an ``apiKeyHelper`` or anything secret-looking."""
    if isinstance(settings, Mapping) and (settings.get("env") or settings.get("apiKeyHelper")):
        return True
    return bool(redact_value(settings) != settings)


def _dumps(value: object, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise OptionsError(f"{what} is not JSON-serializable: {exc}") from exc


def _value_text(flag: str, value: object) -> str:
    """``value`` as the text ``flag`` gets on the command line.

    A path (or bytes) gives its file-system text, a str subclass (a str ``Enum``'s member)
    its own characters, not the ``Class.NAME`` an f-string gives on Python 3.11 and later,
    anything else (a number, a UUID) its ``str()``.

    Raises:
        CLIConnectionError: ``value`` is None or a container (a dict, list, tuple or set),
            naming ``flag``, as claude-agent-sdk 0.2.190 raises it.
    """
    if value is None:
        raise CLIConnectionError(
            f"the value for {flag} is None: set it to a str or a path, or leave the option out"
        )
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        raise CLIConnectionError(
            f"the value for {flag} is a {type(value).__name__}: set it to a str or a path"
        )
    if isinstance(value, (bytes, os.PathLike)):
        return os.fsdecode(value)
    return str.__str__(value) if isinstance(value, str) else str(value)


def _attached(flag: str, value: object) -> str:
    """``flag`` and its value as one ``--flag=value`` argument: the CLI reads what follows
    the first ``=`` as the value, even an empty one or one that begins with a dash (as
    two arguments, a dash-leading value would be read as an option of its own)."""
    return f"{flag}={_value_text(flag, value)}"


def _separate(flag: str, value: object) -> list[str]:
    """``flag`` and its value as two arguments, or as one ``--flag=value`` argument when
    the value begins with a dash (where the CLI would read it as an option): the form
    for ``--mcp-config``, ``--managed-settings`` and ``extra_args`` (which may name a flag
    the CLI declares with no value, and refuses ``--flag=value`` for)."""
    text = _value_text(flag, value)
    return [f"{flag}={text}"] if text.startswith("-") else [flag, text]


def _system_prompt_args(options: ClaudeAgentOptions, spill: _Spill) -> list[str]:
    prompt = options.system_prompt
    text: str | None
    if prompt is None:
        return [_attached("--system-prompt", "")]
    if _prompt_blocks(options) is not None:
        return []  # a list of blocks travels in initialize (systemPrompt)
    if isinstance(prompt, str):
        text = _value_text("--system-prompt", prompt)
    elif isinstance(prompt, Mapping):
        kind = prompt.get("type")
        if kind == "preset":
            if "append" not in prompt:
                return []
            return [_attached("--append-system-prompt", prompt.get("append"))]
        if kind == "file":
            return [_attached("--system-prompt-file", prompt.get("path"))]
        if kind != "custom":
            raise OptionsError(
                f"system_prompt {dict(prompt)!r} has no known 'type': write a str, or "
                "{'type': 'preset', 'preset': 'claude_code'} (with 'append': str to add to "
                "it), {'type': 'custom', 'prompt': str} or {'type': 'file', 'path': str}"
            )
        text = _value_text("--system-prompt", prompt.get("prompt"))
    else:
        raise OptionsError(f"system_prompt must be a str or dict, got {type(prompt).__name__}")
    if spill.wanted(text):
        # two arguments: a private file's path stands alone in argv, where a spawner that
        # copies the file elsewhere (SSHSpawner) finds it; it begins with "/", never "-"
        return ["--system-prompt-file", spill.write(text, "system-prompt", ".txt")]
    return [_attached("--system-prompt", text)]


def _tools_args(options: ClaudeAgentOptions) -> list[str]:
    tools = options.tools
    if tools is None:
        return []
    if isinstance(tools, Mapping):
        if tools.get("type") != "preset":
            raise OptionsError(f"unknown tools preset {tools!r}")
        return [_attached("--tools", "default")]
    return [_attached("--tools", ",".join(tools))]  # an empty list: "--tools=", no tools


def _check_tool_rule_names(options: ClaudeAgentOptions) -> None:
    """Warn about an ``allowed_tools`` or ``disallowed_tools`` entry that is the bare name
    of a tool of an in-process server: the CLI matches ``mcp__<server>__<tool>``, so the
    rule matches nothing (the tool asks for permission, or is not denied). A warning, not
    an error: the same options work on the reference SDK (under ``bypassPermissions``,
    say), and no warning when the list also names the tool in full or by its server.
    """
    if not (options.allowed_tools or options.disallowed_tools):
        return
    owners: dict[str, str] = {}
    tools: dict[str, list[str]] = {}
    made_as: dict[str, str] = {}  # the name a server was made with, where its key differs
    for server, instance in sdk_servers(options.mcp_servers).items():
        if isinstance(instance, SdkMcpServer):
            tools[server] = list(instance.tools)
            if instance.name != server:
                made_as[instance.name] = server
            for tool_name in instance.tools:
                owners.setdefault(tool_name, server)
    full_names = {
        f"mcp__{server}__{name}": server for server, names in tools.items() for name in names
    }
    for option in ("allowed_tools", "disallowed_tools"):
        rules = [rule for rule in getattr(options, option) if isinstance(rule, str)]
        for rule in rules:
            if rule not in full_names:
                _check_misspelt_tool_rule(option, rule, tools, made_as, full_names)
            owner = owners.get(rule)
            full = f"mcp__{owner}__{rule}"
            if owner is None or {full, f"mcp__{owner}__*", f"mcp__{owner}"} & set(rules):
                continue
            warnings.warn(
                f"{option} names {rule!r}, a tool of the in-process server {owner!r}, "
                f"which matches nothing: the CLI knows it as {full!r} (or "
                f"'mcp__{owner}__*' for all the server's tools)",
                UserWarning,
                stacklevel=2,
            )


def _check_misspelt_tool_rule(
    option: str,
    rule: str,
    tools: dict[str, list[str]],
    made_as: dict[str, str],
    full_names: dict[str, str],
) -> None:
    """Warn about a rule that names no in-process tool but nearly names one: a typo in
    the tool (``mcp__demo__greeet``) or in the server (``mcp__dmeo__greet``), the wrong
    separators (``mcp_demo_greet``), or the name the server was made with where its key
    in ``mcp_servers`` differs (the CLI names the tools by the key). The CLI would match
    such a rule against nothing. Only a near miss is warned about: a rule for another
    server's tool, or for a tool added later to a live tool set, is left alone.
    ``full_names`` maps the full name of each in-process tool to its server.
    """
    if "*" in rule or "(" in rule:
        return
    near: str | None = None
    if rule.startswith("mcp"):
        near = {_squeezed(full): full for full in full_names}.get(_squeezed(rule))
    if near is None and rule.startswith("mcp__"):
        near = _near_mcp_rule(rule, tools, made_as)
    if near is not None:
        server = full_names.get(near, "")
        why = ""
        made = next((name for name, key in made_as.items() if key == server), None)
        if made is not None and rule.startswith(f"mcp__{made}__"):
            why = (
                f" (the CLI names a server's tools by its key in mcp_servers, {server!r}, "
                f"not by the name it was made with, {made!r})"
            )
        warnings.warn(
            f"{option} names {rule!r}, which matches no tool of the in-process servers: "
            f"did you mean {near!r}?{why}",
            UserWarning,
            stacklevel=3,
        )


def _squeezed(name: str) -> str:
    """``name`` without underscores, dashes or dots: ``mcp_demo_greet`` and
    ``mcp__demo__greet`` squeeze alike."""
    return "".join(c for c in name if c not in "_-.")


def _near_mcp_rule(rule: str, tools: dict[str, list[str]], made_as: dict[str, str]) -> str | None:
    """The in-process tool an ``mcp__server__tool`` rule nearly names, else None."""
    import difflib  # only for an mcp__ rule that names no tool: rare

    near = None
    rest = rule[len("mcp__") :]
    for server, names in tools.items():
        if rest.startswith(f"{server}__"):
            tool = rest[len(server) + 2 :]
            close = difflib.get_close_matches(tool, names, n=1, cutoff=0.8)
            if tool not in names and close:
                near = f"mcp__{server}__{close[0]}"
            break
    else:
        server_part, _, tool = rest.partition("__")
        owners = [server for server, names in tools.items() if tool in names]
        key = made_as.get(server_part)
        if key is not None and key in owners:
            return f"mcp__{key}__{tool}"
        close = difflib.get_close_matches(server_part, owners, n=1, cutoff=0.6)
        if close:
            near = f"mcp__{close[0]}__{tool}"
    return near


def _allowed_tools(options: ClaudeAgentOptions) -> list[str]:
    allowed = list(options.allowed_tools)
    skills = options.skills
    extra: list[str] = []
    if skills == "all":
        extra = ["Skill"]
    elif isinstance(skills, list):
        for name in skills:
            check_skill_name(name)
        extra = [f"Skill({name})" for name in skills]
    allowed.extend(item for item in extra if item not in allowed)
    return allowed


def _load_settings(settings: str | Mapping[str, Any], cwd: str | Path | None) -> dict[str, Any]:
    if isinstance(settings, Mapping):
        return dict(settings)
    settings = os.fspath(settings)  # (a Path too, as the reference takes it)
    text = settings.strip()
    if text.startswith("{") and text.endswith("}"):
        source = "settings JSON text"
    else:
        from pathlib import Path  # a settings file: rare, lazy

        path = Path(settings)
        if cwd is not None and not path.is_absolute():
            path = Path(cwd) / path
        source = f"settings file {str(path)!r}"
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIConnectionError(f"could not read {source}: {exc}") from exc
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise CLIConnectionError(f"could not parse {source} as JSON: {exc}") from exc
    if not isinstance(loaded, dict):
        raise CLIConnectionError(f"{source} must hold a JSON object, got {type(loaded).__name__}")
    return loaded


def merged_settings(options: ClaudeAgentOptions, overlay: Mapping[str, Any]) -> str:
    """``options.settings`` (JSON text or a file) with the keys of ``overlay`` on top,
    as JSON text."""
    merged = _load_settings(options.settings, options.cwd) if options.settings else {}
    merged.update(overlay)
    return _dumps(merged, "settings")


def _settings_value(options: ClaudeAgentOptions) -> str | None:
    if options.sandbox is None:
        if isinstance(options.settings, Mapping):
            return _dumps(dict(options.settings), "settings")
        return None if options.settings is None else _value_text("--settings", options.settings)
    merged = _load_settings(options.settings, options.cwd) if options.settings else {}
    merged["sandbox"] = dict(options.sandbox)
    return _dumps(merged, "settings with sandbox")


def _settings_argument(settings: str, spill: _Spill) -> str:
    """The value of ``--settings``, which always goes as a second argument (Claude Code
    2.0.69 and earlier ignore ``--settings=<value>``): JSON text, or a file path, with
    ``./`` put before a relative path that begins with a dash (the same file, and not
    read as an option)."""
    value = spill.private_json(settings, "settings", _settings_may_hold_secrets)
    return "./" + value if value.startswith("-") else value


def _thinking_args(options: ClaudeAgentOptions) -> list[str]:
    thinking = options.thinking
    if thinking is None:
        if options.max_thinking_tokens is not None:
            return [_attached("--max-thinking-tokens", options.max_thinking_tokens)]
        return []
    kind = thinking.get("type")
    if kind == "adaptive":
        args = [_attached("--thinking", "adaptive")]
    elif kind == "enabled":
        args = [_attached("--max-thinking-tokens", thinking.get("budget_tokens"))]
    elif kind == "disabled":
        return [_attached("--thinking", "disabled")]
    else:
        raise OptionsError(f"unknown thinking type {kind!r}")
    if "display" in thinking:
        args.append(_attached("--thinking-display", thinking.get("display")))
    return args


def _extra_args(extra: Mapping[str, object]) -> list[str]:
    args: list[str] = []
    for key, value in extra.items():
        flag = "--" + key.lstrip("-")
        if value is None:
            args.append(flag)
        else:  # a number is given as its text, as the reference SDK gives it
            args += _separate(flag, value)
    return args


def _awaits_initialize(options: ClaudeAgentOptions) -> bool:
    """Whether the CLI must read ``initialize`` at start-up (``--await-initialize``):
    something it needs before it boots travels in that request."""
    return (
        (options.plugin_delivery == "initialize" and bool(options.plugins))
        or (
            options.mcp_servers_delivery == "initialize"
            and build_mcp_config(options.mcp_servers) is not None
        )
        or managed_settings_in_initialize(options)
    )


def _ts_flags(options: ClaudeAgentOptions) -> list[str]:
    """The flags of the options the TypeScript SDK added, spelled as it spells them."""
    args: list[str] = []
    if options.permission_prompts:
        args.append(_attached("--permission-prompts", options.permission_prompts))
    if options.allow_dangerously_skip_permissions:
        args.append("--allow-dangerously-skip-permissions")
    if options.agent:
        args.append(_attached("--agent", options.agent))
    if options.debug_file is not None:
        args.append(_attached("--debug-file", options.debug_file))
    elif options.debug:
        args.append("--debug")
    if not options.persist_session:
        args.append("--no-session-persistence")
    if options.project_config_root is not None:
        args.append(_attached("--project-config-root", options.project_config_root))
    if _awaits_initialize(options):
        args.append("--await-initialize")
        if managed_settings_in_initialize(options):
            args.append("--managed-settings-in-initialize")
    return args


def build_argv(  # noqa: C901 - one flag per option, in the order the CLI documents them
    options: ClaudeAgentOptions, *, cli_path: str, spill_dir: str | SpillDir | None = None
) -> list[str]:
    """The full command line for ``options``.

    ``[cli_path, "--output-format", "stream-json", "--verbose", <option flags>,
    "--input-format", "stream-json"]``; ``extra_args`` come last among the option flags.
    As claude-agent-sdk 0.2.190 sends them, option values go as one ``--flag=value``
    argument, so that a value beginning with a dash is never read as an option, except
    ``--settings`` (always two arguments; a path beginning with a dash gets ``./``) and
    ``--mcp-config``, ``--managed-settings`` and ``extra_args`` (two arguments unless the
    value begins with a dash).
    With ``spill_dir``, values over `SPILL_THRESHOLD` bytes are written to files
    there: a long system prompt becomes ``--system-prompt-file PATH`` and a long
    ``--mcp-config`` or ``--settings`` value becomes the file's path; so does one that
    may hold secrets (an MCP config naming external servers, settings with ``env``),
    whatever its length: without ``spill_dir`` those stay inline. A long
    ``output_format`` schema is left out (with or without ``spill_dir``): it travels in
    ``initialize`` (see `build_initialize_fields()`).

    Raises ``ValueError`` (`OptionsError`) for inconsistent options and for a value
    no command line can carry (a NUL character, a lone surrogate), naming its flag;
    `CLIConnectionError` when ``settings`` must be merged with ``sandbox`` but cannot
    be loaded, or when an option's value is None or a container where the CLI needs a
    text (``system_prompt``'s ``append``, ``path`` or ``prompt``, a plugin's ``path``,
    ``thinking``'s ``display``), naming the flag.
    """
    validate_options(options)
    spill = _Spill(spill_dir)
    argv = [cli_path, "--output-format", "stream-json", "--verbose"]
    argv += _system_prompt_args(options, spill)
    argv += _tools_args(options)

    _check_tool_rule_names(options)
    allowed = _allowed_tools(options)
    if allowed:
        argv.append(_attached("--allowedTools", ",".join(allowed)))
    if options.max_turns:
        argv.append(_attached("--max-turns", options.max_turns))
    if options.max_budget_usd is not None:
        argv.append(_attached("--max-budget-usd", options.max_budget_usd))
    if options.task_budget is not None:
        argv.append(_attached("--task-budget", options.task_budget["total"]))
    if options.disallowed_tools:
        argv.append(_attached("--disallowedTools", ",".join(options.disallowed_tools)))
    if options.model:
        argv.append(_attached("--model", options.model))
    if options.fallback_model:
        argv.append(_attached("--fallback-model", options.fallback_model))
    if options.betas:
        argv.append(_attached("--betas", ",".join(options.betas)))

    if options.can_use_tool is not None:
        argv.append(_attached("--permission-prompt-tool", "stdio"))
    elif options.permission_prompt_tool_name:
        argv.append(_attached("--permission-prompt-tool", options.permission_prompt_tool_name))
    if options.permission_mode:
        argv.append(_attached("--permission-mode", options.permission_mode))
    argv += _ts_flags(options)

    if options.continue_conversation:
        argv.append("--continue")
    if options.resume:
        argv.append(_attached("--resume", options.resume))
    if options.session_id:
        argv.append(_attached("--session-id", options.session_id))
    if options.fork_session:
        argv.append("--fork-session")
    if options.resume_session_at:
        argv.append(_attached("--resume-session-at", options.resume_session_at))
    if options.resume_drops_turn is not None:  # "" too: the CLI refuses it, not we drop it
        argv.append(_attached("--resume-drops-turn", options.resume_drops_turn))

    settings = _settings_value(options)
    if settings is not None:
        argv += ["--settings", _settings_argument(settings, spill)]
    sources = options.setting_sources
    if sources is None and options.skills is not None:
        sources = ["user", "project"]
    if sources is not None:
        argv.append(_attached("--setting-sources", ",".join(sources)))
    argv += [_attached("--add-dir", directory) for directory in options.add_dirs]

    mcp = build_mcp_config(options.mcp_servers)
    if mcp is not None and options.mcp_servers_delivery != "initialize":
        text = mcp if isinstance(mcp, str) else _dumps(mcp, "mcp_servers")
        private = spill.private_json(text, "mcp-config", _mcp_may_hold_secrets)
        argv += _separate("--mcp-config", private)
    if options.strict_mcp_config:
        argv.append("--strict-mcp-config")
    if options.include_partial_messages:
        argv.append("--include-partial-messages")
    if options.include_hook_events:
        argv.append("--include-hook-events")
    if options.session_mirror or options.session_store is not None:
        argv.append("--session-mirror")
    for plugin in options.plugins:
        if plugin.get("type") != "local":
            raise OptionsError(f"unsupported plugin type {plugin.get('type')!r}: only 'local'")
        if options.plugin_delivery != "initialize":
            flag = "--plugin-dir-no-mcp" if plugin.get("skip_mcp_discovery") else "--plugin-dir"
            argv.append(_attached(flag, plugin.get("path")))
    if options.managed_settings and not managed_settings_in_initialize(options):
        managed = _dumps(options.managed_settings, "managed_settings")
        argv += _separate("--managed-settings", managed)

    argv += _thinking_args(options)
    if options.effort:
        argv.append(_attached("--effort", options.effort))
    found = _output_schema(options)
    if found is not None and not _too_long(found[1]):
        argv.append(_attached("--json-schema", found[1]))

    argv += _extra_args(options.extra_args)
    argv += ["--input-format", "stream-json"]
    _check_argv(argv)
    return argv
