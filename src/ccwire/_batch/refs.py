"""Tools and hooks named by reference (``package.module:attribute``).

A batch that runs elsewhere (Ray workers) cannot ship in-process objects such as an
SDK MCP server or a hook function: it ships their names, and each worker imports
them. The local executor resolves the same names once, so both behave alike.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .._mcp.config import McpSdkServerConfig
from .._mcp.server import SdkMcpServer
from .._transport.spawn import ProcessSpawner, as_spawner
from .errors import BatchConfigError

__all__ = [
    "check_reference",
    "resolve_hooks",
    "resolve_reference",
    "resolve_spawner",
    "resolve_tools",
]


def check_reference(ref: str, what: str) -> tuple[str, str]:
    """Split ``module:attribute``.

    Args:
        ref: The reference.
        what: What it names, for the error message (``tools``, ``hooks``).

    Returns:
        ``(module, attribute)``.

    Raises:
        BatchConfigError: `ref` is not of the form ``package.module:attribute``.
    """
    module, sep, attr = ref.partition(":") if isinstance(ref, str) else ("", "", "")
    if not sep or not module or not attr:
        raise BatchConfigError(f"{what}: expected package.module:attribute, got {ref!r}")
    return module, attr


def resolve_reference(ref: str, what: str, *, where: str = "here") -> Any:
    """Import ``module:attribute`` (the current directory is searched first).

    Args:
        ref: The reference.
        what: What it names, for error messages.
        where: Where the import runs (``here``, ``on the Ray worker``), for messages.

    Returns:
        The attribute's value.

    Raises:
        BatchConfigError: The module cannot be imported or lacks the attribute.
    """
    module_name, attr = check_reference(ref, what)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise BatchConfigError(
            f"{what} {ref}: cannot import {module_name!r} {where} "
            f"({type(exc).__name__}: {exc}); it must be importable wherever sessions run"
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BatchConfigError(f"{what} {ref}: {module_name!r} has no {attr!r}") from None
    return obj


def _as_server(obj: Any) -> McpSdkServerConfig | None:
    if isinstance(obj, SdkMcpServer):
        return {"type": "sdk", "name": obj.name, "instance": obj}
    if isinstance(obj, Mapping) and isinstance(obj.get("instance"), SdkMcpServer):
        instance: SdkMcpServer = obj["instance"]
        name = obj.get("name")
        return {"type": "sdk", "name": name if isinstance(name, str) else instance.name,
                "instance": instance}  # fmt: skip
    return None


def resolve_tools(refs: Sequence[str], *, where: str = "here") -> dict[str, McpSdkServerConfig]:
    """Load in-process MCP servers by reference, keyed by server name.

    Args:
        refs: ``module:attribute`` names of servers made by `create_sdk_mcp_server()`,
            `SdkMcpServer` instances, or functions without arguments returning either.
        where: Where this runs, for error messages.

    Returns:
        The server configs, for `ClaudeAgentOptions.mcp_servers`.

    Raises:
        BatchConfigError: A reference does not resolve to a server, or two share a name.
    """
    servers: dict[str, McpSdkServerConfig] = {}
    for ref in refs:
        obj = resolve_reference(ref, "tools", where=where)
        config = _as_server(obj)
        if config is None and callable(obj) and not isinstance(obj, type):
            try:
                config = _as_server(obj())
            except Exception as exc:
                raise BatchConfigError(f"tools {ref}: calling it failed: {exc!r}") from exc
        if config is None:
            raise BatchConfigError(
                f"tools {ref}: expected an in-process MCP server, got {type(obj).__name__}"
            )
        if config["name"] in servers:
            raise BatchConfigError(f"tools: two servers are called {config['name']!r}")
        servers[config["name"]] = config
    return servers


def resolve_hooks(ref: str | None, *, where: str = "here") -> dict[Any, Any] | None:
    """Load the hooks mapping (`ClaudeAgentOptions.hooks`) by reference.

    Args:
        ref: ``module:attribute`` of a mapping from hook event to matchers, or of a
            function without arguments returning one; `None` for no hooks.
        where: Where this runs, for error messages.

    Returns:
        The hooks mapping, or `None`.

    Raises:
        BatchConfigError: The reference does not resolve to a mapping.
    """
    if ref is None:
        return None
    obj = resolve_reference(ref, "hooks", where=where)
    if callable(obj) and not isinstance(obj, Mapping):
        obj = obj()
    if not isinstance(obj, Mapping):
        raise BatchConfigError(f"hooks {ref}: expected a mapping of hook event to matchers")
    return dict(obj)


def resolve_spawner(ref: str | None, *, where: str = "here") -> ProcessSpawner | None:
    """Load the spawner (`ClaudeAgentOptions.spawn_claude_code_process`) by reference.

    Args:
        ref: ``module:attribute`` of a spawner, or of a spawner class needing no
            arguments (``ccwire:BubblewrapSpawner``); `None` for none.
        where: Where this runs, for error messages.

    Returns:
        The spawner, or `None`.

    Raises:
        BatchConfigError: The reference does not resolve to a spawner.
    """
    if ref is None:
        return None
    try:
        return as_spawner(resolve_reference(ref, "spawn", where=where))
    except TypeError as exc:
        raise BatchConfigError(f"spawn {ref}: {exc}") from exc
