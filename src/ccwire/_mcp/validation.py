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
from collections.abc import Callable, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from .._core.errors import ToolDefinitionError
from .schema_errors import (
    Path,
    Problem,
    ValidationFailure,
    all_errors,
    describe,
    json_type_name,
    locate,
)

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

_COLLECTED: Final = 20  # errors read from the validator per round
_ROUNDS: Final = 16  # decoding rounds (nested JSON-encoded strings)
_SCALARS: Final = frozenset({str, int, bool, type(None)})


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
            problems.update(dict.fromkeys(describe(error, current)))
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


def _decode(value: Any, errors: Sequence[jsonschema_rs.ValidationError]) -> Any:
    """``value`` with each JSON-encoded string that failed ``type`` for want of an
    object or array decoded (a copy; ``value`` is untouched), or ``None`` if none was."""
    wanted: dict[Path, set[str]] = {}
    for error in all_errors(errors):
        if error.kind.name == "type":
            types = set(error.kind.types)
            if "string" not in types and types & {"object", "array"}:
                path, found, text = locate(value, error)
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
