"""Properties of tool argument validation, called the way the CLI calls a tool.

Tools are built with ``ccwire.tool(...)`` over random input schemas (JSON Schema with
nested objects, arrays, enums, consts, bounds, patterns, ``anyOf`` and optional fields;
and the ``{param: type}`` form) and called with arguments drawn near the schema (valid,
or broken at a random depth) or as arbitrary JSON. An independent model of the
documented validation rules (``ccwire._mcp.validation``'s docstring: JSON Schema draft
2020-12 with ECMA-262 patterns, plus JSON-encoded objects/arrays in a string decoded
where an object/array is wanted; NaN and infinities refused) says whether the arguments
are valid and which fields are wrong. For every call:

* nothing is raised;
* valid arguments: the handler runs once, with the arguments (decoded), and its result
  comes back;
* invalid arguments: the handler never runs, and the result is ``isError`` with a text
  that names one of the offending fields.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import anyio
import pytest
from hypothesis import event, example, given, strategies as st

from ccwire import SdkMcpTool, ToolDefinitionError, create_sdk_mcp_server, tool
from tests.fuzz._support import counted, fuzz_settings, json_keys, json_values, wire_values

Path = tuple[Union[str, int], ...]

_BACKENDS = st.sampled_from(["asyncio", "trio"])

# ------------------------------------------------------------------------------ model

_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and math.isfinite(v) and v == int(v))
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: numbers by value (1 == 1.0), booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num):
        return bool(a == b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def same(a: Any, b: Any) -> bool:
    """Exactly the same JSON value (types included; NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


@dataclass
class Verdict:
    value: Any  # the arguments as the handler should see them (JSON strings decoded)
    errors: set[Path] = field(default_factory=set)  # every field found wrong


def _declared(node: Mapping[str, Any]) -> list[str]:
    t = node.get("type")
    names = [t] if isinstance(t, str) else t if isinstance(t, list) else []
    return [n for n in names if n in _TYPE_TESTS]


def model(node: Any, v: Any, path: Path = ()) -> Verdict:
    """Check ``v`` against the schema ``node`` (only the keywords our schemas use)."""
    if not isinstance(node, Mapping):
        return Verdict(v)
    types = _declared(node)
    if types and not any(_TYPE_TESTS[t](v) for t in types):
        wants_container = "object" in types or "array" in types
        decoded: Any = None
        if wants_container and "string" not in types and isinstance(v, str):
            try:
                decoded = json.loads(v, parse_constant=_not_a_number)
            except (ValueError, RecursionError):
                decoded = None
        if isinstance(decoded, (dict, list)) and any(_TYPE_TESTS[t](decoded) for t in types):
            v = decoded
        else:
            return Verdict(v, {path})  # nothing else is checked on a value of the wrong type
    errors: set[Path] = set()
    if isinstance(v, dict):
        v = _object(node, v, path, errors)
    if isinstance(v, list):
        v = _array(node, v, path, errors)
    if "const" in node and not json_equal(v, node["const"]):
        errors.add(path)
    if "enum" in node and not any(json_equal(v, x) for x in node["enum"]):
        errors.add(path)
    if not _bounds_ok(node, v):
        errors.add(path)
    pattern = node.get("pattern")
    if isinstance(v, str) and isinstance(pattern, str) and re.search(ecma(pattern), v) is None:
        errors.add(path)
    branches = node.get("anyOf")
    if isinstance(branches, list) and branches:
        verdicts = [model(b, v, path) for b in branches]
        good = [x for x in verdicts if not x.errors]
        if good:  # a value some branch takes as it is stays as it is
            v = next((x.value for x in good if same(x.value, v)), good[0].value)
        else:
            errors.add(path)
            for x in verdicts:
                errors |= x.errors
    return Verdict(v, errors)


def ecma(pattern: str) -> str:
    """A pattern of the strategies below, as Python's ``re`` reads ECMA-262 (what JSON
    Schema means): ``\\d`` is an ASCII digit, ``$`` only the end of the string."""
    return pattern.replace("\\d", "[0-9]").replace("$", "\\Z")


def _object(node: Mapping[str, Any], v: dict[str, Any], path: Path, errors: set[Path]) -> Any:
    props = node.get("properties", {})
    for key in node.get("required", []):
        if key not in v:
            errors.add((*path, key))
    extra = node.get("additionalProperties", True)
    out = dict(v)
    for key, item in v.items():
        if key in props:
            sub = model(props[key], item, (*path, key))
        elif extra is False:
            sub = Verdict(item, {(*path, key)})
        else:
            sub = model(extra, item, (*path, key))
        errors |= sub.errors
        out[key] = sub.value
    return out


def _array(node: Mapping[str, Any], v: list[Any], path: Path, errors: set[Path]) -> Any:
    prefix = node.get("prefixItems", [])
    rest = node.get("items", {})
    out = []
    for i, item in enumerate(v):
        sub = model(prefix[i] if i < len(prefix) else rest, item, (*path, i))
        errors |= sub.errors
        out.append(sub.value)
    return out


def _bounds_ok(node: Mapping[str, Any], v: Any) -> bool:
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    rules: list[tuple[str, bool, Any, Callable[[Any, Any], bool]]] = [
        ("minimum", number, v, lambda x, b: x >= b),
        ("maximum", number, v, lambda x, b: x <= b),
        ("exclusiveMinimum", number, v, lambda x, b: x > b),
        ("exclusiveMaximum", number, v, lambda x, b: x < b),
    ]
    if isinstance(v, str):
        rules += [("minLength", True, len(v), lambda n, b: n >= b)]
        rules += [("maxLength", True, len(v), lambda n, b: n <= b)]
    if isinstance(v, list):
        rules += [("minItems", True, len(v), lambda n, b: n >= b)]
        rules += [("maxItems", True, len(v), lambda n, b: n <= b)]
    return all(not applies or kw not in node or ok(x, node[kw]) for kw, applies, x, ok in rules)


def describe(path: Path) -> str:
    """How an error message names the field at ``path``: ``'a.b[2]'``, ``'a["x.y"]'``,
    or ``arguments``."""
    if not path:
        return "arguments "
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return f"'{text}' "


# ------------------------------------------------------------------------- strategies

_names = st.one_of(
    st.sampled_from(["a", "b", "c", "name", "x.y", "0", "é", ""]), st.text(max_size=4)
)

_SCHEMA_WORDS = ("$schema", "$ref", "$defs", "anyOf", "oneOf", "allOf", "type", "properties")
"""Keys that make a ``{param: type}`` mapping read as a JSON Schema instead."""

_leaf_schemas = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 3),
            "maxLength": st.integers(3, 8),
            "pattern": st.sampled_from(["^[a-c]*$", "x", r"^\d+$", "é|😀"]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(0, 5) | st.floats(0, 5),
            "exclusiveMinimum": st.integers(-8, -6),
            "exclusiveMaximum": st.floats(5.5, 9),
        },
    ),
    st.sampled_from(
        [
            {"type": "boolean"},
            {"type": "null"},
            {},
            {"type": ["string", "null"]},
            {"type": ["integer", "string"]},
            {"type": ["number", "boolean"]},
        ]
    ),
    st.builds(lambda values: {"enum": values}, st.lists(json_values, min_size=1, max_size=4)),
    st.builds(
        lambda values: {"type": "string", "enum": values},
        st.lists(st.sampled_from(["red", "green", "é", "", "1"]), min_size=1, max_size=3),
    ),
    st.builds(lambda value: {"const": value}, json_values),
)


@st.composite
def _object_schema(
    draw: st.DrawFn, children: st.SearchStrategy[Any], nullable: bool = False
) -> dict[str, Any]:
    props = draw(st.dictionaries(_names, children, max_size=4))
    required = [k for k in props if draw(st.booleans())]
    if draw(st.integers(0, 9)) == 0:
        name = draw(_names)  # required but not described (each name once: JSON Schema)
        required += [] if name in required else [name]
    schema: dict[str, Any] = {
        "type": ["object", "null"] if nullable else "object",
        "properties": props,
        "required": required,
    }
    extra = draw(st.sampled_from(["absent", True, False, "schema"]))
    if extra == "schema":
        schema["additionalProperties"] = draw(children)
    elif extra != "absent":
        schema["additionalProperties"] = extra
    return schema


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={"minItems": st.integers(0, 2), "maxItems": st.integers(2, 4)},
        ),
        st.builds(
            lambda first, rest: {"type": "array", "prefixItems": first, "items": rest},
            st.lists(children, min_size=1, max_size=2),
            children,
        ),
        _object_schema(children),
        st.booleans().flatmap(lambda n: _object_schema(children, nullable=n)),
        st.builds(lambda bs: {"anyOf": bs}, st.lists(children, min_size=1, max_size=3)),
    )


schemas = st.recursive(_leaf_schemas, _containers, max_leaves=10)
root_schemas = _object_schema(schemas)


@dataclass
class Drawer:
    """Draws arguments near a schema: conforming, except where a mutation hits."""

    data: st.DataObject
    rate: int  # percent of nodes that get a random value instead

    def mutate(self) -> bool:
        return self.rate > 0 and self.data.draw(st.integers(0, 99)) < self.rate

    def value(self, node: Any, depth: int = 0) -> Any:
        draw = self.data.draw
        if self.mutate() or depth > 6 or not isinstance(node, Mapping):
            return draw(wire_values)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return draw(st.sampled_from(node["enum"]))
        if "anyOf" in node:
            return self.value(draw(st.sampled_from(node["anyOf"])), depth + 1)
        types = _declared(node) or ["string", "integer", "boolean", "null"]
        kind = draw(st.sampled_from(types))
        value = self._typed(node, kind, depth)
        if kind in ("object", "array") and "string" not in types and self.mutate():
            return json.dumps(value)  # a JSON-encoded container: decoded by the validator
        return value

    def _typed(self, node: Mapping[str, Any], kind: str, depth: int) -> Any:
        draw = self.data.draw
        if kind == "string":
            pattern = node.get("pattern")
            lo, hi = node.get("minLength", 0), node.get("maxLength", 8)
            if isinstance(pattern, str):
                # (may miss the length bounds: then the arguments are invalid)
                return draw(st.from_regex(pattern, fullmatch=True))
            return draw(st.text(min_size=lo, max_size=hi))
        if kind in ("integer", "number"):
            lo = max(node.get("minimum", -10), node.get("exclusiveMinimum", -11) + 1)
            hi = min(node.get("maximum", 10), node.get("exclusiveMaximum", 11) - 1)
            if kind == "integer":
                return draw(st.integers(math.ceil(lo), math.floor(hi)))
            return draw(st.floats(lo, hi) | st.integers(math.ceil(lo), math.floor(hi)))
        if kind == "boolean":
            return draw(st.booleans())
        if kind == "null":
            return None
        if kind == "array":
            prefix = node.get("prefixItems", [])
            lo, hi = node.get("minItems", 0), node.get("maxItems", 3)
            n = draw(st.integers(max(lo, len(prefix) if prefix else 0), max(hi, len(prefix))))
            items = node.get("items", {})
            return [
                self.value(prefix[i] if i < len(prefix) else items, depth + 1) for i in range(n)
            ]
        props = node.get("properties", {})
        out = {}
        for key in node.get("required", []):
            if not self.mutate():  # (a mutation drops a required field)
                out[key] = self.value(props.get(key, {}), depth + 1)
        for key, sub in props.items():
            if key not in out and draw(st.booleans()):
                out[key] = self.value(sub, depth + 1)
        extra = node.get("additionalProperties", True)
        if extra is not False or self.mutate():
            for key in draw(st.lists(json_keys, max_size=2)):
                if key not in props:
                    out[key] = self.value(extra if isinstance(extra, Mapping) else {}, depth + 1)
        return out


# ---------------------------------------------------------------------------- the runs


@dataclass
class Probe:
    """A tool whose handler records what it was called with."""

    tool: SdkMcpTool[Any]
    calls: list[Any] = field(default_factory=list)


RESULT = {"content": [{"type": "text", "text": "handled"}]}


def make_probe(schema: Any, name: str = "probe") -> Probe:
    calls: list[Any] = []

    async def handler(args: Any) -> dict[str, Any]:
        calls.append(args)
        return RESULT

    return Probe(tool(name, "records its arguments", schema)(handler), calls)


def not_json(v: Any, path: Path = ()) -> set[Path]:
    """Where ``v`` holds NaN or an infinity: not JSON, so refused whatever the schema."""
    if isinstance(v, float) and not math.isfinite(v):
        return {path}
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    return {p for key, item in items for p in not_json(item, (*path, key))}


def make_probe_or_why(schema: Any) -> tuple[Probe | None, str]:
    """``(probe, "")``, or ``(None, why)`` if the tool was refused (`ToolDefinitionError`)."""
    try:
        return make_probe(schema), ""
    except ToolDefinitionError as exc:
        return None, str(exc)


def check_call(probe: Probe, schema: Any, arguments: Any, result: Any) -> None:
    """The result of one call agrees with the model of the schema."""
    arguments = {} if arguments is None else arguments
    bad = not_json(arguments)
    verdict = Verdict(arguments, bad) if bad else model(schema, arguments)
    assert isinstance(result, dict)
    depth = min((len(p) for p in verdict.errors), default=None)
    event("valid" if depth is None else f"invalid, shallowest wrong field at depth {depth}")
    if not verdict.errors:
        assert result == RESULT, result
        assert len(probe.calls) == 1
        assert same(probe.calls[0], verdict.value)
        return
    assert probe.calls == [], f"the handler ran on invalid arguments (wrong: {verdict.errors})"
    assert result["isError"] is True
    text = result["content"][0]["text"]
    prefix = f"Input validation error: invalid arguments for tool {probe.tool.name!r}: "
    assert text.startswith(prefix), text
    named = text[len(prefix) :]
    assert any(named.startswith(describe(p)) for p in verdict.errors), (named, verdict.errors)


def call_tool(probe: Probe, arguments: Any, backend: str) -> Any:
    async def main() -> Any:
        return await probe.tool.call(arguments)

    return anyio.run(main, backend=backend)


# ------------------------------------------------------------------------- properties


@fuzz_settings(400)
@given(
    schema=root_schemas, rate=st.sampled_from([0, 0, 5, 20, 50]), data=st.data(), backend=_BACKENDS
)
@counted
def test_json_schema_tools_run_only_on_valid_arguments(
    schema: dict[str, Any], rate: int, data: st.DataObject, backend: str
) -> None:
    probe = make_probe(schema)
    assert probe.tool.json_schema is schema  # a JSON Schema is used as given
    arguments = Drawer(data, rate).value(schema)
    check_call(probe, schema, arguments, call_tool(probe, arguments, backend))


@fuzz_settings(250)
@given(
    schema=root_schemas,
    arguments=st.one_of(st.none(), wire_values, st.dictionaries(_names, wire_values)),
    backend=_BACKENDS,
)
@counted
def test_json_schema_tools_survive_arbitrary_arguments(
    schema: dict[str, Any], arguments: Any, backend: str
) -> None:
    probe = make_probe(schema)
    check_call(probe, schema, arguments, call_tool(probe, arguments, backend))


_PY_TYPES: list[Any] = [
    int, str, float, bool, list, dict, type(None), Any,
    list[int], list[str], dict[str, int], dict[str, Any], tuple[int, str], tuple[float, ...],
    int | None, Union[int, str], str | None, list[bool | None],
    Literal["a", "b"], Literal[1, 2, 3], Literal["x"] | None, list[dict[str, float]],
    "string", "number", "integer", "boolean", "object", "array",
]  # fmt: skip


@fuzz_settings(300)
@given(
    # a parameter named as a JSON Schema keyword ("$ref"...) makes the mapping a schema
    spec=st.dictionaries(
        _names.filter(lambda n: n not in _SCHEMA_WORDS),
        st.sampled_from(_PY_TYPES),
        max_size=4,
    ),
    rate=st.sampled_from([0, 5, 20, 50]),
    data=st.data(),
    backend=_BACKENDS,
)
@counted
def test_param_type_tools_run_only_on_valid_arguments(
    spec: dict[str, Any], rate: int, data: st.DataObject, backend: str
) -> None:
    probe = make_probe(spec)
    schema = probe.tool.json_schema
    assert schema["type"] == "object"
    assert set(schema["properties"]) == set(spec)
    optional = {
        k for k, t in spec.items() if t in (int | None, str | None, Literal["x"] | None, type(None))
    }
    assert set(schema["required"]) == set(spec) - optional
    near = data.draw(st.integers(0, 3)) > 0  # mostly near the schema, else any JSON
    arguments = Drawer(data, rate).value(schema) if near else data.draw(wire_values)
    check_call(probe, schema, arguments, call_tool(probe, arguments, backend))


_SCHEMA_KEYWORDS = [
    "type", "properties", "required", "additionalProperties", "items", "prefixItems",
    "additionalItems", "enum", "const", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "pattern",
    "allOf", "anyOf", "oneOf", "$ref", "$defs", "patternProperties", "format",
]  # fmt: skip
_keyword_values = st.one_of(
    json_values,
    st.sampled_from(
        ["object", "array", "string", "integer", ["object", "string"], "nonsense", "#", "#/$defs/a",
         "#/properties/a", "#/nope", "[", "(?P<", "^a+$", -1, 2.5, True, False, None]
    ),
)  # fmt: skip
garbage_schemas = st.recursive(
    st.dictionaries(st.sampled_from(_SCHEMA_KEYWORDS), _keyword_values, max_size=4),
    lambda kids: st.one_of(
        st.dictionaries(
            st.sampled_from(_SCHEMA_KEYWORDS),
            st.one_of(
                kids,
                st.lists(kids, max_size=2),
                st.dictionaries(_names, kids, max_size=3),
                _keyword_values,
            ),
            max_size=5,
        ),
        st.booleans(),
    ),
    max_leaves=12,
)


@fuzz_settings(300)
@given(
    schema=garbage_schemas,
    arguments=st.one_of(st.none(), wire_values, st.dictionaries(_names, wire_values)),
    backend=_BACKENDS,
)
@counted
def test_any_schema_call_never_raises_and_the_handler_runs_only_on_success(
    schema: Any, arguments: Any, backend: str
) -> None:
    """A schema that is not valid JSON Schema is refused when the tool is defined, with
    `ToolDefinitionError`; with any other, every call ends in the handler's result or an
    ``isError`` result."""
    if not isinstance(schema, dict):
        schema = {"type": "object", "allOf": [schema]}
    schema = {**schema, "type": "object"}  # so that it is taken as a JSON Schema
    probe, refused = make_probe_or_why(schema)
    if probe is None:
        event("refused at definition")
        assert refused.startswith("tool 'probe': input_schema is not a valid JSON Schema: ")
        return
    event("defined")
    result = call_tool(probe, arguments, backend)
    assert isinstance(result, dict)
    if result.get("isError"):
        assert probe.calls == []
        text = result["content"][0]["text"]
        assert text.startswith("Input validation error: invalid arguments for tool 'probe': ")
    else:
        assert result == RESULT
        assert len(probe.calls) == 1


@fuzz_settings(200)
@given(
    schema=root_schemas,
    rate=st.sampled_from([0, 20]),
    data=st.data(),
    req_id=st.one_of(st.integers(), st.text(max_size=6)),
    name=st.sampled_from(["probe", "probe", "other", ""]),
    meta=st.one_of(
        st.none(),
        wire_values,
        st.fixed_dictionaries(
            {}, optional={"progressToken": wire_values, "claudecode/toolUseId": wire_values}
        ),
    ),
    backend=_BACKENDS,
)
@counted
def test_tools_call_over_jsonrpc(
    schema: dict[str, Any],
    rate: int,
    data: st.DataObject,
    req_id: int | str,
    name: str,
    meta: Any,
    backend: str,
) -> None:
    """The server's ``tools/call`` (what the CLI sends through ``mcp_message``)."""
    probe = make_probe(schema)
    server = create_sdk_mcp_server("fuzz", tools=[probe.tool])["instance"]
    arguments = Drawer(data, rate).value(schema)
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    message = {"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": params}

    async def main() -> Any:
        return await server.handle(message, session_id="s")

    reply = anyio.run(main, backend=backend)
    assert isinstance(reply, dict)
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == req_id
    if name != "probe" or not isinstance(arguments, (dict, type(None))):
        # an unknown tool, or arguments that are no object (null is taken as absent): a
        # malformed request (-32602, as the MCP spec and the official SDK say), the
        # handler never runs
        assert reply["error"]["code"] == -32602
        assert probe.calls == []
        return
    check_call(probe, schema, arguments, reply["result"])


_REGEX_ALPHABET = "ab01.*+?|()[]{}^$\\-,dws"


@pytest.mark.filterwarnings("ignore:Possible .* at position:FutureWarning")  # re: "[[", "[--"
@fuzz_settings(300)
@given(
    pattern=st.text(_REGEX_ALPHABET, max_size=10),  # too short for an overflowing {n}
    value=st.text(_REGEX_ALPHABET, max_size=10),
    backend=_BACKENDS,
)
@counted
def test_a_pattern_is_searched_as_ecma_262_or_the_tool_is_refused(
    pattern: str, value: str, backend: str
) -> None:
    """A pattern that is not an ECMA-262 regular expression refuses the tool; any other
    is searched (not matched in full) in the value, as Python's ``re`` searches it
    wherever both read the pattern alike."""
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}
    probe, refused = make_probe_or_why(schema)
    if probe is None:
        event("refused")
        assert 'is not a "regex" (at properties/a/pattern)' in refused
        return
    result = call_tool(probe, {"a": value}, backend)
    if result == RESULT:
        assert probe.calls == [{"a": value}]
        matched = True
    else:
        assert probe.calls == []
        text = result["content"][0]["text"]
        assert text.endswith(f"'a' must match pattern {pattern!r} (rule: pattern)")
        matched = False
    try:
        python = re.search(ecma(pattern), value) is not None
    except re.error:
        event("accepted, and Python's re cannot compile it")
        return
    event(f"accepted, {'matches' if matched else 'does not match'}")
    if not set(pattern) & set("{}\\"):  # (quantifier braces and escapes differ in ECMA)
        assert matched == python


@fuzz_settings(30)
@given(
    head=st.sampled_from(["a", "[0-9]", "(ab)", "."]),
    count=st.integers(2**32 - 1, 10**20),
    backend=_BACKENDS,
)
@example(head="a", count=4294967295, backend="asyncio")
@counted
def test_a_pattern_with_an_overflowing_repetition_is_ignored(
    head: str, count: int, backend: str
) -> None:
    pattern = f"{head}{{{count}}}"
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}
    try:
        probe = make_probe(schema)
    except ToolDefinitionError:
        return  # refusing the tool with the typed error would be fine too
    assert call_tool(probe, {"a": "x"}, backend) == RESULT
