"""``ccwire.types`` answers every import that code written for claude-agent-sdk makes
from ``claude_agent_sdk.types`` (the reference's names are read live from its venv)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, get_type_hints, is_typeddict

import pytest

import ccwire
import ccwire.types
from tests.compat.conftest import on_reference

_REFERENCE_SCRIPT = r"""
import collections.abc, dataclasses, json, pathlib, types, typing, typing_extensions
import claude_agent_sdk.types as t
stdlib = (typing, dataclasses, collections.abc, pathlib, typing_extensions)
out = {}
for name in dir(t):
    value = getattr(t, name)
    if name.startswith("_") or isinstance(value, types.ModuleType):
        continue
    if any(getattr(m, name, None) is value for m in stdlib):
        continue
    keys = sorted(getattr(value, "__annotations__", {})) if typing.is_typeddict(value) else None
    out[name] = keys
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def reference_types(reference_python: Path) -> dict[str, list[str] | None]:
    names: dict[str, list[str] | None] = on_reference(reference_python, _REFERENCE_SCRIPT, 120)
    return names


def test_every_reference_type_imports_from_ccwire_types(
    reference_types: dict[str, list[str] | None],
) -> None:
    missing = sorted(set(reference_types) - set(ccwire.types.__all__))
    assert missing == []
    for name in reference_types:
        value = getattr(ccwire.types, name)
        if name in ccwire.__all__:
            assert value is getattr(ccwire, name), name


def test_typed_dicts_have_the_reference_keys(
    reference_types: dict[str, list[str] | None],
) -> None:
    checked = 0
    for name, keys in reference_types.items():
        value = getattr(ccwire.types, name)
        if keys is None or not isinstance(value, type):
            continue
        ours = {k for cls in value.__mro__ for k in getattr(cls, "__annotations__", {})}
        assert set(keys) <= ours, (name, sorted(set(keys) - ours))
        checked += 1
    assert checked >= 20  # the control frames, hook outputs, MCP configs and more


_OPTIONAL_KEYS = r"""
import json, typing
import claude_agent_sdk.types as t
print(json.dumps({
    name: [sorted(value.__required_keys__), sorted(value.__optional_keys__)]
    for name, value in vars(t).items() if typing.is_typeddict(value)
}))
"""


def test_typed_dicts_take_the_references_optional_keys_as_optional(
    reference_python: Path,
) -> None:
    # code that builds a frame dict without a key the reference marks NotRequired
    # (`SDKControlPermissionRequest(..., no title)`) type-checks on the reference; ccwire's
    # control frame dicts, written with `from __future__ import annotations`, took every
    # NotRequired key for a required one (in __required_keys__, for mypy and at runtime)
    differ = {}
    for name, (required, optional) in on_reference(reference_python, _OPTIONAL_KEYS, 120).items():
        ours = getattr(ccwire.types, name, None)
        if not (isinstance(ours, type) and is_typeddict(ours)):
            continue  # (an alias of the dict form: see the migration table)
        req_ours: frozenset[str] = ours.__required_keys__  # type: ignore[attr-defined]
        opt_ours: frozenset[str] = ours.__optional_keys__  # type: ignore[attr-defined]
        wrong = sorted(
            {k for k in optional if k in req_ours} | {k for k in required if k in opt_ours}
        )
        if wrong:
            differ[name] = wrong
    assert differ == {}


def test_the_import_line_of_reference_code_works() -> None:
    code = (
        "from ccwire.types import HookContext, HookInput, HookJSONOutput, HookMatcher,"
        " SDKControlRequest, SyncHookJSONOutput, McpServer\n"
        "import ccwire\n"
        "assert McpServer is ccwire.SdkMcpServer\n"
        "print(SDKControlRequest.__module__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "ccwire.types"


def test_control_frame_dicts_resolve_their_hints() -> None:
    hints = get_type_hints(ccwire.types.SDKControlRequest)
    assert set(hints) == {"type", "request_id", "request"}
    frame: Any = {"type": "control_request", "request_id": "r1",
                  "request": {"subtype": "interrupt"}}  # fmt: skip
    typed: ccwire.types.SDKControlRequest = frame
    assert typed["request"]["subtype"] == "interrupt"


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchType'"):
        _ = ccwire.types.NoSuchType  # type: ignore[attr-defined]
    assert "SDKControlRequest" in dir(ccwire.types)
