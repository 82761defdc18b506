"""Resource subscriptions: ``resources/subscribe``, ``unsubscribe`` and ``updated``.

A client subscribes to a resource URI; when the application says the resource
changed (`SdkMcpServer.notify_resource_updated()`), every session subscribed to that
URI gets ``notifications/resources/updated`` through its sink.  Also the routes of
``completion/complete`` and of the subscriptions, which `SdkMcpServer` dispatches to.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping
from typing import Any, Final

from .._core.errors import McpError
from .._wire.jsonrpc import INVALID_PARAMS, result
from .broadcast import Sink

__all__ = ["RESOURCE_UPDATED", "Subscriptions", "complete_route", "subscribe_route"]

logger = logging.getLogger("ccwire")

RESOURCE_UPDATED: Final = "notifications/resources/updated"
_MAX_SESSIONS_PER_URI: Final = 1024


class Subscriptions:
    """Which session (by key, with its sink) is subscribed to which URI."""

    def __init__(self) -> None:
        self._by_uri: dict[str, dict[Hashable, Sink | None]] = {}

    def subscribe(self, key: Hashable, uri: str, sink: Sink | None) -> None:
        """Subscribe session ``key`` to ``uri``."""
        sessions = self._by_uri.setdefault(uri, {})
        sessions[key] = sink
        if len(sessions) > _MAX_SESSIONS_PER_URI:
            del sessions[next(iter(sessions))]

    def unsubscribe(self, key: Hashable, uri: str) -> None:
        """End session ``key``'s subscription to ``uri`` (if any)."""
        sessions = self._by_uri.get(uri)
        if sessions is not None:
            sessions.pop(key, None)
            if not sessions:
                del self._by_uri[uri]

    def forget(self, key: Hashable) -> None:
        """End every subscription of session ``key`` (its connection ended)."""
        for uri in [uri for uri, sessions in self._by_uri.items() if key in sessions]:
            self.unsubscribe(key, uri)

    def subscribed(self, uri: str) -> int:
        """How many sessions are subscribed to ``uri``."""
        return len(self._by_uri.get(uri, ()))

    async def notify(self, uri: str, title: str | None = None) -> int:
        """Send ``notifications/resources/updated`` to every session subscribed to
        ``uri``; returns how many were told (a failing sink is logged and skipped)."""
        params: dict[str, Any] = {"uri": uri}
        if title is not None:
            params["title"] = title
        told = 0
        for key, sink in list(self._by_uri.get(uri, {}).items()):
            if sink is None:
                continue
            try:
                await sink({"jsonrpc": "2.0", "method": RESOURCE_UPDATED, "params": params})
            except Exception as exc:
                logger.warning("ccwire: could not tell session %r of %s: %s", key, uri, exc)
                self.unsubscribe(key, uri)
                continue
            told += 1
        return told


def _uri(params: Mapping[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise McpError("Invalid params: uri must be a non-empty string", code=INVALID_PARAMS)
    return uri


async def subscribe_route(
    server: Any,
    req_id: Any,
    params: Mapping[str, Any],
    key: Hashable,
    session_id: str | None,
    send: Sink | None,
    *_: Any,
) -> dict[str, Any]:
    """``resources/subscribe``."""
    server._subscriptions.subscribe(key, _uri(params), send)
    return result(req_id, {})


async def unsubscribe_route(
    server: Any, req_id: Any, params: Mapping[str, Any], key: Hashable, *_: Any
) -> dict[str, Any]:
    """``resources/unsubscribe``."""
    server._subscriptions.unsubscribe(key, _uri(params))
    return result(req_id, {})


async def complete_route(
    server: Any, req_id: Any, params: Mapping[str, Any], *_: Any
) -> dict[str, Any]:
    """``completion/complete`` for a prompt argument or a URI-template variable."""
    ref = params.get("ref")
    kind = ref.get("type") if isinstance(ref, Mapping) else None
    if kind == "ref/prompt":
        assert isinstance(ref, Mapping)
        return result(req_id, await server._prompts.complete(ref.get("name"), params))
    if kind == "ref/resource":
        assert isinstance(ref, Mapping)
        return result(req_id, await server._resources.complete(ref.get("uri"), params))
    raise McpError(
        "Invalid params: ref must be a ref/prompt or a ref/resource", code=INVALID_PARAMS
    )
