"""pytest plugin (auto-registered through the ``pytest11`` entry point ``ccwire``).

Fixtures:

* ``scripted_model``: a started `ScriptedModel` with an empty
  script (call ``scripted_model.add(...)``), stopped after the test.
* ``offline_env``: the environment dict (see `offline_env()`) that
  points the ``claude`` CLI at ``scripted_model``, with a fresh ``HOME`` under
  ``tmp_path``; pass it as ``env=`` to the SDK options or to ``subprocess``.

Both fixtures need the Claude Code CLI (they exist to run it offline). Without one:

* locally, the test is skipped, and the end of the run says so in a ``ccwire`` section
  of the summary (how many tests were skipped, why, and how to install the CLI), so a
  green run that tested nothing does not pass unnoticed;
* under ``CI=true`` the test fails instead, unless skipping is allowed: the
  environment variable ``CCWIRE_SKIP_WITHOUT_CLI=1``, or the ini option
  ``ccwire_skip_without_cli = true`` (``pytest.ini``, ``[tool.pytest.ini_options]``).

An ``async def`` test that uses a fixture but has no async marker, which pytest fails
with "async def functions are not natively supported", gets a ``ccwire hint`` section
in its report: add ``@pytest.mark.anyio``.

The heavy lifting is imported only when a fixture is used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .._core.errors import CLINotFoundError
from .._transport.discovery import ENV_VAR, INSTALL_COMMAND, find_cli

if TYPE_CHECKING:
    from ._scripted_model import ScriptedModel


__all__ = ["offline_env", "require_cli", "scripted_model"]

SKIP_ENV = "CCWIRE_SKIP_WITHOUT_CLI"
"""Set to 1 to let the fixtures skip under ``CI=true`` when no CLI is found."""

SKIP_INI = "ccwire_skip_without_cli"
"""The ini option that does the same as `SKIP_ENV`."""

_TRUE = ("1", "true", "yes", "on")
_SKIPPED = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ini option `SKIP_INI`."""
    parser.addini(
        SKIP_INI,
        type="bool",
        default=False,
        help="ccwire: let the scripted_model/offline_env fixtures skip under CI=true when "
        f"the Claude Code CLI is missing (also: {SKIP_ENV}=1)",
    )


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in _TRUE


def _skip_allowed(config: pytest.Config | None) -> bool:
    """Whether a missing CLI may skip: always outside CI; in CI only when allowed."""
    if not _flag(os.environ.get("CI")):
        return True
    if _flag(os.environ.get(SKIP_ENV)):
        return True
    return config is not None and bool(config.getini(SKIP_INI))


def require_cli(request: pytest.FixtureRequest | None = None) -> str:
    """The Claude Code CLI's path; without one, skips the calling test with an install
    hint (fails it under ``CI=true`` unless skipping is allowed, see the module doc).

    Args:
        request: The calling fixture's request: its run's summary counts the skip, and
            its ini file can allow skipping in CI.

    Returns:
        The absolute path of the `claude` executable (see `find_cli`).
    """
    try:
        return find_cli()
    except CLINotFoundError:
        reason = f"Claude Code CLI not found: install it with `{INSTALL_COMMAND}` or set {ENV_VAR}"
    config = request.config if request is not None else None
    if not _skip_allowed(config):
        pytest.fail(
            f"{reason}. This test needs the CLI and CI=true is set, so it fails instead of "
            f"skipping; set {SKIP_ENV}=1 (or the ini option {SKIP_INI} = true) to let it skip.",
            pytrace=False,
        )
    if request is not None and config is not None:
        config.stash.setdefault(_SKIPPED, []).append(request.node.nodeid)
    pytest.skip(reason)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Say, whatever the options, how many tests skipped for want of the CLI."""
    skipped = config.stash.get(_SKIPPED, [])
    if not skipped:
        return
    from .._transport.discovery import ENV_VAR, INSTALL_COMMAND

    write = terminalreporter.write_line
    terminalreporter.write_sep("=", "ccwire warning", yellow=True, bold=True)
    write(
        f"{len(skipped)} test(s) SKIPPED: the Claude Code CLI was not found, so the "
        "scripted_model/offline_env fixtures could not run them:",
        yellow=True,
        bold=True,
    )
    for nodeid in skipped[:5]:
        write(f"  {nodeid}")
    if len(skipped) > 5:
        write(f"  ... and {len(skipped) - 5} more")
    write(f"Install it with `{INSTALL_COMMAND}`, or set {ENV_VAR} to the executable.")
    write(f"Under CI=true these tests fail instead (unless {SKIP_ENV}=1).")


_FIXTURES = ("scripted_model", "offline_env")
_NO_ASYNC_PLUGIN = "async def functions are not natively supported"
ASYNC_HINT = (
    "this async test has no async marker: add @pytest.mark.anyio above it (or "
    "`pytestmark = pytest.mark.anyio` at the top of the module); anyio's pytest plugin "
    "comes with ccwire, nothing else to install"
)
"""What a failed ``async def`` test that uses the fixtures is told, under pytest's own
message (which suggests installing a plugin)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Add `ASYNC_HINT` to the report of an ``async def`` test that uses this plugin's
    fixtures and that pytest failed (or skipped) for want of an async plugin."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if (
        call.when == "call"
        and report.longrepr is not None
        and any(name in getattr(item, "fixturenames", ()) for name in _FIXTURES)
        and _NO_ASYNC_PLUGIN in str(report.longrepr)
    ):
        report.sections.append(("ccwire hint", ASYNC_HINT))


@pytest.fixture
def scripted_model(request: pytest.FixtureRequest) -> Iterator[ScriptedModel]:
    """A started ScriptedModel with an empty script; stopped at teardown."""
    require_cli(request)
    # here, not at the top: pytest loads this plugin in every session of every project
    # that installs ccwire, and most never start the scripted model's HTTP server
    from ._scripted_model import ScriptedModel

    with ScriptedModel() as model:
        yield model


@pytest.fixture
def offline_env(scripted_model: ScriptedModel, tmp_path: Path) -> dict[str, str]:
    """Environment for the CLI: ``scripted_model`` as the API, ``tmp_path/home`` as HOME."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return scripted_model.env(home)
