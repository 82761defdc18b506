"""Answering ``can_use_tool``: the user's permission callback, typed both ways.

A callback that raises or returns something that is not a permission result gives
the CLI an error answer carrying the exception's message (as the reference SDK does),
and is reported as a `CallbackError` (logged on the ``ccwire`` logger
and passed to ``ClaudeAgentOptions.on_callback_error``). When the CLI withdraws the
request (``control_cancel_request``, e.g. after an interrupt), ``context.signal`` is
set and the callback is cancelled; nothing is written back. With
``ClaudeAgentOptions.can_use_tool_timeout``, a callback still deciding after that long
is cancelled the same way and the CLI is told the call is denied (a `CallbackError`
with ``timed_out`` is reported). A sync function is called as an async one is. A
callback that returns `ANSWER_LATER` leaves the request open: it is answered later by
``ClaudeSDKClient.answer_control_request()`` (see `encode_answer`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, get_args

from .._core.cancel import raised_by_callback, stop_request
from .._core.errors import CallbackError, ControlProtocolError, exception_text
from .._protocol.control import ANSWERED_BY_ROUTE, NO_REPLY, Answer, IncomingCall, RouteHandler
from .._wire import codec
from .._wire.dialog_types import ANSWER_LATER
from .._wire.permission_types import (
    CanUseTool,
    PermissionMode,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    PermissionUpdateDestination,
    ToolPermissionContext,
)
from .reporting import (
    Bounded,
    CallbackErrorHandler,
    call_callback,
    call_within,
    callback_name,
    failure_text,
    report_callback_error,
)

__all__ = [
    "coerce_permission_result",
    "encode_permission_answer",
    "drop_malformed_hook_updates",
    "permission_route",
    "permission_update_problem",
]

logger = logging.getLogger("ccwire")

_RULE_TYPES = frozenset({"addRules", "replaceRules", "removeRules"})
_DIRECTORY_TYPES = frozenset({"addDirectories", "removeDirectories"})
_BEHAVIORS = frozenset({"allow", "deny", "ask"})
_MODES = frozenset(get_args(PermissionMode))
_DESTINATIONS = frozenset(get_args(PermissionUpdateDestination))


def permission_update_problem(update: object) -> str | None:
    """Why the CLI would reject ``update`` (None if it is well-formed).

    Rule updates need ``rules`` and a ``behavior``; ``setMode`` needs a valid ``mode``;
    directory updates need ``directories``; the destination must be one the CLI knows.
    """
    if not isinstance(update, PermissionUpdate):
        return f"{update!r} is not a PermissionUpdate"
    if update.destination is not None and update.destination not in _DESTINATIONS:
        return f"unknown destination {update.destination!r}"
    if update.type in _RULE_TYPES:
        if not update.rules:
            return f"{update.type} needs rules"
        if update.behavior not in _BEHAVIORS:
            return f"{update.type} needs a behavior (allow, deny or ask)"
        return None
    if update.type == "setMode":
        return None if update.mode in _MODES else f"setMode needs a valid mode, not {update.mode!r}"
    if update.type in _DIRECTORY_TYPES:
        return None if update.directories else f"{update.type} needs directories"
    return f"unknown update type {update.type!r}"


def _checked_updates(
    result: PermissionResultAllow, report: Callable[[str], object]
) -> PermissionResultAllow:
    updates = result.updated_permissions
    if not updates:
        return result
    problems = [p for p in map(permission_update_problem, updates) if p is not None]
    if not problems:
        return result
    # The CLI rejects every update of an answer if one is malformed; like the reference
    # SDK, send none of them (the tool call itself is still allowed).
    detail = "; ".join(problems)
    logger.warning("ccwire: dropping updated_permissions of a can_use_tool answer: %s", detail)
    report(f"can_use_tool returned permission updates the CLI would reject; none sent: {detail}")
    return replace(result, updated_permissions=None)


def _wire_update_problem(update: object) -> str | None:
    if isinstance(update, Mapping):
        return permission_update_problem(codec.decode_permission_update(update))
    return permission_update_problem(update)


def _checked_decision(decision: object) -> tuple[object, list[str]]:
    """A PermissionRequest ``decision`` (typed or wire dict) without malformed updates."""
    if isinstance(decision, PermissionResultAllow):
        updates = decision.updated_permissions
        problems = [p for p in map(permission_update_problem, updates or ()) if p is not None]
        if problems:
            return replace(decision, updated_permissions=None), problems
        return decision, []
    if not isinstance(decision, Mapping) or "updatedPermissions" not in decision:
        return decision, []
    updates = decision["updatedPermissions"]
    if not isinstance(updates, (list, tuple)):
        problems = [f"updatedPermissions must be a list, not {updates!r}"]
    else:
        problems = [p for p in map(_wire_update_problem, updates) if p is not None]
    if problems:
        return {k: v for k, v in decision.items() if k != "updatedPermissions"}, problems
    wire = [
        codec.encode_permission_update(u) if isinstance(u, PermissionUpdate) else u for u in updates
    ]
    return {**decision, "updatedPermissions": wire}, []


def drop_malformed_hook_updates(output: object) -> tuple[object, list[str]]:
    """A PermissionRequest hook's output without its decision's ``updatedPermissions`` if
    any of them is malformed (the CLI would reject them all), and the problems found.

    Handles the typed forms (`PermissionRequestOutput`, alone or in a
    `HookOutput`) and the dict form (``hookSpecificOutput.decision``).
    """
    # here, not at the top: the ~30 hook output classes load with the first hook answer
    from .._wire.hook_output import HookOutput, PermissionRequestOutput

    if isinstance(output, HookOutput):
        inner, problems = drop_malformed_hook_updates(output.hook_specific_output)
        if problems:
            return replace(output, hook_specific_output=inner), problems  # type: ignore[arg-type]
        return output, []
    if isinstance(output, PermissionRequestOutput):
        decision, problems = _checked_decision(output.decision)
        if problems:
            return replace(output, decision=decision), problems  # type: ignore[arg-type]
        return output, []
    if isinstance(output, Mapping):
        specific = output.get("hookSpecificOutput")
        if not isinstance(specific, Mapping) or "decision" not in specific:
            return output, []
        decision, problems = _checked_decision(specific["decision"])
        if decision is specific["decision"]:
            return output, problems
        return {**output, "hookSpecificOutput": {**specific, "decision": decision}}, problems
    return output, []


def coerce_permission_result(value: object) -> PermissionResult:
    """Accept a result object, or the wire-like dict form ``{"behavior": "allow", ...}``.

    Anything else (a result whose ``updated_input`` is no dict, or whose ``message``
    is no str, too) is a bug in the callback and raises `ControlProtocolError` (the CLI
    then gets an error answer, never silence).
    """
    if isinstance(value, PermissionResultAllow):
        if value.updated_input is not None and not isinstance(value.updated_input, Mapping):
            raise ControlProtocolError(
                "can_use_tool returned PermissionResultAllow with an updated_input that is "
                f"no dict ({type(value.updated_input).__name__})",
                subtype=codec.CAN_USE_TOOL,
            )
        return value
    if isinstance(value, PermissionResultDeny):
        if not isinstance(value.message, str):
            raise ControlProtocolError(
                "can_use_tool returned PermissionResultDeny with a message that is no str "
                f"({type(value.message).__name__})",
                subtype=codec.CAN_USE_TOOL,
            )
        return value
    if isinstance(value, Mapping):
        behavior = value.get("behavior")
        classification = value.get("decision_classification", value.get("decisionClassification"))
        if behavior == "allow":
            updated = value.get("updated_input", value.get("updatedInput"))
            perms = value.get("updated_permissions", value.get("updatedPermissions"))
            return PermissionResultAllow(
                updated_input=updated if isinstance(updated, Mapping) else None,
                updated_permissions=_dict_updates(perms),
                decision_classification=classification,
            )
        if behavior == "deny":
            return PermissionResultDeny(
                message=str(value.get("message", "")),
                interrupt=bool(value.get("interrupt", False)),
                decision_classification=classification,
            )
    raise ControlProtocolError(
        f"can_use_tool returned {value!r}; expected PermissionResultAllow or PermissionResultDeny",
        subtype=codec.CAN_USE_TOOL,
    )


def _dict_updates(value: Any) -> list[PermissionUpdate] | None:
    if not isinstance(value, list):
        return None
    return [
        u if isinstance(u, PermissionUpdate) else codec.decode_permission_update(u)
        for u in value
        if isinstance(u, (PermissionUpdate, Mapping))
    ]


def permission_route(
    callback: CanUseTool | None,
    *,
    on_error: CallbackErrorHandler | None = None,
    timeout: float | None = None,
) -> RouteHandler:
    """The route handler for ``can_use_tool`` requests.

    With ``timeout``, a callback still deciding after that many seconds is cancelled
    (its ``context.signal`` set first), the CLI is told the tool call is denied, and a
    `CallbackError` with ``timed_out`` is reported.
    """

    def failure(
        message: str, *, timed_out: bool = False, cause: BaseException | None = None
    ) -> CallbackError:
        error = CallbackError(
            message,
            kind="can_use_tool",
            callback_name=callback_name(callback),
            subtype=codec.CAN_USE_TOOL,
            timed_out=timed_out,
        )
        error.__cause__ = cause
        report_callback_error(on_error, error)
        return error

    async def handle(req: codec.ControlRequest, call: IncomingCall) -> Answer:
        if callback is None:
            raise ControlProtocolError("canUseTool callback is not provided", subtype=req.subtype)
        decoded = codec.decode_can_use_tool(req.request)
        context = ToolPermissionContext(
            tool_use_id=decoded.tool_use_id,
            suggestions=list(decoded.suggestions),
            signal=call.cancelled,
            agent_id=decoded.agent_id,
            blocked_path=decoded.blocked_path,
            decision_reason=decoded.decision_reason,
            title=decoded.title,
            display_name=decoded.display_name,
            description=decoded.description,
            raw=decoded.raw,
            request_id=call.request_id,
            mcp_server=decoded.mcp_server,
            matched_ask_rule=decoded.matched_ask_rule,
            default_to_no=decoded.default_to_no,
            suppress_always_allow_rule=decoded.suppress_always_allow_rule,
        )
        args = (decoded.tool_name, dict(decoded.input), context)
        decided = Bounded()
        try:
            if timeout is None:
                decided.value = await call_callback("can_use_tool", callback, *args)
            else:
                decided = await call_within(
                    "can_use_tool", timeout, call.cancelled, callback, *args
                )
        except Exception as exc:
            raise failure(exception_text(exc) or type(exc).__name__, cause=exc) from exc
        except BaseException as exc:  # a cancellation (or a BaseException) of its own
            if not raised_by_callback(exc):
                stop = stop_request(exc)
                if stop is not None:  # it stops the connection: told first
                    failure(f"{failure_text(stop)}; the connection stops", cause=stop)
                raise
            raise failure(failure_text(exc), cause=exc) from exc
        if decided.expired:
            if not call.claim_answer(ANSWERED_BY_ROUTE):
                # answered out of band (answer_control_request) before the time ran
                # out: that answer went out, no deny and no timeout
                return ANSWER_LATER
            message = (
                f"can_use_tool did not decide within {timeout:g} s "
                "(can_use_tool_timeout), so the tool call was denied"
            )

            def denied() -> None:  # once the deny is the answer (not withdrawn first)
                failure(message, timed_out=True, cause=decided.cause)
                logger.error("ccwire: %s", message)

            call.on_answered = denied
            return encode_permission_answer(PermissionResultDeny(message=message), req)
        if call.withdrawn:
            return NO_REPLY  # it answered once cancelled: the CLI wants no answer now
        answer: object = decided.value
        if answer is ANSWER_LATER or not call.claim_answer(ANSWERED_BY_ROUTE):
            return ANSWER_LATER  # (answered out of band: what it returned is no answer)
        try:
            return encode_permission_answer(answer, req, failure)
        except ControlProtocolError as exc:
            raise failure(str(exc), cause=exc) from exc

    return handle


def encode_permission_answer(
    answer: object,
    req: codec.ControlRequest,
    report: Callable[[str], object] = lambda message: None,
) -> dict[str, Any]:
    """The wire answer to the ``can_use_tool`` request ``req``: ``answer`` checked as the
    route checks a callback's result (malformed permission updates dropped and reported).

    Raises:
        ControlProtocolError: ``answer`` is not a permission result.
    """
    result = coerce_permission_result(answer)
    if isinstance(result, PermissionResultAllow):
        result = _checked_updates(result, report)
    return codec.encode_permission_result(result, codec.decode_can_use_tool(req.request).input)
