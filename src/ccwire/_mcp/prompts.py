"""Prompts on SDK servers: the ``@prompt`` decorator and the ``prompts/*`` methods.

A prompt is a named message template.  ``prompts/get`` calls its handler with the
client's arguments (strings; converted to ``int``/``float``/``bool`` when the handler
parameter is annotated so) as keyword arguments and returns the messages it produced.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from .._core.cancel import raised_by_callback
from .._core.errors import McpError, ToolDefinitionError, ToolError
from .._wire.content import CONTENT_TYPES, dumps_json, text_content
from .._wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, page
from .completions import Completer, Completers, check_completers, complete as _complete
from .handlers import as_async, kwargs_fields, read_signature, str_converter

__all__ = ["PromptSet", "SdkMcpPrompt", "prompt"]

_NAME: Final = r"[A-Za-z0-9_.\-/]{1,128}"  # compiled on first use (re's cache)
_ROLES: Final = frozenset({"user", "assistant"})


def _argument_defs(spec: Any, what: str) -> list[dict[str, Any]]:
    """Explicit ``arguments``: names, ``{name: description}`` or ``PromptArgument`` dicts."""
    if isinstance(spec, Mapping):
        return [{"name": str(k), "description": str(v), "required": True} for k, v in spec.items()]
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence):
        raise ToolDefinitionError(f"{what}: arguments must be a list or a mapping, got {spec!r}")
    out: list[dict[str, Any]] = []
    for item in spec:
        if isinstance(item, str):
            out.append({"name": item, "required": True})
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            out.append({k: v for k, v in item.items() if v is not None})
        else:
            raise ToolDefinitionError(f"{what}: bad argument definition {item!r}")
    return out


def _inferred_defs(fields: list[tuple[str, Any, bool]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name, ann, has_default in fields:
        entry: dict[str, Any] = {"name": name}
        if typing.get_origin(ann) is typing.Annotated:
            text = next((m for m in ann.__metadata__ if isinstance(m, str)), None)
            if text is not None:
                entry["description"] = text
        entry["required"] = not has_default
        out.append(entry)
    return out


def _message(value: Any) -> dict[str, Any]:
    """One ``PromptMessage`` from a message dict, a content block, or text (a user turn)."""
    if isinstance(value, Mapping) and "role" in value:
        role, content = value["role"], value.get("content")
        if role not in _ROLES:
            raise ValueError(f"a prompt message role must be 'user' or 'assistant', not {role!r}")
        if isinstance(content, Mapping) and content.get("type") in CONTENT_TYPES:
            return {**value, "content": dict(content)}
        text = content if isinstance(content, str) else dumps_json(content)
        return {**value, "content": text_content(text)}
    if isinstance(value, Mapping) and value.get("type") in CONTENT_TYPES:
        return {"role": "user", "content": dict(value)}
    return {
        "role": "user",
        "content": text_content(value if isinstance(value, str) else dumps_json(value)),
    }


@dataclass(frozen=True, eq=False)
class SdkMcpPrompt:
    """A prompt served by an SDK server; made by `prompt()`.

    The handler (``async def`` or plain ``def``, run in a worker thread) returns: a
    ``str`` (one user message), a message dict ``{"role": ..., "content": ...}``
    (content as text or a content block), a content block, a list of those, or a
    complete ``{"messages": [...]}`` result.  Missing required arguments are refused
    (-32602) before it runs; `ToolError` raised by it answers -32602 with
    exactly its message, `McpError` answers as given, any other
    exception -32603.
    """

    name: str
    handler: Callable[..., Any]
    description: str | None = None
    arguments: Any = None
    title: str | None = None
    meta: Mapping[str, Any] | None = None
    complete: Completers | None = field(default=None, repr=False)
    definition: dict[str, Any] = field(init=False, repr=False)
    completers: dict[str, Completer] = field(init=False, repr=False)
    _required: tuple[str, ...] = field(init=False, repr=False)
    _known: frozenset[str] | None = field(init=False, repr=False)  # None: pass all
    _converters: dict[str, Callable[[str], Any]] = field(init=False, repr=False)
    _invoke: Callable[..., Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        what = f"prompt {self.name!r}"
        if not isinstance(self.name, str) or not re.fullmatch(_NAME, self.name):
            raise ToolDefinitionError(f"invalid prompt name {self.name!r}")
        if not callable(self.handler):
            raise ToolDefinitionError(f"{what}: handler is not callable")
        sig = read_signature(self.handler, what=what, need_annotations=True)
        params = list(sig.parameters.values()) if sig is not None else []
        fields, extra = kwargs_fields(params, what=what)
        defs = (
            _inferred_defs(fields) if self.arguments is None
            else _argument_defs(self.arguments, what)
        )  # fmt: skip
        declared = {d["name"] for d in defs}
        handled = {n for n, _, _ in fields}
        if not extra and declared - handled:
            raise ToolDefinitionError(
                f"{what}: no handler parameter for {sorted(declared - handled)}"
            )
        unfilled = [n for n, _, d in fields if not d and n not in declared]
        if unfilled:
            raise ToolDefinitionError(f"{what}: handler parameters {unfilled} are not arguments")
        description = self.description
        if description is None:
            description = inspect.getdoc(self.handler)
        entry: dict[str, Any] = {"name": self.name}
        optional = {"title": self.title, "description": description, "arguments": defs or None,
                    "_meta": dict(self.meta) if self.meta else None}  # fmt: skip
        entry.update((k, v) for k, v in optional.items() if v is not None)
        computed = {
            "definition": entry, "_required": tuple(d["name"] for d in defs if d.get("required")),
            "_known": None if extra else frozenset(declared),
            "_converters": {n: c for n, a, _ in fields if (c := str_converter(a)) is not None},
            "_invoke": as_async(lambda kw: self.handler(**kw), self.handler),
            "completers": check_completers(self.complete, declared | handled, what),
        }  # fmt: skip
        for key, value in computed.items():
            object.__setattr__(self, key, value)

    async def get(self, arguments: Any) -> dict[str, Any]:
        """Run the handler with ``arguments`` and return the ``GetPromptResult``."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise McpError("Invalid params: arguments must be an object", code=INVALID_PARAMS)
        missing = [n for n in self._required if n not in arguments]
        if missing:
            raise McpError(
                f"Invalid params: prompt {self.name!r} requires argument(s) "
                + ", ".join(repr(m) for m in missing),
                code=INVALID_PARAMS,
            )
        kwargs: dict[str, Any] = {}
        for key, value in arguments.items():
            if self._known is not None and key not in self._known:
                continue  # undeclared: ignored
            convert = self._converters.get(key)
            try:
                kwargs[key] = (
                    convert(value) if convert is not None and isinstance(value, str) else value
                )
            except ValueError as exc:
                message = f"Invalid params: argument {key}={value!r}: {exc}"
                raise McpError(message, code=INVALID_PARAMS) from None
        try:
            value = await self._invoke(kwargs)
            return self._result(value)
        except McpError:
            raise
        except ToolError as exc:
            raise McpError(str(exc), code=INVALID_PARAMS) from exc
        except BaseException as exc:
            if not isinstance(exc, Exception) and not raised_by_callback(exc):
                raise  # a cancellation of ours
            message = f"Error in prompt {self.name!r}: {type(exc).__name__}: {exc}"
            raise McpError(message, code=INTERNAL_ERROR) from exc

    def _result(self, value: Any) -> dict[str, Any]:
        if isinstance(value, Mapping) and "messages" in value:
            result = dict(value)
            result["messages"] = [_message(m) for m in result["messages"]]
        else:
            items = value if isinstance(value, (list, tuple)) else [value]
            result = {"messages": [_message(m) for m in items]}
        description = self.definition.get("description")
        if description is not None:
            result.setdefault("description", description)
        return result


def prompt(
    name: str,
    description: str | None = None,
    arguments: Any = None,
    *,
    title: str | None = None,
    meta: Mapping[str, Any] | None = None,
    complete: Completers | None = None,
) -> Callable[[Callable[..., Any]], SdkMcpPrompt]:
    """Decorate a handler to make it an `SdkMcpPrompt`.

    ``@prompt("review", "Review code")`` on ``def review(code: str, style: str = "pep8")``
    infers the arguments from the parameters (required unless they have a default;
    ``Annotated[str, "text"]`` gives a description).  ``arguments`` may instead be
    given as a list of names (all required), of ``{"name", "description", "required"}``
    dicts, or a ``{name: description}`` mapping (all required).  ``description``
    defaults to the handler's docstring.

    ``complete`` offers values for arguments (``completion/complete``): it maps an
    argument name to a list of values (those starting with what was typed are
    offered) or to a function ``(value, context) -> values`` (sync or async;
    ``context`` holds the arguments already given), for example
    ``complete={"style": ["pep8", "google"]}``.
    """

    def decorator(handler: Callable[..., Any]) -> SdkMcpPrompt:
        return SdkMcpPrompt(
            name=name, handler=handler, description=description, arguments=arguments,
            title=title, meta=meta, complete=complete,
        )  # fmt: skip

    return decorator


class PromptSet:
    """The prompts of one server, by name; serves ``prompts/list`` and ``prompts/get``."""

    def __init__(self, server: str, prompts: Iterable[SdkMcpPrompt] = ()) -> None:
        self._server = server
        self._all: dict[str, SdkMcpPrompt] = {}
        self._list: list[dict[str, Any]] | None = None
        for p in prompts:
            self.add(p)

    @property
    def view(self) -> Mapping[str, SdkMcpPrompt]:
        """A read-only, live view by name."""
        return MappingProxyType(self._all)

    def __bool__(self) -> bool:
        return bool(self._all)

    def add(self, p: SdkMcpPrompt) -> None:
        """Add ``p``; a name already taken raises `ToolDefinitionError`."""
        if not isinstance(p, SdkMcpPrompt):
            raise ToolDefinitionError(f"expected an SdkMcpPrompt (from @prompt), got {p!r}")
        if p.name in self._all:
            raise ToolDefinitionError(
                f"duplicate prompt name {p.name!r} in server {self._server!r}"
            )
        self._all[p.name] = p
        self._list = None

    def remove(self, name: str) -> SdkMcpPrompt:
        """Remove and return the prompt called ``name`` (``KeyError`` if there is none)."""
        p = self._all.pop(name)
        self._list = None
        return p

    def list(self, params: Mapping[str, Any], size: int) -> dict[str, Any]:
        """The ``prompts/list`` result page."""
        if self._list is None:
            self._list = [p.definition for p in self._all.values()]
        return page(self._list, params.get("cursor"), size, "prompts", "prompts")

    async def get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ``prompts/get`` result."""
        name = params.get("name")
        found = self._all.get(name) if isinstance(name, str) else None
        if found is None:
            raise McpError(f"Invalid params: unknown prompt {name!r}", code=INVALID_PARAMS)
        return await found.get(params.get("arguments"))

    async def complete(self, name: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ``completion/complete`` result for an argument of prompt ``name``."""
        found = self._all.get(name) if isinstance(name, str) else None
        if found is None:
            raise McpError(f"Invalid params: unknown prompt {name!r}", code=INVALID_PARAMS)
        return await _complete(found.completers, params)

    @property
    def completes(self) -> bool:
        """True when any prompt offers completions."""
        return any(p.completers for p in self._all.values())
