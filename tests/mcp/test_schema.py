"""Schema conversion (every accepted input form) and the compiled validator."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import inspect
import logging
import pathlib
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from typing_extensions import NotRequired

from ccwire import tool
from ccwire._core.errors import ToolDefinitionError
from ccwire._mcp.schema import looks_like_json_schema, params_schema, to_json_schema

S, INT, N, B = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
    }


class Address(TypedDict):
    street: str
    zip: NotRequired[str]


class Person(TypedDict):
    name: str
    age: int
    nickname: str | None
    address: Address


class Partial(TypedDict, total=False):
    a: int


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    label: Optional[str] = None  # noqa: UP045
    tags: list[str] = dataclasses.field(default_factory=list)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Node(TypedDict):
    value: int
    children: list[Node]


class FakePydanticModel:
    """Quacks like a pydantic model class: only ``model_json_schema`` is used."""

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


CONVERSIONS: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "reference scalars",
        {"a": str, "b": int, "c": float, "d": bool},
        obj({"a": S, "b": INT, "c": N, "d": B}),
    ),
    (
        "bare containers",
        {"l": list, "d": dict},
        obj({"l": {"type": "array"}, "d": {"type": "object"}}),
    ),
    ("list[int]", {"xs": list[int]}, obj({"xs": {"type": "array", "items": INT}})),
    (
        "dict[str, float]",
        {"m": dict[str, float]},
        obj({"m": {"type": "object", "additionalProperties": N}}),
    ),
    (
        "Optional is not required",
        {"a": int, "b": Optional[int]},  # noqa: UP045
        obj({"a": INT, "b": {"anyOf": [INT, {"type": "null"}]}}, ["a"]),
    ),
    (
        "X | None is not required",
        {"b": str | None},
        obj({"b": {"anyOf": [S, {"type": "null"}]}}, []),
    ),
    ("union", {"v": int | str}, obj({"v": {"anyOf": [INT, S]}})),
    (
        "Literal",
        {"kind": Literal["bug", "feature"]},
        obj({"kind": {"type": "string", "enum": ["bug", "feature"]}}),
    ),
    ("mixed Literal", {"k": Literal[1, "a"]}, obj({"k": {"enum": [1, "a"]}})),
    ("Enum", {"c": Color}, obj({"c": {"type": "string", "enum": ["red", "blue"]}})),
    (
        "Annotated description",
        {"n": Annotated[int, "how many"]},
        obj({"n": {"type": "integer", "description": "how many"}}),
    ),
    (
        "Annotated schema",
        {"n": Annotated[int, {"minimum": 0}]},
        obj({"n": {"type": "integer", "minimum": 0}}),
    ),
    (
        "tuple",
        {"p": tuple[int, str]},
        obj({"p": {"type": "array", "prefixItems": [INT, S], "minItems": 2, "maxItems": 2}}),
    ),
    ("tuple[int, ...]", {"p": tuple[int, ...]}, obj({"p": {"type": "array", "items": INT}})),
    (
        "type-name strings",
        {"a": "number", "b": "string", "c": "integer", "d": "boolean", "e": "object", "f": "array"},
        obj({"a": N, "b": S, "c": INT, "d": B, "e": {"type": "object"}, "f": {"type": "array"}}),
    ),
    (
        "property schema",
        {"a": {"type": "string", "description": "d"}},
        obj({"a": {"type": "string", "description": "d"}}),
    ),
    ("unknown class falls back to string", {"x": complex}, obj({"x": S})),
    (
        "well-known classes",
        {
            "t": datetime.datetime,
            "d": datetime.date,
            "u": uuid.UUID,
            "p": pathlib.Path,
            "n": decimal.Decimal,
        },
        obj(
            {
                "t": {"type": "string", "format": "date-time"},
                "d": {"type": "string", "format": "date"},
                "u": {"type": "string", "format": "uuid"},
                "p": S,
                "n": N,
            }
        ),
    ),
    ("nested TypedDict", {"who": Address}, obj({"who": obj({"street": S, "zip": S}, ["street"])})),
    (
        "TypedDict",
        Person,
        obj(
            {
                "name": S,
                "age": INT,
                "nickname": {"anyOf": [S, {"type": "null"}]},
                "address": obj({"street": S, "zip": S}, ["street"]),
            },
            ["name", "age", "address"],
        ),
    ),
    ("total=False TypedDict", Partial, obj({"a": INT}, [])),
    (
        "recursive TypedDict",
        Node,
        obj({"value": INT, "children": {"type": "array", "items": {"type": "object"}}}),
    ),
    (
        "dataclass",
        Point,
        obj(
            {
                "x": N,
                "y": N,
                "label": {"anyOf": [S, {"type": "null"}]},
                "tags": {"type": "array", "items": S},
            },
            ["x"],
        ),
    ),
    ("pydantic-like class", FakePydanticModel, FakePydanticModel.model_json_schema()),
    ("empty", {}, obj({})),
]


@pytest.mark.parametrize(
    ("spec", "expected"), [c[1:] for c in CONVERSIONS], ids=[c[0] for c in CONVERSIONS]
)
def test_conversion(spec: Any, expected: dict[str, Any]) -> None:
    assert to_json_schema(spec) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
        {"properties": {"a": {}}},
        {"anyOf": [{"type": "object"}, {"type": "null"}]},
        {"type": "object"},
    ],
)
def test_full_json_schema_passes_through_unchanged(schema: dict[str, Any]) -> None:
    assert looks_like_json_schema(schema)
    assert to_json_schema(schema) is schema


def test_simple_mapping_with_a_param_called_type_is_not_a_json_schema() -> None:
    assert to_json_schema({"type": str}) == obj({"type": S})
    assert to_json_schema({"type": "string"}) == obj({"type": S})


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"name": "text"},
            "tool 'greet': input_schema key 'name': unknown type name 'text': a type (str, "
            "int, float, bool, list, dict, ...) or one of 'string', 'number', 'integer', "
            "'boolean', 'object', 'array', 'null', 'str', 'float', 'int', 'bool', 'dict', 'list'",
        ),
        ({"name": "String"}, "key 'name': unknown type name 'String': did you mean 'string'?"),
        ({"name": "strin"}, "key 'name': unknown type name 'strin': did you mean 'string'?"),
        ({"age": 3}, "tool 'greet': input_schema key 'age': cannot convert type 3 to JSON Schema"),
    ],
)
def test_a_bad_type_in_a_schema_dict_names_the_tool_and_the_key(
    schema: dict[str, Any], message: str
) -> None:
    """``{"name": "strin"}`` said "unknown type name 'strin'": of which tool, which key,
    and what would do instead, it did not say."""

    async def greet(args: dict[str, Any]) -> str:
        return "hi"

    with pytest.raises(ToolDefinitionError) as caught:
        tool("greet", "Greet", schema)(greet)
    assert message in str(caught.value), str(caught.value)


@pytest.mark.parametrize("bad", [42, "string", [str], {"a": "strng"}, {1: str}, {"a": 3}])
def test_unconvertible_specs_raise_tool_definition_error(bad: Any) -> None:
    with pytest.raises(ToolDefinitionError):
        to_json_schema(bad)


def test_params_schema_requires_only_parameters_without_default() -> None:
    empty = inspect.Parameter.empty
    schema = params_schema([("a", int, False), ("b", Optional[str], False), ("c", empty, True)])  # noqa: UP045
    assert schema == {
        "type": "object",
        "properties": {"a": INT, "b": {"anyOf": [S, {"type": "null"}]}, "c": {}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert "additionalProperties" not in params_schema([], additional=True)


class Opaque:
    """A class with no JSON form."""


def test_a_signature_parameter_of_a_class_with_no_json_form_is_refused() -> None:
    """The `{name: type}` dict keeps the reference SDK's string fallback, but a handler
    whose signature promises a class would get a string: the tool is refused, naming
    the tool, the parameter and the annotations that work."""

    async def dist(city: str, p: Opaque) -> float:
        return 0.0

    with pytest.raises(ToolDefinitionError, match=r"tool 'dist': parameter 'p': .*Opaque.*Enum"):
        tool("dist", "distance")(dist)
    assert to_json_schema({"p": Opaque})["properties"]["p"] == S


@pytest.mark.parametrize(
    ("schema", "where", "typo", "meant"),
    [
        (
            {"type": "object", "propertes": {"name": {"type": "string"}}},
            "",
            "propertes",
            "properties",
        ),
        ({"type": "object", "properties": {}, "requried": ["a"]}, "", "requried", "required"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "minLenght": 1}}},
            " at /properties/a",
            "minLenght",
            "minLength",
        ),
        (
            {"anyOf": [{"type": "object", "propertis": {}}]},
            " at /anyOf/0",
            "propertis",
            "properties",
        ),
    ],
)
def test_a_misspelt_json_schema_keyword_is_warned_of(
    schema: dict[str, Any],
    where: str,
    typo: str,
    meant: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """JSON Schema ignores an unknown key, so `{"type": "object", "propertes": ...}` made
    a tool that takes anything and shows the model no parameters, without a word. The
    schema is still served as written (a tool that works with another SDK keeps working)."""
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        assert to_json_schema(schema) is schema
    assert [r.getMessage() for r in caplog.records] == [
        f"ccwire: input_schema{where} has {typo!r}, which is no JSON Schema keyword (it is "
        f"ignored): did you mean {meant!r}?"
    ]


def test_keys_close_to_no_keyword_and_property_names_pass(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = {
        "type": "object",
        "properties": {"propertes": {"type": "string"}, "x": {"x-ui-widget": "slider"}},
        "x-vendor": 1,
        "examples": [{}],
        "example": {},  # OpenAPI's
    }
    with caplog.at_level(logging.WARNING, logger="ccwire"):
        assert to_json_schema(schema) is schema
    assert caplog.records == []
