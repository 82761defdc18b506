"""The hand-written validator ccwire used before jsonschema-rs, kept for bench/schema_bench.py.

(Formerly ``ccwire._mcp.validator``, unchanged below this paragraph.)

The compiled validator: a JSON Schema turned into closures once, run per call.

`compile_validator()` walks a schema once and returns a `CompiledValidator`
whose `validate()` does no schema work at all: it never
raises, and returns the (possibly decoded) value and ``None``, or the original value
and a `ValidationFailure` naming the offending field and what was expected.

Supported keywords: ``type`` (JSON-encoded objects/arrays in a string are decoded when
the schema wants an object or array), ``properties``, ``required``,
``additionalProperties``, ``items``/``prefixItems``/``additionalItems``, ``enum``,
``const``, numeric and length bounds, ``pattern``, ``allOf``/``anyOf``/``oneOf`` and
local ``$ref``.  Unknown keywords, and malformed values of known ones, are ignored.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = [
    "CompiledValidator",
    "ValidationFailure",
    "compile_validator",
    "json_type_name",
]

_JSON_TYPES: Final = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    ((list, tuple), "array"), (Mapping, "object"), (type(None), "null"),
)  # fmt: skip


def json_type_name(value: Any) -> str:
    """The JSON type of ``value`` as named in messages (``integer`` for ints)."""
    for cls, name in _JSON_TYPES:
        if isinstance(value, cls):
            return name
    return type(value).__name__


@dataclasses.dataclass(frozen=True)
class ValidationFailure:
    """Why a value does not match its schema.

    ``path`` leads from the root to the offending value (keys and list indexes),
    ``message`` says what is wrong with it, e.g. ``"must be number, got string"``.
    """

    path: tuple[str | int, ...]
    message: str

    def describe(self, root: str = "arguments") -> str:
        """Human-readable text: ``'a.b[2]' must be number, got string``."""
        if not self.path:
            return f"{root} {self.message}"
        text = ""
        for part in self.path:
            if isinstance(part, int) and not isinstance(part, bool):
                text += f"[{part}]"
            else:
                text += f".{part}" if text else str(part)
        return f"'{text}' {self.message}"

    def __str__(self) -> str:
        return self.describe()


Check = Callable[[Any], Any]
"""A compiled check: returns the value (possibly decoded) or raises `_Invalid`."""


class _Invalid(Exception):
    def __init__(self, message: str, key: str | int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str | int] = [] if key is None else [key]


class CompiledValidator:
    """A schema compiled to closures; call `validate()` as often as you like."""

    __slots__ = ("_check", "schema")

    def __init__(self, schema: Any, check: Check) -> None:
        self.schema = schema
        self._check = check

    def validate(self, value: Any) -> tuple[Any, ValidationFailure | None]:
        """``(value, None)`` if valid (JSON-encoded objects/arrays decoded), else a failure."""
        try:
            return self._check(value), None
        except _Invalid as exc:
            return value, ValidationFailure(tuple(reversed(exc.path)), exc.message)
        except RecursionError:
            return value, ValidationFailure((), "is nested too deeply")
        except Exception as exc:
            return value, ValidationFailure((), f"could not be validated ({type(exc).__name__})")


def compile_validator(schema: Any) -> CompiledValidator:
    """Compile ``schema`` once.  Unknown keywords and malformed keyword values are ignored."""
    return CompiledValidator(schema, _Compiler(schema).compile(schema))


def _accept(value: Any) -> Any:
    return value


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPE_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": _is_num,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, (list, tuple)),
    "object": lambda v: type(v) is dict or isinstance(v, Mapping),
}


_COMPARE: Final[dict[str, Callable[[Any, Any], bool]]] = {
    ">=": lambda v, b: v >= b, ">": lambda v, b: v > b, "<=": lambda v, b: v <= b,
    "<": lambda v, b: v < b,
}  # fmt: skip


_EXACT_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "null": (type(None),), "array": (list,), "object": (dict,),
}  # fmt: skip


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_num(a) and _is_num(b):
        return bool(a == b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _chain(checks: list[Check]) -> Check:
    if len(checks) <= 1:
        return checks[0] if checks else _accept
    if len(checks) == 2:
        first, second = checks
        return lambda v: second(first(v))

    def chain(v: Any) -> Any:
        for c in checks:
            v = c(v)
        return v

    return chain


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, node: Any) -> Check:
        if node is False:
            return _never
        if not isinstance(node, Mapping):
            return _accept
        type_check = self._type(node)
        only_object = _declared_types(node) == ("object",)
        object_check = self._object(node, type_check if only_object else None)
        if object_check is not None and only_object:
            type_check = None  # fused into the object check
        parts = [type_check, object_check, self._array(node), self._enum(node), self._bounds(node),
                 self._pattern(node), self._combinators(node), self._ref(node)]  # fmt: skip
        return _chain([c for c in parts if c is not None])

    def _type(self, node: Mapping[str, Any]) -> Check | None:
        names = _declared_types(node)
        if not names:
            return None
        tests = [_TYPE_CHECKS[n] for n in names]
        exact = frozenset(t for n in names for t in _EXACT_TYPES[n])
        expected = " or ".join(names)
        decode = ("object" in names or "array" in names) and "string" not in names

        def check_type(v: Any) -> Any:
            if type(v) in exact:
                return v
            for test in tests:
                if test(v):
                    return v
            if decode and isinstance(v, str):  # a JSON-encoded object/array: decode it
                try:
                    decoded = json.loads(v)
                except (ValueError, RecursionError):
                    decoded = None
                if isinstance(decoded, (dict, list)) and any(t(decoded) for t in tests):
                    return decoded
            raise _Invalid(f"must be {expected}, got {json_type_name(v)}")

        return check_type

    def _object(self, node: Mapping[str, Any], not_a_mapping: Check | None) -> Check | None:
        raw = node.get("properties")
        raw = raw if isinstance(raw, Mapping) else {}
        props = [
            (k, c) for k, c in ((k, self.compile(s)) for k, s in raw.items()) if c is not _accept
        ]
        req = node.get("required")
        required = tuple(r for r in req if isinstance(r, str)) if isinstance(req, list) else ()
        extra = node.get("additionalProperties", True)
        extra_check: Check | None = None
        if isinstance(extra, (Mapping, bool)) and "patternProperties" not in node:
            extra_check = None if extra is True else self.compile(extra)
            extra_check = None if extra_check is _accept else extra_check
        if not props and not required and extra_check is None:
            return None
        known = frozenset(raw)

        def check_object(v: Any) -> Any:
            if type(v) is not dict and not isinstance(v, Mapping):
                if not_a_mapping is None:
                    return v
                v = not_a_mapping(v)  # raises, or decodes a JSON-encoded object
            for key in required:
                if key not in v:
                    raise _Invalid("is required", key)
            out: Any = v
            items = props if extra_check is None else [
                *props, *((k, extra_check) for k in v if k not in known)
            ]  # fmt: skip
            for key, sub in items:
                if key in v:
                    item = v[key]
                    try:
                        new = sub(item)
                    except _Invalid as exc:
                        if sub is _never:
                            exc.message = "is not an allowed property"
                        exc.path.append(key)
                        raise
                    if new is not item:
                        out = dict(v) if out is v else out
                        out[key] = new
            return out

        return check_object

    def _array(self, node: Mapping[str, Any]) -> Check | None:
        items, prefix_raw = node.get("items"), node.get("prefixItems")
        rest_raw: Any = items
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix_raw, rest_raw = items, node.get("additionalItems")
        prefix = [self.compile(s) for s in prefix_raw] if isinstance(prefix_raw, list) else []
        rest = self.compile(rest_raw) if isinstance(rest_raw, (Mapping, bool)) else _accept
        if not prefix and rest is _accept:
            return None
        n_prefix = len(prefix)

        def check_array(v: Any) -> Any:
            if not isinstance(v, (list, tuple)):
                return v
            out: Any = v
            for i, item in enumerate(v):
                try:
                    new = (prefix[i] if i < n_prefix else rest)(item)
                except _Invalid as exc:
                    exc.path.append(i)
                    raise
                if new is not item:
                    out = list(v) if out is v else out
                    out[i] = new
            return out

        return check_array

    def _enum(self, node: Mapping[str, Any]) -> Check | None:
        if "const" in node:
            values, shown = [node["const"]], _show(node["const"])
        elif isinstance(node.get("enum"), list):
            values = node["enum"]
            shown = "one of " + ", ".join(_show(x) for x in values[:20])
        else:
            return None
        strings = frozenset(x for x in values if isinstance(x, str))
        others = [x for x in values if not isinstance(x, str)]

        def check_enum(v: Any) -> Any:
            if v in strings if isinstance(v, str) else any(_json_equal(v, x) for x in others):
                return v
            raise _Invalid(f"must be {shown}, got {_show(v)}")

        return check_enum

    def _bounds(self, node: Mapping[str, Any]) -> Check | None:
        rules: list[tuple[Callable[[Any], bool], bool, Any, str, str]] = []
        for kw, applies, measure, op, text in _BOUNDS:
            bound = node.get(kw)
            if kw in ("minimum", "maximum") and node.get("exclusiveM" + kw[1:]) is True:
                op, text = op[0], f"must be {op[0]} {{b}}, got {{v}}"  # draft 4 boolean form
            if _is_num(bound):
                rules.append((applies, measure, bound, op, text))
        if not rules:
            return None

        def check_bounds(v: Any) -> Any:
            for applies, measure, bound, op, text in rules:
                if applies(v):
                    n = len(v) if measure else v
                    if not _COMPARE[op](n, bound):
                        raise _Invalid(text.format(b=bound, v=_show(v), n=n))
            return v

        return check_bounds

    def _pattern(self, node: Mapping[str, Any]) -> Check | None:
        try:
            pattern = re.compile(node["pattern"]) if isinstance(node.get("pattern"), str) else None
        except (re.error, OverflowError, RecursionError):
            # ECMA-only syntax, or beyond what Python's re can compile: ignore the keyword
            # rather than refuse the tool
            pattern = None
        if pattern is None:
            return None
        search = pattern.search

        def check_pattern(v: Any) -> Any:
            if isinstance(v, str) and search(v) is None:
                raise _Invalid(f"must match pattern {pattern.pattern!r}")
            return v

        return check_pattern

    def _combinators(self, node: Mapping[str, Any]) -> Check | None:
        all_of = node.get("allOf")
        checks = [self.compile(s) for s in all_of] if isinstance(all_of, list) else []
        for kw in ("anyOf", "oneOf"):
            branches = node.get(kw)
            if isinstance(branches, list) and branches:
                checks.append(self._alternatives(branches, exactly_one=kw == "oneOf"))
        return _chain(checks) if checks else None

    def _alternatives(self, branches: list[Any], *, exactly_one: bool) -> Check:
        subs = [self.compile(b) for b in branches]
        kinds = [_declared_types(b) for b in branches]
        names = dict.fromkeys(n for k in kinds for n in (k or ()))
        expected = " or ".join(names) if all(kinds) else None

        def check_alternatives(v: Any) -> Any:
            errors: list[_Invalid] = []
            matched: list[Any] = []
            for sub in subs:
                try:
                    matched.append(sub(v))
                except _Invalid as exc:
                    errors.append(exc)
                    continue
                if not exactly_one:
                    return matched[0]
            if len(matched) == 1:
                return matched[0]
            if matched:
                raise _Invalid(f"must match exactly one schema, but matches {len(matched)}")
            typed = [
                e
                for e, k in zip(errors, kinds, strict=True)
                if k and any(_TYPE_CHECKS[t](v) for t in k)
            ]
            if len(typed) == 1:  # only one branch has the right type: its error is the useful one
                raise typed[0]
            if expected:
                raise _Invalid(f"must be {expected}, got {json_type_name(v)}")
            raise _Invalid("does not match any of the allowed schemas")

        return check_alternatives

    def _ref(self, node: Mapping[str, Any]) -> Check | None:
        ref = node.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        if ref not in self.refs:
            target: Any = self.root
            for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
                key = part.replace("~1", "/").replace("~0", "~")
                target = target.get(key) if isinstance(target, Mapping) else None
            if target is None:
                return None
            holder: list[Check] = [_accept]
            self.refs[ref] = lambda v: holder[0](v)  # compiled lazily: refs may be recursive
            holder[0] = self.compile(target)
        return self.refs[ref]


def _never(v: Any) -> Any:
    raise _Invalid("is not allowed")


def _is_array(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


_BOUNDS: Final = (
    ("minimum", _is_num, False, ">=", "must be >= {b}, got {v}"),
    ("maximum", _is_num, False, "<=", "must be <= {b}, got {v}"),
    ("exclusiveMinimum", _is_num, False, ">", "must be > {b}, got {v}"),
    ("exclusiveMaximum", _is_num, False, "<", "must be < {b}, got {v}"),
    ("minLength", _is_str, True, ">=", "must be at least {b} characters long, got {n}"),
    ("maxLength", _is_str, True, "<=", "must be at most {b} characters long, got {n}"),
    ("minItems", _is_array, True, ">=", "must have at least {b} items, got {n}"),
    ("maxItems", _is_array, True, "<=", "must have at most {b} items, got {n}"),
)


def _declared_types(node: Any) -> tuple[str, ...] | None:
    declared = node.get("type") if isinstance(node, Mapping) else None
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list):
        return None
    known = tuple(n for n in names if isinstance(n, str) and n in _TYPE_CHECKS)
    return known or None
