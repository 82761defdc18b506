"""pytest plugin (auto-registered through the ``pytest11`` entry point ``ccwire``).

Fixtures:

* ``scripted_model``: a started `ScriptedModel` with an empty
  script (call ``scripted_model.add(...)``), stopped after the test.
* ``offline_env``: the environment dict (see `offline_env()`) that
  points the ``claude`` CLI at ``scripted_model``, with a fresh ``HOME`` under
  ``tmp_path``; pass it as ``env=`` to the SDK options or to ``subprocess``.

Both fixtures need the Claude Code CLI (they exist to run it offline): without one, the
test is skipped with one reason that says how to install it
(`npm install @anthropic-ai/claude-code@<pinned version>`, or set `CCWIRE_CLI_PATH`).

The heavy lifting is imported only when a fixture is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .._core.errors import CLINotFoundError
from .._transport.discovery import ENV_VAR, INSTALL_COMMAND, find_cli

if TYPE_CHECKING:
    from ._scripted_model import ScriptedModel


__all__ = ["offline_env", "require_cli", "scripted_model"]


def require_cli() -> str:
    """The Claude Code CLI's path; skips the calling test with an install hint if none.

    Returns:
        The absolute path of the `claude` executable (see `find_cli`).
    """
    try:
        return find_cli()
    except CLINotFoundError:
        pytest.skip(
            f"Claude Code CLI not found: install it with `{INSTALL_COMMAND}` or set {ENV_VAR}"
        )


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A started ScriptedModel with an empty script; stopped at teardown."""
    require_cli()
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
