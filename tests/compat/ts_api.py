"""Read the public API of Anthropic's TypeScript Agent SDK from its shipped ``sdk.d.ts``.

`read_package()` returns what `ts_migration_table` compares with ccwire: the package's
version, its exported values (functions, classes, constants), the fields of ``Options``,
the methods of ``Query``, the message types of the ``SDKMessage`` union (with their
``type``/``subtype`` literals), the hook events, and the members of a few option types.

The reader is a small scanner for the declaration file's own shape (``export declare
type X = {...};``, ``export declare interface X {...}``...): it splits top-level
statements and the members of object types, skipping comments, strings and nested
brackets. Standard library only.

The package is found (`find_package()`) at ``CCWIRE_TS_SDK_DIR`` (the package's
directory), else ``.cache/ts-sdk/node_modules/@anthropic-ai/claude-agent-sdk`` in this
checkout (``make ts-sdk`` installs it there).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PACKAGE = "@anthropic-ai/claude-agent-sdk"
TS_SDK_VERSION: str = json.loads((HERE / "ts-sdk" / "package.json").read_text("utf-8"))[
    "dependencies"
][PACKAGE]
"""The version compared with (pinned by ``tests/compat/ts-sdk/package.json``): the one
whose bundled Claude Code is the pinned CLI (2.1.330)."""

_PACKAGE_PATH = Path(".cache", "ts-sdk", "node_modules", *PACKAGE.split("/"))


def find_package() -> Path | None:
    """The installed package's directory (see the module docstring), or None."""
    explicit = os.environ.get("CCWIRE_TS_SDK_DIR")
    candidates = [Path(explicit)] if explicit else []
    candidates.append(REPO / _PACKAGE_PATH)
    for candidate in candidates:
        if (candidate / "sdk.d.ts").is_file() and (candidate / "package.json").is_file():
            return candidate
    return None


# ------------------------------------------------------------------------ scanning

_OPEN = {"{": "}", "(": ")", "[": "]"}
_CLOSE = {"}", ")", "]"}


def _skip_string(text: str, i: int) -> int:
    """The index after the string literal starting at ``text[i]``."""
    quote = text[i]
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i + 1
        i += 1
    return i


def _skip_comment(text: str, i: int) -> int:
    """The index after the comment starting at ``text[i]`` (``//`` or ``/*``)."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end + 1
    end = text.find("*/", i + 2)
    return len(text) if end < 0 else end + 2


def _split_top(text: str, separators: str, *, angle: bool = False) -> list[str]:
    """``text`` split at the characters of ``separators`` found outside brackets,
    strings and comments (outside ``<...>`` too with ``angle``)."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            i = _skip_string(text, i)
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            i = _skip_comment(text, i)
            continue
        if c in _OPEN or (angle and c == "<"):
            depth += 1
        elif c in _CLOSE or (angle and c == ">" and text[i - 1] != "="):
            depth -= 1
        elif depth == 0 and c in separators:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


_DOC = re.compile(r"/\*\*(.*?)\*/", re.S)


def _doc_text(raw: str) -> str:
    lines = [re.sub(r"^\s*\* ?", "", line) for line in raw.strip().splitlines()]
    return "\n".join(lines).strip()


@dataclass
class Statement:
    """One top-level statement of the file."""

    kind: str
    """``type``, ``interface``, ``class``, ``function``, ``const``, ``namespace`` or ''."""
    name: str
    exported: bool
    text: str
    """The whole statement."""
    doc: str = ""
    """Its ``/** ... */`` comment, without the stars."""


_HEAD = re.compile(
    r"^(?P<export>export\s+)?(?:declare\s+)?(?:abstract\s+)?"
    r"(?P<kind>type|interface|class|function|const|namespace)\s+(?P<name>[A-Za-z_$][\w$]*)"
)


def statements(text: str) -> list[Statement]:
    """The top-level statements of a declaration file."""
    out: list[Statement] = []
    i = 0
    doc = ""
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("/**", i):
            end = _skip_comment(text, i)
            doc = _doc_text(text[i + 3 : end - 2])
            i = end
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            i = _skip_comment(text, i)
            continue
        start = i
        depth = 0
        block_statement = None  # decided at the first "{" or "="
        while i < len(text):
            c = text[i]
            if c in "'\"`":
                i = _skip_string(text, i)
                continue
            if text.startswith("//", i) or text.startswith("/*", i):
                i = _skip_comment(text, i)
                continue
            if depth == 0 and block_statement is None and c in "{=":
                block_statement = c == "{"
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                depth -= 1
                if depth == 0 and block_statement and c == "}":
                    i += 1
                    break
            elif c == ";" and depth == 0:
                i += 1
                break
            i += 1
        body = text[start:i].strip()
        m = _HEAD.match(body)
        if m is None:
            out.append(Statement("", "", body.startswith("export"), body, doc))
        else:
            out.append(Statement(m["kind"], m["name"], bool(m["export"]), body, doc))
        doc = ""
    return out


@dataclass
class Member:
    """One member of an object type or interface."""

    name: str
    optional: bool
    method: bool
    type: str
    """The member's type (a method's whole signature after its name)."""
    doc: str = ""


_MEMBER = re.compile(
    r"^(?:readonly\s+)?(?P<name>[A-Za-z_$][\w$]*|'[^']*'|\"[^\"]*\")(?P<opt>\?)?\s*(?P<sep>[:(<])"
)


def _outer_braces(text: str) -> str | None:
    """The text inside the first ``{...}`` of ``text`` (at any depth: a function type's
    options object counts)."""
    i = 0
    depth = 0
    start = -1
    start_depth = 0
    while i < len(text):
        c = text[i]
        if c in "'\"`":
            i = _skip_string(text, i)
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            i = _skip_comment(text, i)
            continue
        if c in _OPEN:
            if start < 0 and c == "{":
                start, start_depth = i + 1, depth
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == start_depth and c == "}" and start >= 0:
                return text[start:i]
        i += 1
    return None


def members(type_text: str) -> list[Member]:
    """The members of the first object type in ``type_text`` (an interface's or a
    ``type X = {...}``'s body; for an intersection, its first object)."""
    body = _outer_braces(type_text)
    if body is None:
        return []
    out: list[Member] = []
    for part in _split_top(body, ";"):
        docs = _DOC.findall(part)
        code = _DOC.sub("", part)
        code = re.sub(r"//[^\n]*", "", code).strip()
        m = _MEMBER.match(code)
        if m is None:
            continue
        name = m["name"].strip("'\"")
        method = m["sep"] in "(<"
        rest = code[m.end() - 1 :] if method else code[m.end() :]
        doc = _doc_text(docs[-1]) if docs else ""
        out.append(Member(name, bool(m["opt"]), method, rest.strip(), doc))
    return out


def _rhs(statement: Statement) -> str:
    """What a ``type X = ...`` statement's name stands for."""
    text = statement.text.rstrip(";")
    eq = text.find("=")
    return text[eq + 1 :].strip() if eq >= 0 else text


def union_members(type_text: str) -> list[str]:
    """The members of a top-level union (``A | B | 'c'``)."""
    return _split_top(type_text, "|", angle=True)


def string_literals(text: str) -> list[str]:
    """The quoted strings of ``text`` (a tuple or union of string literals), in order."""
    return [s[1:-1] for s in re.findall(r"'[^']*'|\"[^\"]*\"", text)]


# -------------------------------------------------------------------------- the API


@dataclass
class MessageType:
    """One member of the ``SDKMessage`` union."""

    name: str
    type: str
    subtype: str | None
    fields: list[str] = field(default_factory=list)
    doc: str = ""


@dataclass
class TsApi:
    """What `read_package()` finds."""

    version: str
    values: dict[str, str]
    """Exported functions, classes and constants: name -> kind."""
    types: list[str]
    """Exported type names."""
    options: list[Member]
    query_methods: list[Member]
    messages: list[MessageType]
    hook_events: list[str]
    objects: dict[str, list[Member]]
    """The members of some object types by name (``AgentDefinition``, ...)."""
    docs: dict[str, str]
    consts: dict[str, str] = field(default_factory=dict)
    """Each exported constant's declared type (its values, for a literal tuple)."""
    legacy_tool_name_aliases: dict[str, str] = field(default_factory=dict)
    """``LEGACY_TOOL_NAME_ALIASES``, read from the shipped JavaScript (the declarations
    type it as a record only)."""


OBJECT_TYPES = (
    "AgentDefinition",
    "CanUseTool",
    "PermissionResult",
    "tool",
    "ResolveSettingsOptions",
    "CreateSdkMcpServerOptions",
    "McpSdkServerConfig",
    "McpStdioServerConfig",
    "McpHttpServerConfig",
    "McpSSEServerConfig",
    "ListSessionsOptions",
    "GetSessionMessagesOptions",
    "ElicitationRequest",
    "UserDialogRequest",
    "SDKSessionInfo",
    "HookCallbackMatcher",
)
"""Object types whose members `ts_migration_table` lists."""


def _literal(member: Member | None) -> str | None:
    if member is None:
        return None
    found = string_literals(member.type)
    return found[0] if len(found) == 1 else None


def _message_type(name: str, by_name: dict[str, Statement]) -> MessageType:
    statement = by_name[name]
    found = {m.name: m for m in members(statement.text)}
    return MessageType(
        name=name,
        type=_literal(found.get("type")) or "",
        subtype=_literal(found.get("subtype")),
        fields=list(found),
        doc=statement.doc,
    )


def read_dts(text: str, version: str) -> TsApi:
    """The API declared by the text of ``sdk.d.ts``."""
    stmts = statements(text)
    by_name = {s.name: s for s in stmts if s.name}
    values = {
        s.name: s.kind for s in stmts if s.exported and s.kind in ("function", "class", "const")
    }
    types = sorted(s.name for s in stmts if s.exported and s.kind in ("type", "interface"))
    messages = [
        _message_type(n, by_name)
        for n in union_members(_rhs(by_name["SDKMessage"]))
        if n in by_name
    ]
    return TsApi(
        version=version,
        values=values,
        types=types,
        options=members(by_name["Options"].text),
        query_methods=[m for m in members(by_name["Query"].text) if m.method],
        messages=messages,
        hook_events=string_literals(by_name["HOOK_EVENTS"].text.split(":", 1)[1]),
        objects={n: members(by_name[n].text) for n in OBJECT_TYPES if n in by_name},
        docs={s.name: s.doc for s in stmts if s.name},
        consts={
            s.name: re.split(r"[:=]", s.text, maxsplit=1)[1].rstrip(";").strip()
            for s in stmts
            if s.exported and s.kind == "const"
        },
    )


def _exported_object(js: str, public_name: str) -> dict[str, str]:
    """The object literal of strings the bundle exports as ``public_name``
    (``export{Gy as NAME,...}`` and ``Gy={a:"b",...}``)."""
    found = re.search(r"\b([\w$]+) as " + re.escape(public_name) + r"\b", js)
    if found is None:
        return {}
    literal = re.search(r"\b" + re.escape(found[1]) + r"=\{([^{}]*)\}", js)
    if literal is None:
        return {}
    pairs = re.findall(r'([\w$]+|"[^"]*"):"([^"]*)"', literal[1])
    return {key.strip('"'): value for key, value in pairs}


def read_package(directory: Path) -> TsApi:
    """The API of the package installed in ``directory``."""
    meta: dict[str, Any] = json.loads((directory / "package.json").read_text(encoding="utf-8"))
    api = read_dts((directory / "sdk.d.ts").read_text(encoding="utf-8"), str(meta["version"]))
    js = (directory / "sdk.mjs").read_text(encoding="utf-8")
    api.legacy_tool_name_aliases = _exported_object(js, "LEGACY_TOOL_NAME_ALIASES")
    return api


if __name__ == "__main__":
    found = find_package()
    if found is None:
        raise SystemExit(f"{PACKAGE} not found: run `make ts-sdk` or set CCWIRE_TS_SDK_DIR")
    api = read_package(found)
    print(
        f"{PACKAGE} {api.version}: {len(api.values)} values, {len(api.options)} options, "
        f"{len(api.query_methods)} Query methods, {len(api.messages)} message types"
    )
