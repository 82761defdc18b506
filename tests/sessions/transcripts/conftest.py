"""Fixtures for the transcript tests: captured transcripts, the reference SDK's python."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .make_transcripts import FIXTURE_CWD, FIXTURE_DIR

ROOT = Path(__file__).resolve().parents[3]
DUMP = Path(__file__).with_name("dump_calls.py")

RefRunner = Callable[[list[list[Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Captured:
    """The captured transcripts, copied to a temporary config directory.

    Attributes:
        config: The `CLAUDE_CONFIG_DIR` now set for the test.
        project_dir: The directory holding the transcripts.
        cwd: The sessions' project path (it does not exist on disk).
        multi_turn: A session of two turns with tool calls (two in parallel), resumed.
        subagent: A session that ran one subagent.
        forked: The CLI's fork of `multi_turn`.
    """

    config: Path
    project_dir: Path
    cwd: str
    multi_turn: str
    subagent: str
    forked: str


@pytest.fixture
def captured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Captured:
    """The committed real-CLI transcripts in a fresh `CLAUDE_CONFIG_DIR`."""
    config = tmp_path / "config"
    shutil.copytree(FIXTURE_DIR / "projects", config / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    ids = dict(line.split() for line in (FIXTURE_DIR / "sessions.txt").read_text().splitlines())
    (project_dir,) = (config / "projects").iterdir()
    return Captured(
        config=config,
        project_dir=project_dir,
        cwd=FIXTURE_CWD,
        multi_turn=ids["multi_turn"],
        subagent=ids["subagent"],
        forked=ids["forked"],
    )


def _ref_python() -> str | None:
    explicit = os.environ.get("CCWIRE_REF_PYTHON")
    if explicit:
        return explicit
    candidate = ROOT / "bench" / ".venv-ref" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


@pytest.fixture(scope="session")
def ref_python() -> str:
    """The python of a venv with `claude-agent-sdk==0.2.187` (`make` builds it).

    Looked up in `$CCWIRE_REF_PYTHON`, then `bench/.venv-ref`. Missing, the test is
    skipped, except in CI (`CI=true`), where it fails.
    """
    found = _ref_python()
    if found is None or not Path(found).exists():
        message = "the reference SDK venv is missing (make bench/.venv-ref/bin/python)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture
def run_ref(ref_python: str) -> RefRunner:
    """Run calls through the reference SDK in its own venv, with this test's environment."""
    return functools.partial(run_reference, ref_python, DUMP)


def run_reference(ref_python: str, script: Path, job: Any) -> list[dict[str, Any]]:
    """The results ``script`` (`dump_calls.py`, `dump_store_calls.py`) prints for ``job``,
    run with the reference SDK in its own venv, with this test's environment."""
    done = subprocess.run(
        [ref_python, str(script), "claude_agent_sdk"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result
