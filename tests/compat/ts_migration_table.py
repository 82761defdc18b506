"""The generated comparison with Anthropic's TypeScript Agent SDK in ``docs/migration.md``.

`render()` reads the TypeScript SDK's API from its shipped ``sdk.d.ts`` (`ts_api`) and
looks each capability up in ccwire itself: exported functions, classes and constants,
every field of ``Options``, every method of ``Query``, every message type of the
``SDKMessage`` union, every hook event, and the members of the option types. A row's
status comes from what ccwire has, never from a list kept by hand:

* **yes**: ccwire has it (under the Python name shown), with the same meaning;
* **different**: it has it, with the difference noted;
* **n/a**: it does not apply to Python (the reason is given);
* **elsewhere**: another issue builds it (named);
* **not yet**: it applies and is not built (the reason is given);
* **missing**: nothing maps it: `test_ts_migration_doc` fails on such a row.

``python -m tests.compat.ts_migration_table`` rewrites the block;
``test_ts_migration_doc.py`` checks the document holds exactly what this makes.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from typing import Any

from tests.compat import migration_table
from tests.compat.ts_api import PACKAGE, TsApi, find_package, read_package

DOC = migration_table.DOC
BEGIN = "<!-- BEGIN GENERATED: tests/compat/ts_migration_table.py -->"
END = "<!-- END GENERATED: tests/compat/ts_migration_table.py -->"

STATUSES = ("yes", "different", "n/a", "elsewhere", "not yet", "missing")

NOT_APPLICABLE: dict[str, str] = {
    "AbortError": "Python cancels a call by cancelling its task or cancel scope (anyio); "
    "the cancellation propagates, no error class is needed",
    "Options.abortController": "cancel the task or scope that runs `query()`; "
    "`disconnect()` ends a client",
    "Options.executable": "the JavaScript runtime of a JavaScript build of the CLI; ccwire "
    "runs the native `claude` executable",
    "Options.executableArgs": "arguments for that JavaScript runtime (see `executable`)",
    "ListSessionsOptions.sessionStore": "`list_sessions_from_store(store, ...)`",
    "GetSessionMessagesOptions.sessionStore": "`get_session_messages_from_store(store, ...)`",
    "ResolveSettingsOptions.serverManagedSettings": "ccwire asks the CLI, which fetches the "
    "server-managed settings itself",
}
"""Capabilities that do not apply to Python, with the reason (or the Python way)."""

ELSEWHERE: dict[str, str] = {}
"""Capabilities another issue builds."""

NOT_YET: dict[str, str] = {}
"""Capabilities that apply and are not built, with the reason."""

NAMES: dict[str, str] = {
    "Options.additionalDirectories": "add_dirs",
    "Options.continue": "continue_conversation",
    "Options.pathToClaudeCodeExecutable": "cli_path",
    "Options.mcpServers": "mcp_servers",
    "Query.mcpServerStatus": "mcp_status",
    "Query.usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET": "get_usage",
    "Query.readMcpResource": "mcp_read_resource",
    "Query.setMcpServers": "mcp_set_servers",
    "Query.streamInput": "query",
    "Query.close": "disconnect",
    "CreateSdkMcpServerOptions.timeout": "timeout_ms",
    "ListSessionsOptions.dir": "directory",
    "GetSessionMessagesOptions.dir": "directory",
    "CanUseTool.toolUseID": "tool_use_id",
    "CanUseTool.agentID": "agent_id",
    "UserDialogRequest.toolUseID": "tool_use_id",
    "ElicitationRequest.serverName": "server_name",
    "ResolveSettingsOptions.settingSources": "setting_sources",
    "HookCallbackMatcher.onFailure": "on_failure",
}
"""TypeScript names whose Python name is not simply theirs in snake_case."""

NOTES: dict[str, str] = {
    "Options.systemPrompt": "also a list of blocks, with `SYSTEM_PROMPT_DYNAMIC_BOUNDARY`",
    "Options.env": "added to the environment ccwire builds (`inherit_env`), not replacing it",
    "Options.managedSettings": "sent in `initialize` when it may hold secrets",
    "Options.mcpServersDelivery": "`argv` keeps secrets in a 0600 file, not on the command line",
    "Options.canUseTool": "may return `ANSWER_LATER` (TypeScript: `null`), answered with "
    "`answer_control_request()`",
    "Options.onElicitation": "may return `ANSWER_LATER` (TypeScript: `null`)",
    "Options.onUserDialog": "may return `ANSWER_LATER` (TypeScript: `null`)",
    "Query.mcpServerStatus": "typed `McpServerState`; `get_mcp_status()` gives the dicts",
    "Query.streamInput": "`query()` takes an async iterable of messages",
    "Query.close": "or leave the `async with` block",
    "Query.interrupt": "returns an `InterruptResult`",
    "Query.usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET": "typed `UsageReport`",
    "CreateSdkMcpServerOptions.timeout": "milliseconds, as on the wire",
    "CanUseTool.signal": "an `anyio.Event`, set when the CLI withdraws the request",
    "SDKSystemMessage": "a `SystemMessage` with `data` typed as `SystemInitData`: code "
    "written for claude-agent-sdk matches its class name",
    "SDKUserMessageReplay": "a `UserMessage` (its frame in `raw`)",
    "resolveSettings": "asks the CLI (started for the call, no session): its own merge",
    "matchDeniedModels": "synchronous: it computes, no CLI is started",
    "HookCallbackMatcher.onFailure": "defaults to fail-closed for the guard events",
}
"""Notes on rows that differ in form but not in what they do (shown beside them)."""

DIFFERENT: dict[str, str] = {
    "PermissionResult.toolUseID": "ccwire answers for the request's own call: not sent",
}
"""Rows that work differently, with the difference."""


def snake(name: str) -> str:
    """``camelCase`` (or ``SDKName``) in snake_case."""
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    out = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", out)
    return out.lower()


def _fields(obj: Any) -> set[str]:
    """The names a Python object takes: fields, properties, keys or parameters."""
    names: set[str] = set()
    if dataclasses.is_dataclass(obj):
        names |= {f.name for f in dataclasses.fields(obj)}
    if isinstance(obj, type):
        names |= {n for n, v in vars(obj).items() if isinstance(v, property)}
        for base in obj.__mro__[1:]:
            names |= {n for n, v in vars(base).items() if isinstance(v, property)}
        if issubclass(obj, dict):  # a TypedDict: its keys
            names |= set(getattr(obj, "__required_keys__", ())) | set(
                getattr(obj, "__optional_keys__", ())
            )
        if not dataclasses.is_dataclass(obj):
            names |= _params(obj)
    elif callable(obj):
        names |= _params(obj)
    return names


def _params(obj: Any) -> set[str]:
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return set()


def _targets() -> dict[str, Callable[[str], bool]]:
    """For each kind of TypeScript member: whether ccwire has a Python name."""
    import ccwire
    from ccwire._conversation.settings import resolve_settings
    from ccwire._mcp.sdk import create_sdk_mcp_server

    options = {f.name for f in dataclasses.fields(ccwire.ClaudeAgentOptions)}
    targets: dict[str, Any] = {
        "AgentDefinition": ccwire.AgentDefinition,
        "CanUseTool": ccwire.ToolPermissionContext,
        "PermissionResult": ccwire.PermissionResultAllow,
        "tool": ccwire.tool,
        "ResolveSettingsOptions": resolve_settings,
        "CreateSdkMcpServerOptions": create_sdk_mcp_server,
        "McpSdkServerConfig": ccwire.McpSdkServerConfig,
        "McpStdioServerConfig": ccwire.McpStdioServerConfig,
        "McpHttpServerConfig": ccwire.McpHttpServerConfig,
        "McpSSEServerConfig": ccwire.McpSSEServerConfig,
        "ListSessionsOptions": ccwire.list_sessions,
        "GetSessionMessagesOptions": ccwire.get_session_messages,
        "ElicitationRequest": ccwire.ElicitationRequest,
        "UserDialogRequest": ccwire.UserDialogRequest,
        "SDKSessionInfo": ccwire.SDKSessionInfo,
        "HookCallbackMatcher": ccwire.HookMatcher,
    }
    has: dict[str, Callable[[str], bool]] = {
        "": lambda name: hasattr(ccwire, name),
        "Options": options.__contains__,
        "Query": lambda name: callable(getattr(ccwire.ClaudeSDKClient, name, None)),
    }
    for owner, obj in targets.items():
        has[owner] = _fields(obj).__contains__
    return has


def _python_name(key: str, ts_name: str, kind: str) -> str:
    if key in NAMES:
        return NAMES[key]
    if kind == "" and (ts_name.isupper() or ts_name[:1].isupper()):
        return ts_name  # constants and classes keep their names
    return snake(ts_name)


def _row(key: str, ts_name: str, kind: str, has: Callable[[str], bool]) -> tuple[str, ...]:
    """``(TypeScript, Python, status, note)`` of one capability."""
    if key in NOT_APPLICABLE:
        return (f"`{ts_name}`", "", "n/a", NOT_APPLICABLE[key])
    if key in ELSEWHERE:
        return (f"`{ts_name}`", "", "elsewhere", ELSEWHERE[key])
    if key in NOT_YET:
        return (f"`{ts_name}`", "", "not yet", NOT_YET[key])
    python = _python_name(key, ts_name, kind)
    if key in DIFFERENT:
        return (f"`{ts_name}`", "", "different", DIFFERENT[key])
    # a camelCase name kept as is (AgentDefinition's wire names) counts too
    found = python if has(python) else ts_name if has(ts_name) else None
    if found is None:
        return (f"`{ts_name}`", f"`{python}`", "missing", "")
    return (f"`{ts_name}`", f"`{found}`", "yes", NOTES.get(key, ""))


def _message_rows(api: TsApi) -> list[tuple[str, ...]]:
    from ccwire import RawMessage, SystemMessage
    from ccwire._wire import codec

    rows: list[tuple[str, ...]] = []
    for message in api.messages:
        if not message.type:
            rows.append((f"`{message.name}`", "`ResultMessage`", "yes", ""))
            continue
        frame: dict[str, Any] = {"type": message.type, "uuid": "u", "session_id": "s"}
        if message.subtype:
            frame["subtype"] = message.subtype
        frame.update(_SAMPLE_FIELDS.get(message.type, {}))
        if message.subtype and message.subtype.startswith("task_"):
            frame["task_id"] = "t"
        cls = type(codec.decode_message(frame))
        note = NOTES.get(message.name, "")
        plain = cls in (SystemMessage, RawMessage) and message.name not in NOTES
        rows.append(
            (f"`{message.name}`", f"`{cls.__qualname__}`", "missing" if plain else "yes", note)
        )
    return rows


_SAMPLE_FIELDS: dict[str, dict[str, Any]] = {
    "user": {"message": {"role": "user", "content": "hi"}},
    "assistant": {"message": {"role": "assistant", "content": [], "model": "m"}},
    "rate_limit_event": {"rate_limit_info": {"status": "allowed"}},
    "conversation_reset": {"new_conversation_id": "c"},
    "stream_event": {"event": {}},
}


def _hook_rows(api: TsApi) -> list[tuple[str, ...]]:
    from ccwire._wire.hook_input import HOOK_INPUT_TYPES

    rows: list[tuple[str, ...]] = []
    for event in api.hook_events:
        cls = HOOK_INPUT_TYPES.get(event)
        if cls is None:
            rows.append((f"`{event}`", "", "missing", ""))
        else:
            rows.append((f"`{event}`", f"`{cls.__qualname__}`", "yes", ""))
    return rows


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def sections(api: TsApi) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Every section of the comparison: a title and its rows."""
    has = _targets()
    values = [_row(name, name, "", has[""]) for name in sorted(api.values, key=str.lower)]
    options = [_row(f"Options.{m.name}", m.name, "Options", has["Options"]) for m in api.options]
    methods = [_row(f"Query.{m.name}", m.name, "Query", has["Query"]) for m in api.query_methods]
    out: list[tuple[str, list[tuple[str, ...]]]] = [
        ("Functions, classes and constants", values),
        ("`Options` fields", options),
        ("`Query` methods (on `ClaudeSDKClient`)", methods),
        ("Messages (the `SDKMessage` union)", _message_rows(api)),
        ("Hook events", _hook_rows(api)),
    ]
    for owner, items in api.objects.items():
        rows = [_row(f"{owner}.{m.name}", m.name, owner, has[owner]) for m in items]
        out.append((f"`{owner}` members", rows))
    return out


def render(api: TsApi) -> str:
    """The generated Markdown (between `BEGIN` and `END`)."""
    parts = sections(api)
    counts = {s: sum(row[2] == s for _, rows in parts for row in rows) for s in STATUSES}
    total = sum(counts.values())
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
    out = [
        f"## Everything {PACKAGE} {api.version} offers",
        "",
        "Generated from the TypeScript SDK's type declarations and ccwire itself by",
        "`tests/compat/ts_migration_table.py`; a test keeps it current. **yes**: ccwire has",
        "it, under the Python name shown. **different**: it works differently (noted).",
        "**n/a**: it does not apply to Python (why, or the Python way, is noted).",
        "**elsewhere**: another issue builds it. **not yet**: to build (why not yet).",
        "",
        f"{total} capabilities: {summary}.",
    ]
    for title, rows in parts:
        out += ["", f"### {title}", ""]
        out += _table(("TypeScript", "ccwire", "Status", "Note"), rows)
    return re.sub(r"[ \t]+\n", "\n", "\n".join(out) + "\n")


def current() -> str:
    """`render()` for the installed package (raises when it is not installed)."""
    found = find_package()
    if found is None:
        raise SystemExit(f"{PACKAGE} not found: run `make ts-sdk` or set CCWIRE_TS_SDK_DIR")
    return render(read_package(found))


def generated_part(doc: str) -> str:
    """The text between the markers of ``doc`` ('' when they are missing)."""
    return migration_table.generated_part(doc, BEGIN, END)


def write() -> None:
    """Rewrite the generated block of ``docs/migration.md`` (appended when missing)."""
    migration_table.write_generated(current(), BEGIN, END)


if __name__ == "__main__":
    write()
