"""What a failed validation says: jsonschema-rs errors worded for the model.

Each error becomes one `Problem` or more: the instance path of the offending value,
what is wrong with it (``must be number, got string``) and the failing rule (the JSON
Schema keyword).  jsonschema-rs's instance paths leave out properties named ``""``
and give properties named like a number as an ``int``, so `locate()` reads them against
the value itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

__all__ = [
    "Path",
    "Problem",
    "ValidationFailure",
    "all_errors",
    "describe",
    "json_type_name",
    "locate",
]

Path = tuple["str | int", ...]

_NAME: Final = r"[A-Za-z_][A-Za-z0-9_\-]*"  # compiled on first use (re's cache)
_SHOWN: Final = 3  # problems spelled out in one message
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


def json_type_name(value: Any) -> str:
    """The JSON type of ``value`` as named in messages (``integer`` for ints)."""
    for cls, name in _JSON_TYPES:
        if isinstance(value, cls):
            return name
    return type(value).__name__


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
        elif re.fullmatch(_NAME, str(part)):
            text += f".{part}" if text else str(part)
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return f"'{text}'"


def all_errors(errors: Sequence[Any]) -> Iterator[Any]:
    """``errors`` and, depth first, the errors of every ``anyOf``/``oneOf`` branch."""
    for error in errors:
        yield error
        for branch in getattr(error.kind, "context", None) or ():
            yield from all_errors(branch)


def locate(root: Any, error: Any) -> tuple[Path, bool, Any]:
    """``(path, found, value)`` of the instance an error is about.

    jsonschema-rs's ``instance_path`` leaves out properties named ``""`` and gives
    properties named like a number (``"0"``, ``"01"``) as an ``int``, so it is read
    against ``root``: of the paths it may stand for, the one whose value is the
    error's instance.
    """
    parts = list(error.instance_path)
    readings = list(islice(_readings(root, parts, ()), 64))
    if not readings:  # (not expected): jsonschema-rs's own copy of the instance
        try:
            return tuple(parts), True, error.instance
        except ValueError:
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
    elif isinstance(value, (list, tuple)) and parts[0] in range(len(value)):
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


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(error: Any, root: Any) -> list[Problem]:
    """The problems one jsonschema-rs error stands for (``additionalProperties`` may
    name several properties), worded for the model."""
    kind, rule = error.kind, str(error.kind.name)
    path, found, instance = locate(root, error)
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
        return [
            Problem((*path, i), "is not allowed", rule) for i in range(kind.limit, len(instance))
        ]
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
        return describe(right[0][0], root)
    if branches and all(wrong_type):
        names = dict.fromkeys(t for wrong in wrong_type for t in wrong[0].kind.types)
        expected = " or ".join(names)
        return [Problem(path, f"must be {expected}, got {json_type_name(instance)}", rule)]
    return [Problem(path, "does not match any of the allowed schemas", rule)]
