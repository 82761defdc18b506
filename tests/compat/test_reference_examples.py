"""claude-agent-sdk's own example programs, run on ccwire with only the import changed.

Each case of `reference_examples.CASES` (every program, every sub-example) runs on the
reference and on ccwire side by side, against the real CLI and a scripted model (see
that module), and must end the same way, print the same (normalised) output, log the
same records and make the same model requests. The Python files under ``examples/``
that are not programs are listed in `reference_examples.NOT_RUN` with the reason.

Needs the reference's venv and its unpacked sdist (``make ref-venv``): without them
these tests skip, or fail under ``CCWIRE_REQUIRE_REF=1`` (``make test``).
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.compat.reference_examples import (
    CASES,
    EXAMPLES,
    NOT_RUN,
    Case,
    example_files,
    log_lines,
    raised,
    run_both,
    switch_imports,
)
from tests.e2e.conftest import CLI_PATH
from tests.sessions.stores.conftest import redis_url  # noqa: F401 (a fixture: the Redis adapter's server)


@pytest.fixture(scope="module")
def examples(reference_python: Path) -> Path:
    """The unpacked examples (skips without them, fails under ``CCWIRE_REQUIRE_REF=1``)."""
    if not EXAMPLES.is_dir():
        message = f"the reference's examples are not unpacked in {EXAMPLES}: run `make ref-venv`"
        if os.environ.get("CCWIRE_REQUIRE_REF") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return EXAMPLES


@pytest.fixture(scope="module")
def cli() -> str:
    if CLI_PATH is None:
        pytest.skip("Claude Code CLI not installed (run `make cli`)")
    return CLI_PATH


def _diff(theirs: str, ours: str) -> str:
    lines = difflib.unified_diff(
        theirs.splitlines(), ours.splitlines(), "reference", "ccwire", lineterm="", n=2
    )
    return "\n".join(lines)


def test_every_example_runs_or_is_excused(examples: Path) -> None:
    assert example_files() == {c.script for c in CASES} | set(NOT_RUN)


def test_only_the_imports_are_switched() -> None:
    assert switch_imports("from ccwire import query\n", "ccwire", "claude_agent_sdk") == (
        "from claude_agent_sdk import query\n"
    )
    source = (
        "from claude_agent_sdk import query\n"
        "    from claude_agent_sdk.types import (\n"
        "import claude_agent_sdk\n"
        'prompt = "review src/claude_agent_sdk/types.py"\n'
    )
    assert switch_imports(source) == (
        "from ccwire import query\n"
        "    from ccwire.types import (\n"
        "import ccwire\n"
        'prompt = "review src/claude_agent_sdk/types.py"\n'
    )


def _needs_redis(request: pytest.FixtureRequest, reference_python: Path) -> str:
    """A Redis server's URL, once the reference's venv has redis-py."""
    found = subprocess.run(
        [str(reference_python), "-c", "import redis"], capture_output=True, check=False
    )
    if found.returncode != 0:
        message = "redis-py is not in the reference's venv: run `make ref-venv`"
        if os.environ.get("CCWIRE_REQUIRE_REF") == "1":
            pytest.fail(message)
        pytest.skip(message)
    url: str = request.getfixturevalue("redis_url")
    return url


@pytest.mark.e2e
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_example_runs_as_on_the_reference(
    case: Case, examples: Path, reference_python: Path, cli: str, request: pytest.FixtureRequest
) -> None:
    redis = _needs_redis(request, reference_python) if case.redis else None
    theirs, ours = run_both(case, str(reference_python), cli, redis)
    # No traceback, except where the reference ends with one too (max_budget_usd.py: its
    # last query raises ResultError on both); then the same exception.
    assert raised(ours.stderr) == raised(theirs.stderr), ours.stderr[-3000:]
    assert ours.returncode == theirs.returncode, (theirs.stderr[-2000:], ours.stderr[-2000:])
    assert ours.stdout == theirs.stdout, _diff(theirs.stdout, ours.stdout)
    assert log_lines(ours.stderr) == log_lines(theirs.stderr)
    assert len(ours.requests) == len(theirs.requests), "not as many model requests"
    for index, (mine, reference) in enumerate(zip(ours.requests, theirs.requests, strict=True)):
        assert mine == reference, f"model request {index}:\n" + _diff(
            json.dumps(json.loads(reference), indent=1), json.dumps(json.loads(mine), indent=1)
        )
    assert ours.stdout.strip(), "the example printed nothing"
