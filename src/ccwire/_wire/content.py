"""Content blocks for tool results, resources and prompts: one helper per MCP content type.

Binary payloads given as ``bytes`` are base64-encoded here; a ``str`` is taken to be
base64 already.  `error_result()` builds the ``isError`` result a tool failure
becomes.
"""

from __future__ import annotations

import binascii
import dataclasses
import json
from typing import Any, Final

__all__ = [
    "CONTENT_TYPES",
    "audio_content",
    "b64",
    "block_problem",
    "dumps_json",
    "embedded_blob_resource",
    "embedded_text_resource",
    "error_result",
    "image_content",
    "resource_link",
    "text_content",
    "to_plain",
]

CONTENT_TYPES: Final = frozenset({"text", "image", "audio", "resource_link", "resource"})
"""The ``type`` values of MCP content blocks."""


def text_content(text: str) -> dict[str, Any]:
    """A text content block: ``{"type": "text", "text": text}``."""
    return {"type": "text", "text": text}


def b64(data: bytes | str) -> str:
    """``bytes`` as base64 text; a ``str`` is returned unchanged (already base64)."""
    return (
        binascii.b2a_base64(data, newline=False).decode("ascii")
        if isinstance(data, bytes)
        else data
    )


def image_content(data: bytes | str, mime_type: str) -> dict[str, Any]:
    """An image block; ``bytes`` are base64-encoded, a ``str`` is taken as base64 already."""
    return {"type": "image", "data": b64(data), "mimeType": mime_type}


def audio_content(data: bytes | str, mime_type: str) -> dict[str, Any]:
    """An audio block; ``bytes`` are base64-encoded, a ``str`` is taken as base64 already."""
    return {"type": "audio", "data": b64(data), "mimeType": mime_type}


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> dict[str, Any]:
    """A ``resource_link`` block pointing at a resource the client may fetch."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    extra = {"title": title, "description": description, "mimeType": mime_type, "size": size}
    block.update((k, v) for k, v in extra.items() if v is not None)
    return block


def embedded_text_resource(uri: str, text: str, mime_type: str | None = None) -> dict[str, Any]:
    """An embedded ``resource`` block carrying text contents."""
    resource: dict[str, Any] = {"uri": uri, "text": text}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    return {"type": "resource", "resource": resource}


def embedded_blob_resource(
    uri: str, blob: bytes | str, mime_type: str | None = None
) -> dict[str, Any]:
    """An embedded ``resource`` block carrying binary contents (base64)."""
    resource: dict[str, Any] = {"uri": uri, "blob": b64(blob)}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    return {"type": "resource", "resource": resource}


_FIELDS: Final = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource_link": ("uri", "name"),
    "resource": (),
}
"""The string fields each content block type requires."""


def block_problem(block: dict[str, Any]) -> str | None:
    """Why ``block`` is not an MCP content block (an unknown ``type``, a required field
    missing or not a string), or ``None``.  A cheap check of what clients rely on, not
    a full schema validation."""
    kind = block.get("type")
    fields = _FIELDS.get(kind) if type(kind) is str else None
    if fields is None:
        return f"type must be one of {', '.join(sorted(CONTENT_TYPES))}, got {kind!r}"
    for field in fields:
        if type(block.get(field)) is not str:
            return f"the {kind} block's {field!r} must be a string, got {block.get(field)!r:.80}"
    if kind == "resource":
        inner = block.get("resource")
        if type(inner) is not dict:
            return f"the resource block's 'resource' must be an object, got {inner!r:.80}"
        if type(inner.get("uri")) is not str:
            return f"an embedded resource's 'uri' must be a string, got {inner.get('uri')!r:.80}"
        if type(inner.get("text")) is not str and type(inner.get("blob")) is not str:
            return "an embedded resource needs a string 'text' or 'blob'"
    return None


def error_result(message: str) -> dict[str, Any]:
    """A ``CallToolResult`` reporting a tool failure the model can read."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def to_plain(value: Any) -> Any:
    """Dataclass instances and pydantic models as plain JSON-ready data; others unchanged."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if callable(getattr(value, "model_dump", None)):
        return value.model_dump(mode="json")
    return value


def dumps_json(value: Any) -> str:
    """``value`` (see `to_plain()`) as JSON text; unknown objects become strings."""
    return json.dumps(to_plain(value), ensure_ascii=False, default=str)
