"""`FakeCLI` as its docstring shows it to a user."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import anyio
import pytest

import ccwire
from ccwire.testing import FakeCLI, memory_transport_pair

pytestmark = pytest.mark.anyio


async def test_the_docstring_example_runs() -> None:
    """The example in ``help(FakeCLI)`` runs as written (top-level await allowed)."""
    assert FakeCLI.__doc__ is not None
    found = re.search(r"```python\n(.*?)```", FakeCLI.__doc__, re.DOTALL)
    assert found is not None, "no example in FakeCLI's docstring"
    code = compile(
        textwrap.dedent(found.group(1)), "FakeCLI.__doc__", "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )  # fmt: skip
    namespace = {
        "anyio": anyio,
        "ClaudeSDKClient": ccwire.ClaudeSDKClient,
        "FakeCLI": FakeCLI,
        "memory_transport_pair": memory_transport_pair,
    }
    with anyio.fail_after(10):
        result = eval(code, namespace)
        if inspect.isawaitable(result):
            await result
    assert namespace["messages"][-1].result == "Hi!"  # type: ignore[index]
