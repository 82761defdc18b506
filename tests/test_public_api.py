"""The public surface: sorted exports, docstrings, and a light ``import ccwire``."""

from __future__ import annotations

import inspect
import subprocess
import sys

import ccwire
import ccwire.testing


def test_all_is_sorted_and_unique() -> None:
    assert list(ccwire.__all__) == sorted(ccwire.__all__)
    assert len(set(ccwire.__all__)) == len(ccwire.__all__)
    assert list(ccwire.testing.__all__) == sorted(ccwire.testing.__all__)


def test_every_export_exists() -> None:
    for module in (ccwire, ccwire.testing):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == []


def test_public_classes_and_functions_have_docstrings() -> None:
    undocumented = []
    for module in (ccwire, ccwire.testing):
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and not (
                obj.__doc__ or ""
            ).strip():
                undocumented.append(f"{module.__name__}.{name}")
    assert undocumented == []


def test_reference_sdk_names_are_available() -> None:
    # the names a claude-agent-sdk user imports; switching is a one-line change
    for name in (
        "tool",
        "create_sdk_mcp_server",
        "ClaudeAgentOptions",
        "ClaudeSDKClient",
        "query",
        "AssistantMessage",
        "UserMessage",
        "SystemMessage",
        "ResultMessage",
        "StreamEvent",
        "TextBlock",
        "ThinkingBlock",
        "ToolUseBlock",
        "ToolResultBlock",
        "ToolPermissionContext",
        "PermissionResultAllow",
        "PermissionResultDeny",
        "HookMatcher",
        "ClaudeSDKError",
        "CLINotFoundError",
        "CLIConnectionError",
        "ProcessError",
        "CLIJSONDecodeError",
    ):
        assert name in ccwire.__all__, name


def test_error_tree_has_one_root() -> None:
    for name in ccwire.__all__:
        obj = getattr(ccwire, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            assert issubclass(obj, ccwire.CcwireError), name


def test_import_does_not_pull_heavy_packages() -> None:
    code = (
        "import sys, ccwire\n"
        "heavy = sorted(m for m in ('mcp', 'pydantic', 'jsonschema', 'rich', 'mcp_types') "
        "if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""
