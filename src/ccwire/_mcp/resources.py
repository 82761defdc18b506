"""Resources on SDK servers: the ``@resource`` decorator and the ``resources/*`` methods.

A resource is a URI plus a handler that produces its contents.  A URI containing
``{...}`` expressions is a *template* (listed by ``resources/templates/list``); a
``resources/read`` of a matching URI calls the handler with the template variables as
keyword arguments.  Supported expressions (a subset of RFC 6570):

* ``{name}``: one path segment (no ``/``, ``?`` or ``#``), percent-decoded;
* ``{+name}``: reserved expansion, may span ``/`` (``file:///{+path}``);
* ``{/name}``: a ``/segment``; ``{#name}``: a ``#fragment``;
* ``{?a,b}``: optional query parameters (missing ones are not passed).

Variables are converted to ``int``/``float``/``bool`` when the handler parameter is
annotated so.  A handler parameter called ``uri`` (not a variable) gets the URI read.

Path variables (``{name}``, ``{+name}``, ``{/name}``) are checked after
percent-decoding, so a template such as ``file:///docs/{name}`` cannot be walked out
of: a ``..`` segment, an absolute path (``/etc``, ``\\share``, ``C:``), a NUL, an
encoded separator (``%2F``, ``%5C``) and a value still percent-encoded after decoding
(``%252E%252E``) are refused with an "Invalid params" error (-32602) before the handler
runs.  Query and fragment values are passed as decoded, unchecked.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from .._core.cancel import raised_by_callback
from .._core.errors import McpError, ResourceNotFoundError, ToolDefinitionError
from .._core.redact import redact_text
from .._wire.content import b64, dumps_json
from .._wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, page
from .completions import Completer, Completers, check_completers, complete as _complete
from .handlers import as_async, kwargs_fields, read_signature, str_converter

__all__ = ["ResourceSet", "SdkMcpResource", "resource"]

# the patterns are compiled on first use (re's cache), not when ccwire is imported
_EXPRESSION: Final = r"\{([^{}]*)\}"
_VARNAME: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_OPERATORS: Final = {"": r"([^/?#]+)", "+": r"([^?#]+)", "/": r"/([^/?#]+)", "#": r"#(.+)"}
_BINARY: Final = (bytes, bytearray, memoryview)
_PATH_OPS: Final = frozenset({"", "+", "/"})
_ENCODED_SEPARATOR: Final = r"(?i)%(?:2f|5c)"
_STILL_ENCODED: Final = r"(?i)%(?:2e|2f|5c|00)"
_SEPARATORS: Final = r"[/\\]"
_DRIVE: Final = r"[A-Za-z]:(?:[/\\]|$)"


def unsafe_path(raw: str, decoded: str, *, one_segment: bool) -> str | None:
    """Why the decoded path variable ``decoded`` (``raw`` before decoding) is unsafe to
    join to a directory, or ``None`` when it is safe.

    Unsafe: an encoded separator (``%2F``, ``%5C``), a separator at all in a one-segment
    variable, a ``..`` segment, an absolute path (leading ``/`` or ``\\``, a drive letter),
    a NUL, or percent-encoding left after decoding (double encoding).
    """
    if re.search(_ENCODED_SEPARATOR, raw):
        return "an encoded path separator"
    if "\x00" in decoded:
        return "a NUL character"
    if re.search(_STILL_ENCODED, decoded):
        return "percent-encoding left after decoding"
    if one_segment and re.search(_SEPARATORS, decoded):
        return "a path separator"
    if decoded[:1] in ("/", "\\") or re.match(_DRIVE, decoded):
        return "an absolute path"
    if ".." in re.split(_SEPARATORS, decoded):
        return "a '..' segment"
    return None


def _compile_template(
    uri: str, ops: list[str] | None = None
) -> tuple[re.Pattern[str] | None, list[str], list[str]]:
    """``(pattern, variables, query variables)``; no pattern for a fixed URI.

    ``ops``, when given, receives each variable's operator (``""``, ``"+"``...) in order.

    The pattern has one group per variable in order, with the (single) query
    expression's group holding the whole query string in the query's place.
    """
    parts: list[str] = []
    names: list[str] = []
    query: list[str] = []
    pos = 0
    for m in re.finditer(_EXPRESSION, uri):
        parts.append(re.escape(uri[pos : m.start()]))
        pos = m.end()
        expr = m.group(1)
        op = expr[:1] if expr[:1] in "+/#?" else ""
        body = expr[len(op) :].split(",")
        if not all(re.fullmatch(_VARNAME, n) for n in body) or (op != "?" and len(body) > 1):
            raise ToolDefinitionError(f"unsupported URI template expression {m.group(0)!r}")
        if op == "?":
            if query:
                raise ToolDefinitionError(f"URI template {uri!r} has two query expressions")
            query.extend(body)
            names.append("?")
            if ops is not None:
                ops.append("?")
            parts.append(r"(?:\?([^#]*))?")
        else:
            names.append(body[0])
            parts.append(_OPERATORS[op])
            if ops is not None:
                ops.append(op)
    rest = uri[pos:]
    if any("{" in p or "}" in p for p in [*parts, rest]):
        raise ToolDefinitionError(f"malformed URI template {uri!r}")
    if not names:
        return None, [], []
    all_names = [n for n in names if n != "?"] + query
    if len(set(all_names)) != len(all_names):
        raise ToolDefinitionError(f"URI template {uri!r} repeats a variable")
    return re.compile("".join([*parts, re.escape(rest)])), names, query


@dataclass(frozen=True, eq=False)
class SdkMcpResource:
    """A resource (or resource template) served by an SDK server; made by `resource()`.

    The handler (``async def`` or plain ``def``, run in a worker thread) returns the
    contents: ``str`` (text), ``bytes`` (a base64 blob), a contents dict (``{"text": ...}``
    or ``{"blob": ...}``, ``uri`` filled in), a list of those, a complete
    ``{"contents": [...]}`` result, or anything else JSON-serializable (sent as JSON
    text).  Raise `ResourceNotFoundError` (or ``FileNotFoundError`` /
    ``KeyError``) for "no such resource" (-32002), `McpError` for any
    other JSON-RPC error; other exceptions become -32603.
    """

    uri: str
    handler: Callable[..., Any]
    name: str | None = None
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    size: int | None = None
    annotations: Mapping[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    complete: Completers | None = field(default=None, repr=False)
    is_template: bool = field(init=False)
    completers: dict[str, Completer] = field(init=False, repr=False)
    definition: dict[str, Any] = field(init=False, repr=False)
    _pattern: re.Pattern[str] | None = field(init=False, repr=False)
    _names: tuple[str, ...] = field(init=False, repr=False)
    _query: tuple[str, ...] = field(init=False, repr=False)
    _ops: tuple[str, ...] = field(init=False, repr=False)
    _bind: Callable[[dict[str, str], str], dict[str, Any]] = field(init=False, repr=False)
    _invoke: Callable[..., Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri:
            raise ToolDefinitionError(f"resource URI must be a non-empty string: {self.uri!r}")
        if not callable(self.handler):
            raise ToolDefinitionError(f"resource {self.uri!r}: handler is not callable")
        ops: list[str] = []
        pattern, names, query = _compile_template(self.uri, ops)
        name = self.name or getattr(self.handler, "__name__", "") or self.uri
        if name == "<lambda>":
            name = self.uri
        description = self.description
        if description is None:
            description = inspect.getdoc(self.handler)
        entry: dict[str, Any] = {("uriTemplate" if pattern else "uri"): self.uri, "name": name}
        optional = {"title": self.title, "description": description, "mimeType": self.mime_type,
                    "size": None if pattern else self.size,
                    "annotations": dict(self.annotations) if self.annotations else None,
                    "_meta": dict(self.meta) if self.meta else None}  # fmt: skip
        entry.update((k, v) for k, v in optional.items() if v is not None)
        computed = {
            "is_template": pattern is not None, "definition": entry, "_pattern": pattern,
            "_names": tuple(names), "_query": tuple(query), "_ops": tuple(ops),
            "_bind": self._binder(names, query),
            "_invoke": as_async(lambda kw: self.handler(**kw), self.handler),
            "completers": check_completers(
                self.complete, [*names, *query], f"resource {self.uri!r}"
            ),
        }  # fmt: skip
        for key, value in computed.items():
            object.__setattr__(self, key, value)

    def _binder(
        self, names: list[str], query: list[str]
    ) -> Callable[[dict[str, str], str], dict[str, Any]]:
        what = f"resource {self.uri!r}"
        names = [n for n in names if n != "?"]
        sig = read_signature(self.handler, what=what, need_annotations=True)
        params = list(sig.parameters.values()) if sig is not None else []
        fields, extra = kwargs_fields(params, what=what)
        known = {n for n, _, _ in fields}
        wants_uri = "uri" in known and "uri" not in names and "uri" not in query
        variables = set(names) | set(query)
        unknown = sorted(variables - known)
        if unknown and not extra:
            raise ToolDefinitionError(f"{what}: the handler has no parameter for {unknown}")
        missing = [n for n, _, has_default in fields if not has_default and n not in names]
        missing = [n for n in missing if n not in query and not (wants_uri and n == "uri")]
        if missing:
            raise ToolDefinitionError(f"{what}: handler parameters {missing} are not in the URI")
        required = tuple(n for n, _, d in fields if not d and n in query)
        converters = {n: c for n, ann, _ in fields if (c := str_converter(ann)) is not None}

        def bind(values: dict[str, str], uri: str) -> dict[str, Any]:
            kwargs: dict[str, Any] = {}
            for key, text in values.items():
                convert = converters.get(key)
                try:
                    kwargs[key] = text if convert is None else convert(text)
                except ValueError as exc:
                    message = f"Invalid params: {key}={text!r} in {uri!r}: {exc}"
                    raise McpError(message, code=INVALID_PARAMS) from None
            for key in required:
                if key not in kwargs:
                    raise McpError(f"Invalid params: {uri!r} lacks {key!r}", code=INVALID_PARAMS)
            if wants_uri:
                kwargs["uri"] = uri
            return kwargs

        return bind

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables if ``uri`` matches this resource, else ``None``.

        Raises:
            McpError: "Invalid params" (-32602) when a path variable, once decoded, is
                unsafe (see `unsafe_path()`).
        """
        if self._pattern is None:
            return {} if uri == self.uri else None
        m = self._pattern.fullmatch(uri)
        if m is None:
            return None
        import urllib.parse  # on first use: importing it costs 1.5 ms

        values: dict[str, str] = {}
        for name, op, text in zip(self._names, self._ops, m.groups(), strict=True):
            if name != "?":
                decoded = urllib.parse.unquote(text)
                if op in _PATH_OPS:
                    why = unsafe_path(text, decoded, one_segment=op != "+")
                    if why is not None:
                        message = f"Invalid params: {name} in {uri!r} has {why}"
                        raise McpError(message, code=INVALID_PARAMS)
                values[name] = decoded
            elif text:
                pairs = urllib.parse.parse_qsl(text, keep_blank_values=True)
                values.update((k, v) for k, v in pairs if k in self._query)
        return values

    async def read(self, uri: str, values: dict[str, str]) -> dict[str, Any]:
        """Call the handler for ``uri`` and return the ``ReadResourceResult``."""
        kwargs = self._bind(values, uri)
        try:
            value = await self._invoke(kwargs)
        except McpError:
            raise
        except (FileNotFoundError, KeyError):
            raise ResourceNotFoundError(uri) from None
        except BaseException as exc:
            if not isinstance(exc, Exception) and not raised_by_callback(exc):
                raise  # a cancellation of ours
            message = redact_text(f"Error reading resource {uri}: {type(exc).__name__}: {exc}")
            raise McpError(message, code=INTERNAL_ERROR) from exc
        if isinstance(value, Mapping) and "contents" in value:
            return dict(value)
        items = value if isinstance(value, (list, tuple)) else () if value is None else (value,)
        return {"contents": [self._contents(item, uri) for item in items]}

    def _contents(self, value: Any, uri: str) -> dict[str, Any]:
        mime = self.mime_type
        if isinstance(value, str):
            out: dict[str, Any] = {"uri": uri, "text": value}
        elif isinstance(value, _BINARY):
            out = {"uri": uri, "blob": b64(bytes(value))}
        elif isinstance(value, Mapping) and ("text" in value or "blob" in value):
            out = {"uri": uri, **value}
            if isinstance(out.get("blob"), _BINARY):
                out["blob"] = b64(bytes(out["blob"]))
        else:
            out = {"uri": uri, "text": dumps_json(value)}
            mime = mime or "application/json"
        if mime is not None and "mimeType" not in out:
            out["mimeType"] = mime
        return out


def resource(
    uri: str,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    size: int | None = None,
    annotations: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    complete: Completers | None = None,
) -> Callable[[Callable[..., Any]], SdkMcpResource]:
    """Decorate a handler to make it an `SdkMcpResource`.

    ``@resource("config://app")`` on ``def app_config() -> str``, or a template:
    ``@resource("users://{user_id}/profile")`` on ``async def profile(user_id: int)``.
    ``name`` defaults to the handler's name and ``description`` to its docstring;
    ``annotations`` (``audience``, ``priority``, ``lastModified``) and ``meta`` are sent
    in the listing as given.  Bad templates raise `ToolDefinitionError`.

    ``complete`` offers values for a template's variables (``completion/complete``):
    it maps a variable name to a list of values (those starting with what was typed
    are offered) or to a function ``(value, context) -> values`` (sync or async;
    ``context`` holds the variables already given), for example
    ``complete={"user_id": lambda value, context: ids_starting_with(value)}``.
    Subscribed clients are told of a change with `SdkMcpServer.notify_resource_updated()`.
    """

    def decorator(handler: Callable[..., Any]) -> SdkMcpResource:
        return SdkMcpResource(
            uri=uri, handler=handler, name=name, description=description, mime_type=mime_type,
            title=title, size=size, annotations=annotations, meta=meta, complete=complete,
        )  # fmt: skip

    return decorator


class ResourceSet:
    """The resources of one server, keyed by URI (or URI template); serves ``resources/*``."""

    def __init__(self, server: str, resources: Iterable[SdkMcpResource] = ()) -> None:
        self._server = server
        self._all: dict[str, SdkMcpResource] = {}
        self._lists: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
        for r in resources:
            self.add(r)

    @property
    def view(self) -> Mapping[str, SdkMcpResource]:
        """A read-only, live view by URI or template."""
        return MappingProxyType(self._all)

    def __bool__(self) -> bool:
        return bool(self._all)

    def add(self, r: SdkMcpResource) -> None:
        """Add ``r``; a URI already taken raises `ToolDefinitionError`."""
        if not isinstance(r, SdkMcpResource):
            raise ToolDefinitionError(f"expected an SdkMcpResource (from @resource), got {r!r}")
        if r.uri in self._all:
            raise ToolDefinitionError(f"duplicate resource {r.uri!r} in server {self._server!r}")
        self._all[r.uri] = r
        self._lists = None

    def remove(self, uri: str) -> SdkMcpResource:
        """Remove and return the resource with this URI or template (``KeyError`` if none)."""
        r = self._all.pop(uri)
        self._lists = None
        return r

    def _definitions(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        if self._lists is None:
            values = self._all.values()
            fixed = [r.definition for r in values if not r.is_template]
            self._lists = (fixed, [r.definition for r in values if r.is_template])
        return self._lists

    def list(self, params: Mapping[str, Any], size: int) -> dict[str, Any]:
        """The ``resources/list`` result page."""
        return page(self._definitions()[0], params.get("cursor"), size, "resources", "resources")

    def templates(self, params: Mapping[str, Any], size: int) -> dict[str, Any]:
        """The ``resources/templates/list`` result page."""
        items = self._definitions()[1]
        return page(items, params.get("cursor"), size, "resourceTemplates", "templates")

    async def read(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ``resources/read`` result; fixed URIs win over templates, then first match."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise McpError("Invalid params: uri must be a string", code=INVALID_PARAMS)
        fixed = self._all.get(uri)
        if fixed is not None and not fixed.is_template:
            return await fixed.read(uri, {})
        for r in self._all.values():
            if r.is_template:
                values = r.match(uri)
                if values is not None:
                    return await r.read(uri, values)
        raise ResourceNotFoundError(uri)

    async def complete(self, template: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        """The ``completion/complete`` result for a variable of URI template ``template``."""
        found = self._all.get(template) if isinstance(template, str) else None
        if found is None:
            raise McpError(f"Invalid params: unknown resource {template!r}", code=INVALID_PARAMS)
        return await _complete(found.completers, params)

    @property
    def completes(self) -> bool:
        """True when any template offers completions."""
        return any(r.completers for r in self._all.values())

    def has(self, uri: str) -> bool:
        """True when ``uri`` is a resource served here (fixed, or matching a template)."""
        fixed = self._all.get(uri)
        if fixed is not None and not fixed.is_template:
            return True
        return any(r.is_template and r.match(uri) is not None for r in self._all.values())
