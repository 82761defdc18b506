"""MCP protocol versions: which ones are spoken, how one is chosen, what differs.

Two eras exist.  Up to 2025-11-25 a session starts with the ``initialize``
handshake: the client proposes a version, and the server answers with the same one
when it speaks it, else with the newest one it speaks (the client then decides
whether to go on).  From 2026-07-28 there is no handshake: every request names its
version in ``params._meta["io.modelcontextprotocol/protocolVersion"]`` (a
``server/discover`` request tells a client which versions a server supports), a
version the server does not speak is refused with -32022, and results carry
``resultType`` (and list results caching hints).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from .._wire.jsonrpc import error

__all__ = [
    "CLIENT_CAPABILITIES_META",
    "LOG_LEVEL_META",
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSIONS",
    "PROTOCOL_VERSION_META",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "modern_result",
    "negotiate",
    "request_version",
    "unsupported",
]

HANDSHAKE_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Versions reached through ``initialize``, newest first."""
MODERN_VERSIONS: Final = ("2026-07-28",)
"""Versions whose requests each carry their version (no handshake), newest first."""
PROTOCOL_VERSIONS: Final = MODERN_VERSIONS + HANDSHAKE_VERSIONS
"""Every MCP protocol version ccwire's servers speak, newest first."""
LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[0]
PROTOCOL_VERSION_META: Final = "io.modelcontextprotocol/protocolVersion"
"""The ``_meta`` key naming a 2026-07-28 (or later) request's version."""
CLIENT_CAPABILITIES_META: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META: Final = "io.modelcontextprotocol/logLevel"
"""A 2026-07-28 request's opt-in to log messages, at or above this level."""
SERVER_INFO_META: Final = "io.modelcontextprotocol/serverInfo"
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

_CACHEABLE: Final = frozenset({
    "server/discover", "tools/list", "prompts/list", "resources/list",
    "resources/templates/list", "resources/read",
})  # fmt: skip


def negotiate(asked: Any) -> str:
    """The version to answer an ``initialize`` asking for ``asked`` with: the same one
    when it is spoken through the handshake, else the newest handshake version."""
    return asked if asked in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION


def request_version(params: Mapping[str, Any]) -> Any:
    """The version a request names in its ``_meta`` (``None`` for a handshake-era one)."""
    meta = params.get("_meta")
    if meta is None:  # the common cases first, without an ABC check
        return None
    if type(meta) is dict or isinstance(meta, Mapping):
        return meta.get(PROTOCOL_VERSION_META)
    return None


def unsupported(req_id: Any, version: Any) -> dict[str, Any] | None:
    """The -32022 error for a request naming a version not spoken (``None`` if it is,
    or if it names none)."""
    if version is None or version in PROTOCOL_VERSIONS:
        return None
    return error(
        req_id, UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version: {version}",
        {"supported": list(PROTOCOL_VERSIONS), "requested": version},
    )  # fmt: skip


def modern_result(
    method: str,
    version: Any,
    response: dict[str, Any] | None,
    server_info: Callable[[], Mapping[str, Any]],
) -> dict[str, Any] | None:
    """``response`` to a request of ``version``; for a 2026-07-28 one, with the fields
    its result needs (``resultType``, the server's ``serverInfo()`` in ``_meta``, and
    ``ttlMs``/``cacheScope`` for list and read results) added where missing."""
    if version not in MODERN_VERSIONS or response is None:
        return response
    body = response.get("result")
    if isinstance(body, dict):
        body.setdefault("resultType", "complete")
        meta = body.get("_meta")
        if meta is None:
            body["_meta"] = {SERVER_INFO_META: dict(server_info())}
        elif isinstance(meta, dict) and meta.get(SERVER_INFO_META) is None:
            body["_meta"] = {**meta, SERVER_INFO_META: dict(server_info())}
        if method in _CACHEABLE:
            body.setdefault("ttlMs", 0)
            body.setdefault("cacheScope", "private")
    return response
