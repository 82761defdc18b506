"""The compiled validator: types, keywords, error paths, JSON decoding, robustness."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from ccwire._mcp.validator import ValidationFailure, compile_validator

S, INT, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def check(schema: Any, value: Any) -> tuple[Any, str | None]:
    out, failure = compile_validator(schema).validate(value)
    return out, None if failure is None else str(failure)


TYPE_CASES: list[tuple[Any, Any, str | None]] = [
    ({"type": "string"}, "x", None),
    ({"type": "string"}, 1, "arguments must be string, got integer"),
    ({"type": "integer"}, 3, None),
    ({"type": "integer"}, 3.0, None),
    ({"type": "integer"}, 3.5, "arguments must be integer, got number"),
    ({"type": "integer"}, True, "arguments must be integer, got boolean"),
    ({"type": "number"}, 3, None),
    ({"type": "number"}, False, "arguments must be number, got boolean"),
    ({"type": "boolean"}, 0, "arguments must be boolean, got integer"),
    ({"type": "null"}, None, None),
    ({"type": "array"}, {}, "arguments must be array, got object"),
    ({"type": "object"}, [], "arguments must be object, got array"),
    ({"type": ["string", "null"]}, None, None),
    ({"type": ["string", "null"]}, 2, "arguments must be string or null, got integer"),
    ({"type": "no-such-type"}, 2, None),
]


@pytest.mark.parametrize(("schema", "value", "error"), TYPE_CASES)
def test_type_keyword(schema: Any, value: Any, error: str | None) -> None:
    assert check(schema, value)[1] == error


ADD = {"type": "object", "properties": {"a": N, "b": N}, "required": ["a", "b"]}

KEYWORD_CASES: list[tuple[str, Any, Any, str | None]] = [
    ("property type", ADD, {"a": 1, "b": "2"}, "'b' must be number, got string"),
    ("required", ADD, {"a": 1}, "'b' is required"),
    ("extra allowed", ADD, {"a": 1, "b": 2, "c": 3}, None),
    (
        "additionalProperties false",
        {**ADD, "additionalProperties": False},
        {"a": 1, "b": 2, "c": 3},
        "'c' is not an allowed property",
    ),
    (
        "additionalProperties schema",
        {"type": "object", "additionalProperties": INT},
        {"x": 1, "y": "no"},
        "'y' must be integer, got string",
    ),
    (
        "nested path",
        {
            "type": "object",
            "properties": {
                "user": {"type": "object", "properties": {"tags": {"type": "array", "items": S}}}
            },
        },
        {"user": {"tags": ["a", 7]}},
        "'user.tags[1]' must be string, got integer",
    ),
    (
        "nested required",
        {"type": "object", "properties": {"user": {"type": "object", "required": ["id"]}}},
        {"user": {}},
        "'user.id' is required",
    ),
    ("items", {"type": "array", "items": INT}, [1, 2, "3"], "'[2]' must be integer, got string"),
    (
        "prefixItems",
        {"type": "array", "prefixItems": [INT, S]},
        [1, 2],
        "'[1]' must be string, got integer",
    ),
    (
        "draft4 tuple items",
        {"type": "array", "items": [INT], "additionalItems": False},
        [1, 2],
        "'[1]' is not allowed",
    ),
    ("enum ok", {"enum": ["bug", "task"]}, "bug", None),
    ("enum", {"enum": ["bug", "task"]}, "x", 'arguments must be one of "bug", "task", got "x"'),
    ("enum is type-strict", {"enum": [1, 2]}, True, "arguments must be one of 1, 2, got true"),
    ("enum mixed", {"enum": [1, None, [1, 2]]}, [1, 2], None),
    ("const", {"const": 3}, 3.0, None),
    ("const mismatch", {"const": "a"}, "b", 'arguments must be "a", got "b"'),
    ("anyOf Optional ok", {"anyOf": [INT, {"type": "null"}]}, None, None),
    (
        "anyOf Optional bad",
        {"anyOf": [INT, {"type": "null"}]},
        "x",
        "arguments must be integer or null, got string",
    ),
    (
        "anyOf deeper error",
        {"anyOf": [{"type": "object", "required": ["k"]}, {"type": "null"}]},
        {},
        "'k' is required",
    ),
    ("oneOf", {"oneOf": [INT, N]}, 2, "arguments must match exactly one schema, but matches 2"),
    ("oneOf ok", {"oneOf": [INT, S]}, 2, None),
    ("allOf", {"allOf": [INT, {"minimum": 5}]}, 3, "arguments must be >= 5, got 3"),
    ("minimum", {"minimum": 0}, -1, "arguments must be >= 0, got -1"),
    ("maximum", {"maximum": 10}, 10, None),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, 0, "arguments must be > 0, got 0"),
    ("exclusiveMaximum", {"exclusiveMaximum": 1.5}, 1.5, "arguments must be < 1.5, got 1.5"),
    (
        "draft4 exclusive",
        {"maximum": 5, "exclusiveMaximum": True},
        5,
        "arguments must be < 5, got 5",
    ),
    ("bounds ignore strings", {"minimum": 3}, "abc", None),
    ("minLength", {"minLength": 2}, "a", "arguments must be at least 2 characters long, got 1"),
    ("maxLength", {"maxLength": 2}, "abc", "arguments must be at most 2 characters long, got 3"),
    ("pattern", {"pattern": "^[a-z]+$"}, "abc1", "arguments must match pattern '^[a-z]+$'"),
    ("ECMA-only pattern is ignored", {"pattern": "\\p{L}+"}, "abc", None),
    ("minItems", {"minItems": 1}, [], "arguments must have at least 1 items, got 0"),
    ("maxItems", {"maxItems": 1}, [1, 2], "arguments must have at most 1 items, got 2"),
    ("false schema", False, 1, "arguments is not allowed"),
    ("unknown keywords ignored", {"frobnicate": 3, "format": "email"}, "x", None),
    (
        "$ref",
        {
            "$defs": {"pos": {"type": "integer", "minimum": 1}},
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/pos"}},
        },
        {"n": 0},
        "'n' must be >= 1, got 0",
    ),
    (
        "recursive $ref",
        {"type": "object", "properties": {"v": INT, "next": {"$ref": "#"}}},
        {"v": 1, "next": {"v": 2, "next": {"v": "x"}}},
        "'next.next.v' must be integer, got string",
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "error"), [c[1:] for c in KEYWORD_CASES], ids=[c[0] for c in KEYWORD_CASES]
)
def test_keywords(schema: Any, value: Any, error: str | None) -> None:
    assert check(schema, value)[1] == error


def test_valid_value_is_returned_as_is() -> None:
    value = {"a": 1, "b": 2.5}
    out, failure = compile_validator(ADD).validate(value)
    assert failure is None
    assert out is value


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (
            {"type": "object", "properties": {"xs": {"type": "array", "items": INT}}},
            {"xs": "[1, 2]"},
            {"xs": [1, 2]},
        ),
        (
            {"type": "object", "properties": {"o": {"type": "object", "required": ["k"]}}},
            {"o": '{"k": 1}'},
            {"o": {"k": 1}},
        ),
        ({"type": "object", "properties": {"a": N}}, '{"a": 2}', {"a": 2}),
        ({"type": "array", "items": {"type": "array"}}, ["[1]", [2]], [[1], [2]]),
    ],
)
def test_json_encoded_objects_and_arrays_are_decoded(
    schema: Any, value: Any, expected: Any
) -> None:
    original = repr(value)
    out, failure = compile_validator(schema).validate(value)
    assert failure is None
    assert out == expected
    assert repr(value) == original  # the input was not mutated


@pytest.mark.parametrize(
    ("schema", "value", "error"),
    [
        (
            {"type": "object", "properties": {"xs": {"type": "array", "items": INT}}},
            {"xs": '[1, "a"]'},
            "'xs[1]' must be integer, got string",
        ),
        (
            {"type": "object", "properties": {"xs": {"type": "array"}}},
            {"xs": "[1,"},
            "'xs' must be array, got string",
        ),
        (
            {"type": "object", "properties": {"xs": {"type": "array"}}},
            {"xs": '{"a": 1}'},
            "'xs' must be array, got string",
        ),
        ({"type": ["string", "array"]}, "[1]", None),
    ],
)
def test_json_decoding_only_when_it_yields_the_right_type(
    schema: Any, value: Any, error: str | None
) -> None:
    assert check(schema, value)[1] == error


def test_failure_describe_paths() -> None:
    failure = ValidationFailure(("a", 0, "b"), "must be number, got string")
    assert failure.describe() == "'a[0].b' must be number, got string"
    assert ValidationFailure((), "is bad").describe("output") == "output is bad"


class _Weird:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparisons")

    __hash__ = None  # type: ignore[assignment]


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n):
        value = [value]
    return value


JUNK: list[Any] = [
    None,
    0,
    -1,
    2**200,
    1e308,
    float("nan"),
    float("inf"),
    "",
    "[",
    "{" * 5000,
    "[" * 100000,
    b"bytes",
    object(),
    _Weird(),
    {1: 2},
    {(1, 2): 3},
    {"a": _Weird()},
    [_Weird()],
    set(),
    _deep(50000),
    {"xs": "[" * 100000},
    {"a": {"b": {"c": float("nan")}}},
]
FUZZ_SCHEMAS: list[Any] = [
    ADD,
    {**ADD, "additionalProperties": False},
    {"enum": [1, "a", None, [1]]},
    {"const": {"a": [1]}},
    {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}},
    {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^a"}]},
    {"oneOf": [{"type": "object"}, {"type": "array", "items": {"$ref": "#"}}]},
    {"type": "array", "items": {"$ref": "#"}},
    {"$ref": "#/$defs/missing"},
    {"items": "junk", "minimum": "x"},
]


@pytest.mark.parametrize("schema", FUZZ_SCHEMAS)
@pytest.mark.parametrize("value", JUNK, ids=range(len(JUNK)))
def test_validator_never_raises_on_junk(schema: Any, value: Any) -> None:
    result = compile_validator(schema).validate(value)
    assert len(result) == 2
    failure = result[1]
    assert failure is None or isinstance(failure, ValidationFailure)
    assert failure is None or failure.describe().startswith(("arguments ", "'"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, schema_index=st.integers(0, len(FUZZ_SCHEMAS) - 1))
def test_validator_fuzz(value: Any, schema_index: int) -> None:
    _, failure = compile_validator(FUZZ_SCHEMAS[schema_index]).validate(value)
    assert failure is None or isinstance(failure.describe(), str)
