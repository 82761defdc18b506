"""Tool argument validation, through ``tool(...).call()``: messages, decoding of
JSON-encoded objects/arrays, ``format``, drafts, refused schemas and values."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from ccwire import ToolDefinitionError, limit_output, tool

pytestmark = pytest.mark.anyio

S, INT, N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
ADD = {"type": "object", "properties": {"a": N, "b": N}, "required": ["a", "b"]}
PREFIX = "Input validation error: invalid arguments for tool 't': "


def obj(**props: Any) -> dict[str, Any]:
    """An object schema with these properties (none required)."""
    return {"type": "object", "properties": props}


async def run(schema: Any, arguments: Any, **options: Any) -> tuple[str | None, list[Any]]:
    """``(error text without the prefix, or None; the arguments the handler got)``."""
    seen: list[Any] = []

    def handler(args: Any) -> str:
        seen.append(args)
        return "ok"

    result = await tool("t", "d", schema, **options)(handler).call(arguments)
    if not result.get("isError"):
        assert result == {"content": [{"type": "text", "text": "ok"}]}
        return None, seen
    assert seen == []  # the handler never runs on invalid arguments
    text = result["content"][0]["text"]
    assert text.startswith(PREFIX)
    return text[len(PREFIX) :], seen


CASES: list[tuple[str, Any, Any, str | None]] = [
    ("valid", ADD, {"a": 1, "b": 2.5}, None),
    ("type", ADD, {"a": 1, "b": "2"}, "'b' must be number, got string (rule: type)"),
    ("required", ADD, {"a": 1}, "'b' is required (rule: required)"),
    (
        "additionalProperties",
        {**ADD, "additionalProperties": False},
        {"a": 1, "b": 2, "c": 3},
        "'c' is not an allowed property (rule: additionalProperties)",
    ),
    (
        "nested path",
        obj(user=obj(tags={"type": "array", "items": S})),
        {"user": {"tags": ["a", 7]}},
        "'user.tags[1]' must be string, got integer (rule: type)",
    ),
    ("integer-valued float", obj(n=INT), {"n": 3.0}, None),
    (
        "boolean is no integer",
        obj(n=INT),
        {"n": True},
        "'n' must be integer, got boolean (rule: type)",
    ),
    (
        "enum",
        obj(k={"enum": ["bug", "task"]}),
        {"k": "x"},
        '\'k\' must be one of "bug", "task", got "x" (rule: enum)',
    ),
    ("const", obj(k={"const": "a"}), {"k": "b"}, '\'k\' must be "a", got "b" (rule: const)'),
    (
        "anyOf of types",
        obj(k={"anyOf": [INT, {"type": "null"}]}),
        {"k": "x"},
        "'k' must be integer or null, got string (rule: anyOf)",
    ),
    (
        "anyOf: the branch of the right type says why",
        obj(k={"anyOf": [{"type": "object", "required": ["id"]}, {"type": "null"}]}),
        {"k": {}},
        "'k.id' is required (rule: required)",
    ),
    (
        "oneOf matching two",
        obj(k={"oneOf": [INT, N]}),
        {"k": 2},
        "'k' must match exactly one schema of 'oneOf', but matches more than one (rule: oneOf)",
    ),
    ("minimum", obj(k={"minimum": 0}), {"k": -1}, "'k' must be >= 0, got -1 (rule: minimum)"),
    (
        "exclusiveMaximum",
        obj(k={"exclusiveMaximum": 1.5}),
        {"k": 1.5},
        "'k' must be < 1.5, got 1.5 (rule: exclusiveMaximum)",
    ),
    (
        "minLength",
        obj(k={"minLength": 2}),
        {"k": "é"},
        "'k' must be at least 2 characters long, got 1 (rule: minLength)",
    ),
    (
        "maxItems",
        obj(k={"maxItems": 1}),
        {"k": [1, 2]},
        "'k' must have at most 1 items, got 2 (rule: maxItems)",
    ),
    (
        "pattern (ECMA-262)",
        obj(k={"pattern": "^\\p{L}+$"}),
        {"k": "abc1"},
        "'k' must match pattern '^\\\\p{L}+$' (rule: pattern)",
    ),
    ("pattern searches", obj(k={"pattern": "b"}), {"k": "abc"}, None),
    ("false schema", obj(k=False), {"k": 1}, "'k' is not allowed (rule: false schema)"),
    (
        "$ref",
        {"$defs": {"pos": {"type": "integer", "minimum": 1}}, **obj(n={"$ref": "#/$defs/pos"})},
        {"n": 0},
        "'n' must be >= 1, got 0 (rule: minimum)",
    ),
    (
        "recursive $ref",
        obj(v=INT, next={"$ref": "#"}),
        {"v": 1, "next": {"v": 2, "next": {"v": "x"}}},
        "'next.next.v' must be integer, got string (rule: type)",
    ),
    (
        "a property named like a number",
        {"type": "object", "additionalProperties": S},
        {"01": "x", "7": 1, "a.b": None},
        "'[\"7\"]' must be string, got integer (rule: type); "
        "'[\"a.b\"]' must be string, got null (rule: type)",
    ),
    (
        "a property named ''",
        obj(**{"": obj(x=S)}),
        {"": {"x": 1}},
        "'[\"\"].x' must be string, got integer (rule: type)",
    ),
    (
        "several problems",
        {"type": "object", "required": ["a", "b", "c", "d", "e"]},
        {},
        "'a' is required (rule: required); 'b' is required (rule: required); "
        "'c' is required (rule: required); and 2 more",
    ),
    (
        "a draft-07 schema keeps its own meaning",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            **obj(k={"type": "array", "items": [INT], "additionalItems": False}),
        },
        {"k": [1, 2]},
        "'k[1]' is not allowed (rule: additionalItems)",
    ),
    (
        "draft 2020-12 by default",
        obj(k={"type": "array", "prefixItems": [INT], "items": False}),
        {"k": [1, 2]},
        "'k[1]' is not allowed (rule: false schema)",
    ),
]


@pytest.mark.parametrize(
    ("schema", "arguments", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
async def test_messages_name_the_place_and_the_rule(
    schema: Any, arguments: Any, error: str | None
) -> None:
    assert (await run(schema, arguments))[0] == error


@pytest.mark.parametrize(
    ("schema", "arguments", "expected"),
    [
        (obj(xs={"type": "array", "items": INT}), {"xs": "[1, 2]"}, {"xs": [1, 2]}),
        (obj(o={"type": "object", "required": ["k"]}), {"o": '{"k": 1}'}, {"o": {"k": 1}}),
        (obj(o=obj(x={"type": "array"})), {"o": '{"x": "[1]"}'}, {"o": {"x": [1]}}),
        (obj(xs={"type": "array", "items": {"type": "array"}}), {"xs": ["[1]", [2]]},
         {"xs": [[1], [2]]}),
        (obj(k={"anyOf": [{"type": "array"}, {"type": "null"}]}), {"k": "[1]"}, {"k": [1]}),
        (obj(k={"anyOf": [{"type": "array"}, S]}), {"k": "[1]"}, {"k": "[1]"}),  # valid as is
        (obj(k={"type": ["string", "array"]}), {"k": "[1]"}, {"k": "[1]"}),
        (obj(**{"": {"type": "array"}}), {"": "[1]"}, {"": [1]}),
    ],
)  # fmt: skip
async def test_json_encoded_objects_and_arrays_are_decoded_where_wanted(
    schema: Any, arguments: Any, expected: Any
) -> None:
    original = repr(arguments)
    error, seen = await run(schema, arguments)
    assert error is None
    assert seen == [expected]
    assert repr(arguments) == original  # the caller's value was not changed


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"xs": '[1, "a"]'}, "'xs[1]' must be integer, got string (rule: type)"),
        ({"xs": "[1,"}, "'xs' must be array, got string (rule: type)"),
        ({"xs": '{"a": 1}'}, "'xs' must be array, got string (rule: type)"),
        ({"xs": "[NaN]"}, "'xs' must be array, got string (rule: type)"),
    ],
)
async def test_a_string_is_decoded_only_into_the_wanted_type(arguments: Any, error: str) -> None:
    assert (await run(obj(xs={"type": "array", "items": INT}), arguments))[0] == error


FORMATS = obj(
    when={"type": "string", "format": "date"},
    mail={"type": "string", "format": "email"},
    other={"type": "string", "format": "not-a-known-format"},
)


async def test_format_is_checked_by_default() -> None:
    error, _ = await run(FORMATS, {"when": "yesterday"})
    assert error == "'when' must be a valid 'date' string, got \"yesterday\" (rule: format)"
    error, _ = await run(FORMATS, {"mail": "nobody"})
    assert error == "'mail' must be a valid 'email' string, got \"nobody\" (rule: format)"
    good = {"when": "2026-02-28", "mail": "a@example.com", "other": "anything"}
    assert await run(FORMATS, good) == (None, [good])


async def test_validate_formats_false_leaves_format_an_annotation() -> None:
    bad = {"when": "yesterday", "mail": "nobody"}
    assert await run(FORMATS, bad, validate_formats=False) == (None, [bad])
    t = tool("t", "d", FORMATS, validate_formats=False)(lambda args: "ok")
    assert t.validate_formats is False
    assert limit_output(t, 100).validate_formats is False  # kept when wrapped


async def test_format_in_an_output_schema_is_an_annotation() -> None:
    out = obj(when={"type": "string", "format": "date"})
    t = tool("t", "d", {}, output_schema=out)(lambda args: {"when": "yesterday"})
    assert (await t.call({}))["structuredContent"] == {"when": "yesterday"}


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"a": float("nan")}, "'a' must be a finite number (NaN and Infinity are not JSON)"),
        ({"a": [1, float("-inf")]}, "'a[1]' must be a finite number"),
        ({"a": object()}, "'a' is not a JSON value (object)"),
        ({"a": {1: 2}}, "'a' has a key that is not a string: 1"),
        ({"a": b"x"}, "'a' is not a JSON value (bytes)"),
    ],
)
async def test_values_that_are_not_json_are_refused(arguments: Any, error: str) -> None:
    text, _ = await run({"type": "object"}, arguments)
    assert text is not None and text.startswith(error)


async def test_deep_nesting_is_refused_before_validation() -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    schema = {"$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}
    schema.update(obj(t={"$ref": "#/$defs/tree"}))
    text, _ = await run(schema, {"t": deep})
    assert text == "'t" + "[0]" * 199 + "' is nested more than 200 levels deep"
    shallow: Any = []
    for _ in range(150):
        shallow = [shallow]
    assert (await run(schema, {"t": shallow}))[0] is None


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (obj(k={"type": "no-such-type"}), "(at properties/k/type)"),
        (obj(k={"minimum": "x"}), '"x" is not of type "number" (at properties/k/minimum)'),
        (obj(k={"pattern": "(["}), 'is not a "regex" (at properties/k/pattern)'),
        ({"type": "object", "required": ["a", "a"]}, "has non-unique elements (at required)"),
        (obj(k={"$ref": "#/$defs/missing"}), "/$defs/missing"),
        (obj(k={"$ref": "http://localhost:1234/integer.json"}), "Retrieval is disabled"),
        ({"$schema": "https://example.com/unknown", "type": "object"}, "Unknown meta-schema"),
    ],
)
def test_an_invalid_schema_is_refused_at_definition(schema: Any, why: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool("t", "d", schema)(lambda args: "ok")
    text = str(caught.value)
    assert text.startswith("tool 't': input_schema is not a valid JSON Schema: ")
    assert why in text


def test_an_invalid_output_schema_is_refused_at_definition() -> None:
    bad = {"type": "object", "properties": {"n": {"type": 3}}}
    with pytest.raises(ToolDefinitionError, match=r"^tool 't': output_schema is not a valid"):
        tool("t", "d", {}, output_schema=bad)(lambda args: {})


def test_jsonschema_rs_is_imported_only_for_a_tool() -> None:
    code = (
        "import sys, ccwire\n"
        "before = 'jsonschema_rs' in sys.modules\n"
        "ccwire.tool('t', 'd', {'a': int})(lambda args: 'ok')\n"
        "print(before, 'jsonschema_rs' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["False", "True"]
