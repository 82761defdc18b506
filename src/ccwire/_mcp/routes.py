"""The simple routes of `SdkMcpServer` (discovery, ping, log level, resources, prompts),
and the helpers its dispatch shares.

A route is called as ``route(server, req_id, params, key, session_id, send,
cancel_scope, request)`` and returns the JSON-RPC response; it may raise `McpError`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Final

import anyio

from .._wire.jsonrpc import INVALID_PARAMS, error, result
from .tools import LOG_LEVELS
from .versions import LOG_LEVEL_META, MODERN_VERSIONS, PROTOCOL_VERSION_META, PROTOCOL_VERSIONS

__all__ = [
    "discover_route",
    "log_level",
    "noop_route",
    "ping_route",
    "prompts_get_route",
    "prompts_list_route",
    "remember",
    "resources_list_route",
    "resources_read_route",
    "key_of",
    "set_level_route",
    "templates_list_route",
]

_SESSIONS_REMEMBERED: Final = 1024


async def discover_route(server: Any, req_id: Any, *_: Any) -> dict[str, Any]:
    """``server/discover`` (2026-07-28): the versions spoken and the capabilities."""
    found: dict[str, Any] = {
        "supportedVersions": list(PROTOCOL_VERSIONS),
        "capabilities": server._capabilities(),
    }
    if server.instructions is not None:
        found["instructions"] = server.instructions
    return result(req_id, found)


async def ping_route(server: Any, req_id: Any, *_: Any) -> dict[str, Any]:
    """``ping``."""
    return result(req_id, {})


async def noop_route(*_: Any) -> None:
    """A notification that needs nothing done (``notifications/initialized``)."""
    return None


async def set_level_route(
    server: Any, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
) -> dict[str, Any]:
    """``logging/setLevel``: the session's threshold for `ToolContext.log()`."""
    level = params.get("level")
    if level not in LOG_LEVELS:
        return error(req_id, INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    server._log_levels[key] = level
    return result(req_id, {})


async def resources_list_route(
    server: Any, req_id: Any, params: Mapping[str, Any], *_: Any
) -> dict[str, Any]:
    """``resources/list``."""
    return result(req_id, server._resources.list(params, server.page_size))


async def templates_list_route(
    server: Any, req_id: Any, params: Mapping[str, Any], *_: Any
) -> dict[str, Any]:
    """``resources/templates/list``."""
    return result(req_id, server._resources.templates(params, server.page_size))


async def resources_read_route(
    server: Any, req_id: Any, params: Mapping[str, Any], key: Hashable, _sid: Any, _send: Any,
    outer: anyio.CancelScope | None, *_: Any,
) -> dict[str, Any] | None:  # fmt: skip
    """``resources/read``; ``None`` once ``notifications/cancelled`` cancelled it (one
    that came before it: `McpError`, see `CallRunner.cancellable`)."""
    finished, read = await server._calls.cancellable(
        (key, req_id), outer, lambda: server._resources.read(params), what="resources/read"
    )
    return result(req_id, read) if finished else None


async def prompts_list_route(
    server: Any, req_id: Any, params: Mapping[str, Any], *_: Any
) -> dict[str, Any]:
    """``prompts/list``."""
    return result(req_id, server._prompts.list(params, server.page_size))


async def prompts_get_route(
    server: Any, req_id: Any, params: Mapping[str, Any], key: Hashable, _sid: Any, _send: Any,
    outer: anyio.CancelScope | None, *_: Any,
) -> dict[str, Any] | None:  # fmt: skip
    """``prompts/get``; ``None`` once ``notifications/cancelled`` cancelled it (one that
    came before it: `McpError`, see `CallRunner.cancellable`)."""
    finished, got = await server._calls.cancellable(
        (key, req_id), outer, lambda: server._prompts.get(params), what="prompts/get"
    )
    return result(req_id, got) if finished else None


def log_level(meta: Mapping[str, Any], session_level: str) -> str:
    """A 2026-07-28 request opts in to log messages in its ``_meta``; others follow the
    session's ``logging/setLevel``."""
    if meta.get(PROTOCOL_VERSION_META) not in MODERN_VERSIONS:
        return session_level
    level = meta.get(LOG_LEVEL_META)
    return level if level in LOG_LEVELS else "off"


def key_of(key: Hashable | None, send: Any, session_id: str | None) -> Hashable:
    """What keeps one session's calls apart from another's: ``key``, else the sink, else
    the session id (an unhashable one by its identity)."""
    found = key if key is not None else send if send is not None else session_id
    try:
        hash(found)
    except TypeError:
        return id(found)
    return found


def remember(table: dict[Hashable, Any], key: Hashable, value: Any) -> None:
    """Set ``table[key]``, keeping only the most recently used sessions."""
    table.pop(key, None)
    table[key] = value
    if len(table) > _SESSIONS_REMEMBERED:
        del table[next(iter(table))]
