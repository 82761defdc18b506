"""The pytest plugin of `ccwire.testing` without a Claude Code CLI (a user's pytest run,
through ``pytester``, with `PATH` and `CCWIRE_CLI_PATH` pointing nowhere): its fixtures skip with
one reason that names the install command, and the run's summary says so without
`-rs`; under `CI=true` they fail instead, unless the user allows skipping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from ccwire._transport.discovery import INSTALL_COMMAND

USER_TESTS = """
def test_with_the_model(scripted_model):
    raise AssertionError("must not run without a CLI")

def test_with_the_env(offline_env):
    raise AssertionError("must not run without a CLI")
"""


@dataclass
class Done:
    """A user's pytest run: its exit code and what it printed."""

    returncode: int
    stdout: str


@pytest.fixture
def pytest_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run the user's tests in a pytest session of their own (the plugin found through
    its entry point), with no CLI anywhere and ``env`` set."""

    def run(*args: str, env: dict[str, str] | None = None) -> Done:
        pytester.makepyfile(test_user=USER_TESTS)
        for name in ("CCWIRE_CLI_PATH", "CI", "CCWIRE_SKIP_WITHOUT_CLI"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("PATH", str(pytester.path / "bin"))
        monkeypatch.setenv("HOME", str(pytester.path))
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
        return Done(int(result.ret), result.stdout.str())

    return run


def test_fixtures_skip_without_a_cli(pytest_run: Any) -> None:
    done = pytest_run("-rs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout, done.stdout
    reasons = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(reasons) == 2, done.stdout
    for line in reasons:
        assert f"Claude Code CLI not found: install it with `{INSTALL_COMMAND}`" in line, line
        assert "CCWIRE_CLI_PATH" in line


def test_the_summary_says_why_they_skipped_without_asking(pytest_run: Any) -> None:
    """No `-rs`: a green run with skips still ends with a ccwire warning naming them."""
    done = pytest_run()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "ccwire warning" in line)
    section = "\n".join(lines[start:])
    assert "2 test(s) SKIPPED: the Claude Code CLI was not found" in section
    assert "test_user.py::test_with_the_model" in section
    assert "test_user.py::test_with_the_env" in section
    assert f"Install it with `{INSTALL_COMMAND}`" in section
    assert "2 skipped" in lines[-1] and lines.index(lines[-1]) > start


def test_under_ci_they_fail_instead(pytest_run: Any) -> None:
    done = pytest_run(env={"CI": "true"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 errors" in done.stdout.splitlines()[-1], done.stdout
    assert "CI=true is set, so it fails instead of skipping" in done.stdout
    assert "CCWIRE_SKIP_WITHOUT_CLI=1" in done.stdout
    assert "must not run" not in done.stdout  # the test bodies never ran


@pytest.mark.parametrize(
    ("env", "ini"),
    [({"CCWIRE_SKIP_WITHOUT_CLI": "1"}, ""), ({}, "[pytest]\nccwire_skip_without_cli = true\n")],
    ids=["env", "ini"],
)
def test_ci_may_allow_skipping(
    pytester: pytest.Pytester, pytest_run: Any, env: dict[str, str], ini: str
) -> None:
    if ini:
        (pytester.path / "pytest.ini").write_text(ini)
    done = pytest_run(env={"CI": "true", **env})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout and "ccwire warning" in done.stdout


def test_an_async_test_without_a_marker_is_told_to_add_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest fails an unmarked ``async def`` test with "install a suitable plugin" (anyio
    is installed): a test using the fixtures is told the marker it lacks; a marked one
    runs, and an unmarked test without the fixtures keeps pytest's report alone."""
    cli = pytester.path / "claude"  # the fixtures need a CLI to exist, not to run
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    monkeypatch.setenv("CCWIRE_CLI_PATH", str(cli))
    pytester.makepyfile(
        test_user="""
import pytest

async def test_unmarked(offline_env):
    assert offline_env

@pytest.mark.anyio
async def test_marked(offline_env):
    assert offline_env

async def test_unmarked_without_the_fixtures():
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    out = result.stdout.str()
    assert "test_marked[asyncio] PASSED" in out or "PASSED test_user.py::test_marked" in out, out
    assert "FAILED test_user.py::test_unmarked - " in out, out
    from ccwire.testing._pytest_plugin import ASYNC_HINT

    assert out.count("ccwire hint") == 1, out
    assert "add @pytest.mark.anyio above it" in out, out
    assert ASYNC_HINT.split(":")[0] in out
