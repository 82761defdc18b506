"""ccwire's public constants hold what the TypeScript SDK's declarations say they hold."""

from __future__ import annotations

from typing import Any, get_args

import ccwire
import ccwire.types
from tests.compat.ts_api import string_literals


def _declared(ts_api: Any, name: str) -> list[str]:
    return string_literals(ts_api.consts[name])


def test_the_hook_events_are_the_typescript_sdks_plus_the_newer_one(ts_api: Any) -> None:
    ours = list(ccwire.HOOK_EVENTS)
    theirs = _declared(ts_api, "HOOK_EVENTS")
    # PreSkillShellCommand is the 0.3.332 SDK's (CLI 2.1.332), Interrupt the 0.3.337
    # SDK's (after StopFailure there); 0.3.330 has neither
    newer = ["Interrupt", "PreSkillShellCommand"]
    assert [e for e in ours if e not in newer] == theirs
    assert ours.index("Interrupt") == ours.index("StopFailure") + 1
    assert ours[-1] == "PreSkillShellCommand" and set(newer) <= set(ours)
    assert ours == list(get_args(ccwire.HookEvent))


def test_the_exit_reasons_and_builtin_tools_are_the_declared_ones(ts_api: Any) -> None:
    assert list(ccwire.EXIT_REASONS) == _declared(ts_api, "EXIT_REASONS")
    assert list(ccwire.BUILTIN_TOOL_NAMES) == _declared(ts_api, "BUILTIN_TOOL_NAMES")
    assert list(get_args(ccwire.ExitReason)) == list(ccwire.EXIT_REASONS)


def test_the_message_prefixes_are_the_declared_ones(ts_api: Any) -> None:
    for name in (
        "ORG_POLICY_LIMIT_PREFIXES",
        "USAGE_LIMIT_ERROR_PREFIXES",
        "USAGE_TRANSITION_PREFIXES",
        "USAGE_WARNING_PREFIXES",
    ):
        assert list(getattr(ccwire, name)) == _declared(ts_api, name), name


def test_the_dynamic_boundary_marker(ts_api: Any) -> None:
    declared = _declared(ts_api, "SYSTEM_PROMPT_DYNAMIC_BOUNDARY")
    assert declared == [ccwire.SYSTEM_PROMPT_DYNAMIC_BOUNDARY]


def test_the_legacy_tool_names_are_the_shipped_ones(ts_api: Any) -> None:
    # a record in the declarations: its value is in the shipped JavaScript
    assert dict(ccwire.LEGACY_TOOL_NAME_ALIASES) == ts_api.legacy_tool_name_aliases
    assert all(new in ccwire.BUILTIN_TOOL_NAMES for new in ccwire.LEGACY_TOOL_NAME_ALIASES.values())


def test_the_literal_types_hold_every_declared_value(ts_api: Any) -> None:
    from tests.compat.ts_api import find_package, statements, union_members

    package = find_package()
    assert package is not None
    declared = {s.name: s for s in statements((package / "sdk.d.ts").read_text("utf-8"))}
    ours = {  # TypeScript name -> ccwire's
        "SDKAssistantMessageError": ccwire.types.AssistantMessageError,
        "SessionStoreFlush": ccwire.SessionStoreFlushMode,
        **{
            name: getattr(ccwire, name)
            for name in (
                "PermissionUpdateDestination",
                "PermissionBehavior",
                "PermissionMode",
                "SdkBeta",
                "EffortLevel",
                "SettingSource",
            )
        },
    }
    short = {}
    for name, python in ours.items():
        theirs = union_members(declared[name].text.split("=", 1)[1].rstrip(";"))
        missing = set(string_literals(" ".join(theirs))) - set(get_args(python))
        if missing:
            short[name] = sorted(missing)
    assert short == {}
