"""Port of the reference SDK's ``e2e-tests/test_stderr_callback.py``.

The ``stderr`` callback is wired up, and a clean run (from an empty directory, without
debug output) hands it nothing.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import ResultMessage, query
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_stderr_callback_gets_nothing_on_a_clean_run(
    model: ScriptedModel, make_options: Any
) -> None:
    lines: list[str] = []
    model.add(text("2"))
    # the default setting sources, from an empty working directory (make_options' cwd)
    options = make_options(stderr=lines.append)
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="What is 1+1?", options=options)]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert lines == []


async def test_stderr_callback_gets_what_the_cli_writes(
    model: ScriptedModel, make_options: Any
) -> None:
    # not in the reference: the control, so that the empty list above means a quiet CLI
    # and not a callback that is never called
    lines: list[str] = []
    model.add(text("2"))
    options = make_options(stderr=lines.append, extra_args={"debug-to-stderr": None})
    with anyio.fail_after(TIMEOUT):
        messages = [m async for m in query(prompt="What is 1+1?", options=options)]
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert lines and all(isinstance(line, str) and "\n" not in line for line in lines)
