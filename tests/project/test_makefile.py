"""`make demo` installs only what the demo needs, `make test` everything: read from
`make -n` (what make would run) in a copy of the build files with nothing installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = (
    "Makefile",
    "package.json",
    "package-lock.json",
    "pyproject.toml",
    "tests/compat/ts-sdk/package.json",
    "tests/compat/ts-sdk/package-lock.json",
)

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(tmp_path: Path, target: str) -> str:
    for name in FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    # run from `make test`, make would pass its flags and level down (and print
    # "Entering directory"): this make starts afresh
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(
        ["make", "-n", target],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_make_demo_installs_only_the_demos_needs(tmp_path: Path) -> None:
    commands = planned(tmp_path, "demo")
    assert "pip install --quiet -e '.[cli]'" in commands
    assert "npm ci --omit=dev" in commands
    assert "[dev]" not in commands and "--include=dev" not in commands
    assert "npm install" not in commands  # npm ci: package.json and its lock stay as they are
    assert "ts-sdk" not in commands
    assert commands.rstrip().endswith("-m ccwire demo")


def test_make_test_installs_everything_it_needs(tmp_path: Path) -> None:
    commands = planned(tmp_path, "test")
    assert "pip install --quiet -e '.[dev]'" in commands
    assert "npm ci --include=dev" in commands  # the Inspector, the conformance suite, Node 22
    assert "npm install --no-audit" not in commands
    # the TypeScript SDK the migration page compares with, from its own lock, apart
    assert "npm ci --prefix .cache/ts-sdk --omit=optional" in commands
    assert "pip install --quiet -e '.[docs]'" in commands and "claude-agent-sdk==" in commands


def test_make_test_runs_the_main_suite_on_two_workers_with_coverage(tmp_path: Path) -> None:
    commands = planned(tmp_path, "test").replace("\\\n", " ").splitlines()
    main_run, ray_faults = [line for line in commands if ".venv/bin/pytest " in line]
    assert "-n 2 --dist loadgroup" in main_run  # pytest-xdist, one test at a time
    assert "--cov=ccwire" in main_run  # pytest-cov combines the workers' coverage
    assert " -m " not in main_run  # every tier
    # but the Ray fault tests, which run after, in one process, their coverage added
    assert main_run.count("--ignore") == 1 and "--ignore=tests/batch/test_batch_ray.py" in main_run
    assert "--cov-fail-under=0" in main_run  # the floor is checked on the sum
    assert ray_faults.split(".venv/bin/pytest ")[1].split()[0] == "tests/batch/test_batch_ray.py"
    assert "--cov=ccwire --cov-append" in ray_faults and " -n " not in ray_faults
    assert "--cov-fail-under" not in ray_faults  # the floor of pyproject.toml


def test_the_cli_is_the_only_runtime_dependency_of_package_json() -> None:
    import json

    package = json.loads((ROOT / "package.json").read_text())
    assert list(package["dependencies"]) == ["@anthropic-ai/claude-code"]
    assert set(package["devDependencies"]) == {
        "@modelcontextprotocol/conformance",
        "@modelcontextprotocol/inspector",
        "node",
    }
