"""Loading what ``ccwire run`` is pointed at: ``--tools`` servers and ``--scripted`` files.

``--tools package.module:attribute`` (and ``ccwire serve``) imports the module (the
current directory is searched first, as ``python -m`` would) and takes the attribute:
a config made by `create_sdk_mcp_server()`, an `SdkMcpServer`, a server of the
official ``mcp`` package (``FastMCP``, ``MCPServer``, a low-level ``Server``: hosted
by `McpBridge`), or a function with no arguments returning one of them. The server is
registered under its own name.

``--scripted FILE.json`` holds the replies of an offline
`ScriptedModel`: a JSON list of steps (or an object
``{"model": "...", "steps": [...]}``). A step is one of::

    "plain text"                                   a text reply
    {"text": "The sum is {tool_results}"}          text; {tool_results} and {prompt}
                                                   are filled from the request
    {"tool_use": {"name": "mcp__calc__add", "input": {"a": 1, "b": 2}}}
    {"thinking": "Let me think"}
    {"reply": [{"thinking": "..."}, {"tool_use": {...}}, {"tool_use": {...}}]}
    {"error": {"status": 529, "message": "Overloaded", "type": "overloaded_error"}}
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._mcp.bridge import McpBridge, is_official_server
from .._mcp.config import McpSdkServerConfig
from .._mcp.server import SdkMcpServer
from .._mcp.tools import SdkMcpTool
from .._transport.spawn import ProcessSpawner, as_spawner
from ..testing import error, reply, text, thinking, tool_use
from .errors import UsageError

if TYPE_CHECKING:
    from ..testing import Block, ModelRequest, Step

__all__ = ["UsageError", "load_script", "load_server", "load_spawner", "parse_step"]

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def load_server(
    spec: str, *, search_path: str | None = None, option: str = "--tools"
) -> McpSdkServerConfig:
    """Import ``package.module:attribute`` and return it as an SDK server config.

    The attribute may be a config made by `create_sdk_mcp_server()`, an
    `SdkMcpServer`, a server of the official ``mcp`` package (``FastMCP``,
    ``MCPServer`` or a low-level ``Server``, hosted by `McpBridge`), or a function
    with no arguments returning one of them.  The current directory (or
    ``search_path``) is searched first.  ``option`` names the option (or command) in
    error messages.
    """
    module_name, sep, attr = spec.partition(":")
    where = os.getcwd() if search_path is None else search_path
    if where not in sys.path:
        sys.path.insert(0, where)
    if not sep or not module_name or not attr:
        raise UsageError(
            f"{option} expects package.module:attribute, got {spec!r}{_attribute_hint(spec)}"
        )
    dotted = module_name.removesuffix(".py").replace("/", ".").replace(os.sep, ".").strip(".")
    if dotted != module_name:  # a file's path, where the module's name goes
        raise UsageError(
            f"{option} {spec}: name the module, not its file: {option} {dotted}:{attr}"
        )
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or ""
        if isinstance(exc, ModuleNotFoundError) and (module_name + ".").startswith(missing + "."):
            file = module_name.replace(".", os.sep) + ".py"
            raise UsageError(
                f"{option} {spec}: cannot import {module_name!r}: no {file} in {where} "
                "(searched first) nor on sys.path; run from the folder that holds it, or "
                "add that folder to PYTHONPATH"
            ) from exc
        raise UsageError(f"{option} {spec}: cannot import {module_name!r} ({exc})") from exc
    except Exception as exc:
        raise UsageError(
            f"{option} {spec}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    module = obj
    for part in attr.split("."):
        try:
            obj = obj[part] if isinstance(obj, Mapping) and part in obj else getattr(obj, part)
        except AttributeError as exc:
            servers = _servers_in(module)
            found = (
                f"; its MCP servers: {', '.join(map(repr, servers))}"
                if servers
                else "; it defines no MCP server (make one with create_sdk_mcp_server)"
            )
            raise UsageError(
                f"{option} {spec}: {module_name!r} has no attribute {attr!r}{found}"
            ) from exc
    config = _as_config(obj)
    if config is None and callable(obj) and not isinstance(obj, type) and not _is_server(obj):
        try:
            made = obj()
        except Exception as exc:
            raise UsageError(
                f"{option} {spec}: calling {attr}() failed: {type(exc).__name__}: {exc}"
            ) from exc
        config = _as_config(made)
    if config is None:
        raise UsageError(
            f"{option} {spec}: expected an MCP server (create_sdk_mcp_server(...), "
            f"SdkMcpServer, or a FastMCP / mcp Server), got {type(obj).__name__}"
            + _tool_hint(obj, module, f"{option} {module_name}", attr)
        )
    return config


def _tool_hint(obj: object, module: object, named: str, attr: str) -> str:
    """For a tool given where its server goes: the server to name instead (one of the
    module's that serves it, else its first), or how to make one; else ``""``."""
    if not isinstance(obj, SdkMcpTool):
        return ""
    servers = _servers_in(module)
    if not servers:
        return (
            f": {obj.name!r} is a tool; serve it from an MCP server, `server = "
            f"create_sdk_mcp_server('tools', tools=[{attr}])`, and name that: {named}:server"
        )
    holders = [name for name in servers if obj.name in server_tools(vars(module)[name])]
    return (
        f": {obj.name!r} is a tool; name the MCP server that serves it: {named}:"
        + (holders or servers)[0]
    )


def server_tools(server: Any) -> Mapping[str, object]:
    """The tools of an in-process server or its config, by name (none for others)."""
    instance = server.get("instance") if isinstance(server, Mapping) else server
    return instance.tools if isinstance(instance, SdkMcpServer) else {}


def _servers_in(module: object) -> list[str]:
    """The names of the MCP servers a module defines at its top level."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (_is_server(value) or (isinstance(value, Mapping) and value.get("type") == "sdk"))
    ]


def _attribute_hint(spec: str) -> str:
    """``": did you mean 'calc_tools:server'?"`` for a module named without its server
    (the module is imported to look), else ``""``."""
    module_name = spec.partition(":")[0].removesuffix(".py").replace("/", ".").strip(".")
    try:
        module = importlib.import_module(module_name) if module_name else None
    except Exception:  # any failure of the user's module: the usage error stands alone
        return ""
    servers = _servers_in(module) if module is not None else []
    return f": did you mean '{module_name}:{servers[0]}'?" if servers else ""


def load_spawner(spec: str, *, option: str = "--spawn") -> ProcessSpawner:
    """Import ``package.module:attribute`` and return it as a spawner.

    The attribute is a spawner (a function or object called with `SpawnOptions`,
    sync or async), or a spawner class needing no arguments, which is instantiated
    (``ccwire:BubblewrapSpawner``). The current directory is searched first.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{option} expects package.module:attribute, got {spec!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError as exc:
        raise UsageError(f"{option} {spec}: {module_name!r} has no attribute {attr!r}") from exc
    except Exception as exc:
        raise UsageError(
            f"{option} {spec}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    try:
        return as_spawner(obj)
    except TypeError as exc:
        raise UsageError(f"{option} {spec}: {exc}") from exc


def _is_server(obj: Any) -> bool:
    return isinstance(obj, SdkMcpServer) or is_official_server(obj)


def _as_config(obj: Any) -> McpSdkServerConfig | None:
    if isinstance(obj, SdkMcpServer):
        return {"type": "sdk", "name": obj.name, "instance": obj}
    if is_official_server(obj):
        return McpBridge(obj).config()
    if (
        isinstance(obj, Mapping)
        and obj.get("type") == "sdk"
        and isinstance(obj.get("instance"), SdkMcpServer)
    ):
        instance: SdkMcpServer = obj["instance"]
        name = obj.get("name")
        return {
            "type": "sdk",
            "name": name if isinstance(name, str) else instance.name,
            "instance": instance,
        }
    return None


def load_script(path: str | os.PathLike[str]) -> tuple[list[Step], str | None]:
    """Read a ``--scripted`` file: ``(steps, model or None)``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--scripted: cannot read {os.fspath(path)!r}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"--scripted: {os.fspath(path)!r} is not valid JSON: {exc}") from exc
    except RecursionError:  # `[[[[...`: deeper than the parser goes
        raise UsageError(
            f"--scripted: {os.fspath(path)!r} is not valid JSON: nested too deeply"
        ) from None
    model: str | None = None
    if isinstance(data, Mapping):
        model = data.get("model") if isinstance(data.get("model"), str) else None
        data = data.get("steps")
    if not isinstance(data, list) or not data:
        raise UsageError("--scripted: expected a non-empty list of steps (or {'steps': [...]})")
    return [parse_step(raw, f"step {i + 1}") for i, raw in enumerate(data)], model


def parse_step(raw: Any, where: str = "step") -> Step:
    """One scripted step from its JSON form (see the module docstring)."""
    if isinstance(raw, Mapping) and "reply" in raw:
        blocks = raw["reply"]
        if not isinstance(blocks, list) or not blocks:
            raise UsageError(f"--scripted {where}: 'reply' must be a non-empty list of blocks")
        if any(_is_template(b) for b in blocks):
            parsed = list(blocks)
            return lambda request: reply(*(_block(b, where, request) for b in parsed))
        return reply(*(_block(b, where, None) for b in blocks))
    if isinstance(raw, Mapping) and "error" in raw:
        spec = raw["error"]
        if not isinstance(spec, Mapping) or not isinstance(spec.get("status"), int):
            raise UsageError(f"--scripted {where}: 'error' needs an integer 'status'")
        try:
            return error(
                spec["status"],
                str(spec.get("message", "scripted error")),
                str(spec.get("type", "api_error")),
                retry=spec.get("retry"),
            )
        except ValueError as exc:
            raise UsageError(f"--scripted {where}: {exc}") from exc
    if _is_template(raw):
        return lambda request: _block(raw, where, request)
    return _block(raw, where, None)


def _is_template(raw: Any) -> bool:
    text = raw if isinstance(raw, str) else raw.get("text") if isinstance(raw, Mapping) else None
    return isinstance(text, str) and ("{tool_results}" in text or "{prompt}" in text)


def _last_prompt(request: ModelRequest) -> str:
    """The text of the latest user message that has any (tool results have none)."""
    for message in reversed(request.messages):
        content = message.get("content") if message.get("role") == "user" else None
        if isinstance(content, str):
            parts = [content]
        elif isinstance(content, list):
            parts = [
                b["text"]
                for b in content
                if isinstance(b, Mapping)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            ]
        else:
            continue
        found = "\n".join(p for p in (_REMINDER.sub("", p).strip() for p in parts) if p)
        if found:
            return found
    return ""


def _fill(text: str, request: ModelRequest | None) -> str:
    if request is None:
        return text
    results = " ".join(r.content for r in request.tool_results())
    return text.replace("{tool_results}", results).replace("{prompt}", _last_prompt(request))


def _block(raw: Any, where: str, request: ModelRequest | None) -> Block:
    if isinstance(raw, str):
        return text(_fill(raw, request))
    if isinstance(raw, Mapping):
        if isinstance(raw.get("text"), str):
            return text(_fill(raw["text"], request))
        if isinstance(raw.get("thinking"), str):
            return thinking(raw["thinking"])
        call = raw.get("tool_use")
        if isinstance(call, Mapping) and isinstance(call.get("name"), str):
            args = call.get("input", {})
            if not isinstance(args, Mapping):
                raise UsageError(f"--scripted {where}: tool_use 'input' must be an object")
            return tool_use(call["name"], args)
    raise UsageError(
        f"--scripted {where}: expected a string or an object with 'text', 'tool_use', "
        f"'thinking', 'reply' or 'error', got {json.dumps(raw)[:80]}"
    )
