"""JSON-RPC 2.0 building blocks shared by the in-process MCP server and its registries.

Responses are plain dicts (built here, nowhere else), error codes are named once, and
list methods share one opaque cursor format for pagination.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._core.errors import McpError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "RESOURCE_NOT_FOUND",
    "check_request",
    "error",
    "invalid_request",
    "page",
    "result",
    "valid_id",
]

INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""MCP's code for ``resources/read`` of a URI the server does not have."""

_CURSOR_PREFIX: Final = "ccwire:"


def result(req_id: Any, value: Any) -> dict[str, Any]:
    """A success response."""
    return {"jsonrpc": "2.0", "id": req_id, "result": value}


def error(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """An error response (``data`` left out when ``None``)."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": body}


def valid_id(value: Any) -> bool:
    """True for a usable JSON-RPC id (or progress token): a string or a number (a
    finite one: JSON has no NaN or Infinity to echo it with)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def invalid_request(req_id: Any, why: str) -> dict[str, Any]:
    """The -32600 error response saying ``why`` a message is not a valid request."""
    return error(req_id, INVALID_REQUEST, f"Invalid Request: {why}")


def check_request(message: object) -> dict[str, Any] | None:
    """The -32600 error for a message that is not a JSON-RPC 2.0 request, notification or
    response object as MCP defines them; ``None`` when it is one.

    The one check of the envelope, for every way a message reaches an MCP server: a
    client of ``ccwire serve``, the CLI talking to an in-process server or a bridged
    one. As JSON-RPC 2.0 prescribes, an invalid message is answered even without an id
    (a notification is spared an answer only when it is valid), with its id when it has
    a usable one, else ``null``. ``params`` must be an object (MCP's requests and
    notifications have named params only); ``null`` counts as absent.
    """
    if isinstance(message, list):
        return invalid_request(None, "batches are not supported" if message else "empty batch")
    if not isinstance(message, Mapping):
        got = type(message).__name__
        return invalid_request(None, f"a message must be a JSON object, got {got}")
    has_id = "id" in message
    req_id = message.get("id")
    usable_id = req_id if has_id and valid_id(req_id) else None
    if message.get("jsonrpc") != "2.0":
        return invalid_request(usable_id, 'jsonrpc must be "2.0"')
    if has_id and not valid_id(req_id):
        return invalid_request(None, "id must be a string or a number")
    if "method" not in message:
        if has_id and (("result" in message) != ("error" in message)):
            return None  # a response
        return invalid_request(usable_id, "neither a request nor a response")
    if not isinstance(message["method"], str):
        return invalid_request(usable_id, "method must be a string")
    if message.get("params") is not None and not isinstance(message["params"], Mapping):
        return invalid_request(usable_id, "params must be an object")
    return None


def page(items: Sequence[Any], cursor: Any, size: int, key: str, kind: str) -> dict[str, Any]:
    """One page of a list result: ``{key: items[start:end], "nextCursor"?: ...}``.

    ``cursor`` is the client's ``params.cursor`` (``None`` for the first page); an
    unknown cursor raises `McpError` (-32602).  ``kind`` ties a cursor to one
    list method so a ``tools/list`` cursor is refused by ``prompts/list``.
    """
    prefix = f"{_CURSOR_PREFIX}{kind}:"
    start = 0
    if cursor is not None:
        digits = cursor[len(prefix) :] if isinstance(cursor, str) else ""
        if not (isinstance(cursor, str) and cursor.startswith(prefix) and digits.isdigit()):
            raise McpError(f"Invalid params: unknown cursor {cursor!r}", code=INVALID_PARAMS)
        start = int(digits)
    end = start + max(1, size)
    out: dict[str, Any] = {key: list(items[start:end])}
    if end < len(items):
        out["nextCursor"] = f"{prefix}{end}"
    return out
