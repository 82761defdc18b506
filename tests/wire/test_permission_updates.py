"""Permission updates on the wire (protocol reference §5.2), and CLI feature detection.

* every ``PermissionUpdate`` variant (6 types) with every destination (5) encodes to
  the exact wire form, decodes back to the same value, and survives the round trip
  through a real ``can_use_tool`` exchange (CLI suggestions in, the same updates out);
* malformed updates are refused all-or-nothing, with the reason, as the reference SDK
  does;
* :class:`ccwire._protocol.features.CliFeatures` detects capabilities from the
  ``initialize`` answer and each ``system/init``, including CLI 2.1.197, which reports
  none at all (§9; live_protocol.md "2.1.197 vs 2.1.330").
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, get_args

import anyio
import pytest

from ccwire import (
    CallbackError,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ControlProtocolError,
    HookEvent,
    HookMatcher,
    HookOutput,
    PermissionMode,
    PermissionRequestOutput,
    PermissionResultAllow,
    PermissionRuleValue,
    PermissionUpdate,
    PermissionUpdateDestination,
    SystemMessage,
    ToolPermissionContext,
    UnsupportedFeatureError,
    parse_hook_input,
)
from ccwire._callbacks.permissions import permission_update_problem
from ccwire._protocol.features import (
    LEGACY_HOOK_EVENTS,
    CliFeatures,
    is_unsupported_answer,
    parse_version,
    unsupported_error,
)
from ccwire._wire.codec import decode_permission_update, encode_permission_update
from ccwire.testing import FakeCLI, memory_transport_pair

DESTINATIONS = ["userSettings", "projectSettings", "localSettings", "session", "cliArg"]
MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]

# type -> (the update without a destination, its exact wire form without the destination)
VARIANTS: dict[str, tuple[PermissionUpdate, dict[str, Any]]] = {
    "addRules": (
        PermissionUpdate(
            type="addRules",
            rules=[
                PermissionRuleValue(tool_name="Bash", rule_content="npm test:*"),
                PermissionRuleValue(tool_name="Read"),
            ],
            behavior="allow",
        ),
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}, {"toolName": "Read"}],
            "behavior": "allow",
        },
    ),
    "replaceRules": (
        PermissionUpdate(
            type="replaceRules",
            rules=[PermissionRuleValue(tool_name="WebFetch", rule_content="domain:example.com")],
            behavior="deny",
        ),
        {
            "type": "replaceRules",
            "rules": [{"toolName": "WebFetch", "ruleContent": "domain:example.com"}],
            "behavior": "deny",
        },
    ),
    "removeRules": (
        PermissionUpdate(
            type="removeRules", rules=[PermissionRuleValue("mcp__calc__add")], behavior="ask"
        ),
        {"type": "removeRules", "rules": [{"toolName": "mcp__calc__add"}], "behavior": "ask"},
    ),
    "setMode": (
        PermissionUpdate(type="setMode", mode="acceptEdits"),
        {"type": "setMode", "mode": "acceptEdits"},
    ),
    "addDirectories": (
        PermissionUpdate(type="addDirectories", directories=["/work/a", "/work/b"]),
        {"type": "addDirectories", "directories": ["/work/a", "/work/b"]},
    ),
    "removeDirectories": (
        PermissionUpdate(type="removeDirectories", directories=["/work/a"]),
        {"type": "removeDirectories", "directories": ["/work/a"]},
    ),
}


def variant(kind: str, destination: str | None) -> tuple[PermissionUpdate, dict[str, Any]]:
    """The update of type ``kind`` saved to ``destination``, and its wire form."""
    update, wire = VARIANTS[kind]
    typed = PermissionUpdate(
        type=update.type,
        rules=update.rules,
        behavior=update.behavior,
        mode=update.mode,
        directories=update.directories,
        destination=destination,  # type: ignore[arg-type]
    )
    return typed, {**wire, "destination": destination or "session"}


def test_the_literals_list_every_destination_type_and_mode() -> None:
    assert list(get_args(PermissionUpdateDestination)) == DESTINATIONS
    assert list(get_args(PermissionMode)) == MODES
    type_hint = PermissionUpdate.__dataclass_fields__["type"].type
    assert all(kind in str(type_hint) for kind in VARIANTS) and len(VARIANTS) == 6


@pytest.mark.parametrize("destination", DESTINATIONS)
@pytest.mark.parametrize("kind", list(VARIANTS))
def test_every_variant_and_destination_encodes_exactly_and_round_trips(
    kind: str, destination: str
) -> None:
    update, wire = variant(kind, destination)
    assert encode_permission_update(update) == wire
    assert decode_permission_update(wire) == update
    assert encode_permission_update(decode_permission_update(wire)) == wire
    assert permission_update_problem(update) is None
    assert json.loads(json.dumps(encode_permission_update(update))) == wire  # plain JSON


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_a_missing_destination_is_sent_as_session(kind: str) -> None:
    update, wire = variant(kind, None)
    assert update.destination is None and permission_update_problem(update) is None
    assert encode_permission_update(update) == wire and wire["destination"] == "session"
    assert decode_permission_update(wire).destination == "session"


@pytest.mark.parametrize("mode", MODES)
def test_set_mode_carries_every_permission_mode(mode: str) -> None:
    update = PermissionUpdate(type="setMode", mode=mode, destination="session")  # type: ignore[arg-type]
    assert encode_permission_update(update) == {
        "type": "setMode",
        "mode": mode,
        "destination": "session",
    }
    assert permission_update_problem(update) is None


def test_a_whole_tool_rule_never_sends_a_null_rule_content() -> None:
    update = PermissionUpdate(
        type="addRules", rules=[PermissionRuleValue("Read", None)], behavior="allow"
    )
    (rule,) = encode_permission_update(update)["rules"]
    assert rule == {"toolName": "Read"} and "null" not in json.dumps(rule)
    # a null from the CLI reads as "no rule content" too
    decoded = decode_permission_update(
        {
            "type": "addRules",
            "rules": [{"toolName": "Read", "ruleContent": None}],
            "behavior": "allow",
            "destination": "session",
        }
    )
    assert decoded.rules == [PermissionRuleValue(tool_name="Read", rule_content=None)]


def test_decoding_is_lenient_and_keeps_rule_order() -> None:
    decoded = decode_permission_update(
        {
            "type": "addRules",
            "rules": [{"toolName": "B"}, "junk", {"toolName": "A", "ruleContent": "x"}],
            "behavior": "allow",
            "destination": "projectSettings",
            "somethingNew": 1,
        }
    )
    assert decoded == PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue("B"), PermissionRuleValue("A", "x")],
        behavior="allow",
        destination="projectSettings",
    )


# ------------------------------------------------------------------ invalid updates

RULE = [PermissionRuleValue("Bash")]
INVALID: list[tuple[object, str]] = [
    (PermissionUpdate(type="addRules", behavior="allow"), "addRules needs rules"),
    (PermissionUpdate(type="replaceRules", rules=[], behavior="deny"), "replaceRules needs rules"),
    (
        PermissionUpdate(type="removeRules", rules=RULE),
        "removeRules needs a behavior (allow, deny or ask)",
    ),
    (
        PermissionUpdate(type="addRules", rules=RULE, behavior="maybe"),  # type: ignore[arg-type]
        "addRules needs a behavior (allow, deny or ask)",
    ),
    (PermissionUpdate(type="setMode"), "setMode needs a valid mode, not None"),
    (
        PermissionUpdate(type="setMode", mode="yolo"),  # type: ignore[arg-type]
        "setMode needs a valid mode, not 'yolo'",
    ),
    (PermissionUpdate(type="addDirectories"), "addDirectories needs directories"),
    (
        PermissionUpdate(type="removeDirectories", directories=[]),
        "removeDirectories needs directories",
    ),
    (
        PermissionUpdate(type="setMode", mode="plan", destination="global"),  # type: ignore[arg-type]
        "unknown destination 'global'",
    ),
    (
        PermissionUpdate(type="renameRules", rules=RULE, behavior="allow"),  # type: ignore[arg-type]
        "unknown update type 'renameRules'",
    ),
    (
        {"type": "setMode", "mode": "plan"},
        "{'type': 'setMode', 'mode': 'plan'} is not a PermissionUpdate",
    ),
]


@pytest.mark.parametrize(("update", "problem"), INVALID)
def test_invalid_updates_are_named_with_their_problem(update: object, problem: str) -> None:
    assert permission_update_problem(update) == problem


# --------------------------------------------------- through can_use_tool (public API)


@asynccontextmanager
async def connected(
    options: ClaudeAgentOptions, init: Mapping[str, Any] | None = None
) -> AsyncIterator[tuple[ClaudeSDKClient, FakeCLI]]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake, init)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport=transport) as client:
                yield client, fake


@pytest.mark.anyio
async def test_suggestions_are_a_list_as_in_the_reference() -> None:
    # claude-agent-sdk's ToolPermissionContext.suggestions is a list: its own
    # tool_permission_callback.py example prints it, and callbacks extend it
    # (`ctx.suggestions + [rule]`), which a tuple refuses
    extra = PermissionUpdate(type="setMode", mode="acceptEdits", destination="session")
    seen: list[ToolPermissionContext] = []

    async def extend(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        seen.append(ctx)
        more = ctx.suggestions + [extra]  # noqa: RUF005 (as callbacks written for it do)
        return PermissionResultAllow(updated_permissions=more)

    update, wire = variant("addRules", "localSettings")
    async with connected(ClaudeAgentOptions(can_use_tool=extend)) as (_, fake):
        answer = await fake.request(
            "can_use_tool",
            tool_name="Bash",
            input={"command": "npm test"},
            tool_use_id="toolu_1",
            permission_suggestions=[wire],
        )
    (ctx,) = seen
    assert type(ctx.suggestions) is list
    assert repr(ctx.suggestions).startswith("[PermissionUpdate(type='addRules'")
    assert ctx.suggestions == [update]
    assert answer["response"]["updatedPermissions"] == [wire, extra.to_dict()]
    assert ToolPermissionContext().suggestions == []


@pytest.mark.anyio
@pytest.mark.parametrize("destination", DESTINATIONS)
async def test_cli_suggestions_arrive_typed_and_go_back_exactly(destination: str) -> None:
    pairs = [variant(kind, destination) for kind in VARIANTS]
    wire = [w for _, w in pairs]
    contexts: list[ToolPermissionContext] = []

    async def keep_all(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        contexts.append(ctx)
        return PermissionResultAllow(updated_permissions=list(ctx.suggestions))

    async with connected(ClaudeAgentOptions(can_use_tool=keep_all)) as (_, fake):
        answer = await fake.request(
            "can_use_tool",
            tool_name="Bash",
            input={"command": "npm test"},
            tool_use_id="toolu_1",
            permission_suggestions=wire,
        )
    (ctx,) = contexts
    assert ctx.suggestions == [u for u, _ in pairs]
    assert answer["subtype"] == "success"
    assert answer["response"] == {
        "behavior": "allow",
        "updatedInput": {"command": "npm test"},
        "updatedPermissions": wire,
    }


@pytest.mark.anyio
async def test_the_dict_form_of_an_answer_is_encoded_the_same_way() -> None:
    wire = [variant(kind, "localSettings")[1] for kind in VARIANTS]

    async def as_dict(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return {"behavior": "allow", "updated_permissions": wire}

    async with connected(ClaudeAgentOptions(can_use_tool=as_dict)) as (_, fake):
        answer = await fake.request("can_use_tool", tool_name="t", input={"a": 1}, tool_use_id="x")
    assert answer["response"] == {
        "behavior": "allow",
        "updatedInput": {"a": 1},
        "updatedPermissions": wire,
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("bad", "problem"), [(u, p) for u, p in INVALID if isinstance(u, PermissionUpdate)]
)
async def test_one_invalid_update_drops_them_all_but_keeps_the_decision(
    bad: PermissionUpdate, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    good = variant("addRules", "session")[0]

    async def allow(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(
            updated_input={"command": "ls"}, updated_permissions=[good, bad, good]
        )

    caplog.set_level(logging.WARNING, logger="ccwire")
    async with connected(ClaudeAgentOptions(can_use_tool=allow)) as (_, fake):
        answer = await fake.request(
            "can_use_tool", tool_name="Bash", input={"command": "rm -rf /"}, tool_use_id="t"
        )
    # the CLI rejects every update of an answer if one is malformed: send none of them
    assert answer["response"] == {"behavior": "allow", "updatedInput": {"command": "ls"}}
    warnings = [r.getMessage() for r in caplog.records if r.name == "ccwire"]
    assert warnings == [f"ccwire: dropping updated_permissions of a can_use_tool answer: {problem}"]


@pytest.mark.anyio
async def test_permission_request_hooks_see_typed_suggestions() -> None:
    seen: list[tuple[PermissionUpdate, ...]] = []
    wire = [variant(kind, "userSettings")[1] for kind in VARIANTS]

    async def hook(inp: Any, tid: str | None, ctx: Any) -> PermissionRequestOutput:
        seen.append(inp.permission_suggestions)
        return PermissionRequestOutput(
            decision=PermissionResultAllow(updated_permissions=list(inp.permission_suggestions))
        )

    options = ClaudeAgentOptions(hooks={"PermissionRequest": [HookMatcher(hooks=[hook])]})
    data = {
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "permission_suggestions": wire,
    }
    async with connected(options) as (_, fake):
        answer = await fake.request("hook_callback", callback_id="hook_0", input=data)
    assert seen == [tuple(variant(kind, "userSettings")[0] for kind in VARIANTS)]
    assert parse_hook_input(data)["permission_suggestions"] == wire
    assert answer["response"] == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedPermissions": wire},
        }
    }


@pytest.mark.anyio
async def test_permission_request_hooks_never_send_a_malformed_update() -> None:
    async def hook(inp: Any, tid: str | None, ctx: Any) -> PermissionRequestOutput:
        bad = PermissionUpdate(type="addRules", behavior="allow")  # no rules
        return PermissionRequestOutput(decision=PermissionResultAllow(updated_permissions=[bad]))

    options = ClaudeAgentOptions(
        hooks={"PermissionRequest": [HookMatcher(hooks=[hook])]}, on_callback_error=lambda e: None
    )
    data = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {}}
    async with connected(options) as (_, fake):
        answer = await fake.request("hook_callback", callback_id="hook_0", input=data)
    assert "updatedPermissions" not in json.dumps(answer)


HOOK_INPUT = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {}}
GOOD_WIRE = {
    "type": "addRules",
    "rules": [{"toolName": "Bash"}],
    "behavior": "allow",
    "destination": "session",
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("output", "problem"),
    [
        (  # the typed decision, with a malformed update among good ones
            PermissionRequestOutput(
                decision=PermissionResultAllow(
                    updated_input={"command": "ls"},
                    updated_permissions=[
                        variant("addRules", "session")[0],
                        PermissionUpdate(type="setMode", mode="yolo"),  # type: ignore[arg-type]
                    ],
                )
            ),
            "setMode needs a valid mode, not 'yolo'",
        ),
        (  # the same inside a HookOutput
            HookOutput(
                hook_specific_output=PermissionRequestOutput(
                    decision=PermissionResultAllow(
                        updated_input={"command": "ls"},
                        updated_permissions=[PermissionUpdate(type="addDirectories")],
                    )
                )
            ),
            "addDirectories needs directories",
        ),
        (  # the dict form
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {
                        "behavior": "allow",
                        "updatedInput": {"command": "ls"},
                        "updatedPermissions": [GOOD_WIRE, {**GOOD_WIRE, "destination": "global"}],
                    },
                }
            },
            "unknown destination 'global'",
        ),
    ],
)
async def test_a_hook_decision_with_a_malformed_update_is_sent_without_updates_and_reported(
    output: object, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    reported: list[CallbackError] = []

    async def decide(inp: Any, tid: str | None, ctx: Any) -> Any:
        return output

    options = ClaudeAgentOptions(
        hooks={"PermissionRequest": [HookMatcher(hooks=[decide])]},
        on_callback_error=reported.append,
    )
    caplog.set_level(logging.WARNING, logger="ccwire")
    async with connected(options) as (_, fake):
        answer = await fake.request("hook_callback", callback_id="hook_0", input=HOOK_INPUT)
    # the decision still goes out, without any of the updates (the CLI would reject all)
    assert answer["subtype"] == "success"
    assert answer["response"]["hookSpecificOutput"] == {
        "hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": {"command": "ls"}},
    }
    warnings = [r.getMessage() for r in caplog.records if r.name == "ccwire"]
    assert warnings == [
        f"ccwire: dropping updatedPermissions of a PermissionRequest hook answer: {problem}"
    ]
    (error,) = reported
    assert isinstance(error, CallbackError)
    assert (error.kind, error.event, error.timed_out) == ("hook", "PermissionRequest", False)
    assert "decide" in error.callback_name and problem in str(error)


@pytest.mark.anyio
async def test_well_formed_hook_updates_in_the_dict_form_go_out_encoded() -> None:
    typed = variant("setMode", "localSettings")

    async def decide(inp: Any, tid: str | None, ctx: Any) -> Any:
        decision = {"behavior": "allow", "updatedPermissions": [typed[0], GOOD_WIRE]}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    reported: list[CallbackError] = []
    options = ClaudeAgentOptions(
        hooks={"PermissionRequest": [HookMatcher(hooks=[decide])]},
        on_callback_error=reported.append,
    )
    async with connected(options) as (_, fake):
        answer = await fake.request("hook_callback", callback_id="hook_0", input=HOOK_INPUT)
    decision = answer["response"]["hookSpecificOutput"]["decision"]
    assert decision == {"behavior": "allow", "updatedPermissions": [typed[1], GOOD_WIRE]}
    assert reported == []


@pytest.mark.anyio
async def test_dropped_can_use_tool_updates_are_reported_as_callback_errors() -> None:
    reported: list[CallbackError] = []

    async def allow(
        name: str, inp: dict[str, Any], ctx: ToolPermissionContext
    ) -> PermissionResultAllow:
        return PermissionResultAllow(updated_permissions=[PermissionUpdate(type="setMode")])

    options = ClaudeAgentOptions(can_use_tool=allow, on_callback_error=reported.append)
    async with connected(options) as (_, fake):
        answer = await fake.request("can_use_tool", tool_name="Bash", input={"a": 1})
    assert answer["response"] == {"behavior": "allow", "updatedInput": {"a": 1}}
    (error,) = reported
    assert (error.kind, error.event, error.subtype) == ("can_use_tool", None, "can_use_tool")
    assert "allow" in error.callback_name
    assert str(error) == (
        "can_use_tool returned permission updates the CLI would reject; none sent: "
        "setMode needs a valid mode, not None"
    )


# ----------------------------------------------------------------- feature detection

INIT_CAPS = [
    "ui_surface_v1",
    "mcp_call_result_not_for_model_v1",
    "mcp_call_check_permissions_v1",
    "voice_call_talk_line_v1",
    "ui_pane_widget_v1",
    "reload_plugins_refuse_if_busy_v1",
    "get_usage_detached_v1",
]
"""The capabilities CLI 2.1.330 lists in its initialize answer (a subset)."""

INIT_2_1_330: dict[str, Any] = {
    "commands": [],
    "agents": [],
    "models": [],
    "account": {},
    "pid": 4242,
    "claude_code_version": "2.1.330",
    "current_permission_mode": "default",
    "hooks_applied": True,
    "hook_on_failure_supported": True,
    "session_state": "idle",
    "capabilities": INIT_CAPS,
}
"""The initialize answer of CLI 2.1.330 (its capabilities are a subset)."""

SYSTEM_INIT_CAPS = [
    "interrupt_receipt_v1",
    "interrupt_cancel_queued_v1",
    "msg_lifecycle_v1",
    "sdk_mcp_tools_list_changed",
    "sdk_mcp_manifests",
    "mcp_read_resource_v1",
    "mcp_call_result_not_for_model_v1",
    "reload_plugins_refuse_if_busy_v1",
]

INIT_2_1_197 = {
    "commands": [],
    "agents": [],
    "output_style": "default",
    "available_output_styles": ["default"],
    "models": [],
    "account": {},
    "pid": 4242,
}
"""The initialize answer of CLI 2.1.197: no capabilities, no version, no hooks_applied."""


def system_init(version: str, capabilities: list[Any] | None = None) -> SystemMessage:
    data: dict[str, Any] = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "claude_code_version": version,
        "tools": [],
    }
    if capabilities is not None:
        data["capabilities"] = capabilities
    return SystemMessage(subtype="init", data=data, raw=data)


def test_a_2_1_330_initialize_answer_gives_a_partial_list() -> None:
    features = CliFeatures(INIT_2_1_330)
    assert (features.legacy, features.complete, features.version) == (False, False, "2.1.330")
    assert features.capabilities == set(INIT_CAPS)
    assert features.supports("ui_surface_v1") is True
    # not in the initialize subset: unknown until the first system/init
    assert features.supports("interrupt_cancel_queued_v1") is None
    features.require("interrupt_cancel_queued_v1", "interrupt(cancel_queued=...)")  # no raise


def test_system_init_completes_the_list() -> None:
    features = CliFeatures(INIT_2_1_330)
    features.observe(system_init("2.1.330", [*SYSTEM_INIT_CAPS, 7, None]))
    assert features.complete is True and features.legacy is False
    assert features.capabilities == set(INIT_CAPS) | set(SYSTEM_INIT_CAPS)
    assert features.supports("interrupt_cancel_queued_v1") is True
    assert features.supports("ui_surface_v1") is True  # from initialize, still known
    assert features.supports("no_such_capability_v1") is False
    with pytest.raises(UnsupportedFeatureError) as err:
        features.require("no_such_capability_v1", "frobnicate()")
    assert str(err.value) == (
        "frobnicate() needs a Claude Code CLI with the 'no_such_capability_v1' capability; "
        "the connected CLI (2.1.330) does not report it (upgrade the CLI)"
    )
    assert isinstance(err.value, ControlProtocolError)


def test_a_2_1_197_initialize_answer_marks_a_legacy_cli() -> None:
    features = CliFeatures(INIT_2_1_197)
    assert (features.legacy, features.complete, features.version) == (True, False, None)
    assert features.capabilities == set()
    for capability in ("interrupt_receipt_v1", "sdk_mcp_tools_list_changed", "ui_surface_v1"):
        assert features.supports(capability) is False  # known missing at once
    with pytest.raises(UnsupportedFeatureError) as err:
        features.require("interrupt_cancel_queued_v1", "interrupt(cancel_queued=...)")
    assert str(err.value) == (
        "interrupt(cancel_queued=...) needs a Claude Code CLI with the "
        "'interrupt_cancel_queued_v1' capability; the connected CLI does not report it "
        "(upgrade the CLI)"
    )


def test_a_2_1_197_system_init_names_the_version_but_no_capabilities() -> None:
    features = CliFeatures(INIT_2_1_197)
    features.observe(system_init("2.1.197"))
    assert (features.legacy, features.complete, features.version) == (True, False, "2.1.197")
    assert features.supports("interrupt_receipt_v1") is False
    with pytest.raises(UnsupportedFeatureError, match=r"the connected CLI \(2\.1\.197\) does not"):
        features.require("mcp_read_resource_v1", "mcp_read_resource()")


def test_no_initialize_answer_at_all_is_legacy() -> None:
    features = CliFeatures(None)
    assert features.legacy is True and features.supports("interrupt_receipt_v1") is False


def test_a_cli_without_capabilities_lacks_the_five_newest_hook_events() -> None:
    everything = list(get_args(HookEvent))
    legacy = CliFeatures(INIT_2_1_197)
    assert legacy.missing_hook_events(everything) == [
        "Interrupt",
        "PreModelSwitch",
        "PostModelSwitch",
        "DirectoryAdded",
        "PreSkillShellCommand",
    ]
    assert len(LEGACY_HOOK_EVENTS) == 30 and set(everything) > LEGACY_HOOK_EVENTS
    assert legacy.missing_hook_events(["Stop", "SomeFutureEvent"]) == []  # left to the CLI
    assert CliFeatures(INIT_2_1_330).missing_hook_events(everything) == []


def test_what_a_cli_without_capabilities_cannot_do_is_refused_with_its_version() -> None:
    legacy = CliFeatures(INIT_2_1_197)
    assert legacy.describe() == " (a version before 2.1.205: it reports no capabilities)"
    with pytest.raises(UnsupportedFeatureError) as err:
        legacy.require_capabilities("frobnicate()", "it ignores it", subtype="frob")
    assert str(err.value) == (
        "frobnicate() is not supported by the connected Claude Code CLI (a version before "
        "2.1.205: it reports no capabilities): it ignores it; upgrade the CLI"
    )
    assert err.value.subtype == "frob"
    legacy.observe(system_init("2.1.197"))
    assert legacy.describe() == " (2.1.197)"
    CliFeatures(INIT_2_1_330).require_capabilities("frobnicate()", "-")  # no raise


@pytest.mark.parametrize(
    ("client_info", "legacy", "version"),
    [
        ({"name": "claude-code", "title": "Claude Code", "version": "2.1.197"}, True, "2.1.197"),
        ({"name": "claude-code", "version": "2.1.204"}, True, "2.1.204"),
        ({"name": "claude-code", "version": "2.1.205"}, False, "2.1.205"),
        ({"name": "claude-code", "version": "2.1.330"}, False, "2.1.330"),
        ({"name": "claude-code", "version": "10.0.0"}, False, "10.0.0"),
        ({"name": "other-client", "version": "2.1.197"}, None, None),
        ({"name": "claude-code"}, None, None),
        ({"name": "claude-code", "version": "dev"}, None, None),
        ("claude-code", None, None),
    ],
)
def test_the_cli_introducing_itself_to_an_mcp_server(
    client_info: Any, legacy: bool | None, version: str | None
) -> None:
    features = CliFeatures.from_mcp_client(client_info)
    if legacy is None:
        assert features is None
        return
    assert features is not None and (features.legacy, features.version) == (legacy, version)
    # a CLI older than capabilities is known to lack them; a newer one: not known yet
    expected = False if legacy else None
    assert features.supports("sdk_mcp_tools_list_changed") is expected


def test_parse_version() -> None:
    assert parse_version("2.1.197") == (2, 1, 197)
    assert parse_version("2.1.330 (Claude Code)") == (2, 1, 330)
    assert parse_version("v2") is None and parse_version(None) is None


def test_only_system_init_frames_are_learned_from() -> None:
    features = CliFeatures(INIT_2_1_330)
    status = {"type": "system", "subtype": "status", "capabilities": ["fake_v1"]}
    features.observe(SystemMessage(subtype="status", data=status, raw=status))
    assert features.complete is False and features.supports("fake_v1") is None
    # a later CLI that does list capabilities in system/init is no longer legacy
    legacy = CliFeatures(INIT_2_1_197)
    legacy.observe(system_init("2.1.205", ["interrupt_receipt_v1"]))
    assert (legacy.legacy, legacy.complete) == (False, True)
    assert legacy.supports("interrupt_receipt_v1") is True and legacy.supports("x") is False


def test_unknown_subtype_answers_become_unsupported_feature_errors() -> None:
    cause = ControlProtocolError(
        "the CLI refused 'list_models': Unsupported control request subtype: list_models",
        subtype="list_models",
    )
    assert is_unsupported_answer(cause)
    assert is_unsupported_answer(ControlProtocolError("x", error_code="unsupported_request"))
    assert not is_unsupported_answer(ControlProtocolError("Server not found: nope"))
    features = CliFeatures(INIT_2_1_197)
    features.observe(system_init("2.1.197"))
    error = unsupported_error("list_models", features, cause)
    assert isinstance(error, UnsupportedFeatureError) and error.subtype == "list_models"
    assert str(error) == (
        "the connected Claude Code CLI (2.1.197) does not support the 'list_models' control "
        f"request (upgrade the CLI); it answered: {cause}"
    )


@pytest.mark.anyio
async def test_the_client_reports_what_a_2_1_197_cli_lacks() -> None:
    async with connected(ClaudeAgentOptions(), INIT_2_1_197) as (client, fake):
        assert client.capabilities == frozenset() and client.cli_version is None
        assert client.supports("interrupt_cancel_queued_v1") is False
        assert client.session_state is None
        with pytest.raises(UnsupportedFeatureError, match="interrupt_cancel_queued_v1"):
            await client.interrupt(cancel_queued=True)
        with pytest.raises(UnsupportedFeatureError, match="mcp_read_resource_v1"):
            await client.mcp_read_resource("srv", "ui://x")
        await fake.send(system_init("2.1.197").raw)
        await fake.request("no_such_subtype")  # a round trip: the init has been read
        assert client.cli_version == "2.1.197" and client.supports("x") is False
    # nothing gated was sent to the CLI
    sent = [f["request"]["subtype"] for f in fake.received if f.get("type") == "control_request"]
    assert sent == ["initialize"]


@pytest.mark.anyio
async def test_the_client_learns_the_full_list_from_system_init() -> None:
    async with connected(ClaudeAgentOptions(), INIT_2_1_330) as (client, fake):
        assert client.cli_version == "2.1.330" and client.session_state == "idle"
        assert client.supports("ui_surface_v1") is True
        assert client.supports("interrupt_cancel_queued_v1") is None
        await fake.send(system_init("2.1.330", SYSTEM_INIT_CAPS).raw)
        await fake.request("no_such_subtype")
        assert client.supports("interrupt_cancel_queued_v1") is True
        assert client.supports("no_such_capability_v1") is False
        assert set(SYSTEM_INIT_CAPS) <= client.capabilities


# --------------------------------------------------------------------------- to_dict / from_dict


@pytest.mark.parametrize(
    ("update", "missing"),
    [
        (PermissionUpdate(type="addRules", behavior="allow"), "rules"),
        (PermissionUpdate(type="removeRules", rules=RULE), "behavior"),
        (PermissionUpdate(type="setMode"), "mode"),
        (PermissionUpdate(type="addDirectories"), "directories"),
    ],
)
def test_to_dict_refuses_an_update_missing_what_its_type_needs(
    update: PermissionUpdate, missing: str
) -> None:
    with pytest.raises(ValueError, match=f"has no {missing}"):
        update.to_dict()


def test_to_dict_refuses_an_unknown_type_and_sends_only_the_type_s_fields() -> None:
    odd = PermissionUpdate(type="addSomething")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'addSomething', which this version"):
        odd.to_dict()
    mixed = PermissionUpdate(type="setMode", mode="plan", rules=RULE, behavior="deny")
    assert mixed.to_dict() == {"type": "setMode", "destination": "session", "mode": "plan"}


@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_from_dict_and_to_dict_are_inverse(kind: str) -> None:
    update, wire = variant(kind, "localSettings")
    assert PermissionUpdate.from_dict(wire) == update
    assert PermissionUpdate.from_dict(wire).to_dict() == wire
    assert update.to_dict() == wire


def test_sequences_are_kept_as_lists() -> None:
    update = PermissionUpdate(type="addDirectories", directories=("/a", "/b"))  # type: ignore[arg-type]
    assert update.directories == ["/a", "/b"]
    assert PermissionUpdate.from_dict(update.to_dict()).directories == ["/a", "/b"]
