"""Tool argument validation: a JSON Schema compiled once by jsonschema-rs, run per call.

`compile_validator()` compiles a schema when a tool is defined (draft 2020-12 unless
its ``$schema`` names another draft) and raises `ToolDefinitionError` for a schema
that is not valid JSON Schema or whose ``$ref`` cannot be resolved; remote references
are never fetched from the network.  ``jsonschema_rs`` is imported there, on first use,
so that ``import ccwire`` does not load it.

`CompiledValidator.validate()` never raises.  It returns the value and ``None`` when
the value is valid, or the value and a `ValidationFailure` naming each offending
place (its instance path), what is wrong and the failing rule (the JSON Schema
keyword).  Two things are added to JSON Schema:

* a string holding a JSON object or array, where the schema wants an object or an array
  (and not a string), is decoded: models sometimes send ``"[1, 2]"`` for ``[1, 2]``.
  Only values that fail their schema because of their type are decoded, so a valid value
  is never changed; the decoded value is validated like any other;
* the value must be JSON: NaN and infinities, non-string keys and other Python objects
  are refused, and so is nesting deeper than `MAX_DEPTH` levels.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from .._core.errors import ToolDefinitionError

if TYPE_CHECKING:
    import jsonschema_rs

__all__ = [
    "MAX_DEPTH",
    "CompiledValidator",
    "Problem",
    "Retriever",
    "ValidationFailure",
    "compile_validator",
    "json_type_name",
]

MAX_DEPTH: Final = 200
"""Arguments nested deeper than this many objects/arrays are refused (jsonschema-rs
reports no error for an instance deeper than about 250 levels)."""

Retriever = Callable[[str], Any]
"""Returns the JSON document at a URI (a remote ``$ref``), or raises."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_SHOWN: Final = 3  # problems spelled out in one message
_COLLECTED: Final = 20  # errors read from the validator per round
_ROUNDS: Final = 16  # decoding rounds (nested JSON-encoded strings)
_SCALARS: Final = frozenset({str, int, bool, type(None)})
_JSON_TYPES: Final = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    ((list, tuple), "array"), (Mapping, "object"), (type(None), "null"),
)  # fmt: skip
_BOUNDS: Final = {
    "Minimum": ">=", "Maximum": "<=", "ExclusiveMinimum": ">", "ExclusiveMaximum": "<",
}  # fmt: skip
_SIZES: Final = {
    "MinLength": "must be at least {} characters long",
    "MaxLength": "must be at most {} characters long",
    "MinItems": "must have at least {} items",
    "MaxItems": "must have at most {} items",
    "MinProperties": "must have at least {} properties",
    "MaxProperties": "must have at most {} properties",
}

Path = tuple["str | int", ...]


def json_type_name(value: Any) -> str:
    """The JSON type of ``value`` as named in messages (``integer`` for ints)."""
    for cls, name in _JSON_TYPES:
        if isinstance(value, cls):
            return name
    return type(value).__name__


@dataclasses.dataclass(frozen=True)
class Problem:
    """One reason a value does not match its schema.

    ``path`` leads from the root to the offending value (keys and list indexes),
    ``message`` says what is wrong with it (``"must be number, got string"``) and
    ``rule`` is the JSON Schema keyword that failed (``"type"``).
    """

    path: Path
    message: str
    rule: str

    def describe(self, root: str = "arguments") -> str:
        """``'a.b[2]' must be number, got string (rule: type)``."""
        rule = f" (rule: {self.rule})" if self.rule else ""
        return f"{_where(self.path, root)} {self.message}{rule}"


@dataclasses.dataclass(frozen=True)
class ValidationFailure:
    """Why a value does not match its schema: one `Problem` or more, first found first."""

    problems: tuple[Problem, ...]

    @property
    def path(self) -> Path:
        """The instance path of the first problem."""
        return self.problems[0].path

    def describe(self, root: str = "arguments") -> str:
        """The first few problems, ``; ``-separated (``root`` names the top value)."""
        text = "; ".join(p.describe(root) for p in self.problems[:_SHOWN])
        more = len(self.problems) - _SHOWN
        return text + (f"; and {more} more" if more > 0 else "")

    def __str__(self) -> str:
        return self.describe()


def _where(path: Path, root: str) -> str:
    """``'a.b[2]'``; a key that is not a plain name in brackets: ``'a["x.y"]["0"]'``."""
    if not path:
        return root
    text = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
        elif _NAME.fullmatch(str(part)):
            text += f".{part}" if text else str(part)
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return f"'{text}'"


def _failure(path: Path, message: str, rule: str) -> ValidationFailure:
    return ValidationFailure((Problem(path, message, rule),))


class CompiledValidator:
    """A compiled schema; call `validate()` as often as you like (it never raises)."""

    __slots__ = ("_errors", "_is_valid", "schema")

    def __init__(self, schema: Any, compiled: jsonschema_rs.Validator) -> None:
        self.schema = schema
        self._is_valid = compiled.is_valid
        self._errors = compiled.iter_errors

    def validate(self, value: Any) -> tuple[Any, ValidationFailure | None]:
        """``(value, None)`` if valid (JSON-encoded objects/arrays decoded where the
        schema wants them), else ``(value, failure)``."""
        problem = _not_json(value, 0)
        if problem is not None:
            return value, ValidationFailure((problem,))
        try:
            if self._is_valid(value):
                return value, None
            return self._explain(value)
        except Exception as exc:  # a value jsonschema-rs cannot take
            return value, _failure((), f"could not be validated ({type(exc).__name__}: {exc})", "")

    def _explain(self, value: Any) -> tuple[Any, ValidationFailure]:
        current, errors = value, list(islice(self._errors(value), _COLLECTED))
        for _ in range(_ROUNDS):
            decoded = _decode(current, errors)
            if decoded is None:
                break
            current = decoded
            if self._is_valid(current):
                return current, None  # type: ignore[return-value]  # (valid once decoded)
            errors = list(islice(self._errors(current), _COLLECTED))
        problems: dict[Problem, None] = {}
        for error in errors:
            problems.update(dict.fromkeys(_describe(error, current)))
        if not problems:  # (never expected: an invalid value has errors)
            return value, _failure((), "does not match the schema", "")
        return value, ValidationFailure(tuple(problems))


def compile_validator(
    schema: Any, *, validate_formats: bool = True, retriever: Retriever | None = None
) -> CompiledValidator:
    """Compile ``schema`` once, or raise `ToolDefinitionError` if it is not valid.

    ``validate_formats`` makes ``format`` an assertion (``"format": "email"`` refuses
    ``"x"``); without it ``format`` is an annotation.  Remote ``$ref`` targets come from
    ``retriever`` only (without one, a remote reference is an error).
    """
    import jsonschema_rs

    options: dict[str, Any] = {"validate_formats": validate_formats}
    if retriever is None:
        options["offline"] = True
    else:
        options["retriever"] = retriever
    try:
        compiled = jsonschema_rs.validator_for(schema, **options)
    except jsonschema_rs.ValidationError as exc:
        where = "/".join(str(p) for p in exc.instance_path)
        at = f" (at {where})" if where else ""
        raise ToolDefinitionError(f"is not a valid JSON Schema: {exc.message}{at}") from None
    except (jsonschema_rs.ReferencingError, ValueError, TypeError) as exc:
        raise ToolDefinitionError(f"is not a valid JSON Schema: {exc}") from None
    return CompiledValidator(schema, compiled)


# --------------------------------------------------------------------------- JSON only


def _not_json(value: Any, depth: int) -> Problem | None:
    """The first thing in ``value`` that is not JSON (NaN, a non-string key, a Python
    object, nesting beyond `MAX_DEPTH`), or ``None``."""
    kind = type(value)
    if kind in _SCALARS:
        return None
    if kind is float or isinstance(value, float):
        if math.isfinite(value):
            return None
        return Problem((), "must be a finite number (NaN and Infinity are not JSON)", "type")
    items: Any
    is_dict = kind is dict or isinstance(value, dict)
    if is_dict:
        items = value.items()
    elif kind is list or isinstance(value, (list, tuple)):
        items = enumerate(value)
    elif isinstance(value, (str, int)):  # an enum member, a bool or str subclass
        return None
    else:
        return Problem((), f"is not a JSON value ({kind.__name__})", "type")
    if depth >= MAX_DEPTH:
        return Problem((), f"is nested more than {MAX_DEPTH} levels deep", "")
    for key, item in items:
        if is_dict and type(key) is not str and not isinstance(key, str):
            return Problem((), f"has a key that is not a string: {key!r}", "")
        if type(item) in _SCALARS:
            continue
        problem = _not_json(item, depth + 1)
        if problem is not None:
            return dataclasses.replace(problem, path=(key, *problem.path))
    return None


# --------------------------------------------------------------------------- decoding


def _all_errors(errors: Sequence[jsonschema_rs.ValidationError]) -> Iterator[Any]:
    """``errors`` and, depth first, the errors of every ``anyOf``/``oneOf`` branch."""
    for error in errors:
        yield error
        for branch in getattr(error.kind, "context", None) or ():
            yield from _all_errors(branch)


def _decode(value: Any, errors: Sequence[jsonschema_rs.ValidationError]) -> Any:
    """``value`` with each JSON-encoded string that failed ``type`` for want of an
    object or array decoded (a copy; ``value`` is untouched), or ``None`` if none was."""
    wanted: dict[Path, set[str]] = {}
    for error in _all_errors(errors):
        if error.kind.name == "type":
            types = set(error.kind.types)
            if "string" not in types and types & {"object", "array"}:
                path, found, text = _locate(value, error)
                if found and isinstance(text, str):
                    wanted.setdefault(path, set()).update(types)
    out, changed = value, False
    for path, types in wanted.items():
        text = _at(out, path)
        try:
            decoded = json.loads(text, parse_constant=_not_a_number)
        except (ValueError, RecursionError):
            continue
        kind = "object" if isinstance(decoded, dict) else "array" if type(decoded) is list else ""
        if kind in types and _not_json(decoded, len(path)) is None:
            out, changed = _replace(out, path, decoded), True
    return out if changed else None


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _locate(root: Any, error: Any) -> tuple[Path, bool, Any]:
    """``(path, found, value)`` of the instance an error is about.

    jsonschema-rs's ``instance_path`` leaves out properties named ``""`` and gives
    properties named like a number (``"0"``, ``"01"``) as an ``int``, so it is read
    against ``root``: of the paths it may stand for, the one whose value is the
    error's instance.
    """
    parts = list(error.instance_path)
    readings = list(islice(_readings(root, parts, ()), 64))
    if not readings:
        return tuple(parts), False, None
    if len(readings) > 1:
        target = error.instance
        for path, value in readings:
            if value == target:
                return path, True, value
    path, value = readings[0]
    return path, True, value


def _readings(value: Any, parts: list[Any], path: Path) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, Mapping):
        if parts:
            head = parts[0]
            keys = _number_keys(value, head) if isinstance(head, int) else [head]
            for key in keys:
                if key in value:
                    yield from _readings(value[key], parts[1:], (*path, key))
        else:
            yield path, value
        if "" in value:  # a property named "" the path left out
            yield from _readings(value[""], parts, (*path, ""))
    elif not parts:
        yield path, value
    elif isinstance(value, (list, tuple)) and isinstance(parts[0], int):
        if 0 <= parts[0] < len(value):
            yield from _readings(value[parts[0]], parts[1:], (*path, parts[0]))


def _number_keys(obj: Mapping[str, Any], n: int) -> Iterator[str]:
    """The keys ``n`` may stand for: ``"7"``, and ``"07"`` or ``"+7"`` if ``obj`` has them."""
    yield str(n)
    for key in obj:
        digits = key[1:] if isinstance(key, str) and key[:1] == "+" else key
        if not isinstance(digits, str) or key == str(n) or len(digits) > 30:
            continue
        if digits.isascii() and digits.isdigit() and int(digits) == n:
            yield key


def _at(value: Any, path: Path) -> Any:
    for part in path:
        value = value[part]
    return value


def _replace(value: Any, path: Path, new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``path`` (only the containers on the path copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, Mapping) else list(value)
    copy[head] = _replace(value[head], rest, new)
    return copy


# --------------------------------------------------------------------------- messages


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: Any, root: Any) -> list[Problem]:
    """The problems one jsonschema-rs error stands for (``additionalProperties`` may
    name several properties), worded for the model."""
    kind, rule = error.kind, str(error.kind.name)
    path, found, instance = _locate(root, error)
    got = _show(instance) if found else "?"
    which = type(kind).__name__
    if which == "Type":
        expected = " or ".join(kind.types)
        return [Problem(path, f"must be {expected}, got {json_type_name(instance)}", rule)]
    if which == "Required":
        return [Problem((*path, kind.property), "is required", rule)]
    if which in ("AdditionalProperties", "UnevaluatedProperties"):
        return [Problem((*path, k), "is not an allowed property", rule) for k in kind.unexpected]
    if which == "UnevaluatedItems":
        return [Problem((*path, i), "is not allowed", rule) for i in kind.unexpected]
    if which == "AdditionalItems" and found:
        return [Problem((*path, i), "is not allowed", rule) for i in range(kind.limit, len(instance))]
    if which in ("AnyOf", "OneOfNotValid"):
        return _alternatives(error, path, instance, root)
    message = _message(which, kind, instance, got, found)
    if message is None:
        text = str(error.message)
        message = "does not match: " + (text if len(text) <= 200 else text[:197] + "...")
    return [Problem(path, message, "false schema" if which == "FalseSchema" else rule)]


def _message(which: str, kind: Any, instance: Any, got: str, found: bool) -> str | None:
    if which in _BOUNDS:
        return f"must be {_BOUNDS[which]} {_show(kind.limit)}, got {got}"
    if which in _SIZES and found:
        return _SIZES[which].format(kind.limit) + f", got {len(instance)}"
    if which == "Enum":
        options = kind.options
        shown = ", ".join(_show(x) for x in options[:20]) + (", ..." if len(options) > 20 else "")
        return f"must be one of {shown}, got {got}"
    if which == "Constant":
        return f"must be {_show(kind.expected_value)}, got {got}"
    if which == "Pattern":
        return f"must match pattern {kind.pattern!r}"
    if which == "Format":
        return f"must be a valid {kind.format!r} string, got {got}"
    if which == "MultipleOf":
        return f"must be a multiple of {_show(kind.multiple_of)}, got {got}"
    if which == "UniqueItems":
        return "must not contain duplicate items"
    if which == "FalseSchema":
        return "is not allowed"
    if which == "Not":
        return "must not match the schema under 'not'"
    if which == "OneOfMultipleValid":
        return "must match exactly one schema of 'oneOf', but matches more than one"
    return None


def _alternatives(error: Any, path: Path, instance: Any, root: Any) -> list[Problem]:
    """An ``anyOf``/``oneOf`` that no branch matched: the one branch of the right type
    says why, else the types the branches want."""
    rule, here = str(error.kind.name), list(error.instance_path)
    branches: list[list[Any]] = list(error.kind.context or ())
    wrong_type = [
        [e for e in branch if e.kind.name == "type" and list(e.instance_path) == here]
        for branch in branches
    ]
    right = [branch for branch, wrong in zip(branches, wrong_type, strict=True) if not wrong]
    if len(right) == 1 and right[0]:
        return _describe(right[0][0], root)
    if branches and all(wrong_type):
        names = dict.fromkeys(t for wrong in wrong_type for t in wrong[0].kind.types)
        expected = " or ".join(names)
        return [Problem(path, f"must be {expected}, got {json_type_name(instance)}", rule)]
    return [Problem(path, "does not match any of the allowed schemas", rule)]
