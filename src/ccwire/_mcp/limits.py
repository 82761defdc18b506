"""Per-tool limits: output size and call rate, as wrappers around an `SdkMcpTool`.

Both return a *new* tool with the same name, description, schemas, annotations and
timeout, whose handler runs the original and enforces the limit. A tool over its limit
answers with an ``isError`` result whose text says which limit was hit, so the model
can read it and adapt; nothing raises into the session. Wrappers compose::

    search = rate_limit(limit_output(search, max_chars=20_000), calls=10, per_seconds=60)
"""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._core.errors import ToolDefinitionError
from .tools import SdkMcpTool, ToolContext, error_result

__all__ = ["limit_output", "output_size", "rate_limit"]

_TRUNCATION_NOTE = "\n[output truncated by ccwire: {dropped} of {total} characters dropped]"


def output_size(result: Mapping[str, Any]) -> int:
    """The size of a ``CallToolResult`` in characters, as `limit_output()` counts it.

    Text blocks count their text, image/audio blocks their base64 data, embedded
    resources their text or blob, resource links their URI, and ``structuredContent``
    its compact JSON encoding (nothing when JSON cannot encode it: such a result is
    never sent, and the answer the CLI gets instead names the cause).
    """
    total = 0
    content = result.get("content")
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping):
            continue
        for key in ("text", "data", "uri"):
            value = block.get(key)
            if isinstance(value, str):
                total += len(value)
        resource = block.get("resource")
        if isinstance(resource, Mapping):
            for key in ("text", "blob"):
                value = resource.get(key)
                if isinstance(value, str):
                    total += len(value)
    if "structuredContent" in result:
        try:
            text = json.dumps(result["structuredContent"], separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            text = ""  # JSON cannot carry it: the wire refuses it, naming the cause
        total += len(text)
    return total


def _rewrap(tool: SdkMcpTool[Any], handler: Callable[..., Any]) -> SdkMcpTool[Any]:
    return SdkMcpTool(
        name=tool.name, description=tool.description, input_schema=tool.json_schema,
        handler=handler, annotations=tool.annotations, title=tool.title,
        output_schema=tool.output_schema, timeout=tool.timeout, meta=tool.meta,
        validate_formats=tool.validate_formats,
    )  # fmt: skip


def limit_output(
    tool: SdkMcpTool[Any],
    max_chars: int,
    *,
    on_exceed: Literal["error", "truncate"] = "error",
) -> SdkMcpTool[Any]:
    """``tool`` with its output capped at ``max_chars`` characters (see `output_size()`).

    With ``on_exceed="error"`` (the default) an oversized result is replaced by an
    ``isError`` result: ``Tool 'x' returned N characters of output, over its limit of
    M``. With ``"truncate"`` text blocks are cut so the total fits, a note saying how
    much was dropped is appended, and blocks that cannot be cut (images, ...) or
    ``structuredContent`` that does not fit make it an error as well.
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ToolDefinitionError(f"max_chars must be a positive integer, got {max_chars!r}")
    if on_exceed not in ("error", "truncate"):
        raise ToolDefinitionError(f"on_exceed must be 'error' or 'truncate', got {on_exceed!r}")

    async def limited(args: Any, ctx: ToolContext) -> dict[str, Any]:
        result = await tool.call(args, ctx)
        size = output_size(result)
        if size <= max_chars:
            return result
        if on_exceed == "truncate":
            cut = _truncate(result, size, max_chars)
            if cut is not None:
                return cut
        return error_result(
            f"Tool {tool.name!r} returned {size} characters of output, over its limit of "
            f"{max_chars} (limit_output)"
        )

    return _rewrap(tool, limited)


def _truncate(result: Mapping[str, Any], size: int, max_chars: int) -> dict[str, Any] | None:
    if "structuredContent" in result:
        return None
    content = result.get("content")
    if not isinstance(content, list):
        return None
    blocks: list[Any] = []
    budget = max_chars
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            text = str(block.get("text", ""))
            blocks.append({**block, "text": text[: max(budget, 0)]})
            budget -= len(text)
        else:
            blocks.append(block)
    if output_size({"content": blocks}) > max_chars:
        return None  # the blocks that cannot be cut are too big on their own
    note = _TRUNCATION_NOTE.format(dropped=size - max_chars, total=size)
    blocks.append({"type": "text", "text": note})
    return {**result, "content": blocks}


def rate_limit(tool: SdkMcpTool[Any], calls: int, per_seconds: float) -> SdkMcpTool[Any]:
    """``tool`` allowing at most ``calls`` calls in any window of ``per_seconds`` seconds.

    A call over the limit does not run; it gets an ``isError`` result: ``Tool 'x' is
    rate-limited to N calls per S s; try again in T s``. The window is shared by every
    session the returned tool serves (it is one object), and is thread-safe.
    """
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ToolDefinitionError(f"calls must be a positive integer, got {calls!r}")
    if not isinstance(per_seconds, (int, float)) or not per_seconds > 0:
        raise ToolDefinitionError(f"per_seconds must be a positive number, got {per_seconds!r}")
    window: collections.deque[float] = collections.deque()
    lock = threading.Lock()

    def admit() -> float | None:
        """None if the call may run (and it is counted), else seconds until it may."""
        now = time.monotonic()
        with lock:
            while window and window[0] <= now - per_seconds:
                window.popleft()
            if len(window) >= calls:
                return window[0] + per_seconds - now
            window.append(now)
            return None

    async def limited(args: Any, ctx: ToolContext) -> dict[str, Any]:
        wait = admit()
        if wait is not None:
            return error_result(
                f"Tool {tool.name!r} is rate-limited to {calls} calls per {per_seconds:g} s; "
                f"try again in {max(wait, 0.0):.1f} s"
            )
        return await tool.call(args, ctx)

    return _rewrap(tool, limited)
