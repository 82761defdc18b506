"""Fixtures for comparing ccwire with Anthropic's ``claude-agent-sdk`` 0.2.187.

The reference package lives in its own virtual environment (it must not be importable
next to ccwire). Its interpreter is found, in order, from:

* the ``CCWIRE_REF_PYTHON`` environment variable;
* ``bench/.venv-ref/bin/python`` in this checkout (``make ref-venv`` creates it).

Without one the live comparisons are skipped, except when ``CCWIRE_REQUIRE_REF=1``
(``make test`` sets it), where they fail: there the reference is always installed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.compat.api_dump import describe_package

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SNAPSHOT = HERE / "reference_api.json"
"""The reference's API description, kept in the repository (see `test_snapshot_is_current`)."""

REFERENCE_VERSION = "0.2.187"


def find_reference_python() -> Path | None:
    """The interpreter of a virtual environment with ``claude-agent-sdk`` installed."""
    explicit = os.environ.get("CCWIRE_REF_PYTHON")
    candidates = [Path(explicit)] if explicit else []
    candidates.append(REPO / "bench" / ".venv-ref" / "bin" / "python")
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def reference_python() -> Path:
    """The reference's interpreter (skips, or fails under ``CCWIRE_REQUIRE_REF=1``)."""
    found = find_reference_python()
    if found is None:
        message = "claude-agent-sdk's venv not found: run `make ref-venv` or set CCWIRE_REF_PYTHON"
        if os.environ.get("CCWIRE_REQUIRE_REF") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def reference_api(reference_python: Path) -> dict[str, Any]:
    """The live description of ``claude_agent_sdk``, made by its own interpreter."""
    out = subprocess.run(
        [str(reference_python), str(HERE / "api_dump.py"), "claude_agent_sdk"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    api: dict[str, Any] = json.loads(out)
    return api


@pytest.fixture(scope="session")
def reference_snapshot() -> dict[str, Any]:
    """The description of ``claude_agent_sdk`` kept in `SNAPSHOT`."""
    api: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return api


@pytest.fixture(scope="session")
def ccwire_api() -> dict[str, Any]:
    """The description of ``ccwire``, made in this process."""
    return describe_package("ccwire")


@pytest.fixture(scope="session")
def ts_api() -> Any:
    """The TypeScript SDK's API, read from its ``sdk.d.ts`` (skips without the package,
    or fails under ``CCWIRE_REQUIRE_TS_SDK=1``: ``make test`` installs it)."""
    from tests.compat.ts_api import TS_SDK_VERSION, find_package, read_package

    found = find_package()
    if found is None:
        message = (
            f"@anthropic-ai/claude-agent-sdk {TS_SDK_VERSION} not found: run `make ts-sdk` "
            "or set CCWIRE_TS_SDK_DIR to the package's directory"
        )
    else:
        api = read_package(found)
        if api.version == TS_SDK_VERSION:
            return api
        message = (
            f"@anthropic-ai/claude-agent-sdk {api.version} found at {found}, the pin is "
            f"{TS_SDK_VERSION}: run `make ts-sdk`"
        )
    if os.environ.get("CCWIRE_REQUIRE_TS_SDK") == "1":
        pytest.fail(message)
    pytest.skip(message)


def on_reference(reference_python: Path, script: str, timeout: float = 60) -> Any:
    """What ``script`` prints (JSON), run with ``python -c`` in the reference's venv."""
    out = subprocess.run(
        [str(reference_python), "-c", script],
        capture_output=True, text=True, timeout=timeout, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)
