"""JSON-RPC 2.0 building blocks shared by the in-process MCP server and its registries.

Responses are plain dicts (built here, nowhere else), error codes are named once, and
list methods share one opaque cursor format for pagination.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from .._core.errors import McpError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "RESOURCE_NOT_FOUND",
    "error",
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
