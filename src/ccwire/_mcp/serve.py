"""``ccwire serve package.module:server``: a ccwire SDK server for any MCP client, over stdio.

The target names an attribute holding a server: the config dict made by
`create_sdk_mcp_server()`, an `SdkMcpServer`, or a function
with no arguments returning either.  The official ``mcp`` package provides the stdio
transport (extra ``ccwire[mcp]``); every message is served in a task of its own, so
calls overlap and ``notifications/cancelled`` cancels exactly its call, and the
server's notifications (progress, log messages, list changes) are written to stdout.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio

from .._wire.jsonrpc import error

__all__ = ["load_server", "serve_main", "serve_streams"]

logger = logging.getLogger("ccwire")

USAGE: Final = """\
usage: ccwire serve PACKAGE.MODULE:ATTRIBUTE

Serve a ccwire SDK server to any MCP client over stdin/stdout.
ATTRIBUTE names the config made by create_sdk_mcp_server(), an SdkMcpServer,
or a function without arguments returning one (dots reach into objects).
Needs the official mcp package: pip install 'ccwire[mcp]'.
"""
INSTALL_HINT: Final = "ccwire serve needs the official mcp package: pip install 'ccwire[mcp]'"
_PARSE_ERROR: Final = -32700
_DRAIN_SECONDS: Final = 5.0


def _served(obj: Any) -> Any | None:
    if isinstance(obj, Mapping):
        obj = obj.get("instance") if obj.get("type") == "sdk" else None
    if callable(getattr(obj, "handle", None)) and callable(getattr(obj, "attach", None)):
        return obj
    return None


def load_server(target: str) -> Any:
    """Import ``package.module:attribute`` and return the server it names (the dotted
    path may go through attributes and mapping keys).

    Raises ``ValueError`` for a malformed target or an object that is not a server
    (and ``ImportError``/``AttributeError`` when it cannot be found).
    """
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"expected PACKAGE.MODULE:ATTRIBUTE, got {target!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = obj[part] if isinstance(obj, Mapping) and part in obj else getattr(obj, part)
    server = _served(obj)
    if server is None and callable(obj) and not isinstance(obj, type):
        server = _served(obj())
    if server is None:
        raise ValueError(f"{target} is not a ccwire SDK server (create_sdk_mcp_server())")
    return server


async def serve_streams(server: Any, read_stream: Any, write_stream: Any) -> None:
    """Serve the ``SessionMessage`` items of ``read_stream`` until it ends.

    Answers (and the server's notifications) go to ``write_stream``, which is closed at
    the end; when the input ends, calls still running get `_DRAIN_SECONDS`.
    """
    from .bridge import from_message, to_session_message

    async def send(message: dict[str, Any]) -> None:
        await write_stream.send(to_session_message(message))

    async def serve_one(message: dict[str, Any]) -> None:
        with anyio.CancelScope() as scope:
            reply = await server.handle(message, send=send, session_key="stdio", cancel_scope=scope)
            if reply is not None:
                await send(reply)

    detach = server.attach(send)
    try:
        async with anyio.create_task_group() as tg:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await send(error(None, _PARSE_ERROR, f"Parse error: {type(item).__name__}"))
                    continue
                tg.start_soon(serve_one, from_message(item))
            tg.cancel_scope.deadline = anyio.current_time() + _DRAIN_SECONDS
    finally:
        detach()
        with anyio.CancelScope(shield=True):
            await write_stream.aclose()  # the transport's writer ends with it


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await serve_streams(server, read_stream, write_stream)


def serve_main(argv: Sequence[str]) -> int:
    """Entry point of ``ccwire serve``; returns the process exit status."""
    args = list(argv)
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    if len(args) != 1:
        sys.stderr.write(USAGE)
        return 2
    try:
        import mcp.server.stdio  # noqa: F401
    except ImportError:
        sys.stderr.write(INSTALL_HINT + "\n")
        return 2
    try:
        server = load_server(args[0])
    except (ImportError, AttributeError, ValueError) as exc:
        sys.stderr.write(f"ccwire serve: {exc}\n")
        return 2
    try:
        anyio.run(_serve_stdio, server)
    except KeyboardInterrupt:
        return 130
    return 0
