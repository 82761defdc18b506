"""The codec, part two: the wire forms of the CLI's callbacks into the SDK.

Permission requests and their answers (``can_use_tool``, ``PermissionUpdate``,
``PermissionResult``) and hook callbacks (inputs, outputs, matcher registrations).
`codec` re-exports everything here, so the rest of ccwire still reaches
every wire name through that one module; the split only keeps each file readable.
Decoders are lenient and raise only `MessageDecodeError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from .._core.errors import MessageDecodeError
from .dialog_types import (
    ElicitationRequest,
    ElicitationResult,
    UserDialogRequest,
    UserDialogResult,
)
from .permission_types import (
    MatchedAskRule,
    McpServerProvenance,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    rule_to_wire,
)

if TYPE_CHECKING:  # the hook types load with the first hook callback: fast import
    from .hook_input import BaseHookInput


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


# --------------------------------------------------------------------- permissions


@dataclass(frozen=True, slots=True)
class CanUseToolRequest:
    """A decoded ``can_use_tool`` request."""

    tool_name: str
    input: dict[str, Any]
    tool_use_id: str | None
    suggestions: tuple[PermissionUpdate, ...]
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    mcp_server: McpServerProvenance | None = None
    matched_ask_rule: MatchedAskRule | None = None
    default_to_no: bool | None = None
    suppress_always_allow_rule: bool | None = None


def decode_permission_update(d: Mapping[str, Any]) -> PermissionUpdate:
    """Decode one ``PermissionUpdate`` (a suggestion from the CLI)."""
    return PermissionUpdate.from_dict(d)


def encode_permission_update(u: PermissionUpdate) -> dict[str, Any]:
    """The wire form of a ``PermissionUpdate`` (destination defaults to ``session``).

    Lenient where `PermissionUpdate.to_dict` is strict: every field that is set is
    sent (callers check updates with the permission layer's rules first).
    """
    out: dict[str, Any] = {"type": u.type, "destination": u.destination or "session"}
    if u.rules is not None:
        out["rules"] = [rule_to_wire(r) for r in u.rules]
    if u.behavior is not None:
        out["behavior"] = u.behavior
    if u.mode is not None:
        out["mode"] = u.mode
    if u.directories is not None:
        out["directories"] = list(u.directories)
    return out


def decode_can_use_tool(req: Mapping[str, Any]) -> CanUseToolRequest:
    """Decode the body of a ``can_use_tool`` request."""
    name = req.get("tool_name")
    inp = req.get("input")
    if not isinstance(name, str):
        raise MessageDecodeError("can_use_tool without tool_name", line=str(req)[:200])
    sugg = req.get("permission_suggestions")
    return CanUseToolRequest(
        tool_name=name,
        input=dict(inp) if isinstance(inp, Mapping) else {},
        tool_use_id=_opt_str(req.get("tool_use_id")),
        suggestions=tuple(decode_permission_update(s) for s in sugg if isinstance(s, Mapping))
        if isinstance(sugg, list)
        else (),
        agent_id=_opt_str(req.get("agent_id")),
        blocked_path=_opt_str(req.get("blocked_path")),
        decision_reason=_opt_str(req.get("decision_reason")),
        title=_opt_str(req.get("title")),
        display_name=_opt_str(req.get("display_name")),
        description=_opt_str(req.get("description")),
        raw=req,
        mcp_server=_mcp_server(req.get("mcp_server")),
        matched_ask_rule=_matched_ask_rule(req.get("matched_ask_rule")),
        default_to_no=_opt_bool(req.get("default_to_no")),
        suppress_always_allow_rule=_opt_bool(req.get("suppress_always_allow_rule")),
    )


def _opt_bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _mcp_server(v: Any) -> McpServerProvenance | None:
    if not isinstance(v, Mapping) or not isinstance(v.get("name"), str):
        return None
    source = v.get("source")
    return McpServerProvenance(name=v["name"], source=source if isinstance(source, str) else "")


def _matched_ask_rule(v: Any) -> MatchedAskRule | None:
    if not isinstance(v, Mapping) or not isinstance(v.get("tool_name"), str):
        return None
    source = v.get("source")
    return MatchedAskRule(
        source=source if isinstance(source, str) else "",
        tool_name=v["tool_name"],
        rule_content=_opt_str(v.get("rule_content")),
    )


def encode_permission_result(
    result: PermissionResultAllow | PermissionResultDeny, original_input: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``can_use_tool`` response body. Allow always carries ``updatedInput``."""
    if isinstance(result, PermissionResultAllow):
        out: dict[str, Any] = {
            "behavior": "allow",
            "updatedInput": dict(result.updated_input)
            if result.updated_input is not None
            else dict(original_input),
        }
        if result.updated_permissions is not None:
            out["updatedPermissions"] = [
                encode_permission_update(u) for u in result.updated_permissions
            ]
        if result.decision_classification is not None:
            out["decisionClassification"] = result.decision_classification
        return out
    deny: dict[str, Any] = {"behavior": "deny", "message": result.message}
    if result.interrupt:
        deny["interrupt"] = True
    if result.decision_classification is not None:
        deny["decisionClassification"] = result.decision_classification
    return deny


# ------------------------------------------------------------- elicitation, dialogs


def decode_elicitation(req: Mapping[str, Any]) -> ElicitationRequest:
    """Decode the body of an ``elicitation`` request (lenient: missing fields are None)."""
    mode = req.get("mode")
    schema = req.get("requested_schema")
    order = req.get("property_order")
    return ElicitationRequest(
        server_name=_opt_str(req.get("mcp_server_name")) or "",
        message=_opt_str(req.get("message")) or "",
        mode=mode if mode in ("form", "url") else None,
        url=_opt_str(req.get("url")),
        elicitation_id=_opt_str(req.get("elicitation_id")),
        requested_schema=schema if isinstance(schema, Mapping) else None,
        property_order=tuple(x for x in order if isinstance(x, str))
        if isinstance(order, list)
        else None,
        title=_opt_str(req.get("title")),
        display_name=_opt_str(req.get("display_name")),
        description=_opt_str(req.get("description")),
        raw=req,
    )


def encode_elicitation_result(result: ElicitationResult | Mapping[str, Any]) -> dict[str, Any]:
    """The ``elicitation`` answer body: MCP's ``ElicitResult`` (``action``, ``content``).
    A dict is sent as given."""
    if isinstance(result, Mapping):
        return dict(result)
    out: dict[str, Any] = {"action": result.action}
    if result.content is not None:
        out["content"] = dict(result.content)
    return out


ELICITATION_DECLINED: Mapping[str, Any] = {"action": "decline"}
"""The answer to an elicitation nobody handles (the TypeScript SDK's)."""


def decode_user_dialog(req: Mapping[str, Any]) -> UserDialogRequest:
    """Decode the body of a ``request_user_dialog`` request."""
    payload = req.get("payload")
    return UserDialogRequest(
        dialog_kind=_opt_str(req.get("dialog_kind")) or "",
        payload=payload if isinstance(payload, Mapping) else {},
        tool_use_id=_opt_str(req.get("tool_use_id")),
        raw=req,
    )


def encode_user_dialog_result(result: UserDialogResult | Mapping[str, Any]) -> dict[str, Any]:
    """The ``request_user_dialog`` answer body: ``{"behavior": "completed", "result": ...}``
    or ``{"behavior": "cancelled"}``. A dict is sent as given."""
    if isinstance(result, Mapping):
        return dict(result)
    if result.behavior == "cancelled":
        return {"behavior": "cancelled"}
    return {"behavior": "completed", "result": result.result}


# --------------------------------------------------------------------------- hooks


@dataclass(frozen=True, slots=True)
class HookCallbackRequest:
    """A decoded ``hook_callback`` request."""

    callback_id: str
    input: Mapping[str, Any]
    tool_use_id: str | None


def decode_hook_callback(req: Mapping[str, Any]) -> HookCallbackRequest:
    """Decode the body of a ``hook_callback`` request."""
    cid = req.get("callback_id")
    if not isinstance(cid, str):
        raise MessageDecodeError("hook_callback without callback_id", line=str(req)[:200])
    inp = req.get("input")
    return HookCallbackRequest(
        callback_id=cid,
        input=inp if isinstance(inp, Mapping) else {},
        tool_use_id=_opt_str(req.get("tool_use_id")),
    )


_PY_KEYWORD_KEYS = {"async_": "async", "continue_": "continue"}


def encode_hook_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """Hook output for the wire: top-level ``async_``/``continue_`` lose the underscore."""
    return {_PY_KEYWORD_KEYS.get(k, k): v for k, v in output.items()}


def encode_hook_matchers(
    matchers: Iterable[tuple[str | None, list[str], float | None]],
) -> list[dict[str, Any]]:
    """The initialize ``hooks`` entries of one event: (matcher, callback ids, timeout s)."""
    out = []
    for matcher, ids, timeout in matchers:
        entry: dict[str, Any] = {"matcher": matcher, "hookCallbackIds": ids}
        if timeout is not None:
            entry["timeout"] = timeout
        out.append(entry)
    return out


def encode_hook_matcher(
    matcher: str | None, ids: list[str], timeout: float | None, on_failure: str | None
) -> dict[str, Any]:
    """One initialize ``hooks`` entry: matcher, callback ids, timeout (s), ``onFailure``."""
    entry = encode_hook_matchers([(matcher, ids, timeout)])[0]
    if on_failure is not None:
        entry["onFailure"] = on_failure
    return entry


def decode_hook_input(raw: Mapping[str, Any]) -> BaseHookInput:
    """The typed input of a ``hook_callback`` (class chosen by ``hook_event_name``).

    Hook inputs are snake_case on the wire, so fields are taken by name; missing ones
    (and nulls where a value is expected) keep their defaults, so this never raises.
    ``permission_suggestions`` become `PermissionUpdate` values.
    """
    # here, not at the top: the ~40 hook input classes load with the first hook callback
    from .hook_input import HOOK_INPUT_TYPES, BaseHookInput

    event = raw.get("hook_event_name")
    cls = HOOK_INPUT_TYPES.get(event, BaseHookInput) if isinstance(event, str) else BaseHookInput
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name == "raw" or f.name not in raw:
            continue
        value = raw[f.name]
        if f.name == "permission_suggestions":
            value = tuple(
                decode_permission_update(s)
                for s in (value if isinstance(value, list) else ())
                if isinstance(s, Mapping)
            )
        elif value is None and (
            f.default_factory is not MISSING or (f.default is not MISSING and f.default is not None)
        ):
            continue  # null where a value is expected (tool_input: {}, ...): keep the default
        kwargs[f.name] = value
    return cls(**kwargs, raw=raw)


_HOOK_WIRE_NAMES = {
    "continue_": "continue",
    "async_": "async",
    "updated_mcp_tool_output": "updatedMCPToolOutput",
}


def _hook_wire_name(name: str) -> str:
    wire = _HOOK_WIRE_NAMES.get(name)
    if wire is not None:
        return wire
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _hook_value(value: Any) -> Any:
    if isinstance(value, PermissionResultAllow):
        allow: dict[str, Any] = {"behavior": "allow"}
        if value.updated_input is not None:
            allow["updatedInput"] = dict(value.updated_input)
        if value.updated_permissions is not None:
            allow["updatedPermissions"] = [
                encode_permission_update(u) for u in value.updated_permissions
            ]
        return allow
    if isinstance(value, PermissionResultDeny):
        deny: dict[str, Any] = {"behavior": "deny", "message": value.message}
        if value.interrupt:
            deny["interrupt"] = True
        return deny
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


_HOOK_FLAGS = ("continue", "suppressOutput")
_HOOK_TEXTS = ("stopReason", "systemMessage", "terminalSequence", "reason")
_SPECIFIC_TEXTS = ("permissionDecisionReason", "additionalContext")
_HOOK_DECISIONS = ("approve", "block")
_PERMISSION_DECISIONS = ("allow", "deny", "ask", "defer")


def _checked_hook_dict(body: dict[str, Any], event: str) -> dict[str, Any]:
    """The dict form of a hook output (wire keys), checked as the CLI reads it.

    The CLI drops an output whole, and lets the action through, when one of the keys
    it knows has a value of the wrong type, ``None`` included (a deny whose reason is
    ``None``, a ``hookSpecificOutput`` without its ``hookEventName``). Such keys whose
    value is ``None`` are left out (as in the typed outputs); any other wrong value
    raises ``ValueError`` (``TypeError`` for a ``hookSpecificOutput`` that is no dict or
    names no event). Unknown keys are sent as given (a newer CLI may know them).
    """
    if body.get("async") is True:
        return body
    for key in (*_HOOK_FLAGS, *_HOOK_TEXTS, "decision", "hookSpecificOutput"):
        if key in body and body[key] is None:
            del body[key]
    for key in _HOOK_FLAGS:
        if key in body and not isinstance(body[key], bool):
            raise ValueError(f"{key!r} must be a bool, got {body[key]!r}")
    _check_texts(body, _HOOK_TEXTS)
    if "decision" in body and body["decision"] not in _HOOK_DECISIONS:
        raise ValueError(f"'decision' must be 'approve' or 'block', got {body['decision']!r}")
    if "permissionDecision" in body:  # dropped by the CLI: the call would go through
        raise ValueError("'permissionDecision' goes in 'hookSpecificOutput', not at the top")
    specific = body.get("hookSpecificOutput")
    if specific is None:
        return body
    if not isinstance(specific, Mapping):
        raise TypeError(f"'hookSpecificOutput' must be a dict, got {specific!r}")
    optional = (*_SPECIFIC_TEXTS, "permissionDecision")
    specific = {k: v for k, v in specific.items() if v is not None or k not in optional}
    # an event given, even another one, is left to the CLI: it fails such a hook itself
    # (as the reference SDK's users see it do)
    if not isinstance(specific.get("hookEventName"), str):
        raise TypeError(
            f"'hookSpecificOutput' must say 'hookEventName': {event!r} (the event this hook "
            f"is registered for), got {specific.get('hookEventName')!r}"
        )
    decision = specific.get("permissionDecision", "allow")
    if decision not in _PERMISSION_DECISIONS:
        raise ValueError(
            "'permissionDecision' must be one of "
            f"{', '.join(map(repr, _PERMISSION_DECISIONS))}, got {decision!r}"
        )
    _check_texts(specific, _SPECIFIC_TEXTS)
    body["hookSpecificOutput"] = specific
    return body


def _check_texts(body: Mapping[str, Any], keys: Sequence[str]) -> None:
    for key in keys:
        if key in body and not isinstance(body[key], str):
            raise ValueError(f"{key!r} must be a str, got {body[key]!r}")


def encode_hook_result(value: object, event: str) -> dict[str, Any]:
    """The ``hook_callback`` response body for what a callback of ``event`` returned.

    Accepts the typed outputs of `hook_output`, the dict form (sent as given but for
    the ``async_``/``continue_`` keys and the checks of `_checked_hook_dict`) and
    ``None`` (``{}``). Raises ``TypeError`` for anything else and ``ValueError`` when an
    event-specific output belongs to another event or a dict holds a value the CLI
    would drop it for.
    """
    if value is None:
        return {}
    # here, not at the top: the ~30 hook output classes load with the first hook answer
    from .hook_output import AsyncHookOutput, HookOutput, HookSpecificOutput

    if isinstance(value, HookSpecificOutput):
        value = HookOutput(hook_specific_output=value)
    if isinstance(value, AsyncHookOutput):
        out: dict[str, Any] = {"async": True}
        if value.async_timeout is not None:
            out["asyncTimeout"] = value.async_timeout
        return out
    if isinstance(value, HookOutput):
        body: dict[str, Any] = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None:
                continue
            if isinstance(item, HookSpecificOutput):
                if event != item.EVENT:
                    raise ValueError(
                        f"{type(item).__name__} is the output of {item.EVENT} hooks, "
                        f"but this hook is registered for {event}"
                    )
                specific = {"hookEventName": item.EVENT}
                for g in fields(item):
                    sub = getattr(item, g.name)
                    if sub is not None:
                        specific[_hook_wire_name(g.name)] = _hook_value(sub)
                item = specific
            body[_hook_wire_name(f.name)] = _hook_value(item)
        return body
    if isinstance(value, Mapping):
        return _checked_hook_dict(encode_hook_output(value), event)
    raise TypeError(
        "expected a dict, None or a typed hook output (HookOutput, AsyncHookOutput, "
        f"PreToolUseOutput, ...); got {type(value).__name__}"
    )
