"""The official JSON-Schema-Test-Suite (draft 2020-12), run against tool validation.

The suite is vendored in ``tests/data/json-schema-test-suite/`` (see its ``NOTE.md``).
Every case of every required file, and of the optional ``format`` files, must pass.

Two paths, because a tool's arguments are always a JSON object while most cases
validate other values (strings, numbers, arrays, ...) against schemas that may be
booleans, or rely on ``$id``, ``$anchor``, ``$dynamicRef`` and relative ``$ref`` at the
document root (so wrapping a case's schema under a property would change what its
references point to):

1. Every case, directly through ``ccwire._mcp.validation.compile_validator()``, the
   function a tool compiles its schema with (with the same decoding of JSON-encoded
   strings), the case's schema compiled as it is and its instance validated as it is.
   Remote references (``http://localhost:1234/...``) are answered from the vendored
   ``remotes/`` directory by a retriever; nothing is fetched from the network.
2. Every case whose instance is an object, through a served tool: an ``SdkMcpServer``
   (``create_sdk_mcp_server``) with one tool per schema, called with ``tools/call`` as
   the CLI calls it (``SdkMcpServer.handle``); the case must end in the handler's result
   if valid and in an ``isError`` result if not.  The schema is the tool's input schema
   unchanged (a boolean schema ``b`` becomes ``{"allOf": [b]}``; one without ``$schema``
   gets the 2020-12 one, so that ccwire reads it as a JSON Schema and not as a
   ``{param: type}`` dict).  Schemas with remote references are left out here: a
   tool never fetches them.

``format`` is an assertion for tool input by default (``validate_formats=True``): the
required ``format.json`` file asserts JSON Schema's default, format as an annotation,
so it runs with ``validate_formats=False`` (the documented switch), and the optional
format files run with the default.  Every other required file runs both ways.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccwire import create_sdk_mcp_server, tool
from ccwire._mcp.validation import compile_validator

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"
TESTS = SUITE / "tests" / "draft2020-12"
REMOTES = SUITE / "remotes"
REMOTE_BASE = "http://localhost:1234/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

REQUIRED = sorted(TESTS.glob("*.json"))
FORMATS = sorted((TESTS / "optional" / "format").glob("*.json"))
RUNS: list[tuple[Path, bool]] = [
    *((f, formats) for f in REQUIRED for formats in (True, False)
      if f.name != "format.json" or not formats),
    *((f, True) for f in FORMATS),
]  # fmt: skip


def retrieve(uri: str) -> Any:
    """The suite's remote documents, from disk: never the network."""
    if not uri.startswith(REMOTE_BASE):
        raise ValueError(f"the suite has no document at {uri}")
    path = (REMOTES / uri[len(REMOTE_BASE) :].split("#")[0]).resolve()
    if REMOTES.resolve() not in path.parents:
        raise ValueError(f"outside the suite's remotes: {uri}")
    return json.loads(path.read_text(encoding="utf-8"))


def groups(path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def run_id(run: tuple[Path, bool]) -> str:
    path, formats = run
    where = "optional/format/" if path.parent.name == "format" else ""
    return f"{where}{path.stem}-{'formats' if formats else 'annotations'}"


def test_the_suite_is_there() -> None:
    assert len(REQUIRED) >= 45 and len(FORMATS) >= 19
    assert (SUITE / "LICENSE").is_file() and (SUITE / "NOTE.md").is_file()
    assert retrieve(REMOTE_BASE + "integer.json") == {"type": "integer"}
    with pytest.raises(ValueError, match="the suite has no document"):
        retrieve("https://example.com/schema.json")
    with pytest.raises(ValueError, match="outside the suite's remotes"):
        retrieve(REMOTE_BASE + "../../LICENSE")


@pytest.mark.parametrize("run", RUNS, ids=[run_id(r) for r in RUNS])
def test_every_case_through_the_compiled_validator(run: tuple[Path, bool]) -> None:
    path, formats = run
    failures: list[str] = []
    cases = 0
    for group in groups(path):
        validator = compile_validator(group["schema"], validate_formats=formats, retriever=retrieve)
        for case in group["tests"]:
            cases += 1
            _, failure = validator.validate(case["data"])
            if (failure is None) != case["valid"]:
                why = "accepted" if failure is None else f"refused: {failure}"
                failures.append(f"{group['description']} / {case['description']}: {why}")
    assert cases > 0
    assert failures == []


def tool_schema(schema: Any) -> Any:
    if isinstance(schema, bool):
        return {"$schema": DRAFT, "allOf": [schema]}
    return schema if "$schema" in schema else {"$schema": DRAFT, **schema}


def served_cases(path: Path) -> list[tuple[str, dict[str, Any], Any, bool]]:
    """``(group, schema, instance, valid)`` of every case a tool can be called with."""
    return [
        (group["description"], group["schema"], case["data"], case["valid"])
        for group in groups(path)
        if REMOTE_BASE not in json.dumps(group["schema"])
        for case in group["tests"]
        if isinstance(case["data"], dict)
    ]


SERVED = [r for r in RUNS if served_cases(r[0])]


@pytest.mark.anyio
@pytest.mark.parametrize("run", SERVED, ids=[run_id(r) for r in SERVED])
async def test_object_cases_through_tools_call(run: tuple[Path, bool]) -> None:
    path, formats = run
    cases = served_cases(path)
    tools: list[Any] = []
    names: dict[str, str] = {}
    for description, schema, _, _ in cases:
        if description not in names:
            names[description] = f"case{len(names)}"
            tools.append(
                tool(names[description], description, tool_schema(schema),
                     validate_formats=formats)(lambda args: "handled")
            )  # fmt: skip
    server = create_sdk_mcp_server("suite", tools=tools)["instance"]
    failures: list[str] = []
    for i, (description, _, instance, valid) in enumerate(cases):
        params = {"name": names[description], "arguments": instance}
        reply = await server.handle(
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
        )
        assert reply is not None and "result" in reply, reply
        result = reply["result"]
        ok = not result.get("isError") and result["content"][0]["text"] == "handled"
        if ok != valid:
            failures.append(f"{description} / {instance!r}: {result['content'][0]['text']}")
    assert failures == []
