"""Port of the reference SDK's ``e2e-tests/test_structured_output.py``.

With ``output_format`` set to a JSON schema the result carries ``structured_output``:
flat, nested, with an enum, and after tool use. The scripted model plays the part of a
real one: it explores with Bash (``find``, ``grep``, ``ls``: CLI 2.1.330 has no Glob and
Grep tools), and fills the schema from what the tools returned, so the values checked
come from the run itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import ResultMessage, query
from ccwire.testing import ModelRequest, ScriptedModel, StepResult, reply, text, tool_use

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def _result(options: Any, prompt: str) -> ResultMessage:
    result: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                result = message
    assert result is not None, "no result message"
    return result


def _outputs(request: ModelRequest, *call_ids: str) -> list[str]:
    """The outputs of the calls ``call_ids`` in that order (parallel calls may finish in
    any order), each checked to have worked."""
    results = {r.tool_use_id: r for r in request.tool_results()}
    assert len(results) == len(call_ids), results
    assert not any(r.is_error for r in results.values()), results
    return [results[call_id].content for call_id in call_ids]


def _lines(content: str) -> list[str]:
    return [line for line in content.splitlines() if line.strip()]


def _answer(**values: Any) -> StepResult:
    return tool_use("StructuredOutput", values)


def _structured(make_options: Any, schema: dict[str, Any], **kwargs: Any) -> Any:
    return make_options(
        output_format={"type": "json_schema", "schema": schema},
        permission_mode="acceptEdits",
        **kwargs,
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")


async def test_simple_structured_output(model: ScriptedModel, make_options: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "file_count": {"type": "number"},
            "has_tests": {"type": "boolean"},
            "test_file_count": {"type": "number"},
        },
        "required": ["file_count", "has_tests"],
    }
    options = _structured(make_options, schema)
    _write(
        Path(options.cwd),
        {
            "src/claude_agent_sdk/__init__.py": "",
            "src/claude_agent_sdk/client.py": "",
            "src/claude_agent_sdk/types.py": "",
            "src/claude_agent_sdk/py.typed": "",
            "tests/test_client.py": "import pytest\n",
            "tests/test_types.py": "import pytest\n",
        },
    )

    find_sources = tool_use("Bash", {"command": "find src/claude_agent_sdk -name '*.py'"})
    find_tests = tool_use("Bash", {"command": "find . -name 'test_*.py'"})

    def count(request: ModelRequest) -> StepResult:
        sources, tests = (_lines(out) for out in _outputs(request, find_sources.id, find_tests.id))
        return _answer(file_count=len(sources), has_tests=bool(tests), test_file_count=len(tests))

    model.add(
        reply(find_sources, find_tests),
        count,
        text("Counted."),
    )
    result = await _result(
        options,
        "Count how many Python files are in src/claude_agent_sdk/ and check if there are "
        "any test files. Use tools to explore the filesystem.",
    )

    assert not result.is_error, result.result
    assert result.subtype == "success"
    output = result.structured_output
    assert output is not None
    assert "file_count" in output and "has_tests" in output
    assert isinstance(output["file_count"], (int, float))
    assert isinstance(output["has_tests"], bool)
    assert output["file_count"] > 0
    assert output == {"file_count": 3, "has_tests": True, "test_file_count": 2}


async def test_nested_structured_output(model: ScriptedModel, make_options: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "analysis": {
                "type": "object",
                "properties": {
                    "word_count": {"type": "number"},
                    "character_count": {"type": "number"},
                },
                "required": ["word_count", "character_count"],
            },
            "words": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["analysis", "words"],
    }

    def analyse(request: ModelRequest) -> StepResult:
        found = re.search(r"'([^']*)'", request.last_user_text())
        assert found, request.last_user_text()
        words = found.group(1).split()
        return _answer(
            analysis={"word_count": len(words), "character_count": len(found.group(1))},
            words=words,
        )

    model.add(analyse, text("Analysed."))
    result = await _result(
        _structured(make_options, schema),
        "Analyze this text: 'Hello world'. Provide word count, character count, and list of words.",
    )

    assert not result.is_error
    output = result.structured_output
    assert output is not None
    assert "analysis" in output and "words" in output
    assert output["analysis"]["word_count"] == 2
    assert output["analysis"]["character_count"] == 11
    assert len(output["words"]) == 2


async def test_structured_output_with_enum(model: ScriptedModel, make_options: Any) -> None:
    frameworks = ["pytest", "unittest", "nose", "unknown"]
    schema = {
        "type": "object",
        "properties": {
            "has_tests": {"type": "boolean"},
            "test_framework": {"type": "string", "enum": frameworks},
            "test_count": {"type": "number"},
        },
        "required": ["has_tests", "test_framework"],
    }
    options = _structured(make_options, schema)
    _write(
        Path(options.cwd),
        {
            "tests/conftest.py": "import pytest\n",
            "tests/test_one.py": "import pytest\n\ndef test_one():\n    assert 1\n",
            "tests/test_two.py": "from pytest import raises\n",
        },
    )

    find_tests = tool_use("Bash", {"command": "find tests -name 'test_*.py'"})
    grep_imports = tool_use("Bash", {"command": "grep -rhE 'import (pytest|unittest|nose)' tests"})

    def decide(request: ModelRequest) -> StepResult:
        files, matches = _outputs(request, find_tests.id, grep_imports.id)
        found = [f for f in ("pytest", "unittest", "nose") if f in matches]
        return _answer(
            has_tests=bool(_lines(files)),
            test_framework=found[0] if found else "unknown",
            test_count=len(_lines(files)),
        )

    model.add(
        reply(find_tests, grep_imports),
        decide,
        text("pytest it is."),
    )
    result = await _result(
        options,
        "Search for test files in the tests/ directory. Determine which test framework is "
        "being used (pytest/unittest/nose) and count how many test files exist. Use Grep "
        "to search for framework imports.",
    )

    assert not result.is_error
    output = result.structured_output
    assert output is not None
    assert output["test_framework"] in frameworks
    assert isinstance(output["has_tests"], bool)
    assert output["has_tests"] is True
    assert output["test_framework"] == "pytest"
    assert output["test_count"] == 2


async def test_structured_output_with_tools(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    schema = {
        "type": "object",
        "properties": {"file_count": {"type": "number"}, "has_readme": {"type": "boolean"}},
        "required": ["file_count", "has_readme"],
    }
    scratch = tmp_path / "scratch"
    _write(scratch, {"README.md": "# hi\n", "notes.txt": "n\n", "data.csv": "a,b\n"})

    list_files = tool_use("Bash", {"command": "ls -A"})

    def count(request: ModelRequest) -> StepResult:
        names = _lines(_outputs(request, list_files.id)[0])
        return _answer(file_count=len(names), has_readme="README.md" in names)

    model.add(list_files, count, text("Done."))
    result = await _result(
        _structured(make_options, schema, cwd=str(scratch)),
        "Count how many files are in the current directory and check if there's a README "
        "file. Use tools as needed.",
    )

    assert not result.is_error
    output = result.structured_output
    assert output is not None
    assert "file_count" in output and "has_readme" in output
    assert isinstance(output["file_count"], (int, float))
    assert isinstance(output["has_readme"], bool)
    assert output["file_count"] >= 0
    assert output == {"file_count": 3, "has_readme": True}
