"""Pure helpers: turn tool input specs (and output specs) into JSON Schema.

Conversion (`to_json_schema()`, `params_schema()`) accepts ``{param: type}``
dicts, type-name strings (``{"a": "number"}``), full JSON Schema dicts (passed through
unchanged), TypedDict and dataclass classes, and any object with ``model_json_schema()``
(pydantic, never imported here).  A field is required unless it is ``Optional``/``X |
None``, ``NotRequired`` or has a default; for function parameters only a default makes
one optional, because the handler is called with keyword arguments.

Validation lives in `validation`.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import sys
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from inspect import Parameter
from typing import Any, Final, Union

from .._core.errors import ToolDefinitionError
from .validation import json_type_name

logger = logging.getLogger("ccwire")

__all__ = [
    "looks_like_json_schema",
    "params_schema",
    "to_json_schema",
]

_TYPE_NAMES: Final = {
    "string": "string", "number": "number", "integer": "integer", "boolean": "boolean",
    "object": "object", "array": "array", "null": "null", "str": "string", "float": "number",
    "int": "integer", "bool": "boolean", "dict": "object", "list": "array",
}  # fmt: skip
_STR, _NUM = {"type": "string"}, {"type": "number"}
_ARR, _OBJ = {"type": "array"}, {"type": "object"}
_SCALARS: Final[dict[Any, dict[str, Any]]] = {
    str: _STR, int: {"type": "integer"}, float: _NUM, bool: {"type": "boolean"}, bytes: _STR,
    type(None): {"type": "null"}, list: _ARR, tuple: _ARR, set: _ARR, frozenset: _ARR,
    dict: _OBJ, Any: {}, object: {}, Parameter.empty: {},
}  # fmt: skip
_NAMED: Final[dict[tuple[str, str], dict[str, str]]] = {  # by name: no imports needed
    ("decimal", "Decimal"): _NUM, ("uuid", "UUID"): {"type": "string", "format": "uuid"},
    ("datetime", "datetime"): {"type": "string", "format": "date-time"},
    ("datetime", "date"): {"type": "string", "format": "date"},
    ("datetime", "time"): {"type": "string", "format": "time"},
}  # fmt: skip
_BASES: Final[tuple[tuple[type | tuple[type, ...], dict[str, str]], ...]] = (
    (bool, {"type": "boolean"}), (int, {"type": "integer"}), (float, _NUM), (str, _STR),
    (os.PathLike, _STR), (Mapping, _OBJ), ((list, tuple, set, frozenset), _ARR),
)  # fmt: skip
_ARRAY_ORIGINS: Final = {
    list, set, frozenset, Sequence, typing.MutableSequence, typing.AbstractSet,
    typing.MutableSet, typing.Iterable, typing.Collection,
}  # fmt: skip
_OBJECT_ORIGINS: Final = {dict, Mapping, typing.MutableMapping}
_UNION_ORIGINS: Final = {Union, types.UnionType}
if sys.version_info >= (3, 11):  # typing_extensions re-exports these (and costs 2 ms to import)
    _NOT_REQUIRED: Final = {typing.NotRequired}
    _REQUIRED: Final = {typing.Required}
else:
    import typing_extensions

    _NOT_REQUIRED: Final = {typing_extensions.NotRequired}
    _REQUIRED: Final = {typing_extensions.Required}
_SCHEMA_MARKERS: Final = ("$schema", "$ref", "$defs", "anyOf", "oneOf", "allOf")
# The keywords of JSON Schema draft 2020-12 (and draft 7's few others): a schema key that
# is none of them but close to one is a typo JSON Schema would silently ignore.
_KEYWORDS: Final = frozenset(
    [
        "$schema",
        "$id",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "definitions",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "contains",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
        "dependencies",
        "dependentSchemas",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "nullable",
        "example",  # OpenAPI's, in schemas made from OpenAPI documents
    ]
)
_SUBSCHEMA_MAPS: Final = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMAS: Final = ("items", "additionalProperties", "not", "if", "then", "else", "contains")

Field = tuple[str, Any, bool]
"""``(name, annotation, may_be_absent)``: one property of a generated object schema."""


def _is_typeddict(cls: type) -> bool:
    import typing_extensions  # on first use (2 ms): it also knows its own TypedDicts

    return typing_extensions.is_typeddict(cls)


def looks_like_json_schema(spec: Mapping[str, Any]) -> bool:
    """True if ``spec`` is a JSON Schema rather than a ``{param: type}`` mapping."""
    return (
        any(marker in spec for marker in _SCHEMA_MARKERS)
        or isinstance(spec.get("properties"), Mapping)
        or spec.get("type") == "object"
    )


def to_json_schema(spec: Any, what: str = "input_schema") -> dict[str, Any]:
    """Convert a tool's ``input_schema`` (any accepted form but ``None``) to JSON Schema.

    Raises `ToolDefinitionError` for a form it cannot convert; ``what``
    names the argument in its message (``"output_schema"`` for output schemas).
    """
    conv = _Converter()
    if isinstance(spec, Mapping):
        if looks_like_json_schema(spec):
            _check_keywords(spec, what)
            return spec if isinstance(spec, dict) else dict(spec)
        bad = [k for k in spec if not isinstance(k, str)]
        if bad:
            raise ToolDefinitionError(f"{what} keys must be strings, got {bad[0]!r}")
        return conv.finish(
            conv.object(((k, v, False) for k, v in spec.items()), label=f"{what} key")
        )
    if isinstance(spec, type) and (
        hasattr(spec, "model_json_schema") or _is_typeddict(spec) or dataclasses.is_dataclass(spec)
    ):
        return conv.finish(conv.convert(spec)[0])
    raise ToolDefinitionError(
        f"{what} must be a {{name: type}} dict, a JSON Schema dict, a TypedDict, "
        f"a dataclass or a pydantic model class, got {spec!r}"
    )


def _check_keywords(schema: Mapping[str, Any], what: str, where: str = "") -> None:
    """Warn of a misspelt keyword (``"propertes"``, ``"requried"``) in ``schema`` or its
    subschemas: JSON Schema ignores unknown keys, so the tool would take any arguments
    and the model would see no parameters. A warning, not an error: the schema is
    served as written, as other SDKs serve it (a tool that works there keeps working).
    A key close to no keyword is left alone.
    """
    for key, value in schema.items():
        if not isinstance(key, str) or key in _KEYWORDS:
            if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
                for name, sub in value.items():
                    if isinstance(sub, Mapping):
                        _check_keywords(sub, what, f"{where}/{key}/{name}")
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
                for index, sub in enumerate(value):
                    if isinstance(sub, Mapping):
                        _check_keywords(sub, what, f"{where}/{key}/{index}")
            elif key in _SUBSCHEMAS and isinstance(value, Mapping):
                _check_keywords(value, what, f"{where}/{key}")
            continue
        import difflib  # only for a key that is no keyword: rare (1 ms of the usual import)

        near = difflib.get_close_matches(key, _KEYWORDS, n=1, cutoff=0.8)
        if near:
            logger.warning(
                "ccwire: %s%s has %r, which is no JSON Schema keyword (it is ignored): "
                "did you mean %r?",
                what,
                f" at {where}" if where else "",
                key,
                near[0],
            )


def _type_name_hint(name: str) -> str:
    """What to write instead of the unknown type name ``name``."""
    import difflib  # only for a schema that is refused

    near = difflib.get_close_matches(name.lower(), _TYPE_NAMES, n=1, cutoff=0.8)
    if near:
        return f"did you mean {near[0]!r}?"
    names = ", ".join(repr(known) for known in _TYPE_NAMES)
    return f"a type (str, int, float, bool, list, dict, ...) or one of {names}"


def params_schema(params: Sequence[Field], *, additional: bool = False) -> dict[str, Any]:
    """Object schema for function parameters given as ``(name, annotation, has_default)``.

    A parameter is required unless it has a default; ``inspect.Parameter.empty`` as
    annotation accepts anything.  ``additional=False`` forbids unknown arguments.  A class
    with no JSON form raises `ToolDefinitionError` naming the parameter: the handler would
    receive a string where its signature promises that class (the ``{name: type}`` dict
    keeps the reference SDK's fallback to a string).
    """
    conv = _Converter(strict=True)
    schema = conv.object(params, optional_counts=False, label="parameter")
    if not additional:
        schema["additionalProperties"] = False
    return conv.finish(schema)


class _Converter:
    """One conversion run: collects hoisted pydantic ``$defs``, stops recursive types."""

    def __init__(self, *, strict: bool = False) -> None:
        self.defs: dict[str, Any] = {}
        self.active: set[Any] = set()
        self.strict = strict  # an unknown class raises instead of becoming a string

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.defs:
            schema.setdefault("$defs", {}).update(self.defs)
        return schema

    def object(
        self, fields: Iterable[Field], *, optional_counts: bool = True, label: str = ""
    ) -> dict[str, Any]:
        """The object schema of ``fields``; ``label`` (``"parameter"``) prefixes a field's
        conversion error with the field's name."""
        props: dict[str, Any] = {}
        required: list[str] = []
        for name, tp, may_be_absent in fields:
            try:
                props[name], optional = self.convert(tp)
            except ToolDefinitionError as exc:
                if not label:
                    raise
                raise ToolDefinitionError(f"{label} {name!r}: {exc}") from None
            if not may_be_absent and not (optional and optional_counts):
                required.append(name)
        return {"type": "object", "properties": props, "required": required}

    def convert(self, tp: Any) -> tuple[dict[str, Any], bool]:
        """``(schema, is_optional)`` for one annotation (or type name, or property schema)."""
        if isinstance(tp, str):
            if tp not in _TYPE_NAMES:
                raise ToolDefinitionError(f"unknown type name {tp!r}: {_type_name_hint(tp)}")
            return {"type": _TYPE_NAMES[tp]}, False
        if isinstance(tp, Mapping):
            return dict(tp), False  # a ready-made property schema
        try:
            scalar = _SCALARS.get(tp)
        except TypeError:  # unhashable
            scalar = None
        if scalar is not None:
            return dict(scalar), tp is type(None)
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is typing.Annotated:
            schema, optional = self.convert(args[0])
            for extra in tp.__metadata__:
                if isinstance(extra, str):
                    schema["description"] = extra
                elif isinstance(extra, Mapping):
                    schema.update(extra)
            return schema, optional
        if origin in _UNION_ORIGINS:
            subs = [self.convert(a)[0] for a in args if a is not type(None)]
            optional = len(subs) < len(args)
            subs += [{"type": "null"}] if optional else []
            return (subs[0] if len(subs) == 1 else {"anyOf": subs}), optional
        if origin is typing.Literal:
            return _enum_schema(list(args)), None in args
        if origin in _ARRAY_ORIGINS or (origin is tuple and args[-1:] == (Ellipsis,)):
            return ({"type": "array", "items": self.convert(args[0])[0]} if args else _ARR), False
        if origin is tuple:
            items = [self.convert(a)[0] for a in args if a != ()]
            n = len(items)
            return {"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}, False
        if origin in _OBJECT_ORIGINS:
            if len(args) == 2 and args[1] is not Any:
                return {"type": "object", "additionalProperties": self.convert(args[1])[0]}, False
            return dict(_OBJ), False
        if isinstance(tp, type):
            return self._convert_class(tp), False
        raise ToolDefinitionError(f"cannot convert type {tp!r} to JSON Schema")

    def _convert_class(self, cls: type) -> dict[str, Any]:
        if issubclass(cls, enum.Enum):
            return _enum_schema([m.value for m in cls])
        if hasattr(cls, "model_json_schema"):  # pydantic: never imported, just asked
            schema = dict(cls.model_json_schema())
            self.defs.update(schema.pop("$defs", {}))
            return schema
        is_td = _is_typeddict(cls)
        if not is_td and not dataclasses.is_dataclass(cls):
            named = _NAMED.get((cls.__module__, cls.__qualname__))
            if named is not None:
                return dict(named)
            for base, schema in _BASES:
                if issubclass(cls, base):
                    return dict(schema)
            if self.strict:
                raise ToolDefinitionError(
                    f"cannot turn {cls.__qualname__} into JSON Schema: annotate it with str, "
                    "int, float, bool, a list, a dict, a Literal, an Enum, a TypedDict, a "
                    "dataclass or a pydantic model"
                )
            return dict(_STR)  # the reference SDK's fallback for unknown types
        if cls in self.active:
            return dict(_OBJ)  # a recursive type: stop here
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception as exc:
            raise ToolDefinitionError(f"cannot resolve the annotations of {cls!r}: {exc}") from exc
        fields: list[Field] = []
        if is_td:
            for name, hint in hints.items():
                absent = not getattr(cls, "__total__", True)
                if typing.get_origin(hint) in _NOT_REQUIRED | _REQUIRED:
                    absent = typing.get_origin(hint) in _NOT_REQUIRED
                    hint = typing.get_args(hint)[0]
                fields.append((name, hint, absent))
        else:
            missing = dataclasses.MISSING
            for f in dataclasses.fields(cls):  # type: ignore[arg-type]
                if f.init:
                    absent = f.default is not missing or f.default_factory is not missing
                    fields.append((f.name, hints.get(f.name, Any), absent))
        self.active.add(cls)
        try:
            return self.object(fields)
        finally:
            self.active.discard(cls)


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = {json_type_name(v) for v in values}
    return {"type": kinds.pop(), "enum": values} if len(kinds) == 1 else {"enum": values}
