"""Answering ``can_use_tool``: the user's permission callback, typed both ways."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import _codec as codec
from ._control import IncomingCall, RouteHandler
from ._errors import ControlProtocolError
from ._permission_types import (
    CanUseTool,
    PermissionResult,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

__all__ = ["coerce_permission_result", "permission_route"]


def coerce_permission_result(value: object) -> PermissionResult:
    """Accept a result object, or the wire-like dict form ``{"behavior": "allow", ...}``.

    Anything else is a bug in the callback and raises :class:`ControlProtocolError`
    (the CLI then gets an error answer, never silence).
    """
    if isinstance(value, (PermissionResultAllow, PermissionResultDeny)):
        return value
    if isinstance(value, Mapping):
        behavior = value.get("behavior")
        if behavior == "allow":
            updated = value.get("updated_input", value.get("updatedInput"))
            return PermissionResultAllow(
                updated_input=updated if isinstance(updated, Mapping) else None
            )
        if behavior == "deny":
            return PermissionResultDeny(
                message=str(value.get("message", "")), interrupt=bool(value.get("interrupt", False))
            )
    raise ControlProtocolError(
        f"can_use_tool returned {value!r}; expected PermissionResultAllow or PermissionResultDeny",
        subtype=codec.CAN_USE_TOOL,
    )


def permission_route(callback: CanUseTool | None) -> RouteHandler:
    """The route handler for ``can_use_tool`` requests."""

    async def handle(req: codec.ControlRequest, call: IncomingCall) -> Mapping[str, Any]:
        if callback is None:
            raise ControlProtocolError("canUseTool callback is not provided", subtype=req.subtype)
        decoded = codec.decode_can_use_tool(req.request)
        context = ToolPermissionContext(
            tool_use_id=decoded.tool_use_id,
            suggestions=decoded.suggestions,
            signal=call.cancelled,
            agent_id=decoded.agent_id,
            blocked_path=decoded.blocked_path,
            decision_reason=decoded.decision_reason,
            title=decoded.title,
            display_name=decoded.display_name,
            description=decoded.description,
            raw=decoded.raw,
        )
        result = coerce_permission_result(
            await callback(decoded.tool_name, dict(decoded.input), context)
        )
        return codec.encode_permission_result(result, decoded.input)

    return handle
