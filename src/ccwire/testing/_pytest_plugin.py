"""pytest plugin (auto-registered through the ``pytest11`` entry point ``ccwire``).

Fixtures:

* ``scripted_model``: a started `ScriptedModel` with an empty
  script (call ``scripted_model.add(...)``), stopped after the test.
* ``offline_env``: the environment dict (see `offline_env()`) that
  points the ``claude`` CLI at ``scripted_model``, with a fresh ``HOME`` under
  ``tmp_path``; pass it as ``env=`` to the SDK options or to ``subprocess``.

The heavy lifting is imported only when a fixture is used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._scripted_model import ScriptedModel


__all__ = ["offline_env", "scripted_model"]


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A started ScriptedModel with an empty script; stopped at teardown."""
    from ._scripted_model import ScriptedModel

    with ScriptedModel() as model:
        yield model


@pytest.fixture
def offline_env(scripted_model: ScriptedModel, tmp_path: Path) -> dict[str, str]:
    """Environment for the CLI: ``scripted_model`` as the API, ``tmp_path/home`` as HOME."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return scripted_model.env(home)
