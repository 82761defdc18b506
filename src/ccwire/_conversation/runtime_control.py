"""Runtime control of a live conversation: the CLI's control requests as typed methods.

`RuntimeControl` is mixed into `ClaudeSDKClient`. Every method
sends one control request (bounded by ``options.control_timeout``) and returns a typed
result. When the CLI refuses, the error is typed:

* `UnsupportedFeatureError` when the connected CLI does not know the
  request (it answers "Unsupported control request subtype"), or when the request
  needs a capability the CLI is known not to have (checked before sending, so an old
  CLI never silently ignores a field);
* `ControlProtocolError` for any other refusal (``error_code`` set when
  the CLI gives one, e.g. ``invalid_mode``);
* `ControlTimeoutError` when no answer comes in time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, get_args

from .. import _conversation, _protocol, _wire
from .._core.errors import (
    ControlProtocolError,
    OptionsError,
    SessionStateError,
    UnsupportedFeatureError,
)
from .._mcp.config import McpServerConfig
from .._wire.permission_types import PermissionMode
from . import argv
from .option_types import SdkPluginConfig
from .options import check_int, checked_mcp_servers

if TYPE_CHECKING:  # in a private annotation only
    from .connection import Connection

__all__ = ["RuntimeControl"]

_PERMISSION_MODES = frozenset(get_args(PermissionMode))
_THINKING_DISPLAYS = ("summarized", "omitted", "highlights")


class RuntimeControl:
    """The runtime control requests (see the module docstring)."""

    _features: _protocol.features.CliFeatures | None = None
    _mcp_servers: dict[str, McpServerConfig] | None = None

    def _connection(self, *, any_loop: bool = False) -> Connection:
        raise NotImplementedError

    async def _request(
        self,
        subtype: str,
        fields: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> Mapping[str, Any]:
        try:
            return await self._connection().protocol.request(subtype, fields or {}, timeout=timeout)
        except UnsupportedFeatureError:
            raise
        except ControlProtocolError as exc:
            if _protocol.features.is_unsupported_answer(exc):
                raise _protocol.features.unsupported_error(subtype, self._features, exc) from exc
            raise

    def _require(self, capability: str, what: str) -> None:
        if self._features is not None:
            self._features.require(capability, what)

    # ------------------------------------------------------------ features

    @property
    def capabilities(self) -> frozenset[str]:
        """The capabilities the CLI reported so far (complete after the first turn)."""
        return frozenset(self._features.capabilities) if self._features else frozenset()

    @property
    def cli_version(self) -> str | None:
        """The CLI's version, once reported (in ``initialize`` or ``system/init``)."""
        return self._features.version if self._features else None

    def supports(self, capability: str) -> bool | None:
        """Whether the CLI has ``capability``: True/False when known, None when it cannot
        be known yet (before the first ``system/init`` of a CLI that reports
        capabilities)."""
        return self._features.supports(capability) if self._features else None

    async def answer_control_request(self, request_id: str, answer: object) -> bool:
        """Answer a request of the CLI that a callback left open by returning
        `ANSWER_LATER` (the TypeScript SDK's out-of-band answer).

        Example:
            ```python
            pending: dict[str, ToolPermissionContext] = {}

            async def can_use_tool(name, tool_input, context):
                pending[context.request_id] = context  # a person decides, later
                return ANSWER_LATER

            # ... when they have decided:
            await client.answer_control_request(request_id, PermissionResultAllow())
            ```

        Args:
            request_id: The request's id (``context.request_id`` in the callback).
            answer: What the callback would have returned: a `PermissionResult` for
                ``can_use_tool``, an `ElicitationResult` for ``on_elicitation``, a
                `UserDialogResult` for ``on_user_dialog`` (or their dict forms).

        A callback may also answer its own request this way while it runs: what it
        returns after that (``None``, as in the TypeScript SDK), or its timeout, is then
        no answer and no failure.

        Returns:
            True when the answer was written; False when the request is owed no answer
            (answered already, withdrawn by the CLI, or unknown).

        Raises:
            ControlProtocolError: ``answer`` is not an answer to that kind of request.
        """
        from .._callbacks.dialogs import encode_elicitation_answer, encode_user_dialog_answer
        from .._callbacks.permissions import encode_permission_answer

        protocol = self._connection().protocol
        req = protocol.owed_request(request_id)
        if req is None:
            return False
        body: Mapping[str, Any]
        if req.subtype == _wire.codec.CAN_USE_TOOL:
            body = encode_permission_answer(answer, req)
        elif req.subtype == _wire.codec.ELICITATION:
            body = encode_elicitation_answer(answer)
        elif req.subtype == _wire.codec.REQUEST_USER_DIALOG:
            body = encode_user_dialog_answer(answer)
        elif isinstance(answer, Mapping):
            body = answer
        else:
            raise ControlProtocolError(
                f"answer a {req.subtype!r} request with a dict, not {answer!r}",
                subtype=req.subtype,
            )
        return await protocol.answer_later(request_id, body)

    async def send_control_request(self, subtype: str, **fields: Any) -> Mapping[str, Any]:
        """Send any control request and return the CLI's raw answer (for requests
        without a typed method). Errors are typed as for the other methods."""
        return await self._request(subtype, fields)

    # ------------------------------------------------------- turn and model

    async def interrupt(
        self, *, cancel_queued: bool | None = None
    ) -> _wire.control_types.InterruptResult:
        """Stop the current turn; the conversation stays usable.

        ``cancel_queued=True`` also drops prompts still queued (needs the
        ``interrupt_cancel_queued_v1`` capability). The result lists queued prompts.
        """
        fields: dict[str, Any] = {}
        if cancel_queued is not None:
            self._require(
                _protocol.features.CAP_INTERRUPT_CANCEL_QUEUED, "interrupt(cancel_queued=...)"
            )
            fields["cancel_queued"] = cancel_queued
        return _wire.control_requests.decode_interrupt(
            await self._request(_wire.codec.INTERRUPT, fields)
        )

    async def set_permission_mode(
        self, mode: PermissionMode
    ) -> _wire.control_types.PermissionModeChange:
        """Change the permission mode for the rest of the conversation. A mode that is not
        a `PermissionMode` is refused before sending (older CLIs accept any
        string), and a mode the CLI rejects raises `ControlProtocolError`,
        both with ``error_code="invalid_mode"``."""
        if mode not in _PERMISSION_MODES:
            raise ControlProtocolError(
                f"unknown permission mode {mode!r}; expected one of "
                f"{', '.join(get_args(PermissionMode))}",
                subtype=_wire.codec.SET_PERMISSION_MODE,
                error_code="invalid_mode",
            )
        return _wire.control_requests.decode_permission_mode(
            await self._request(_wire.codec.SET_PERMISSION_MODE, {"mode": mode})
        )

    async def set_mcp_permission_mode_override(
        self, server_name: str, mode: Literal["default", "auto"] | None
    ) -> str | None:
        """Pin (or clear, with ``None``) a per-MCP-server permission mode that can only
        tighten: it applies where the session's mode would allow without asking
        (``bypassPermissions``, ``auto``), ``"default"`` asking for each call and
        ``"auto"`` routing calls through the auto-mode classifier.

        Example:
            ```python
            warning = await client.set_mcp_permission_mode_override("github", "default")
            ```

        Args:
            server_name: The server's name, as registered.
            mode: ``"default"``, ``"auto"``, or ``None`` to clear the override.

        Returns:
            The CLI's warning when ``server_name`` names no known server (an override
            is kept, and applies once a server of that name connects), else None.
        """
        answer = await self._request(
            _wire.control_requests.SET_MCP_PERMISSION_MODE_OVERRIDE,
            _wire.control_requests.mcp_permission_mode_override_fields(server_name, mode),
        )
        warning = answer.get("warning")
        return warning if isinstance(warning, str) else None

    async def set_model(self, model: str | None = None) -> _wire.control_types.ModelChange:
        """Switch model (``None`` resets to the default); the result has the resolved id."""
        return _wire.control_requests.decode_model(
            await self._request(_wire.codec.SET_MODEL, {"model": model})
        )

    async def set_max_thinking_tokens(
        self,
        max_thinking_tokens: int | None,
        *,
        display: Literal["summarized", "omitted", "highlights"] | None = None,
    ) -> None:
        """Set the extended-thinking budget for the next requests (``None`` resets it);
        ``display`` changes how thinking is shown.

        Raises:
            OptionsError: ``max_thinking_tokens`` is no int of at least 0, or
                ``display`` is none of the three.
        """
        check_int("max_thinking_tokens", max_thinking_tokens, non_negative=True)
        if display is not None and display not in _THINKING_DISPLAYS:
            raise OptionsError(
                f"display must be one of {', '.join(_THINKING_DISPLAYS)}, got {display!r}"
            )
        fields: dict[str, Any] = {"max_thinking_tokens": max_thinking_tokens}
        if display is not None:
            fields["thinking_display"] = display
        await self._request(_wire.control_requests.SET_MAX_THINKING_TOKENS, fields)

    async def get_context_usage(
        self, detail: Literal["summary", "full"] | None = None
    ) -> _wire.control_types.ContextUsage:
        """How full the context window is, by category."""
        return _wire.control_requests.decode_context_usage(
            await self._request(
                _wire.control_requests.GET_CONTEXT_USAGE,
                _wire.control_requests.optional_fields(detail=detail),
            )
        )

    # ------------------------------------------------------------------- MCP

    async def mcp_status(self) -> list[_wire.control_types.McpServerState]:
        """The MCP servers the CLI knows and their state (right after connecting, a
        server may still be missing or ``pending``)."""
        return _wire.control_requests.decode_mcp_status(
            await self._request(_wire.control_requests.MCP_STATUS)
        )

    async def get_mcp_status(self) -> _conversation.status_types.McpStatusResponse:
        """The MCP servers the CLI knows, as ``claude-agent-sdk`` returns them: the CLI's
        answer as a dict, ``{"mcpServers": [...]}`` with its camelCase keys.

        `mcp_status()` returns the same as typed `McpServerState` values.

        Returns:
            The `McpStatusResponse`.
        """
        answer = await self._request(_wire.control_requests.MCP_STATUS)
        return _wire.control_requests.mcp_status_response(answer)  # type: ignore[return-value]

    async def reconnect_mcp_server(self, server_name: str) -> None:
        """Reconnect an MCP server that failed or disconnected (``claude-agent-sdk``'s
        name for `mcp_reconnect()`).

        Args:
            server_name: The server's name.
        """
        await self.mcp_reconnect(server_name)

    async def toggle_mcp_server(self, server_name: str, enabled: bool) -> None:
        """Disable or re-enable an MCP server (``claude-agent-sdk``'s name for
        `mcp_toggle()`).

        Args:
            server_name: The server's name.
            enabled: ``False`` disconnects it and removes its tools; ``True`` brings it
                back.
        """
        await self.mcp_toggle(server_name, enabled)

    async def mcp_reconnect(self, server_name: str) -> None:
        """Reconnect an MCP server the CLI dialed (not an in-process one)."""
        await self._request(
            _wire.control_requests.MCP_RECONNECT,
            _wire.control_requests.mcp_server_fields(server_name),
        )

    async def mcp_toggle(self, server_name: str, enabled: bool) -> None:
        """Disable or re-enable an MCP server (re-enabling redoes its handshake).

        An in-process server cannot be toggled on a CLI that reports no capabilities
        (older than 2.1.205: it ignores disabling and fails re-enabling); that raises
        `UnsupportedFeatureError` before sending.
        """
        features = self._features
        if features is not None and server_name in argv.sdk_servers(self._mcp_servers):
            features.require_capabilities(
                f"mcp_toggle of the in-process MCP server {server_name!r}",
                "it acknowledges disabling an in-process server but keeps using it, "
                "and fails to re-enable one",
                subtype=_wire.control_requests.MCP_TOGGLE,
            )
        await self._request(
            _wire.control_requests.MCP_TOGGLE,
            _wire.control_requests.mcp_toggle_fields(server_name, enabled),
        )

    async def mcp_set_servers(
        self, servers: Mapping[str, McpServerConfig]
    ) -> _wire.control_types.McpSetServersResult:
        """Replace the session's MCP servers with ``servers`` (stdio, SSE, HTTP or
        in-process ``create_sdk_mcp_server`` ones). Servers not listed, including
        those from ``options.mcp_servers``, are removed; new in-process servers are
        served from now on. Per-server failures are in the result's ``errors``."""
        conn = self._connection()
        servers = checked_mcp_servers(servers)
        previous = self._mcp_servers
        config = argv.build_mcp_config(dict(servers))
        wire_servers = config.get("mcpServers", {}) if isinstance(config, dict) else {}
        conn.serve_sdk_servers(argv.sdk_servers(servers))
        try:
            answer = await self._request(
                _wire.control_requests.MCP_SET_SERVERS, {"servers": wire_servers}
            )
        except BaseException:
            conn.serve_sdk_servers(argv.sdk_servers(previous or {}))
            raise
        self._mcp_servers = dict(servers)
        return _wire.control_requests.decode_set_servers(answer)

    async def add_mcp_servers(
        self, servers: Mapping[str, McpServerConfig]
    ) -> _wire.control_types.McpSetServersResult:
        """Add (or replace by name) MCP servers, keeping the others."""
        servers = checked_mcp_servers(servers)
        return await self.mcp_set_servers({**self._known_servers("add"), **servers})

    async def remove_mcp_servers(self, *names: str) -> _wire.control_types.McpSetServersResult:
        """Remove MCP servers by name, keeping the others (a name that is no ``str`` is
        an `OptionsError`)."""
        for name in names:
            if not isinstance(name, str):
                raise OptionsError(f"MCP server names are str, not {type(name).__name__}")
        current = self._known_servers("remove")
        return await self.mcp_set_servers({k: v for k, v in current.items() if k not in names})

    def _known_servers(self, verb: str) -> dict[str, McpServerConfig]:
        if self._mcp_servers is None:
            raise SessionStateError(
                f"cannot {verb} MCP servers: options.mcp_servers is a file or JSON text, so "
                "the current set is unknown; call mcp_set_servers() with the full set"
            )
        return dict(self._mcp_servers)

    async def mcp_call(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_ms: int | None = None,
        result_not_for_model: bool | None = None,
        check_permissions: bool | None = None,
        soft_error_result: bool | None = None,
    ) -> Mapping[str, Any]:
        """Call a tool (``mcp__server__tool``) of an MCP server the CLI dialed, without a
        model turn; returns the MCP tool result. In-process servers are refused.

        ``soft_error_result=True`` (CLI 2.1.332 and later: ``mcp_call_soft_error_result_v1``)
        returns the tool's own error result (``isError: true``, with its content) where
        the CLI would otherwise answer with an error."""
        if soft_error_result is not None:
            self._require(
                _protocol.features.CAP_MCP_CALL_SOFT_ERROR, "mcp_call(soft_error_result=...)"
            )
        if result_not_for_model is not None:
            self._require(
                _protocol.features.CAP_MCP_CALL_NOT_FOR_MODEL, "mcp_call(result_not_for_model=...)"
            )
        if check_permissions is not None:
            self._require(
                _protocol.features.CAP_MCP_CALL_CHECK_PERMISSIONS, "mcp_call(check_permissions=...)"
            )
        fields = _wire.control_requests.optional_fields(
            tool=tool,
            arguments=dict(arguments) if arguments is not None else None,
            timeout_ms=timeout_ms,
            result_not_for_model=result_not_for_model,
            check_permissions=check_permissions,
            soft_error_result=soft_error_result,
        )
        return await self._request(_wire.control_requests.MCP_CALL, fields)

    async def mcp_read_resource(self, server_name: str, uri: str) -> list[Mapping[str, Any]]:
        """Read a ``ui://`` resource of an MCP server (needs ``mcp_read_resource_v1``)."""
        self._require(_protocol.features.CAP_MCP_READ_RESOURCE, "mcp_read_resource()")
        answer = await self._request(
            _wire.control_requests.MCP_READ_RESOURCE,
            _wire.control_requests.mcp_read_resource_fields(server_name, uri),
        )
        contents = answer.get("contents")
        return [c for c in contents if isinstance(c, Mapping)] if isinstance(contents, list) else []

    # ---------------------------------------------------------------- tasks

    async def stop_task(self, task_id: str) -> None:
        """Stop a background task (its end arrives as ``task_updated``/``task_notification``)."""
        await self._request(_wire.control_requests.STOP_TASK, {"task_id": task_id})

    async def background_tasks(self, tool_use_id: str | None = None) -> bool:
        """Move running tool calls (or one of them) to the background; True if any moved."""
        answer = await self._request(
            _wire.control_requests.BACKGROUND_TASKS,
            _wire.control_requests.optional_fields(tool_use_id=tool_use_id),
        )
        return answer.get("backgrounded") is True

    async def get_task_output(self, task_id: str) -> _wire.control_types.TaskOutput:
        """A background shell or Monitor task's output so far."""
        return _wire.control_requests.decode_task_output(
            await self._request(_wire.control_requests.GET_TASK_OUTPUT, {"task_id": task_id})
        )

    async def cancel_async_message(self, message_uuid: str) -> bool:
        """Withdraw a queued prompt by its uuid; True if it was still queued."""
        answer = await self._request(
            _wire.control_requests.CANCEL_ASYNC_MESSAGE, {"message_uuid": message_uuid}
        )
        return answer.get("cancelled") is True

    async def rewind_files(
        self, user_message_id: str, *, dry_run: bool = False
    ) -> _wire.control_types.RewindFilesResult:
        """Restore the files to their state before the prompt ``user_message_id`` (the
        uuid `query()` returned). Needs ``enable_file_checkpointing=True``.

        With ``dry_run`` the result tells whether it is possible; otherwise a refusal
        (``can_rewind`` false) raises `ControlProtocolError`.
        """
        fields: dict[str, Any] = {"user_message_id": user_message_id}
        if dry_run:
            fields["dry_run"] = True
        result = _wire.control_requests.decode_rewind(
            await self._request(_wire.control_requests.REWIND_FILES, fields)
        )
        if not dry_run and (result.error or not result.can_rewind):
            raise ControlProtocolError(
                f"the CLI could not rewind files: {result.error or 'not possible'}",
                subtype=_wire.control_requests.REWIND_FILES,
            )
        return result

    # ------------------------------------------------------------- settings

    async def get_settings(self) -> _wire.control_types.SettingsSnapshot:
        """The effective settings, where they came from, and the values in force."""
        return _wire.control_requests.decode_settings(
            await self._request(_wire.control_requests.GET_SETTINGS)
        )

    async def apply_flag_settings(self, settings: Mapping[str, Any]) -> None:
        """Merge ``settings`` into the flag-settings layer (a ``None`` value clears a key)."""
        await self._request(
            _wire.control_requests.APPLY_FLAG_SETTINGS, {"settings": _settings(settings)}
        )

    async def update_settings(
        self, source: Literal["localSettings", "userSettings"], settings: Mapping[str, Any]
    ) -> None:
        """Write ``settings`` into a settings file (local or user)."""
        await self._request(
            _wire.control_requests.UPDATE_SETTINGS,
            {"source": source, "settings": _settings(settings)},
        )

    async def rename_session(self, title: str) -> None:
        """Give the session a title."""
        await self._request(_wire.control_requests.RENAME_SESSION, {"title": title})

    async def reload_plugins(
        self,
        *,
        refuse_if_busy: bool | None = None,
        hold_on_cache_impact: bool | None = None,
        add_plugins: list[SdkPluginConfig] | None = None,
    ) -> _wire.control_types.PluginReload:
        """Reload plugins; the result lists commands, agents, plugins and MCP servers.

        Example:
            ```python
            reload = await client.reload_plugins(
                add_plugins=[{"type": "local", "path": "/abs/plugins/notes"}],
                hold_on_cache_impact=True,
            )
            if reload.held:  # applying would change the tools the prompt cache holds
                print(reload.cache_impact)
            ```

        Args:
            refuse_if_busy: Reload nothing while a turn or background work runs: the
                CLI refuses (``error_code`` ``reload_plugins_busy``).
            hold_on_cache_impact: Apply nothing when the reload would change the tool
                list the conversation's prompt cache depends on: the result then has
                ``held=True`` and ``cache_impact``; ask again without it to apply.
            add_plugins: Plugins to load as well, as the ``plugins`` option takes them
                (absolute paths); those loaded already stay.
        """
        if refuse_if_busy is not None:
            self._require(
                _protocol.features.CAP_RELOAD_REFUSE_IF_BUSY, "reload_plugins(refuse_if_busy=...)"
            )
        plugins = [argv.plugin_to_wire(p) for p in add_plugins] if add_plugins else None
        answer = await self._request(
            _wire.control_requests.RELOAD_PLUGINS,
            _wire.control_requests.reload_plugins_fields(
                refuse_if_busy, hold_on_cache_impact, plugins
            ),
        )
        return _wire.control_requests.decode_plugin_reload(answer)

    async def reload_skills(self) -> list[_wire.control_types.SlashCommand]:
        """Reload skills; returns the skills now available."""
        return _wire.control_requests.decode_skills(
            await self._request(_wire.control_requests.RELOAD_SKILLS)
        )

    async def list_permission_rules(self) -> _wire.control_types.PermissionRules:
        """The permission rules in force, where each came from, and the working
        directories (the CLI's whole answer is in ``raw``)."""
        return _wire.control_requests.decode_permission_rules(
            await self._request(_wire.control_requests.LIST_PERMISSION_RULES)
        )

    async def reload_output_styles(self) -> list[str]:
        """Reload output styles; returns the names of those now available."""
        return _wire.control_requests.decode_output_styles(
            await self._request(_wire.control_requests.RELOAD_OUTPUT_STYLES)
        )

    async def get_hooks_listing(self) -> _wire.control_types.HooksListing:
        """The hooks configured in the CLI's settings, plugins and policy (not those
        registered through ``options.hooks``), and every hook event it knows."""
        return _wire.control_requests.decode_hooks_listing(
            await self._request(_wire.control_requests.GET_HOOKS_LISTING)
        )

    async def set_color(self, color: str) -> None:
        """Set the session's display color (a CLI without it for this kind of
        connection refuses with `UnsupportedFeatureError`)."""
        await self._request(_wire.control_requests.SET_COLOR, {"color": color})

    async def set_has_subscribers(self, has_subscribers: bool | None) -> None:
        """Tell the CLI whether anyone is watching this session (``None``: unknown)."""
        await self._request(
            _wire.control_requests.SET_HAS_SUBSCRIBERS, {"has_subscribers": has_subscribers}
        )

    # ---------------------------------------------------------- files and repos

    async def read_file(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int | None = None,
        encoding: Literal["utf-8", "base64"] | None = None,
    ) -> _wire.control_types.FileContents:
        """Read a file through the CLI, under its read permission rules (a denied or
        missing file raises `ControlProtocolError`). ``max_bytes``
        truncates; ``encoding="base64"`` returns binary-safe contents."""
        fields = _wire.control_requests.optional_fields(
            path=_path(path), max_bytes=max_bytes, encoding=encoding
        )
        return _wire.control_requests.decode_file_contents(
            await self._request(_wire.control_requests.READ_FILE, fields)
        )

    async def seed_read_state(self, path: str | os.PathLike[str], mtime_ms: float) -> None:
        """Tell the CLI the file at ``path`` is already known as of ``mtime_ms`` (its
        modification time in milliseconds since the epoch, e.g. ``st_mtime_ns //
        1_000_000``), as if the model had read it: the edit tools then accept it
        without a fresh read. Paths the CLI may not read are silently not seeded."""
        await self._request(
            _wire.control_requests.SEED_READ_STATE, {"path": _path(path), "mtime": mtime_ms}
        )

    async def register_repo_root(
        self,
        directory: str | os.PathLike[str],
        *,
        reload_claude_md: bool | None = None,
        reload_plugins: bool | None = None,
        reload_skills: bool | None = None,
    ) -> _wire.control_types.RepoRootRegistration:
        """Add a repository below the working directory (or an ``add_dirs`` root) as a
        working directory of the session, optionally reloading its CLAUDE.md, plugins
        and skills. The CLI refuses a directory outside them, or one already registered."""
        fields = _wire.control_requests.optional_fields(
            directory=_path(directory, "directory"),
            reload_claude_md=reload_claude_md,
            reload_plugins=reload_plugins,
            reload_skills=reload_skills,
        )
        return _wire.control_requests.decode_repo_root(
            await self._request(_wire.control_requests.REGISTER_REPO_ROOT, fields)
        )

    async def file_suggestions(self, query: str) -> _wire.control_types.FileSuggestions:
        """Paths matching ``query`` from the CLI's file index (what ``@`` completion
        offers), relative to the result's ``cwd``."""
        return _wire.control_requests.decode_file_suggestions(
            await self._request(_wire.control_requests.FILE_SUGGESTIONS, {"query": query})
        )

    # ---------------------------------------------------------- information

    async def list_models(self) -> list[_wire.control_types.ModelInfo]:
        """The models the CLI offers."""
        return _wire.control_requests.decode_models(
            await self._request(_wire.control_requests.LIST_MODELS)
        )

    async def get_cli_version(self) -> _wire.control_types.CliVersion:
        """The CLI binary's version and build time, asked from the CLI itself."""
        return _wire.control_requests.decode_version(
            await self._request(_wire.control_requests.GET_BINARY_VERSION)
        )

    async def get_usage(
        self, *, skip_behaviors: bool | None = None
    ) -> _wire.control_types.UsageReport:
        """Cost and usage so far (per model in ``session.model_usage``), and rate limits
        when known. ``skip_behaviors=True`` leaves out the usage-behavior summary."""
        return _wire.control_requests.decode_usage(
            await self._request(
                _wire.control_requests.GET_USAGE,
                _wire.control_requests.optional_fields(skip_behaviors=skip_behaviors),
            )
        )

    async def get_session_cost(self) -> str:
        """The CLI's human-readable cost summary (as ``/cost`` prints it)."""
        text = (await self._request(_wire.control_requests.GET_SESSION_COST)).get("text")
        return text if isinstance(text, str) else ""

    async def get_server_info(self) -> dict[str, Any] | None:
        """The CLI's answer to ``initialize`` (commands, models, capabilities, ...): a
        dict, as in ``claude-agent-sdk`` (a copy: changing it changes nothing here)."""
        info = self._connection(any_loop=True).server_info  # (cached: no loop needed)
        return None if info is None else dict(info)

    async def initialization_result(self) -> Mapping[str, Any]:
        """The CLI's answer to ``initialize`` (the TypeScript SDK's name for
        `get_server_info()`; the latest one after `reinitialize()`)."""
        return self._connection().server_info or {}

    async def reinitialize(self) -> Mapping[str, Any]:
        """Send ``initialize`` again to the running CLI, with the same fields, and return
        its fresh answer.

        For after a gap in the transport: the CLI registers this session's hooks again,
        and the permission requests and dialogs it is still waiting on, which its answer
        lists, are served again (those being answered now are not served twice);
        callbacks should therefore be idempotent per request id.
        """
        conn = self._connection()
        info = await conn.protocol.request(
            _wire.codec.INITIALIZE,
            conn.initialize_fields,
            timeout=conn.options.initialize_timeout,
        )
        conn.server_info = info
        return info

    async def supported_commands(self) -> list[_wire.control_types.SlashCommand]:
        """The slash commands and skills of the session: those of the last
        ``commands_changed`` message, else those ``initialize`` reported."""
        conn = self._connection()
        commands = conn.latest_commands
        if commands is None:
            commands = list((conn.server_info or {}).get("commands") or [])
        return _wire.control_requests.decode_commands(commands)

    async def supported_models(self) -> list[_wire.control_types.ModelInfo]:
        """The models ``initialize`` reported (`list_models()` asks the CLI again)."""
        return _wire.control_requests.decode_models(self._connection().server_info or {})

    async def supported_agents(self) -> list[_wire.control_types.AgentInfo]:
        """The subagents the session can use, as ``initialize`` reported them."""
        return _wire.control_requests.decode_agents(self._connection().server_info or {})

    async def account_info(self) -> _wire.control_types.AccountInfo:
        """The account the CLI signed in with, as ``initialize`` reported it."""
        return _wire.control_requests.decode_account(self._connection().server_info or {})


def _settings(settings: object) -> dict[str, Any]:
    """``settings`` (a dict) for the wire; `OptionsError` for anything else."""
    if not isinstance(settings, Mapping):
        raise OptionsError(f"settings must be a dict, not {type(settings).__name__}")
    return dict(settings)


def _path(path: object, what: str = "path") -> str:
    """``path`` (a str or an ``os.PathLike``) as text; `OptionsError` for anything else."""
    if not isinstance(path, (str, os.PathLike)):
        raise OptionsError(f"{what} must be a str or a Path, not {type(path).__name__}")
    return os.fspath(path)
